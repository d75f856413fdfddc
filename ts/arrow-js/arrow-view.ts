// Imports straight from the C structs into apache-arrow Data, for the node
// kinds most data is made of: fixed-width values, bool, binary and utf8,
// struct and dictionary, fixed-size list, list and map, and unions (whose
// 64-bit string offsets, list offsets and union slots the core's scans check,
// as the general path's raw-shape.ts would); zero-copy (views of the
// memory), or
// in copy mode over one copy of the bytes that hold every buffer (a first
// walk of the same plan finds them). The general path reads a
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
//
// Longer than 400 lines: the view walk and copy mode's walk of the same plan
// read through one module state (the memory's words, the layout's field
// offsets, the plan, where the typed arrays go), which a split would export.

import * as arrow from 'apache-arrow';
import { isShared } from '../abi/address-space.js';
import type { SlotScan } from '../abi/slot-scan.js';
import type { ReadSpace } from '../exchange/handles.js';
import { arrayFieldOffsets, byteWidth } from '../model/raw.js';
import { childFields, type DataType } from '../model/types.js';

/** A typed array class, as apache-arrow's DataType.ArrayType gives it. */
type TypedArrayCtor = (new (buffer: ArrayBufferLike, byteOffset: number, length: number) => ArrayBufferView) & { BYTES_PER_ELEMENT: number };

const FIXED = 0;
const BOOL = 1;
const BINARY = 2;
const STRUCT = 3;
const DICTIONARY = 4;
const LIST = 5;
const UNION = 6;
const FIXED_LIST = 7;
/** binary and utf8 with 64-bit offsets. */
const LARGE_BINARY = 8;

/** One node of a plan. */
interface Step {
  readonly code: number;
  readonly type: arrow.DataType;
  /** The values' (or a dictionary's indices', or a list's offsets') typed array class; Uint8Array for the others. */
  readonly Ctor: TypedArrayCtor;
  /** Bytes per value (FIXED), index (DICTIONARY) or list offset (LIST: 4 or 8); a union's offsets (4: dense, 0: sparse); a fixed-size list's size. */
  readonly width: number;
  /** A struct's or a union's children. */
  readonly children: number;
  /** A union's type ids, by child. */
  readonly typeIds: readonly number[];
}

/** The nodes of a type in the order they are read: a node, its children's subtrees, then its dictionary's. */
type Plan = readonly Step[];

/** By apache-arrow type (built once per imported schema, ts/arrow-js/import.ts); null: not this reader's. */
const plans = new WeakMap<arrow.DataType, Plan | null>();

/** The last type planned or looked up, checked before the WeakMap (as ts/exchange/schema-cache.ts's last entry). */
let lastType: arrow.DataType | null = null;
let lastPlan: Plan | null = null;

function planOf(type: DataType, arrowType: arrow.DataType): Plan | null {
  if (arrowType === lastType) return lastPlan;
  let plan = plans.get(arrowType);
  if (plan === undefined) {
    const steps: Step[] = [];
    plan = planInto(steps, type, arrowType) ? steps : null;
    plans.set(arrowType, plan);
  }
  lastType = arrowType;
  lastPlan = plan;
  return plan;
}

