// Zero-copy imports straight from the C structs into apache-arrow Data, for
// the node kinds most data is made of: fixed-width values, bool, binary and
// utf8 with 32-bit offsets, struct and dictionary. The general path reads a
// RawArray first (a byte view per buffer), checks it (raw-shape.ts), then
// makes a typed array per buffer and the Data (arrow-data.ts): a typed array
// costs about as much as the Data built over it, and a record batch has a few
// per column (issue 14). This reader makes the typed array of the buffer's
// class at once, from the same struct fields and with the same checks.
//
// It is optimistic: any node it does not read as the general path surely
// would (a type outside those kinds, an offset, an empty array, an address
// outside the memory or misaligned, a count it does not expect) makes it give
// up on the whole tree, which the general path then reads. Every error, and
// every unusual case, is therefore the general path's.

import * as arrow from 'apache-arrow';
import type { ReadSpace } from '../exchange/handles.js';
import { TreeReader, byteWidth } from '../model/raw.js';
import type { DataType } from '../model/types.js';

/**
 * The ArrowArray at ptr (validated against `type`, or at 'none') as
 * apache-arrow Data of arrowType, its buffers viewed where they are; null
 * when the tree has a node this reader leaves to the general path.
 */
export function viewData(space: ReadSpace, ptr: number, type: DataType, arrowType: arrow.DataType): arrow.Data | null {
  return node(new TreeReader(space.structs), ptr, type, arrowType);
}

/** A typed array class, as apache-arrow's DataType.ArrayType gives it. */
type TypedArrayCtor = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => ArrayBufferView;

/** An int64 field below 2^32 (-1 for a null count of -1), or -2: the general path reads it. */
function small(r: TreeReader, address: number): number {
  const high = r.view.getInt32(address + 4, true);
  const low = r.view.getUint32(address, true);
  if (high === 0) return low;
  return high === -1 && low === 0xffffffff ? -1 : -2;
}

/**
 * Buffer i of the node (its pointer array at `buffers`, n of them) as a
 * Ctor over `size` bytes; null when it is not there as the general path
 * would take it (NULL, outside the memory, misaligned for Ctor).
 */
function buffer(r: TreeReader, buffers: number, n: number, i: number, size: number, Ctor: TypedArrayCtor & { BYTES_PER_ELEMENT: number }): ArrayBufferView | null {
  const at = pointerAt(r, buffers, n, i);
  if (at <= 0 || size <= 0 || at + size > r.limit || at % Ctor.BYTES_PER_ELEMENT !== 0) return null;
  return new Ctor(r.view.buffer, r.view.byteOffset + at, Math.floor(size / Ctor.BYTES_PER_ELEMENT));
}

/** Entry i of a pointer array of n entries, or -1 when it is not readable. */
function pointerAt(r: TreeReader, base: number, n: number, i: number): number {
  const size = (i + 1) * r.pointerSize;
  if (i >= n || !(base > 0 && base + size <= r.limit)) return -1;
  return r.field(base + i * r.pointerSize, 0);
}

function node(r: TreeReader, ptr: number, type: DataType, arrowType: arrow.DataType): arrow.Data | null {
  if (ptr <= 0 || ptr % r.align !== 0 || ptr + r.size > r.limit) return null;
  const at = r.at;
  const length = small(r, ptr + at.length);
  const nullCount = small(r, ptr + at.null_count);
  const nBuffers = small(r, ptr + at.n_buffers);
  // An offset is a slice (the general path makes it), an empty array may lack buffers.
  if (length <= 0 || small(r, ptr + at.offset) !== 0 || nullCount < -1 || nBuffers < 0) return null;
  const buffers = r.field(ptr, at.buffers);
  // The validity bitmap: NULL is none; any other pointer must be a readable bitmap.
  let validity: Uint8Array | undefined;
  if (type.kind !== 'null' && type.kind !== 'union' && type.kind !== 'run_end_encoded') {
    const address = pointerAt(r, buffers, nBuffers, 0);
    if (address < 0) return null;
    if (address !== 0) {
      const bitmap = buffer(r, buffers, nBuffers, 0, Math.ceil(length / 8), Uint8Array);
      if (bitmap === null) return null;
      validity = bitmap as Uint8Array;
    }
  }
  switch (type.kind) {
    case 'int': case 'float': case 'decimal': case 'fixed_size_binary': case 'date': case 'time': case 'timestamp':
    case 'duration': case 'interval': {
      const values = buffer(r, buffers, nBuffers, 1, length * byteWidth(type), arrowType.ArrayType as unknown as TypedArrayCtor & { BYTES_PER_ELEMENT: number });
      return values === null ? null : new arrow.Data(arrowType, 0, length, nullCount, { 1: values, 2: validity } as never);
    }
    case 'bool': {
      const values = buffer(r, buffers, nBuffers, 1, Math.ceil(length / 8), Uint8Array);
      return values === null ? null : new arrow.Data(arrowType, 0, length, nullCount, { 1: values, 2: validity } as never);
    }
    case 'binary': case 'utf8': {
      const offsets = buffer(r, buffers, nBuffers, 1, (length + 1) * 4, Int32Array) as Int32Array | null;
      if (offsets === null) return null;
      const values = buffer(r, buffers, nBuffers, 2, offsets[length]!, Uint8Array);
      return values === null ? null : new arrow.Data(arrowType, 0, length, nullCount, { 0: offsets, 1: values, 2: validity } as never);
    }
    case 'struct': {
      const fields = type.children;
      const children = new Array<arrow.Data>(fields.length);
      const base = r.field(ptr, at.children);
      for (let i = 0; i < fields.length; i++) {
        const childPtr = pointerAt(r, base, fields.length, i);
        const child = childPtr <= 0 ? null : node(r, childPtr, fields[i]!.type, arrowType.children[i]!.type);
        // A child shorter than the struct is an error the general path names.
        if (child === null || child.length < length) return null;
        children[i] = child;
      }
      return new arrow.Data(arrowType, 0, length, nullCount, { 2: validity } as never, children);
    }
    case 'dictionary': {
      const dictType = arrowType as arrow.Dictionary;
      // 64-bit indices are checked slot by slot by the general path.
      if (type.indexType.bitWidth === 64) return null;
      const indices = buffer(r, buffers, nBuffers, 1, length * byteWidth(type), dictType.indices.ArrayType as unknown as TypedArrayCtor & { BYTES_PER_ELEMENT: number });
      const dictionary = r.field(ptr, at.dictionary);
      const values = indices === null || dictionary <= 0 ? null : node(r, dictionary, type.valueType, dictType.dictionary);
      return values === null ? null
        : new arrow.Data(arrowType, 0, length, nullCount, { 1: indices, 2: validity } as never, [], new arrow.Vector([values]));
    }
    default:
      return null;
  }
}
