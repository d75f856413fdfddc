// Raw arrays: any array of the C Data Interface as its buffers and children,
// described by the project's type model, with no apache-arrow involved. This
// is the lossless path (types apache-arrow lacks included), and the common
// ground of every conversion: apache-arrow ↔ raw (arrow-data.ts), integration
// JSON ↔ raw (json/), and raw ↔ C structs (here; written through flat.ts).

import { isShared, type AddressSpace } from '../abi/address-space.js';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, layoutName } from '../abi/errors.js';
import type { StructReader } from '../abi/structs.js';
import { isDetached, writeFlat } from './flat.js';
import type { DataType } from './types.js';

/**
 * One node of an array, exactly as an ArrowArray has it: `buffers` are the C buffers in order (NULL as null), each a byte view holding at least what a consumer may read for `offset + length` slots.
 */
export interface RawArray {
  /** Its type. */
  readonly type: DataType;
  /** Its number of slots. */
  readonly length: number;
  /** -1 when not computed. */
  readonly nullCount: number;
  /** The first slot's index in the buffers. */
  readonly offset: number;
  /** The C buffers, in the spec's order for the type (null for a NULL buffer). */
  readonly buffers: readonly (Uint8Array | null)[];
  /** The children. */
  readonly children: readonly RawArray[];
  /** The dictionary's values, for dictionary-encoded types. */
  readonly dictionary: RawArray | null;
}

/** view: byte views over wasm memory; copy: owned copies. */
export type ImportMode = 'copy' | 'view';

/** Bytes per value of fixed-width types (0 for bool, variable-width and nested types). */
export function byteWidth(type: DataType): number {
  switch (type.kind) {
    case 'int': case 'float': case 'decimal': return type.bitWidth / 8;
    case 'fixed_size_binary': return type.byteWidth;
    case 'date': return type.unit === 'day' ? 4 : 8;
    case 'time': return type.unit === 's' || type.unit === 'ms' ? 4 : 8;
    case 'timestamp': case 'duration': return 8;
    case 'interval': return type.unit === 'months' ? 4 : type.unit === 'day_time' ? 8 : 16;
    case 'dictionary': return type.indexType.bitWidth / 8;
    default: return 0;
  }
}

/** Whether the type's first buffer is a validity bitmap. */
export function hasValidity(type: DataType): boolean {
  return type.kind !== 'null' && type.kind !== 'union' && type.kind !== 'run_end_encoded';
}

/** Width of the offsets of variable-width and list-like types (0 for others). */
export function offsetWidth(type: DataType): 0 | 4 | 8 {
  switch (type.kind) {
    case 'binary': case 'utf8': case 'list': case 'list_view': case 'map': return 4;
    case 'large_binary': case 'large_utf8': case 'large_list': case 'large_list_view': return 8;
    default: return 0;
  }
}

const bitmapBytes = (n: number) => Math.ceil(n / 8);

/** Reads int64 or int32 entry i of a little-endian byte view. */
function entry(bytes: Uint8Array, width: 4 | 8, i: number): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return width === 4 ? v.getInt32(i * 4, true) : Number(v.getBigInt64(i * 8, true));
}

// ---- C → raw --------------------------------------------------------------

/** The byte offsets of the ArrowArray fields a reader of a tree reads. */
export type ArrayFieldOffsets = Readonly<Record<'length' | 'offset' | 'null_count' | 'n_buffers' | 'buffers' | 'children' | 'dictionary', number>>;

const arrayOffsets = new WeakMap<object, ArrayFieldOffsets>();

/**
 * The ArrowArray field offsets of the layout of `s`, looked up once per
 * layout (a reader is made per import). Internal: TreeReader and
 * ts/arrow-js/arrow-view.ts read with them.
 */
export function arrayFieldOffsets(s: StructReader): ArrayFieldOffsets {
  let at = arrayOffsets.get(s.layout);
  if (at === undefined) {
    const f = (name: string) => s.offsetOf('ArrowArray', name);
    at = { length: f('length'), offset: f('offset'), null_count: f('null_count'), n_buffers: f('n_buffers'),
      buffers: f('buffers'), children: f('children'), dictionary: f('dictionary') };
    arrayOffsets.set(s.layout, at);
  }
  return at;
}