function planInto(steps: Step[], type: DataType, arrowType: arrow.DataType): boolean {
  const step = (code: number, Ctor: TypedArrayCtor, width: number, children: number, typeIds: readonly number[] = []): void => {
    steps.push({ code, type: arrowType, Ctor, width, children, typeIds });
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
    case 'large_binary': case 'large_utf8':
      step(LARGE_BINARY, Uint8Array, 0, 0);
      return true;
    case 'struct':
      step(STRUCT, Uint8Array, 0, type.children.length);
      return type.children.every((f, i) => planInto(steps, f.type, arrowType.children[i]!.type));
    case 'list': case 'map': case 'large_list':
      if (type.kind === 'large_list') step(LIST, BigInt64Array as unknown as TypedArrayCtor, 8, 1);
      else step(LIST, Int32Array, 4, 1);
      return planInto(steps, childFields(type)[0]!.type, arrowType.children[0]!.type);
    case 'fixed_size_list':
      step(FIXED_LIST, Uint8Array, type.listSize, 1);
      return planInto(steps, type.child.type, arrowType.children[0]!.type);
    case 'union':
      if (type.typeIds.length !== type.children.length) return false;
      step(UNION, Int8Array, type.mode === 'dense' ? 4 : 0, type.children.length, type.typeIds);
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
/**
 * Where the typed arrays go: the memory's buffer (view mode) or one copy of
 * the bytes that hold every buffer (copy mode), the addresses [lo, hi) it
 * holds, and `shift`, which turns an address into a byte offset of `source`.
 * In copy mode, `copying` says how else the buffers are copied: SLICED each
 * on its own, or PACKED into `packed` at `cursor`.
 */
let source: ArrayBufferLike = new ArrayBuffer(0);
let lo = 0;
let hi = 0;
let shift = 0;
const SPAN = 0;
const SLICED = 1;
const PACKED = 2;
let copying = SPAN;
let packed = new Uint8Array(0);
let cursor = 0;

/** The word offsets of the ArrowArray fields, by layout. */
const offsets = new WeakMap<object, Int32Array>();

/** The core's scans, which check list offsets and union slots (null: lists and unions are the general path's), and whether to. */
let scan: SlotScan | null = null;
let scanning = true;

/**
 * The ArrowArray at ptr (validated against `type`, or at 'none') as
 * apache-arrow Data of arrowType, its buffers viewed where they are, or
 * copied (`copy`: the Data keeps nothing of the space's memory); null when
 * the tree has a node this reader leaves to the general path. scans: the
 * core's, without which a list or union is left to the general path;
 * scanSlots false: its offsets and slots were checked already (the C
 * validator at 'full').
 */
export function viewData(space: ReadSpace, ptr: number, type: DataType, arrowType: arrow.DataType, copy = false,
  scans: SlotScan | null = null, scanSlots = true): arrow.Data | null {
  const p = planOf(type, arrowType);
  if (p === null) return null;
  scan = scans;
  scanning = scanSlots;
  const s = space.structs;
  const view = s.view;
  if (view.byteOffset % 4 !== 0) return null;
  // Words of the whole memory, divided, not shifted: a memory of 2 GiB or more has a length no 32-bit shift keeps.
  const words = Math.floor(view.byteLength / 4);
  if (w.buffer !== view.buffer || w.byteOffset !== view.byteOffset || w.length !== words) {
    w = new Int32Array(view.buffer, view.byteOffset, words);
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
  source = w.buffer;
  lo = 0;
  hi = limit;
  shift = base;
  copying = SPAN;
  if (copy && !copyOut(ptr)) return null;
  next = 0;
  const data = node(ptr);
  // Not kept past the import: they may view a buffer the memory's growth detaches later.
  slots[0] = slots[1] = slots[2] = slots[3] = undefined;
  scan = null;
  source = EMPTY;
  packed = EMPTY_BYTES;
  return data;
}

const EMPTY = new ArrayBuffer(0);
const EMPTY_BYTES = new Uint8Array(0);

/**
 * Above this, each buffer is sliced out on its own (as the general path
 * does, ts/model/raw.ts: a very large block would be mapped fresh, and pay a
 * page fault per page).
 */
const ONE_COPY_LIMIT = 16 << 20;

/**
 * Copy mode, as the general path copies (ts/model/raw.ts, copyRaw()): finds
 * the bytes the tree's buffers take (a walk of the plan that reads the node
 * fields node() reads) and copies them out in one slice when they lie close
 * together, as a producer's allocations mostly do; else each buffer to an
 * 8-byte aligned place of one new buffer (far apart, or a shared memory,
 * whose slices are shared); past ONE_COPY_LIMIT bytes, each buffer on its
 * own. False when the walk meets a node node() would not read: the general
 * path reads the tree.
 */
function copyOut(ptr: number): boolean {
  next = 0;
  spanLo = Infinity;
  spanHi = 0;
  spanBytes = 0;
  spanPacked = 0;
  if (!span(ptr)) return false;
  const memory = w.buffer;
  if (spanBytes === 0) {
    // Nothing to copy (a struct without validity or children): a buffer node() asked for anyway would find no room.
    copying = PACKED;
    packed = EMPTY_BYTES;
    cursor = 0;
    return true;
  }
  if (spanBytes > ONE_COPY_LIMIT) {
    copying = SLICED;
    return true;
  }
  // From an 8-byte boundary, so that every buffer keeps its alignment in the copy.
  const from = spanLo - (spanLo % 8);
  if (spanHi - from > 2 * spanBytes + 4096 || isShared(memory)) {
    copying = PACKED;
    packed = new Uint8Array(spanPacked);
    cursor = 0;
    return true;
  }
  source = (memory as ArrayBuffer).slice(base + from, base + spanHi);
  lo = from;
  hi = spanHi;
  shift = -from;
  return true;
}

let spanLo = 0;
let spanHi = 0;
let spanBytes = 0;
/** The bytes of the buffers each at an 8-byte aligned place. */
let spanPacked = 0;

/** Buffer i of a node's (n of them, at `buffers`), `size` bytes, counted in the span; false when it is not there. */
function spanOf(buffers: number, n: number, i: number, size: number): boolean {
  if (i >= n) return false;
  const at = pointer(buffers + i * 4 * pw);
  if (at <= 0 || size <= 0 || at + size > limit) return false;
  if (at < spanLo) spanLo = at;
  if (at + size > spanHi) spanHi = at + size;
  spanBytes += size;
  spanPacked += (size + 7) & ~7;
  return true;
}

/** node()'s walk, counting the bytes each buffer it reads takes (its checks are node()'s, repeated there). */
function span(ptr: number): boolean {
  if (ptr <= 0 || ptr % 8 !== 0 || ptr + SIZE > limit) return false;
  const step = plan[next++]!;
  const i = ptr >>> 2;
  const length = w[i + LENGTH]!;
  const nBuffers = w[i + N_BUFFERS]!;
  if (w[i + LENGTH + 1] !== 0 || length <= 0 || w[i + N_BUFFERS + 1] !== 0 || nBuffers <= 0) return false;
  const buffers = pointer(ptr + BUFFERS * 4);
  if (buffers <= 0 || buffers % (4 * pw) !== 0 || buffers + nBuffers * 4 * pw > limit) return false;
  // A union has no validity: its buffer 0 is its type ids.
  if (step.code === UNION) {
    return spanOf(buffers, nBuffers, 0, length) && (step.width === 0 || spanOf(buffers, nBuffers, 1, length * step.width))
      && spanChildren(ptr, step.children);
  }
  const bitmapAt = pointer(buffers);
  if (bitmapAt < 0 || (bitmapAt !== 0 && !spanOf(buffers, nBuffers, 0, Math.ceil(length / 8)))) return false;
  switch (step.code) {
    case FIXED:
      return spanOf(buffers, nBuffers, 1, length * step.width);
    case BOOL:
      return spanOf(buffers, nBuffers, 1, Math.ceil(length / 8));
    case BINARY: {
      if (!spanOf(buffers, nBuffers, 1, (length + 1) * 4)) return false;
      const offsets = pointer(buffers + 4 * pw);
      if (offsets % 4 !== 0) return false;
      return spanOf(buffers, nBuffers, 2, w[(offsets >>> 2) + length]!);
    }
    case LARGE_BINARY: {
      if (!spanOf(buffers, nBuffers, 1, (length + 1) * 8)) return false;
      const offsets = pointer(buffers + 4 * pw);
      // The last offset, below 2^31 (its high word 0), is the values' size.
      const last = (offsets >>> 2) + 2 * length;
      if (offsets % 8 !== 0 || w[last + 1] !== 0 || w[last]! < 0) return false;
      return spanOf(buffers, nBuffers, 2, w[last]!);
    }
    case STRUCT: case FIXED_LIST:
      return spanChildren(ptr, step.children);
    case LIST:
      return spanOf(buffers, nBuffers, 1, (length + 1) * step.width) && spanChildren(ptr, 1);
    case DICTIONARY:
      return spanOf(buffers, nBuffers, 1, length * step.width) && span(pointer(ptr + DICT * 4));
    default:
      return false;
  }
}

/** span() of the n children of the node at ptr. */
function spanChildren(ptr: number, n: number): boolean {
  const childrenAt = pointer(ptr + CHILDREN * 4);
  if (n > 0 && (childrenAt <= 0 || childrenAt % (4 * pw) !== 0 || childrenAt + n * 4 * pw > limit)) return false;
  for (let c = 0; c < n; c++) {
    if (!span(pointer(childrenAt + c * 4 * pw))) return false;
  }
  return true;
}

/** The pointer at byte address `address` (aligned for a pointer), or -1 when it is not below 2^32. */
function pointer(address: number): number {
  const i = address >>> 2;
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
  const count = Math.floor(size / Ctor.BYTES_PER_ELEMENT);
  if (copying === SPAN) {
    // In copy mode, a buffer outside the copy (the walk that made it saw others) is the general path's.
    if (at < lo || at + size > hi) return null;
    return new Ctor(source, at + shift, count);
  }
  if (copying === SLICED) return new Ctor(sliceOut(at, size), 0, count);
  if (cursor + size > packed.length) return null;
  const into = cursor;
  packed.set(new Uint8Array(w.buffer, base + at, size), into);
  cursor += (size + 7) & ~7;
  return new Ctor(packed.buffer, into, count);
}

/** Bytes [at, at + size) of the memory in an ArrayBuffer of their own. */
function sliceOut(at: number, size: number): ArrayBuffer {
  const memory = w.buffer;
  if (!isShared(memory)) return (memory as ArrayBuffer).slice(base + at, base + at + size);
  // A shared memory's slice would be shared: copied into a new buffer instead.
  const out = new Uint8Array(size);
  out.set(new Uint8Array(memory, base + at, size));
  return out.buffer;
}

/**
 * The buffers argument of apache-arrow's Data constructor, which reads its
 * four entries and keeps none of it: one array for every node (an object
 * per node was one more allocation per column).
 */
const slots: (ArrayBufferView | undefined)[] = [undefined, undefined, undefined, undefined];

/** The n children of the node at ptr, each at least minLength long; null when one is not node()'s. */
function childNodes(ptr: number, n: number, minLength: number): arrow.Data[] | null {
  const childrenAt = pointer(ptr + CHILDREN * 4);
  if (n > 0 && (childrenAt <= 0 || childrenAt % (4 * pw) !== 0 || childrenAt + n * 4 * pw > limit)) return null;
  const children = new Array<arrow.Data>(n);
  for (let c = 0; c < n; c++) {
    const childPtr = pointer(childrenAt + c * 4 * pw);
    const child = childPtr <= 0 ? null : node(childPtr);
    if (child === null || child.length < minLength) return null;
    children[c] = child;
  }
  return children;
}

/**
 * A union node (no validity: buffer 0 is its type ids, buffer 1 a dense
 * union's offsets): every slot's id one of the union's and every dense
 * offset inside its child (the core's scan), a sparse union's children at
 * least as long as it; else the general path's.
 */
function unionNode(ptr: number, step: Step, buffers: number, nBuffers: number, length: number, nullCount: number): arrow.Data | null {
  const ids = view(buffers, nBuffers, 0, length, Int8Array);
  const offsets = step.width === 0 ? undefined : view(buffers, nBuffers, 1, length * step.width, Int32Array);
  if (ids === null || offsets === null || (scanning && scan === null)) return null;
  const children = childNodes(ptr, step.children, step.width === 0 ? length : 0);
  if (children === null) return null;
  if (scanning) {
    const lengths = children.map((c) => c.length);
    const bad = scan!.union(ids, offsets ?? null, 0, length, step.typeIds, lengths);
    if (bad === null || bad < length) return null;
  }
  return new arrow.Data(step.type, 0, length, nullCount, dataBuffers(offsets, undefined, undefined, ids), children);
}
function dataBuffers(offsets: ArrayBufferView | undefined, values: ArrayBufferView | undefined, validity: ArrayBufferView | undefined,
  typeIds?: ArrayBufferView): never {
  slots[0] = offsets;
  slots[1] = values;
  slots[2] = validity;
  slots[3] = typeIds;
  return slots as never;
}

function node(ptr: number): arrow.Data | null {
  if (ptr <= 0 || ptr % 8 !== 0 || ptr + SIZE > limit) return null;
  const step = plan[next++]!;
  const i = ptr >>> 2;
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
  if (step.code === UNION) return unionNode(ptr, step, buffers, nBuffers, length, nullCount);
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
    case LARGE_BINARY: {
      const offsets = view(buffers, nBuffers, 1, (length + 1) * 8, BigInt64Array as unknown as TypedArrayCtor) as BigInt64Array | null;
      if (offsets === null || (scanning && scan === null)) return null;
      const size = offsets[length]!;
      if (size < 0n || size >= 2147483648n) return null;
      const values = view(buffers, nBuffers, 2, Number(size), Uint8Array);
      // Every offset ascending and within the values (the general path checks 64-bit ones: apache-arrow reads them unclamped).
      if (values === null || (scanning && scan!.offsets(offsets, 8, 0, length, Number(size)) <= length)) return null;
      return new arrow.Data(step.type, 0, length, nullCount, dataBuffers(offsets, values, validity));
    }
    case STRUCT: {
      // A child shorter than the struct is an error the general path names.
      const children = childNodes(ptr, step.children, length);
      return children === null ? null : new arrow.Data(step.type, 0, length, nullCount, dataBuffers(undefined, undefined, validity), children);
    }
    case FIXED_LIST: {
      // A child shorter than the lists' values is an error the general path names.
      const children = childNodes(ptr, 1, length * step.width);
      return children === null ? null : new arrow.Data(step.type, 0, length, nullCount, dataBuffers(undefined, undefined, validity), children);
    }
    case LIST: {
      const offsets = view(buffers, nBuffers, 1, (length + 1) * step.width, step.Ctor);
      if (offsets === null || (scanning && scan === null)) return null;
      const children = childNodes(ptr, 1, 0);
      if (children === null) return null;
      // Every offset ascending and within the child (a wrong one is an error the general path names).
      if (scanning && scan!.offsets(offsets, step.width as 4 | 8, 0, length, children[0]!.length) <= length) return null;
      return new arrow.Data(step.type, 0, length, nullCount, dataBuffers(offsets, undefined, validity), children);
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
