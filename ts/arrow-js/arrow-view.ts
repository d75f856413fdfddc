// Zero-copy imports straight from the C structs into apache-arrow Data, for
// the node kinds most data is made of: fixed-width values, bool, binary and
// utf8 with 32-bit offsets, struct and dictionary. The general path reads a
// RawArray first (a byte view per buffer), checks it (raw-shape.ts), then
// makes a typed array per buffer and the Data (arrow-data.ts): a typed array
// costs about as much as the Data built over it, and a record batch has a few
// per column (issue 14). This reader makes the typed array of the buffer's
// class at once, from the same struct fields and with the same checks.
//
// What it does per node is decided once per apache-arrow type (a plan: the
// nodes in the order they are read, each with its kind as a number, its
// typed array class and value width), and the struct fields are read as
// 32-bit words of the memory: an import runs this code a few hundred times
// before V8 optimizes it, and in its first tiers a string switch, a getter or
// a DataView call per field cost more than the rest of the import (issue 14).
//
// It is optimistic: any node it does not read as the general path surely
// would (a type outside those kinds, an offset, an empty array, an address
// outside the memory or misaligned, a count it does not expect) makes it give
// up on the whole tree, which the general path then reads. Every error, and
// every unusual case, is therefore the general path's.

import * as arrow from 'apache-arrow';
import type { ReadSpace } from '../exchange/handles.js';
import { arrayFieldOffsets, byteWidth } from '../model/raw.js';
import type { DataType } from '../model/types.js';

/** A typed array class, as apache-arrow's DataType.ArrayType gives it. */
type TypedArrayCtor = (new (buffer: ArrayBufferLike, byteOffset: number, length: number) => ArrayBufferView) & { BYTES_PER_ELEMENT: number };

const FIXED = 0;
const BOOL = 1;
const BINARY = 2;
const STRUCT = 3;
const DICTIONARY = 4;

/** One node of a plan. */
interface Step {
  readonly code: number;
  readonly type: arrow.DataType;
  /** The values' (or a dictionary's indices') typed array class; Uint8Array for the others. */
  readonly Ctor: TypedArrayCtor;
  /** Bytes per value (FIXED) or index (DICTIONARY). */
  readonly width: number;
  /** A struct's children. */
  readonly children: number;
}

/** The nodes of a type in the order they are read: a node, its children's subtrees, then its dictionary's. */
type Plan = readonly Step[];

/** By apache-arrow type (built once per imported schema, ts/arrow-js/import.ts); null: not this reader's. */
const plans = new WeakMap<arrow.DataType, Plan | null>();

function planOf(type: DataType, arrowType: arrow.DataType): Plan | null {
  let plan = plans.get(arrowType);
  if (plan === undefined) {
    const steps: Step[] = [];
    plan = planInto(steps, type, arrowType) ? steps : null;
    plans.set(arrowType, plan);
  }
  return plan;
}

function planInto(steps: Step[], type: DataType, arrowType: arrow.DataType): boolean {
  const step = (code: number, Ctor: TypedArrayCtor, width: number, children: number): void => {
    steps.push({ code, type: arrowType, Ctor, width, children });
  };
  switch (type.kind) {
    case 'int': case 'float': case 'decimal': case 'fixed_size_binary': case 'date': case 'time': case 'timestamp':
    case 'duration': case 'interval':
      step(FIXED, arrowType.ArrayType as unknown as TypedArrayCtor, byteWidth(type), 0);
      return true;
    case 'bool':
      step(BOOL, Uint8Array, 0, 0);
      return true;
    case 'binary': case 'utf8':
      step(BINARY, Uint8Array, 0, 0);
      return true;
    case 'struct':
      step(STRUCT, Uint8Array, 0, type.children.length);
      return type.children.every((f, i) => planInto(steps, f.type, arrowType.children[i]!.type));
    case 'dictionary': {
      // 64-bit indices are checked slot by slot by the general path.
      if (type.indexType.bitWidth === 64) return false;
      const dictType = arrowType as arrow.Dictionary;
      step(DICTIONARY, dictType.indices.ArrayType as unknown as TypedArrayCtor, byteWidth(type), 0);
      return planInto(steps, type.valueType, dictType.dictionary);
    }
    default:
      return false;
  }
}