/**
 * One read of a tree: the space's bytes and the ArrowArray field offsets,
 * looked up once (a read is on every import's hot path, one node per column).
 * Paths are built only for messages: a node's is its parent's plus a suffix.
 * Internal (not in the package's exports).
 */
export class TreeReader {
  readonly view: DataView;
  readonly limit: number;
  readonly pointerSize: number;
  readonly align: number;
  readonly size: number;
  readonly at: ArrayFieldOffsets;

  constructor(readonly s: StructReader) {
    this.view = s.view;
    this.limit = this.view.byteLength;
    this.pointerSize = s.layout.pointerSize;
    const a = s.layout.structs.ArrowArray;
    this.align = a.align;
    this.size = a.size;
    this.at = arrayFieldOffsets(s);
  }

  /** An int64 as a number, from two 32-bit halves; throws outside the safe integer range. */
  i64(address: number, field: string): number {
    const high = this.view.getInt32(address + 4, true);
    if (high >= 0x200000 || high < -0x200000) {
      throw new ArrowCDeviceError(`ArrowArray.${field}: ${this.view.getBigInt64(address, true)} is out of the supported range`, EINVAL,
        { layout: layoutName(this.s.layout) });
    }
    return high * 0x100000000 + this.view.getUint32(address, true);
  }

  /**
   * Entry i of the C array of pointers at base, after checking that entries
   * 0..i lie in the memory (named by the node's path and the field's suffix,
   * built only for the message).
   */
  pointer(base: number, i: number, node: Path, field: string): number {
    const size = (i + 1) * this.pointerSize;
    if (!(base > 0 && base + size <= this.limit)) this.s.checkRange(base, size, () => pathText(node) + field);
    const address = base + i * this.pointerSize;
    return this.pointerSize === 4 ? this.view.getUint32(address, true) : Number(this.view.getBigUint64(address, true));
  }

  /** A pointer field of the (bounds-checked) struct at ptr. */
  field(ptr: number, offset: number): number {
    const address = ptr + offset;
    return this.pointerSize === 4 ? this.view.getUint32(address, true) : Number(this.view.getBigUint64(address, true));
  }

  /** Bytes [address, address + size) as a view, after a bounds check (buffer i of the node at `node` names it). */
  take(address: number, size: number, node: Path, i: number): Uint8Array {
    if (size === 0) return new Uint8Array(0);
    if (!(address > 0 && Number.isSafeInteger(address) && size > 0 && address + size <= this.limit)) {
      this.s.checkRange(address, size, () => `${pathText(node)}.buffers[${i}]`);
    }
    return new Uint8Array(this.view.buffer, this.view.byteOffset + address, size);
  }
}

/**
 * A node's struct path ("array.children[2].dictionary"), built only when a
 * message needs it: a string, or its parent's path and a suffix (a number i
 * stands for ".children[i]").
 */
export type Path = string | { readonly parent: Path; readonly suffix: string | number };

/** The text of a path. */
export function pathText(p: Path): string {
  if (typeof p === 'string') return p;
  const parent = pathText(p.parent);
  return typeof p.suffix === 'number' ? `${parent}.children[${p.suffix}]` : `${parent}${p.suffix}`;
}

/** One node being read: its struct fields, and its buffers and children taken with bounds checks. */
class NodeReader {
  constructor(readonly r: TreeReader, readonly path: Path, readonly nBuffers: number, readonly bufferArray: number,
    readonly childArray: number) {}

  /** The address of buffer i (an n_buffers that does not have it is an error). */
  address(i: number): number {
    if (i < 0 || i >= this.nBuffers) {
      const p = pathText(this.path);
      throw new ArrowCDeviceError(`${p}.n_buffers: expected more than ${i}, found ${this.nBuffers}`, EINVAL, `${p}.n_buffers`);
    }
    return this.r.pointer(this.bufferArray, i, this.path, '.buffers');
  }

  /** Buffer i's first `size` bytes (null for a NULL buffer of 0 bytes). */
  take(i: number, size: number): Uint8Array | null {
    const at = this.address(i);
    return at === 0 && size === 0 ? null : this.r.take(at, size, this.path, i);
  }

  child(i: number, type: DataType): RawArray {
    const ptr = this.r.pointer(this.childArray, i, this.path, '.children');
    return readNode(this.r, ptr, type, { parent: this.path, suffix: i });
  }
}

