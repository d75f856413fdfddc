// What apache-arrow needs of a raw array before it gets one: every buffer as
// long as the node's offset + length needs, and every reference from one node
// into another (offsets into a child or a values buffer, type ids, dense union
// offsets, dictionary indices, binary views, run ends) inside its target.
// apache-arrow reads lazily (at Vector.get, long after the import) and without
// bounds checks, so a bad reference would surface there as a RangeError, or a
// silent read of another slot. The C validator checks all of this only at
// 'full' (a middle offset is not read at 'default', nothing at 'none'); this
// check runs on every conversion to apache-arrow, whatever the level. It reads
// each offset, index and view once: O(slots), no allocation per slot; the
// passes over offsets, union slots and binary views run in the core when it
// is given (SlotScan, csrc/validate/slots.c), the others here.

import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import type { SlotScan } from '../abi/slot-scan.js';
import { byteWidth, hasValidity, offsetWidth, pathText, type Path, type RawArray } from '../model/raw.js';


// Every message starts with the struct path it is about, which the error carries too.
const fail = (path: Path, message: string) => {
  const p = pathText(path);
  return new ArrowCDeviceError(`${p}: ${message}`, EINVAL, p);
};
const bitmapBytes = (n: number) => Math.ceil(n / 8);

/** Throws unless buffer i of raw holds at least `size` bytes. */
function needBytes(raw: RawArray, i: number, size: number, path: Path): Uint8Array {
  const b = raw.buffers[i] ?? null;
  const found = b?.byteLength ?? 0;
  if (size > 0 && found < size) throw fail(`${pathText(path)}.buffers[${i}]`, `expected at least ${size} bytes for ${raw.offset + raw.length} slots, found ${found}`);
  return b ?? new Uint8Array(0);
}

type Ints = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float64Array;

/**
 * The first `count` entries of an integer buffer as a typed array, after one
 * bounds check for all of them: the scans below index it directly, with no
 * call per slot. A buffer not aligned for its width is copied (rare); 64-bit
 * entries become numbers (as Number(BigInt) would round them), read as two
 * 32-bit words since a BigInt per slot is slow. read false: the bounds check
 * only (an empty array).
 */
function entries(b: Uint8Array | null, width: number, signed: boolean, count: number, what: Path, read = true): Ints {
  const size = needEntries(b, width, count, what);
  if (b === null || size === 0 || !read) return new Int32Array(0);
  const bytes = b.byteOffset % Math.min(width, 4) === 0 ? b : b.slice(0, size);
  const words = (n: number) => new (signed ? Int32Array : Uint32Array)(bytes.buffer as ArrayBuffer, bytes.byteOffset, n);
  switch (width) {
    case 1: return new (signed ? Int8Array : Uint8Array)(bytes.buffer as ArrayBuffer, bytes.byteOffset, count);
    case 2: return new (signed ? Int16Array : Uint16Array)(bytes.buffer as ArrayBuffer, bytes.byteOffset, count);
    case 4: return words(count);
  }
  const w = words(2 * count);
  const out = new Float64Array(count);
  // Low word unsigned, high word signed as the entries are; the sum of two exact doubles rounds once.
  for (let i = 0; i < count; i++) out[i] = (w[2 * i]! >>> 0) + w[2 * i + 1]! * 4294967296;
  return out;
}

/** Throws unless b holds `count` entries of `width` bytes; their size. */
function needEntries(b: Uint8Array | null, width: number, count: number, what: Path): number {
  const size = count * width;
  const found = b?.byteLength ?? 0;
  if (size > found) throw fail(what, `expected at least ${size} bytes, found ${found}`);
  return size;
}

/** Whether apache-arrow reads slot i: bitmap is null when every slot is read. */
const isRead = (bitmap: Uint8Array | null, i: number) => bitmap === null || ((bitmap[i >> 3]! >> (i & 7)) & 1) === 1;

function childAt(raw: RawArray, k: number, path: Path): RawArray {
  const c = raw.children[k];
  if (c === undefined) throw fail(path, `expected at least ${k + 1} children, found ${raw.children.length}`);
  return c;
}

/** The path of child k of the node at path. */
const at = (path: Path, k: number): Path => ({ parent: path, suffix: k });

function needChildLength(c: RawArray, slots: number, path: Path, what: string): void {
  if (c.length < slots) throw fail(path, `length ${c.length} is shorter than the ${slots} slots ${what}`);
}

