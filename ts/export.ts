// Producing: apache-arrow data written into ArrowSchema / ArrowArray structs
// in the core's memory. The C core allocates and owns everything (release
// frees it); this module decides the buffers of each type and fills them.
// Arrays are written with offset 0: arrow-js pre-slices every buffer but the
// bitmaps, which are shifted here when a slice does not start on a byte.

import type * as arrow from 'apache-arrow';
import type { Core } from './core.js';
import { copyBits, copyBytes } from './bits.js';
import { ArrowCDeviceError, ENOSYS, EINVAL } from './errors.js';
import { flagsOf, formatOf } from './format.js';
import { encodeMetadata } from './metadata.js';
import { childFields, type DataType, type Field } from './types.js';

/**
 * Initializes the ArrowSchema at `ptr` (its old content is ignored) for field.
 * On success the struct owns everything (its release frees it); on failure
 * nothing stays allocated and the struct is released.
 */
export function writeSchema(core: Core, ptr: number, field: Field): void {
  const { type } = field;
  const children = childFields(type);
  const dictionary = type.kind === 'dictionary' ? type : null;
  core.schemaInit(ptr, formatOf(type), field.name, encodeMetadata(field.metadata), flagsOf(field),
    children.length, dictionary !== null);
  try {
    const s = core.structs;
    const childArray = s.ptr('ArrowSchema', ptr, 'children');
    for (let i = 0; i < children.length; i++) {
      writeSchema(core, s.ptrAt(childArray + i * s.layout.pointerSize), children[i]);
    }
    if (dictionary !== null) {
      const value: Field = { name: '', type: dictionary.valueType, nullable: true, metadata: null };
      writeSchema(core, s.ptr('ArrowSchema', ptr, 'dictionary'), value);
    }
  } catch (e) {
    core.schemaRelease(ptr);
    throw e;
  }
}

/** Bytes per value of fixed-width types (bool excluded: bits). */
export function byteWidth(type: DataType): number {
  switch (type.kind) {
    case 'int': return type.bitWidth / 8;
    case 'float': return type.bitWidth / 8;
    case 'decimal': return type.bitWidth / 8;
    case 'fixed_size_binary': return type.byteWidth;
    case 'date': return type.unit === 'day' ? 4 : 8;
    case 'time': return type.unit === 's' || type.unit === 'ms' ? 4 : 8;
    case 'timestamp': case 'duration': return 8;
    case 'interval': return type.unit === 'months' ? 4 : type.unit === 'day_time' ? 8 : 16;
    case 'dictionary': return type.indexType.bitWidth / 8;
    default: return 0;
  }
}

/** A C array under construction: its struct address and its buffer writer. */
class ArrayWriter {
  constructor(private readonly core: Core, readonly ptr: number, private readonly what: string) {}

  /** Allocates buffer i (owned by the array) and returns its address. */
  alloc(i: number, size: number): number {
    return this.core.arrayAllocateBuffer(this.ptr, i, size);
  }

  bytes(i: number, src: ArrayBufferView, from: number, size: number): void {
    const at = this.alloc(i, size);
    copyBytes(src, from, size, this.core.bytes, at, `${this.what}.buffers[${i}]`);
  }

  bits(i: number, src: Uint8Array, bitOffset: number, n: number): void {
    const at = this.alloc(i, (n + 7) >> 3);
    copyBits(src, bitOffset, n, this.core.bytes, at, `${this.what}.buffers[${i}]`);
  }

  child(i: number): number {
    const s = this.core.structs;
    return s.ptrAt(s.ptr('ArrowArray', this.ptr, 'children') + i * s.layout.pointerSize);
  }

  dictionary(): number {
    return this.core.structs.ptr('ArrowArray', this.ptr, 'dictionary');
  }
}

/**
 * Initializes the ArrowArray at `ptr` (its old content is ignored) with a copy
 * of data, of the given type. On success the struct owns every buffer and
 * child; on failure nothing stays allocated and the struct is released.
 */
export function writeArray(core: Core, ptr: number, data: arrow.Data, type: DataType, what = 'array'): void {
  const n = data.length;
  const nulls = type.kind === 'union' || type.kind === 'null' ? 0 : data.nullCount;
  const layout = arrayLayout(data, type);
  core.arrayInit(ptr, n, type.kind === 'null' ? n : nulls, 0, layout.nBuffers, layout.nChildren, type.kind === 'dictionary');
  const w = new ArrayWriter(core, ptr, what);
  try {
    if (layout.validity && nulls > 0) w.bits(0, data.nullBitmap!, data.offset, n);
    fillBuffers(core, w, data, type, what);
  } catch (e) {
    core.arrayRelease(ptr);
    throw e;
  }
}