/**
 * Reads the ArrowArray at ptr of an address space (already validated against
 * `type`) as a raw array. In view mode the buffers are views of the space's
 * bytes, valid while the C array lives and the memory does not grow.
 *
 * Ownership: borrows the struct, which stays its owner's (nothing is moved or released); in view mode the caller must not use the views after the struct is released or the memory grew.
 * @param space - the address space the struct is in.
 * @param ptr - the ArrowArray's address.
 * @param type - its type (from its schema).
 * @param mode - views or copies.
 * @param path - for messages.
 * @throws `ArrowCDeviceError` naming the field when an address is outside the space.
 */
export function readRaw(space: Pick<AddressSpace, 'structs'>, ptr: number, type: DataType, mode: ImportMode, path = 'array'): RawArray {
  const raw = readNode(new TreeReader(space.structs), ptr, type, path);
  return mode === 'copy' ? copyRaw(raw) : raw;
}

/**
 * A raw tree read as views, with every buffer copied out of memory (what
 * readRaw does in copy mode) in one allocation: one slice of the range that holds them all when they lie close
 * together and 8-byte aligned (as a producer's allocations mostly do), else
 * each copied to an 8-byte aligned place of one new buffer. An allocation
 * per buffer costs more than the copy for the small buffers of a small
 * batch; past ONE_ALLOCATION_LIMIT bytes each buffer is sliced on its own.
 */
export function copyRaw(raw: RawArray): RawArray {
  const views: Uint8Array[] = [];
  collectViews(raw, views);
  if (views.length === 0) return raw;
  let lo = Infinity;
  let hi = 0;
  let total = 0;
  let aligned = true;
  for (const v of views) {
    lo = Math.min(lo, v.byteOffset);
    hi = Math.max(hi, v.byteOffset + v.byteLength);
    total += v.byteLength;
    aligned &&= v.byteOffset % 8 === 0;
  }
  const memory = views[0]!.buffer;
  const places = new Map<Uint8Array, Uint8Array>();
  if (total > ONE_ALLOCATION_LIMIT) {
    for (const v of views) places.set(v, v.slice());
    return withBuffers(raw, places);
  }
  // A shared memory's slice would be shared too: those are copied into a new buffer.
  if (aligned && hi - lo <= 2 * total + 4096 && !isShared(memory)) {
    const copy = memory.slice(lo, hi);
    for (const v of views) places.set(v, new Uint8Array(copy, v.byteOffset - lo, v.byteLength));
  } else {
    let size = 0;
    for (const v of views) size += (v.byteLength + 7) & ~7;
    const copy = new Uint8Array(size);
    let at = 0;
    for (const v of views) {
      copy.set(v, at);
      places.set(v, copy.subarray(at, at + v.byteLength));
      at += (v.byteLength + 7) & ~7;
    }
  }
  return withBuffers(raw, places);
}

/**
 * Above this, each buffer gets an allocation of its own: an allocator maps
 * very large blocks fresh from the system each time (glibc's malloc above
 * 32 MiB), so one block of all of a large batch's buffers would pay page faults
 * on every byte, where buffers of a few MiB each reuse memory freed before.
 */
const ONE_ALLOCATION_LIMIT = 16 << 20;

/** The buffers of a tree that are views of memory (empty ones are not). */
function collectViews(raw: RawArray, out: Uint8Array[]): void {
  for (const b of raw.buffers) if (b !== null && b.byteLength > 0) out.push(b);
  for (const c of raw.children) collectViews(c, out);
  if (raw.dictionary !== null) collectViews(raw.dictionary, out);
}

function withBuffers(raw: RawArray, places: ReadonlyMap<Uint8Array, Uint8Array>): RawArray {
  return {
    ...raw,
    buffers: raw.buffers.map((b) => (b === null ? null : places.get(b) ?? b)),
    children: raw.children.map((c) => withBuffers(c, places)),
    dictionary: raw.dictionary === null ? null : withBuffers(raw.dictionary, places),
  };
}