/**
 * What one import reads with: the memory's words (kept from one import to
 * the next while they view the same bytes), its bytes' limit, the layout's
 * word offsets of the ArrowArray fields, the plan and where in it the next
 * node is. Module state, set by viewData: nothing it calls calls back into
 * this reader.
 */
let w: Int32Array = new Int32Array(0);
/** Where w starts in its buffer (w.byteOffset, read once per import). */
let base = 0;
let limit = 0;
/** Words per pointer (1 or 2). */
let pw = 1;
let LENGTH = 0;
let NULL_COUNT = 0;
let OFFSET = 0;
let N_BUFFERS = 0;
let BUFFERS = 0;
let CHILDREN = 0;
let DICT = 0;
/** The ArrowArray struct's size in bytes. */
let SIZE = 0;
let plan: Plan = [];
let next = 0;

/** The word offsets of the ArrowArray fields, by layout. */
const offsets = new WeakMap<object, Int32Array>();

/**
 * The ArrowArray at ptr (validated against `type`, or at 'none') as
 * apache-arrow Data of arrowType, its buffers viewed where they are; null
 * when the tree has a node this reader leaves to the general path.
 */
export function viewData(space: ReadSpace, ptr: number, type: DataType, arrowType: arrow.DataType): arrow.Data | null {
  const p = planOf(type, arrowType);
  if (p === null) return null;
  const s = space.structs;
  const view = s.view;
  if (view.byteOffset % 4 !== 0) return null;
  if (w.buffer !== view.buffer || w.byteOffset !== view.byteOffset || w.length !== view.byteLength >> 2) {
    w = new Int32Array(view.buffer, view.byteOffset, view.byteLength >> 2);
  }
  const layout = s.layout;
  let at = offsets.get(layout);
  if (at === undefined) {
    // As 32-bit word indices.
    const o = arrayFieldOffsets(s);
    at = Int32Array.of(o.length / 4, o.null_count / 4, o.offset / 4, o.n_buffers / 4, o.buffers / 4, o.children / 4, o.dictionary / 4,
      layout.structs.ArrowArray.align, layout.structs.ArrowArray.size);
    offsets.set(layout, at);
  }
  // Structs aligned to 8 bytes (both layouts) keep every field on a word.
  if (at[7]! !== 8) return null;
  base = w.byteOffset;
  limit = view.byteLength - (view.byteLength % 4);
  pw = layout.pointerSize / 4;
  LENGTH = at[0]!;
  NULL_COUNT = at[1]!;
  OFFSET = at[2]!;
  N_BUFFERS = at[3]!;
  BUFFERS = at[4]!;
  CHILDREN = at[5]!;
  DICT = at[6]!;
  SIZE = at[8]!;
  plan = p;
  next = 0;
  const data = node(ptr);
  // Not kept past the import: they may view a buffer the memory's growth detaches later.
  slots[0] = slots[1] = slots[2] = undefined;
  return data;
}

/** The pointer at byte address `address` (aligned for a pointer), or -1 when it is not below 2^32. */
function pointer(address: number): number {
  const i = address >> 2;
  return pw === 1 || w[i + 1] === 0 ? w[i]! >>> 0 : -1;
}

/**
 * Entry i of a node's buffers (n of them, at `buffers`) as a Ctor over `size`
 * bytes; null when it is not there as the general path would take it (NULL,
 * outside the memory, misaligned).
 */
function view(buffers: number, n: number, i: number, size: number, Ctor: TypedArrayCtor): ArrayBufferView | null {
  if (i >= n) return null;
  const at = pointer(buffers + i * 4 * pw);
  if (at <= 0 || size <= 0 || at + size > limit || at % Ctor.BYTES_PER_ELEMENT !== 0) return null;
  return new Ctor(w.buffer, base + at, Math.floor(size / Ctor.BYTES_PER_ELEMENT));
}

/**
 * The buffers argument of apache-arrow's Data constructor, which reads its
 * four entries and keeps none of it: one array for every node (an object
 * per node was one more allocation per column).
 */
