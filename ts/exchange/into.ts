// Exporting into another wasm module's memory (options.into): the schema and
// array structs, their strings, metadata, pointer arrays and buffers are all
// allocated with that module's allocator and written in its layout, so that
// its own code reads them with plain pointers. Their release callbacks are
// real wasm functions in its table (ts/foreign/callbacks.ts): when its code
// releases a node, this library releases the node's children (through the
// table, as any consumer's release would) and frees everything the node
// holds, exactly once.

import type { StructName } from '../abi/layout-types.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import type { InstalledCallback } from '../foreign/callbacks.js';
import type { ForeignModule } from '../foreign/module.js';
import { flagsOf, formatOf } from '../model/format.js';
import { encodeMetadata } from '../model/metadata.js';
import type { RawArray } from '../model/raw.js';
import { childFields, type Field } from '../model/types.js';

/** What one exported node holds: the blocks it allocated (its release frees them). */
interface NodeRecord {
  readonly blocks: number[];
}

/** The release callbacks installed in one module, and the nodes they release. */
class Exports {
  readonly nodes = new Map<number, NodeRecord>();
  #next = 1;
  readonly schemaRelease: InstalledCallback;
  readonly arrayRelease: InstalledCallback;

  constructor(readonly into: ForeignModule) {
    this.schemaRelease = into.install((ptr: number) => this.release('ArrowSchema', ptr), 'vi');
    this.arrayRelease = into.install((ptr: number) => this.release('ArrowArray', ptr), 'vi');
  }

  register(record: NodeRecord): number {
    const id = this.#next++;
    this.nodes.set(id, record);
    return id;
  }

  /**
   * The release of a node this library exported into the module: its
   * children and dictionary first (whatever release they hold now: a
   * consumer may have moved one out), then its blocks; the struct is marked
   * released. Called by the module's own code, through its table.
   */
  release(struct: 'ArrowSchema' | 'ArrowArray', ptr: number): void {
    const s = this.into.space.structs;
    const id = s.ptr(struct, ptr, 'private_data');
    const record = this.nodes.get(id);
    if (record === undefined) return; // not ours (or released already): nothing to free
    const n = s.i64(struct, ptr, 'n_children');
    const children = s.ptr(struct, ptr, 'children');
    for (let i = 0; i < n; i++) this.releaseChild(struct, s.ptrAt(children + i * s.layout.pointerSize));
    const dictionary = s.ptr(struct, ptr, 'dictionary');
    if (dictionary !== 0) this.releaseChild(struct, dictionary);
    this.nodes.delete(id);
    for (const block of record.blocks) this.into.space.allocator!.free(block);
    s.setPtr(struct, ptr, 'release', 0);
  }

  private releaseChild(struct: 'ArrowSchema' | 'ArrowArray', ptr: number): void {
    if (this.into.space.structs.ptr(struct, ptr, 'release') !== 0) this.into.space.release(struct, ptr);
  }
}

const exportsOf = new WeakMap<ForeignModule, Exports>();

function exportsInto(into: ForeignModule): Exports {
  if (into.space.allocator === null) throw new ArrowCDeviceError(`into: ${into.name} has no allocator (malloc and free), so nothing can be exported into it`, EINVAL);
  let e = exportsOf.get(into);
  if (e === undefined) {
    e = new Exports(into);
    exportsOf.set(into, e);
  }
  return e;
}

/** Allocates blocks for one node, all freed when writing it fails. */
class Blocks {
  readonly list: number[] = [];
  constructor(private readonly into: ForeignModule) {}

  alloc(size: number): number {
    const p = this.into.space.allocator!.alloc(Math.max(size, 1));
    this.list.push(p);
    return p;
  }

  bytes(data: Uint8Array): number {
    const p = this.alloc(data.byteLength);
    this.into.space.bytes.set(data, p);
    return p;
  }

  text(s: string): number {
    return this.bytes(new TextEncoder().encode(`${s}\0`));
  }

  freeAll(): void {
    for (const p of this.list) this.into.space.allocator!.free(p);
    this.list.length = 0;
  }
}