function readNode(r: TreeReader, ptr: number, type: DataType, path: Path): RawArray {
  // Bounds-checked reads even at validate: 'none', naming the node; aligned
  // as the C validator requires of a struct in the core's memory.
  if (ptr % r.align !== 0) {
    const p = pathText(path);
    throw new ArrowCDeviceError(`${p}: expected a struct ArrowArray aligned to ${r.align} bytes, found ${ptr}`, EINVAL, p);
  }
  if (!(ptr > 0 && ptr + r.size <= r.limit)) r.s.checkRange(ptr, r.size, pathText(path));
  const at = r.at;
  const length = r.i64(ptr + at.length, 'length');
  const offset = r.i64(ptr + at.offset, 'offset');
  const nullCount = r.i64(ptr + at.null_count, 'null_count');
  const nBuffers = r.i64(ptr + at.n_buffers, 'n_buffers');
  const n = new NodeReader(r, path, nBuffers, r.field(ptr, at.buffers), r.field(ptr, at.children));
  // The byte ranges taken below come from these: a negative one would read before a buffer.
  if (length < 0) {
    const p = pathText(path);
    throw new ArrowCDeviceError(`${p}.length: expected a non-negative value, found ${length}`, EINVAL, `${p}.length`);
  }
  if (offset < 0) {
    const p = pathText(path);
    throw new ArrowCDeviceError(`${p}.offset: expected a non-negative value, found ${offset}`, EINVAL, `${p}.offset`);
  }
  const phys = offset + length;
  const buffers: (Uint8Array | null)[] = [];
  if (hasValidity(type)) buffers.push(n.address(0) === 0 ? null : n.take(0, bitmapBytes(phys)));

  let children: RawArray[] = [];
  let dictionary: RawArray | null = null;
  const ow = offsetWidth(type);
  switch (type.kind) {
    case 'null':
      break;
    case 'bool':
      buffers.push(n.take(1, bitmapBytes(phys)));
      break;
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': {
      const offsets = n.take(1, n.address(1) === 0 && phys === 0 ? 0 : (phys + 1) * ow);
      buffers.push(offsets, n.take(2, offsets === null || offsets.length === 0 ? 0 : entry(offsets, ow as 4 | 8, phys)));
      break;
    }
    case 'binary_view': case 'utf8_view': {
      buffers.push(n.take(1, phys * 16));
      const nVariadic = nBuffers - 3;
      const sizes = n.take(nBuffers - 1, nVariadic * 8);
      for (let i = 0; i < nVariadic; i++) buffers.push(n.take(2 + i, entry(sizes!, 8, i)));
      buffers.push(sizes);
      break;
    }
    case 'list': case 'large_list': case 'map':
      buffers.push(n.take(1, n.address(1) === 0 && phys === 0 ? 0 : (phys + 1) * ow));
      children = [n.child(0, type.kind === 'map' ? type.entries.type : type.child.type)];
      break;
    case 'list_view': case 'large_list_view':
      buffers.push(n.take(1, phys * ow), n.take(2, phys * ow));
      children = [n.child(0, type.child.type)];
      break;
    case 'fixed_size_list':
      children = [n.child(0, type.child.type)];
      break;
    case 'struct':
      children = new Array<RawArray>(type.children.length);
      for (let i = 0; i < children.length; i++) children[i] = n.child(i, type.children[i]!.type);
      break;
    case 'union':
      buffers.push(n.take(0, phys));
      if (type.mode === 'dense') buffers.push(n.take(1, phys * 4));
      children = type.children.map((f, i) => n.child(i, f.type));
      break;
    case 'run_end_encoded':
      children = [n.child(0, type.runEnds.type), n.child(1, type.values.type)];
      break;
    case 'dictionary':
      buffers.push(n.take(1, phys * byteWidth(type)));
      dictionary = readNode(r, r.field(ptr, at.dictionary), type.valueType, { parent: path, suffix: '.dictionary' });
      break;
    default:
      buffers.push(n.take(1, phys * byteWidth(type)));
  }
  return { type, length, nullCount, offset, buffers, children, dictionary };
}

// ---- raw → C --------------------------------------------------------------

/**
 * Initializes the ArrowArray at ptr (its old content is ignored) with a copy
 * of raw: one allocation per buffer, owned by the array, all made in one call
 * into the core (flat.ts). On success the struct owns everything (its release
 * frees it); on failure nothing stays allocated and the struct is released.
 * Buffers that are views of this core's memory (zero-copy imports) are copied
 * correctly even when an allocation grows it.
 */
export function writeRaw(core: Core, ptr: number, raw: RawArray): void {
  writeFlat(core, 0, null, ptr, raw);
}

export { isDetached };