/**
 * Throws ArrowCDeviceError (EINVAL) naming the path and slot when raw, or a
 * node below it, refers outside its buffers or children as apache-arrow would
 * read them; returns when apache-arrow can read every slot within bounds.
 * scan false skips the passes over every slot (offsets, type ids, dictionary
 * indices, run ends, views): for data the C validator checked at 'full',
 * which checks each of them; the per-node checks (lengths, buffer sizes,
 * child lengths) always run. slots: the core's scans, which make the passes
 * over offsets, union slots and binary views (null: the loops here).
 */
export function checkShape(raw: RawArray, path: Path = 'array', scan = true, slots: SlotScan | null = null): void {
  const { type, offset, length } = raw;
  if (!Number.isSafeInteger(length) || length < 0) throw fail(`${pathText(path)}.length`, `expected a non-negative integer, found ${length}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw fail(`${pathText(path)}.offset`, `expected a non-negative integer, found ${offset}`);
  const phys = offset + length;
  const bitmap = hasValidity(type) ? raw.buffers[0] ?? null : null;
  if (bitmap !== null) needBytes(raw, 0, bitmapBytes(phys), path);
  // apache-arrow reads a slot's value unless its bit is clear and the null count is not 0.
  const readMap = raw.nullCount !== 0 ? bitmap : null;
  // Child k and its path are made where a case needs them: no closure per node (one per column of a batch).

  switch (type.kind) {
    case 'null':
      break;
    case 'bool':
      needBytes(raw, 1, bitmapBytes(phys), path);
      break;
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8':
      // apache-arrow slices 32-bit-offset strings with subarray, which clamps
      // to the buffer: a bad middle offset gives a wrong string, read within
      // the input, never an exception, so a zero-copy import does not pay a
      // pass over every offset for it ('full' refuses such offsets). Large
      // offsets are BigInts there, which subarray does not take.
      const large = type.kind === 'large_binary' || type.kind === 'large_utf8';
      if (scan && large) checkOffsets(raw, (raw.buffers[2] ?? null)?.byteLength ?? 0, { parent: path, suffix: '.buffers[1]' }, () => `the ${(raw.buffers[2] ?? null)?.byteLength ?? 0}-byte buffer ${pathText(path)}.buffers[2]`, slots);
      break;
    case 'list': case 'large_list': case 'map':
      if (scan) checkOffsets(raw, childAt(raw, 0, path).length, { parent: path, suffix: '.buffers[1]' }, () => `${pathText(at(path, 0))} of length ${childAt(raw, 0, path).length}`, slots);
      break;
    case 'list_view': case 'large_list_view': {
      const w = offsetWidth(type);
      const c = childAt(raw, 0, path);
      if (!scan) break;
      const starts = entries(raw.buffers[1] ?? null, w, true, phys, { parent: path, suffix: '.buffers[1]' });
      const sizes = entries(raw.buffers[2] ?? null, w, true, phys, { parent: path, suffix: '.buffers[2]' });
      let i = offset;
      for (; i < phys; i++) if (isRead(readMap, i) && (starts[i]! < 0 || sizes[i]! < 0 || starts[i]! + sizes[i]! > c.length)) break;
      if (i < phys) {
        const start = starts[i]!, size = sizes[i]!;
        throw fail(path, `slot ${i} views child slots [${start}, ${start + size}), outside ${pathText(at(path, 0))} of length ${c.length}`);
      }
      break;
    }
    case 'fixed_size_list':
      needChildLength(childAt(raw, 0, path), phys * type.listSize, at(path, 0), `of ${phys} lists of ${type.listSize}`);
      break;
    case 'struct':
      // A loop without a closure or a path per child: a record batch has a child per column.
      for (let k = 0; k < type.children.length; k++) {
        const c = raw.children[k];
        if (c === undefined || c.length < phys) needChildLength(childAt(raw, k, path), phys, at(path, k), 'the struct refers to');
      }
      break;
    case 'union': {
      const ids = entries(raw.buffers[0] ?? null, 1, true, phys, { parent: path, suffix: '.buffers[0]' });
      const offsets = type.mode === 'dense' ? entries(raw.buffers[1] ?? null, 4, true, phys, { parent: path, suffix: '.buffers[1]' }, scan) : null;
      if (scan) checkUnionSlots(raw, type.typeIds, ids, offsets, path, slots);
      if (type.mode === 'sparse') type.children.forEach((_, k) => needChildLength(childAt(raw, k, path), phys, at(path, k), 'the sparse union refers to'));
      break;
    }
    case 'dictionary': {
      const w = byteWidth(type);
      const indices = entries(raw.buffers[1] ?? null, w, type.indexType.signed, phys, { parent: path, suffix: '.buffers[1]' }, scan && w === 8);
      const dict = raw.dictionary;
      if (dict === null) throw fail(path, `dictionary-encoded array without a dictionary`);
      // An 8-, 16- or 32-bit index outside the dictionary reads as null there
      // (a negative one as an empty value), within the input: as for string
      // offsets, the pass over every such index is left to 'full'.
      let i = offset;
      for (; scan && w === 8 && i < phys; i++) if (isRead(readMap, i) && (indices[i]! < 0 || indices[i]! >= dict.length)) break;
      if (scan && w === 8 && i < phys) throw fail({ parent: path, suffix: '.buffers[1]' }, `index ${indices[i]} at slot ${i} is outside the dictionary of length ${dict.length}`);
      checkShape(dict, { parent: path, suffix: '.dictionary' }, scan, slots);
      return;
    }
    case 'run_end_encoded':
      if (scan) checkRunEnds(raw, childAt(raw, 0, path), childAt(raw, 1, path), path);
      break;
    case 'binary_view': case 'utf8_view':
      if (scan) checkViews(raw, readMap, path, slots);
      break;
    default:
      needBytes(raw, 1, phys * byteWidth(type), path);
  }
  for (let k = 0; k < raw.children.length; k++) checkShape(raw.children[k]!, { parent: path, suffix: k }, scan, slots);
}

/** Offsets [offset, offset + length] ascending inside [0, limit] (target names what they index). */
function checkOffsets(raw: RawArray, limit: number, what: Path, target: () => string, slots: SlotScan | null): void {
  const w = offsetWidth(raw.type);
  const b = raw.buffers[1] ?? null;
  const phys = raw.offset + raw.length;
  // A zero-length array may come without offsets (apache-arrow is given one).
  if (phys === 0 && (b === null || b.byteLength === 0)) return;
  let i = -1;
  if (slots !== null && b !== null) {
    needEntries(b, w, phys + 1, what);
    i = slots.offsets(b, w as 4 | 8, raw.offset, phys, limit);
    if (i > phys) return;
  }
  // The entries as numbers: for the pass below, or the message of the slot the core's scan found.
  const at = entries(b, w, true, phys + 1, what);
  // Every slot: one pass with no message built inside it (a template literal
  // in the loop, even unreached, made V8 compile it about 10x slower), over
  // one typed array class per loop (a loop over several is about 5x slower).
  if (i < 0) i = at instanceof Int32Array ? firstBadOffset32(at, raw.offset, phys, limit) : firstBadOffset(at as Float64Array, raw.offset, phys, limit);
  if (i > phys) return;
  const o = at[i]!;
  if (o < 0 || o > limit) throw fail(what, `offset ${o} at slot ${i} is outside ${target()}`);
  throw fail(what, `offset ${o} at slot ${i} is less than the offset before it (${at[i - 1]})`);
}

/** The first slot in [from, to] whose offset is outside [0, limit] or below the one before, or to + 1. */
function firstBadOffset32(at: Int32Array, from: number, to: number, limit: number): number {
  let i = from;
  for (let previous = 0; i <= to; i++) {
    const o = at[i]!;
    if (o < 0 || o > limit || (i > from && o < previous)) break;
    previous = o;
  }
  return i;
}

/** firstBadOffset32 over 64-bit offsets read as numbers: the same loop on purpose, one typed array class per function. */
function firstBadOffset(at: Float64Array, from: number, to: number, limit: number): number {
  let i = from;
  for (let previous = 0; i <= to; i++) {
    const o = at[i]!;
    if (o < 0 || o > limit || (i > from && o < previous)) break;
    previous = o;
  }
  return i;
}

/** Each slot's type id one of the union's, and its dense offset (offsets not null) inside that child. */
function checkUnionSlots(raw: RawArray, typeIds: readonly number[], ids: Ints, offsets: Ints | null, path: Path, slots: SlotScan | null): void {
  // Child lengths by child index, -1 for a missing child, so that any offset into it fails.
  const lengths = typeIds.map((_, k) => raw.children[k]?.length ?? -1);
  const phys = raw.offset + raw.length;
  let i = slots !== null ? slots.union(ids, offsets, raw.offset, phys, typeIds, lengths) : null;
  if (i === phys) return;
  // Child index by type id + 128 (-1 for none): an array lookup per slot, not
  // a Map.get. As in a Map, a repeated id maps to its last child. (Made for
  // the loops below, or to name the child of the slot the core's scan found.)
  const childOf = new Int16Array(256).fill(-1);
  typeIds.forEach((id, k) => { if (id >= -128 && id < 128) childOf[id + 128] = k; });
  i ??= offsets === null ? firstBadId(ids as Int8Array, childOf, raw.offset, phys)
    : firstBadSlot(ids as Int8Array, offsets as Int32Array, childOf, Float64Array.from(lengths), raw.offset, phys);
  if (i === phys) return;
  const k = childOf[ids[i]! + 128]!;
  if (k < 0) throw fail({ parent: path, suffix: '.buffers[0]' }, `slot ${i} has type id ${ids[i]}, expected one of ${typeIds.join(', ')}`);
  const length = childAt(raw, k, path).length;
  throw fail({ parent: path, suffix: '.buffers[1]' }, `offset ${offsets![i]} at slot ${i} is outside ${pathText(path)}.children[${k}] of length ${length}`);
}

/** The first slot in [from, to) whose type id has no child, or to (each loop over one typed array class). */
function firstBadId(ids: Int8Array, childOf: Int16Array, from: number, to: number): number {
  let i = from;
  for (; i < to; i++) if (childOf[ids[i]! + 128]! < 0) break;
  return i;
}

/** firstBadId, or the first whose dense offset is outside its child. */
function firstBadSlot(ids: Int8Array, offsets: Int32Array, childOf: Int16Array, lengths: Float64Array, from: number, to: number): number {
  let i = from;
  for (; i < to; i++) {
    const k = childOf[ids[i]! + 128]!;
    if (k < 0) break;
    const o = offsets[i]!;
    if (!(o >= 0 && o < lengths[k]!)) break;
  }
  return i;
}

/** Run ends ascending and positive, the last covering the parent, each run with a value. */
function checkRunEnds(raw: RawArray, runEnds: RawArray, values: RawArray, path: Path): void {
  const w = byteWidth(runEnds.type);
  const what = `${pathText(path)}.children[0].buffers[1]`;
  const at = entries(runEnds.buffers[1] ?? null, w, true, runEnds.offset + runEnds.length, what);
  const o = runEnds.offset;
  const before = (k: number) => k === 0 ? 0 : at[o + k - 1]!;
  let k = 0;
  for (; k < runEnds.length; k++) if (at[o + k]! <= before(k)) break;
  if (k < runEnds.length) throw fail(what, `run end ${at[o + k]} at run ${k} is not greater than the one before it (${before(k)})`);
  const previous = before(runEnds.length);
  const phys = raw.offset + raw.length;
  if (phys > 0 && previous < phys) throw fail(what, `the last run ends at ${previous}, before the ${phys} slots of ${pathText(path)}`);
  needChildLength(values, runEnds.length, `${pathText(path)}.children[1]`, `of ${runEnds.length} runs`);
}

/** Each read view's bytes inside the view or its variadic buffer. */
function checkViews(raw: RawArray, readMap: Uint8Array | null, path: Path, slots: SlotScan | null): void {
  const phys = raw.offset + raw.length;
  const word = entries(raw.buffers[1] ?? null, 4, true, phys * 4, { parent: path, suffix: '.buffers[1]' });
  const nVariadic = raw.buffers.length - 3;
  const lengths = raw.buffers.slice(2, 2 + nVariadic).map((b) => b?.byteLength ?? 0);
  let i = (slots !== null && phys > raw.offset ? slots.views(word, readMap, raw.offset, phys, lengths) : null) ?? raw.offset;
  for (; i < phys; i++) {
    const size = word[4 * i]!, index = word[4 * i + 2]!, start = word[4 * i + 3]!;
    if (!isRead(readMap, i) || size <= 12) continue;
    if (!(index >= 0 && index < nVariadic && start >= 0 && start + size <= lengths[index]!)) break;
  }
  if (i < phys) {
    const size = word[4 * i]!, index = word[4 * i + 2]!, start = word[4 * i + 3]!;
    const b = index >= 0 && index < nVariadic ? raw.buffers[2 + index] ?? null : undefined;
    if (b === undefined) throw fail({ parent: path, suffix: '.buffers[1]' }, `view ${i} names buffer ${index}, expected one in [0, ${nVariadic})`);
    if (start < 0 || start + size > (b?.byteLength ?? 0)) {
      throw fail(`${pathText(path)}.buffers[${2 + index}]`, `view ${i} reads bytes [${start}, ${start + size}), outside the ${b?.byteLength ?? 0}-byte buffer`);
    }
  }
}