/** Writes a node's child structs (one block) and pointer array; returns [pointer array, first struct]. */
function childBlock(into: ForeignModule, blocks: Blocks, struct: StructName, n: number): [number, number] {
  if (n === 0) return [0, 0];
  const s = into.space.structs;
  const pointers = blocks.alloc(n * s.layout.pointerSize);
  const structs = blocks.alloc(n * s.size(struct));
  for (let i = 0; i < n; i++) into.space.view.setUint32(pointers + i * s.layout.pointerSize, structs + i * s.size(struct), true);
  return [pointers, structs];
}

/** Initializes the ArrowSchema at ptr (in the module's memory) for field; on failure nothing stays allocated. */
export function writeSchemaInto(into: ForeignModule, ptr: number, field: Field): void {
  const e = exportsInto(into);
  const s = into.space.structs;
  const blocks = new Blocks(into);
  const { type } = field;
  const children = childFields(type);
  const written: number[] = [];
  try {
    s.setPtr('ArrowSchema', ptr, 'format', blocks.text(formatOf(type)));
    s.setPtr('ArrowSchema', ptr, 'name', blocks.text(field.name));
    const metadata = encodeMetadata(field.metadata);
    s.setPtr('ArrowSchema', ptr, 'metadata', metadata === null ? 0 : blocks.bytes(metadata));
    s.setI64('ArrowSchema', ptr, 'flags', flagsOf(field));
    s.setI64('ArrowSchema', ptr, 'n_children', children.length);
    const [pointers, first] = childBlock(into, blocks, 'ArrowSchema', children.length);
    s.setPtr('ArrowSchema', ptr, 'children', pointers);
    const dictionary = type.kind === 'dictionary' ? blocks.alloc(s.size('ArrowSchema')) : 0;
    s.setPtr('ArrowSchema', ptr, 'dictionary', dictionary);
    children.forEach((child, i) => { writeSchemaInto(into, first + i * s.size('ArrowSchema'), child); written.push(first + i * s.size('ArrowSchema')); });
    if (type.kind === 'dictionary') {
      writeSchemaInto(into, dictionary, { name: '', type: type.valueType, nullable: true, metadata: null });
      written.push(dictionary);
    }
  } catch (err) {
    for (const w of written) into.space.release('ArrowSchema', w);
    blocks.freeAll();
    throw err;
  }
  s.setPtr('ArrowSchema', ptr, 'private_data', e.register({ blocks: blocks.list }));
  s.setPtr('ArrowSchema', ptr, 'release', e.schemaRelease.index);
}

/** Initializes the ArrowArray at ptr (in the module's memory) with a copy of raw; on failure nothing stays allocated. */
export function writeArrayInto(into: ForeignModule, ptr: number, raw: RawArray): void {
  const e = exportsInto(into);
  const s = into.space.structs;
  const blocks = new Blocks(into);
  const written: number[] = [];
  try {
    s.setI64('ArrowArray', ptr, 'length', raw.length);
    s.setI64('ArrowArray', ptr, 'null_count', raw.nullCount);
    s.setI64('ArrowArray', ptr, 'offset', raw.offset);
    s.setI64('ArrowArray', ptr, 'n_buffers', raw.buffers.length);
    const buffers = blocks.alloc(raw.buffers.length * s.layout.pointerSize);
    raw.buffers.forEach((b, i) => into.space.view.setUint32(buffers + i * s.layout.pointerSize, b === null ? 0 : blocks.bytes(b), true));
    s.setPtr('ArrowArray', ptr, 'buffers', buffers);
    s.setI64('ArrowArray', ptr, 'n_children', raw.children.length);
    const [pointers, first] = childBlock(into, blocks, 'ArrowArray', raw.children.length);
    s.setPtr('ArrowArray', ptr, 'children', pointers);
    const dictionary = raw.dictionary !== null ? blocks.alloc(s.size('ArrowArray')) : 0;
    s.setPtr('ArrowArray', ptr, 'dictionary', dictionary);
    raw.children.forEach((child, i) => { writeArrayInto(into, first + i * s.size('ArrowArray'), child); written.push(first + i * s.size('ArrowArray')); });
    if (raw.dictionary !== null) {
      writeArrayInto(into, dictionary, raw.dictionary);
      written.push(dictionary);
    }
  } catch (err) {
    for (const w of written) into.space.release('ArrowArray', w);
    blocks.freeAll();
    throw err;
  }
  s.setPtr('ArrowArray', ptr, 'private_data', e.register({ blocks: blocks.list }));
  s.setPtr('ArrowArray', ptr, 'release', e.arrayRelease.index);
}
