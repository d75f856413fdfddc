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
import { isDetached, type RawArray } from '../model/raw.js';
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
    this.schemaRelease = into.install((ptr: number) => this.release('ArrowSchema', ptr >>> 0), 'vi');
    this.arrayRelease = into.install((ptr: number) => this.release('ArrowArray', ptr >>> 0), 'vi');
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

  /**
   * A copy of data. A view of the module's own memory (a view-mode import
   * exported back) is copied from where `views` found it before the export
   * began: an allocation that grows the memory detaches such a view.
   */
  bytes(data: Uint8Array, views?: TargetViews): number {
    const own = views?.get(data);
    const p = this.alloc(own === undefined ? data.byteLength : own[1]);
    if (own !== undefined) {
      this.into.space.bytes.copyWithin(p, own[0], own[0] + own[1]);
    } else {
      if (isDetached(data)) throw new ArrowCDeviceError('a source buffer is detached (a view of a wasm memory that grew since)', EINVAL);
      this.into.space.bytes.set(data, p);
    }
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

/**
 * Writes one node at ptr: `own` fills the fields of its own (allocating
 * through `blocks`), then its children and dictionary are written into
 * blocks of this node, each by `write`. On failure nothing stays allocated;
 * on success the node's release is this library's callback in the table.
 */
function writeNode<T>(into: ForeignModule, struct: 'ArrowSchema' | 'ArrowArray', ptr: number, own: (blocks: Blocks) => void,
  children: readonly T[], dictionary: T | null, write: (at: number, item: T) => void): void {
  const e = exportsInto(into);
  const s = into.space.structs;
  const blocks = new Blocks(into);
  const written: number[] = [];
  try {
    own(blocks);
    s.setI64(struct, ptr, 'n_children', children.length);
    const [pointers, first] = childBlock(into, blocks, struct, children.length);
    s.setPtr(struct, ptr, 'children', pointers);
    const dict = dictionary !== null ? blocks.alloc(s.size(struct)) : 0;
    s.setPtr(struct, ptr, 'dictionary', dict);
    children.forEach((child, i) => {
      const at = first + i * s.size(struct);
      write(at, child);
      written.push(at);
    });
    if (dictionary !== null) {
      write(dict, dictionary);
      written.push(dict);
    }
  } catch (err) {
    for (const w of written) into.space.release(struct, w);
    blocks.freeAll();
    throw err;
  }
  s.setPtr(struct, ptr, 'private_data', e.register({ blocks: blocks.list }));
  s.setPtr(struct, ptr, 'release', (struct === 'ArrowSchema' ? e.schemaRelease : e.arrayRelease).index);
}

/** Initializes the ArrowSchema at ptr (in the module's memory) for field; on failure nothing stays allocated. */
export function writeSchemaInto(into: ForeignModule, ptr: number, field: Field): void {
  const s = into.space.structs;
  const { type } = field;
  const dictionary: Field | null = type.kind === 'dictionary' ? { name: '', type: type.valueType, nullable: true, metadata: null } : null;
  writeNode(into, 'ArrowSchema', ptr, (blocks) => {
    s.setPtr('ArrowSchema', ptr, 'format', blocks.text(formatOf(type)));
    s.setPtr('ArrowSchema', ptr, 'name', blocks.text(field.name));
    const metadata = encodeMetadata(field.metadata);
    s.setPtr('ArrowSchema', ptr, 'metadata', metadata === null ? 0 : blocks.bytes(metadata));
    s.setI64('ArrowSchema', ptr, 'flags', flagsOf(field));
  }, childFields(type), dictionary, (at, child) => writeSchemaInto(into, at, child));
}

/** Buffers of a raw tree that are views of the target module's memory: their [address, size] there. */
type TargetViews = Map<Uint8Array, readonly [number, number]>;

function collectTargetViews(raw: RawArray, memory: ArrayBufferLike, out: TargetViews): TargetViews {
  for (const b of raw.buffers) if (b !== null && b.buffer === memory) out.set(b, [b.byteOffset, b.byteLength]);
  raw.children.forEach((c) => collectTargetViews(c, memory, out));
  if (raw.dictionary !== null) collectTargetViews(raw.dictionary, memory, out);
  return out;
}

/** Initializes the ArrowArray at ptr (in the module's memory) with a copy of raw; on failure nothing stays allocated. */
export function writeArrayInto(into: ForeignModule, ptr: number, raw: RawArray,
  views: TargetViews = collectTargetViews(raw, into.space.memory.buffer, new Map())): void {
  const s = into.space.structs;
  writeNode(into, 'ArrowArray', ptr, (blocks) => {
    s.setI64('ArrowArray', ptr, 'length', raw.length);
    s.setI64('ArrowArray', ptr, 'null_count', raw.nullCount);
    s.setI64('ArrowArray', ptr, 'offset', raw.offset);
    s.setI64('ArrowArray', ptr, 'n_buffers', raw.buffers.length);
    const buffers = blocks.alloc(raw.buffers.length * s.layout.pointerSize);
    raw.buffers.forEach((b, i) => {
      // Allocated first: an allocation may grow the memory, and a view taken before it would be detached.
      const at = b === null ? 0 : blocks.bytes(b, views);
      into.space.view.setUint32(buffers + i * s.layout.pointerSize, at, true);
    });
    s.setPtr('ArrowArray', ptr, 'buffers', buffers);
  }, raw.children, raw.dictionary, (at, child) => writeArrayInto(into, at, child, views));
}
