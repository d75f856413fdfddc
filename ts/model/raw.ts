// Raw arrays: any array of the C Data Interface as its buffers and children,
// described by the project's type model, with no apache-arrow involved. This
// is the lossless path (types apache-arrow lacks included), and the common
// ground of every conversion: apache-arrow ↔ raw (arrow-data.ts), integration
// JSON ↔ raw (json/), and raw ↔ C structs (here; written through flat.ts).

import type { AddressSpace } from '../abi/address-space.js';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
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

/** Takes byte ranges of memory as views or copies, after a bounds check. */
class ByteTaker {
  constructor(private readonly s: StructReader, private readonly mode: ImportMode) {}

  take(address: number, size: number, what: string | (() => string)): Uint8Array {
    if (size === 0) return new Uint8Array(0);
    this.s.checkRange(address, size, what);
    const v = this.s.view;
    const bytes = new Uint8Array(v.buffer, v.byteOffset + address, size);
    return this.mode === 'copy' ? bytes.slice() : bytes;
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
  return readNode(space.structs, new ByteTaker(space.structs, mode), ptr, type, path);
}

function readNode(s: StructReader, t: ByteTaker, ptr: number, type: DataType, path: string): RawArray {
  // Bounds-checked reads even at validate: 'none', naming the node; aligned
  // as the C validator requires of a struct in the core's memory.
  const align = s.layout.structs.ArrowArray.align;
  if (ptr % align !== 0) throw new ArrowCDeviceError(`${path}: expected a struct ArrowArray aligned to ${align} bytes, found ${ptr}`, EINVAL, path);
  s.checkRange(ptr, s.size('ArrowArray'), path);
  const length = s.i64('ArrowArray', ptr, 'length');
  const offset = s.i64('ArrowArray', ptr, 'offset');
  const nullCount = s.i64('ArrowArray', ptr, 'null_count');
  const nBuffers = s.i64('ArrowArray', ptr, 'n_buffers');
  const bufferArray = s.ptr('ArrowArray', ptr, 'buffers');
  const childArray = s.ptr('ArrowArray', ptr, 'children');
  // The byte ranges taken below come from these: a negative one would read before a buffer.
  if (length < 0) throw new ArrowCDeviceError(`${path}.length: expected a non-negative value, found ${length}`, EINVAL, `${path}.length`);
  if (offset < 0) throw new ArrowCDeviceError(`${path}.offset: expected a non-negative value, found ${offset}`, EINVAL, `${path}.offset`);
  const address = (i: number) => {
    if (i < 0 || i >= nBuffers) throw new ArrowCDeviceError(`${path}.n_buffers: expected more than ${i}, found ${nBuffers}`, EINVAL, `${path}.n_buffers`);
    s.checkRange(bufferArray, (i + 1) * s.layout.pointerSize, () => `${path}.buffers`);
    return s.ptrAt(bufferArray + i * s.layout.pointerSize);
  };
  const take = (i: number, size: number) => {
    const at = address(i);
    return at === 0 && size === 0 ? null : t.take(at, size, () => `${path}.buffers[${i}]`);
  };
  const child = (i: number, childType: DataType) => {
    s.checkRange(childArray, (i + 1) * s.layout.pointerSize, () => `${path}.children`);
    return readNode(s, t, s.ptrAt(childArray + i * s.layout.pointerSize), childType, `${path}.children[${i}]`);
  };
  const phys = offset + length;
  const buffers: (Uint8Array | null)[] = [];
  if (hasValidity(type)) buffers.push(address(0) === 0 ? null : take(0, bitmapBytes(phys)));

  let children: RawArray[] = [];
  let dictionary: RawArray | null = null;
  const ow = offsetWidth(type);
  switch (type.kind) {
    case 'null':
      break;
    case 'bool':
      buffers.push(take(1, bitmapBytes(phys)));
      break;
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': {
      const offsets = take(1, address(1) === 0 && phys === 0 ? 0 : (phys + 1) * ow);
      buffers.push(offsets, take(2, offsets === null || offsets.length === 0 ? 0 : entry(offsets, ow as 4 | 8, phys)));
      break;
    }
    case 'binary_view': case 'utf8_view': {
      buffers.push(take(1, phys * 16));
      const nVariadic = nBuffers - 3;
      const sizes = take(nBuffers - 1, nVariadic * 8);
      for (let i = 0; i < nVariadic; i++) buffers.push(take(2 + i, entry(sizes!, 8, i)));
      buffers.push(sizes);
      break;
    }
    case 'list': case 'large_list': case 'map':
      buffers.push(take(1, address(1) === 0 && phys === 0 ? 0 : (phys + 1) * ow));
      children = [child(0, type.kind === 'map' ? type.entries.type : type.child.type)];
      break;
    case 'list_view': case 'large_list_view':
      buffers.push(take(1, phys * ow), take(2, phys * ow));
      children = [child(0, type.child.type)];
      break;
    case 'fixed_size_list':
      children = [child(0, type.child.type)];
      break;
    case 'struct':
      children = type.children.map((f, i) => child(i, f.type));
      break;
    case 'union':
      buffers.push(take(0, phys));
      if (type.mode === 'dense') buffers.push(take(1, phys * 4));
      children = type.children.map((f, i) => child(i, f.type));
      break;
    case 'run_end_encoded':
      children = [child(0, type.runEnds.type), child(1, type.values.type)];
      break;
    case 'dictionary':
      buffers.push(take(1, phys * byteWidth(type)));
      dictionary = readNode(s, t, s.ptr('ArrowArray', ptr, 'dictionary'), type.valueType, `${path}.dictionary`);
      break;
    default:
      buffers.push(take(1, phys * byteWidth(type)));
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