const slots: (ArrayBufferView | undefined)[] = [undefined, undefined, undefined, undefined];
function dataBuffers(offsets: ArrayBufferView | undefined, values: ArrayBufferView | undefined, validity: ArrayBufferView | undefined): never {
  slots[0] = offsets;
  slots[1] = values;
  slots[2] = validity;
  return slots as never;
}

function node(ptr: number): arrow.Data | null {
  if (ptr <= 0 || ptr % 8 !== 0 || ptr + SIZE > limit) return null;
  const step = plan[next++]!;
  const i = ptr >> 2;
  // Int64 fields below 2^31 (a null count of -1 too); anything else, the general path.
  const length = w[i + LENGTH]!;
  const nullLow = w[i + NULL_COUNT]!;
  const nullHigh = w[i + NULL_COUNT + 1]!;
  const nBuffers = w[i + N_BUFFERS]!;
  // An offset is a slice (the general path makes it), an empty array may lack buffers.
  if (w[i + LENGTH + 1] !== 0 || length <= 0 || w[i + OFFSET] !== 0 || w[i + OFFSET + 1] !== 0
    || w[i + N_BUFFERS + 1] !== 0 || nBuffers < 0) return null;
  let nullCount: number;
  if (nullHigh === 0 && nullLow >= 0) nullCount = nullLow;
  else if (nullHigh === -1 && nullLow === -1) nullCount = -1;
  else return null;
  const buffers = pointer(ptr + BUFFERS * 4);
  // The buffers' pointer array, when a node has any, must be readable and aligned.
  if (nBuffers > 0 && (buffers <= 0 || buffers % (4 * pw) !== 0 || buffers + nBuffers * 4 * pw > limit)) return null;
  // The validity bitmap: NULL is none; any other pointer must be a readable bitmap.
  let validity: ArrayBufferView | undefined;
  if (nBuffers === 0) return null;
  const bitmapAt = pointer(buffers);
  if (bitmapAt < 0) return null;
  if (bitmapAt !== 0) {
    const bitmap = view(buffers, nBuffers, 0, Math.ceil(length / 8), Uint8Array);
    if (bitmap === null) return null;
    validity = bitmap;
  }
  switch (step.code) {
    case FIXED: {
      const values = view(buffers, nBuffers, 1, length * step.width, step.Ctor);
      return values === null ? null : new arrow.Data(step.type, 0, length, nullCount, dataBuffers(undefined, values, validity));
    }
    case BOOL: {
      const values = view(buffers, nBuffers, 1, Math.ceil(length / 8), Uint8Array);
      return values === null ? null : new arrow.Data(step.type, 0, length, nullCount, dataBuffers(undefined, values, validity));
    }
    case BINARY: {
      const offsets = view(buffers, nBuffers, 1, (length + 1) * 4, Int32Array) as Int32Array | null;
      if (offsets === null) return null;
      const values = view(buffers, nBuffers, 2, offsets[length]!, Uint8Array);
      return values === null ? null : new arrow.Data(step.type, 0, length, nullCount, dataBuffers(offsets, values, validity));
    }
    case STRUCT: {
      const n = step.children;
      const childrenAt = pointer(ptr + CHILDREN * 4);
      if (n > 0 && (childrenAt <= 0 || childrenAt % (4 * pw) !== 0 || childrenAt + n * 4 * pw > limit)) return null;
      const children = new Array<arrow.Data>(n);
      for (let c = 0; c < n; c++) {
        const childPtr = pointer(childrenAt + c * 4 * pw);
        const child = childPtr <= 0 ? null : node(childPtr);
        // A child shorter than the struct is an error the general path names.
        if (child === null || child.length < length) return null;
        children[c] = child;
      }
      return new arrow.Data(step.type, 0, length, nullCount, dataBuffers(undefined, undefined, validity), children);
    }
    case DICTIONARY: {
      const indices = view(buffers, nBuffers, 1, length * step.width, step.Ctor);
      const dictionary = pointer(ptr + DICT * 4);
      const values = indices === null || dictionary <= 0 ? null : node(dictionary);
      return values === null ? null
        : new arrow.Data(step.type, 0, length, nullCount, dataBuffers(undefined, indices!, validity), [], new arrow.Vector([values]));
    }
    default:
      return null;
  }
}