function arrayLayout(data: arrow.Data, type: DataType): { nBuffers: number; nChildren: number; validity: boolean } {
  switch (type.kind) {
    case 'null': return { nBuffers: 0, nChildren: 0, validity: false };
    case 'union': return { nBuffers: type.mode === 'dense' ? 2 : 1, nChildren: type.children.length, validity: false };
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8':
      return { nBuffers: 3, nChildren: 0, validity: true };
    case 'binary_view': case 'utf8_view':
      return { nBuffers: 3 + data.variadicBuffers.length, nChildren: 0, validity: true };
    case 'list': case 'large_list': case 'map': return { nBuffers: 2, nChildren: 1, validity: true };
    case 'fixed_size_list': return { nBuffers: 1, nChildren: 1, validity: true };
    case 'struct': return { nBuffers: 1, nChildren: type.children.length, validity: true };
    case 'list_view': case 'large_list_view': case 'run_end_encoded':
      throw new ArrowCDeviceError(`${type.kind}: apache-arrow data of this type cannot exist`, ENOSYS);
    default: return { nBuffers: 2, nChildren: 0, validity: true };
  }
}

function fillBuffers(core: Core, w: ArrayWriter, data: arrow.Data, type: DataType, what: string): void {
  const n = data.length;
  switch (type.kind) {
    case 'null':
      return;
    case 'bool':
      w.bits(1, data.values as Uint8Array, data.offset, n);
      return;
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8':
      writeVariableWidth(w, data, n, type.kind.startsWith('large') ? 8 : 4);
      return;
    case 'binary_view': case 'utf8_view': {
      w.bytes(1, data.values as Uint8Array, 0, n * 16);
      const variadic = data.variadicBuffers;
      const sizesAt = w.alloc(2 + variadic.length, variadic.length * 8);
      variadic.forEach((b, i) => {
        w.bytes(2 + i, b, 0, b.byteLength);
        core.view.setBigInt64(sizesAt + i * 8, BigInt(b.byteLength), true);
      });
      return;
    }
    case 'list': case 'large_list': case 'map': {
      const offsets = writeOffsets(w, data.valueOffsets as Int32Array | BigInt64Array, n, type.kind === 'large_list' ? 8 : 4);
      const child = data.children[0];
      const sliced = offsets.first === 0 && child.length === offsets.last ? child : child.slice(offsets.first, offsets.last - offsets.first);
      const childField = type.kind === 'map' ? type.entries : type.child;
      writeArray(core, w.child(0), sliced, childField.type, `${what}.children[0]`);
      return;
    }
    case 'fixed_size_list':
      writeArray(core, w.child(0), data.children[0], type.child.type, `${what}.children[0]`);
      return;
    case 'struct':
      type.children.forEach((f, i) => writeArray(core, w.child(i), data.children[i], f.type, `${what}.children[${i}]`));
      return;
    case 'union': {
      w.bytes(0, data.typeIds, 0, n);
      if (type.mode === 'dense') w.bytes(1, data.valueOffsets as Int32Array, 0, n * 4);
      type.children.forEach((f, i) => writeArray(core, w.child(i), data.children[i], f.type, `${what}.children[${i}]`));
      return;
    }
    case 'dictionary': {
      w.bytes(1, data.values, 0, n * byteWidth(type));
      const dictionary = data.dictionary;
      if (dictionary === undefined) throw new ArrowCDeviceError(`${what}: dictionary-encoded data without a dictionary`, EINVAL);
      if (dictionary.data.length !== 1) {
        throw new ArrowCDeviceError(`${what}.dictionary: a dictionary of ${dictionary.data.length} chunks (delta dictionaries) is not supported yet`, ENOSYS);
      }
      writeArray(core, w.dictionary(), dictionary.data[0], type.valueType, `${what}.dictionary`);
      return;
    }
    case 'list_view': case 'large_list_view': case 'run_end_encoded':
      throw new ArrowCDeviceError(`${what}: ${type.kind} data cannot come from apache-arrow`, ENOSYS);
    default:
      w.bytes(1, data.values, 0, n * byteWidth(type));
  }
}

/** Writes n + 1 offsets starting at 0 (rebased when a slice starts later). */
function writeOffsets(w: ArrayWriter, offsets: Int32Array | BigInt64Array, n: number, width: 4 | 8): { first: number; last: number } {
  // A zero-length array may come with no offsets at all (IPC files of Arrow
  // 0.14): the C interface still wants one offset.
  if (n === 0 && offsets.length === 0) {
    w.bytes(1, new Uint8Array(width), 0, width);
    return { first: 0, last: 0 };
  }
  if (offsets.length < n + 1) {
    throw new ArrowCDeviceError(`offsets: expected ${n + 1}, found ${offsets.length}`, EINVAL);
  }
  const first = Number(offsets[0]);
  const last = Number(offsets[n]);
  if (first === 0) {
    w.bytes(1, offsets, 0, (n + 1) * width);
  } else {
    const used = offsets.subarray(0, n + 1);
    const rebased = used instanceof BigInt64Array
      ? BigInt64Array.from(used, (v) => v - BigInt(first))
      : Int32Array.from(used, (v) => v - first);
    w.bytes(1, rebased, 0, (n + 1) * width);
  }
  return { first, last };
}

function writeVariableWidth(w: ArrayWriter, data: arrow.Data, n: number, width: 4 | 8): void {
  const { first, last } = writeOffsets(w, data.valueOffsets as Int32Array | BigInt64Array, n, width);
  w.bytes(2, data.values as Uint8Array, first, last - first);
}
