// What apache-arrow needs of a raw array before it gets one: every buffer as
// long as the node's offset + length needs, and every reference from one node
// into another (offsets into a child or a values buffer, type ids, dense union
// offsets, dictionary indices, binary views, run ends) inside its target.
// apache-arrow reads lazily (at Vector.get, long after the import) and without
// bounds checks, so a bad reference would surface there as a RangeError, or a
// silent read of another slot. The C validator checks all of this only at
// 'full' (a middle offset is not read at 'default', nothing at 'none'); this
// check runs on every conversion to apache-arrow, whatever the level. It reads
// each offset, index and view once: O(slots), no allocation per slot.

import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { byteWidth, hasValidity, offsetWidth, type RawArray } from '../model/raw.js';


// Every message starts with the struct path it is about, which the error carries too.
const fail = (path: string, message: string) => new ArrowCDeviceError(`${path}: ${message}`, EINVAL, path);
const bitmapBytes = (n: number) => Math.ceil(n / 8);

/** Throws unless buffer i of raw holds at least `size` bytes. */
function needBytes(raw: RawArray, i: number, size: number, path: string): Uint8Array {
  const b = raw.buffers[i] ?? null;
  const found = b?.byteLength ?? 0;
  if (size > 0 && found < size) throw fail(`${path}.buffers[${i}]`, `expected at least ${size} bytes for ${raw.offset + raw.length} slots, found ${found}`);
  return b ?? new Uint8Array(0);
}

/**
 * Entry i of an integer buffer, for i below `count`: one bounds check for all
 * of them (the scans below read every slot; intAt's per-read check is for
 * single reads).
 */
function entries(b: Uint8Array | null, width: number, signed: boolean, count: number, what: string): (i: number) => number {
  const size = count * width;
  const found = b?.byteLength ?? 0;
  if (size > found) throw fail(what, `expected at least ${size} bytes, found ${found}`);
  // Aligned 8-, 16- and 32-bit entries read through a typed array: several
  // times faster than DataView calls in the scans over every slot.
  if (b !== null && width <= 4 && b.byteOffset % width === 0) {
    const Ctor = width === 1 ? (signed ? Int8Array : Uint8Array) : width === 2 ? (signed ? Int16Array : Uint16Array) : (signed ? Int32Array : Uint32Array);
    const t = new Ctor(b.buffer as ArrayBuffer, b.byteOffset, count);
    return (i) => t[i]!;
  }
  const v = new DataView(b?.buffer ?? new ArrayBuffer(0), b?.byteOffset ?? 0, found);
  switch (width) {
    case 1: return signed ? (i) => v.getInt8(i) : (i) => v.getUint8(i);
    case 2: return signed ? (i) => v.getInt16(2 * i, true) : (i) => v.getUint16(2 * i, true);
    case 4: return signed ? (i) => v.getInt32(4 * i, true) : (i) => v.getUint32(4 * i, true);
    default: return signed ? (i) => Number(v.getBigInt64(8 * i, true)) : (i) => Number(v.getBigUint64(8 * i, true));
  }
}

function needChildLength(c: RawArray, slots: number, path: string, what: string): void {
  if (c.length < slots) throw fail(path, `length ${c.length} is shorter than the ${slots} slots ${what}`);
}

/**
 * Throws ArrowCDeviceError (EINVAL) naming the path and slot when raw, or a
 * node below it, refers outside its buffers or children as apache-arrow would
 * read them; returns when apache-arrow can read every slot within bounds.
 * scan false skips the passes over every slot (offsets, type ids, dictionary
 * indices, run ends, views): for data the C validator checked at 'full',
 * which checks each of them; the per-node checks (lengths, buffer sizes,
 * child lengths) always run.
 */
export function checkShape(raw: RawArray, path = 'array', scan = true): void {
  const { type, offset, length } = raw;
  if (!Number.isSafeInteger(length) || length < 0) throw fail(`${path}.length`, `expected a non-negative integer, found ${length}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw fail(`${path}.offset`, `expected a non-negative integer, found ${offset}`);
  const phys = offset + length;
  const bitmap = hasValidity(type) ? raw.buffers[0] ?? null : null;
  if (bitmap !== null) needBytes(raw, 0, bitmapBytes(phys), path);
  // apache-arrow reads a slot's value unless its bit is clear and the null count is not 0.
  const useBitmap = bitmap !== null && raw.nullCount !== 0;
  const read = (i: number) => !useBitmap || ((bitmap![i >> 3]! >> (i & 7)) & 1) === 1;
  const child = (k: number): RawArray => {
    const c = raw.children[k];
    if (c === undefined) throw fail(path, `expected at least ${k + 1} children, found ${raw.children.length}`);
    return c;
  };
  const at = (k: number) => `${path}.children[${k}]`;

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
      if (scan && large) checkOffsets(raw, (raw.buffers[2] ?? null)?.byteLength ?? 0, `${path}.buffers[1]`, `the ${(raw.buffers[2] ?? null)?.byteLength ?? 0}-byte buffer ${path}.buffers[2]`);
      break;
    case 'list': case 'large_list': case 'map':
      if (scan) checkOffsets(raw, child(0).length, `${path}.buffers[1]`, `${at(0)} of length ${child(0).length}`);
      break;
    case 'list_view': case 'large_list_view': {
      const w = offsetWidth(type);
      const c = child(0);
      if (!scan) break;
      const starts = entries(raw.buffers[1] ?? null, w, true, phys, `${path}.buffers[1]`);
      const sizes = entries(raw.buffers[2] ?? null, w, true, phys, `${path}.buffers[2]`);
      for (let i = offset; i < phys; i++) {
        if (!read(i)) continue;
        const start = starts(i);
        const size = sizes(i);
        if (start < 0 || size < 0 || start + size > c.length) {
          throw fail(path, `slot ${i} views child slots [${start}, ${start + size}), outside ${at(0)} of length ${c.length}`);
        }
      }
      break;
    }
    case 'fixed_size_list':
      needChildLength(child(0), phys * type.listSize, at(0), `of ${phys} lists of ${type.listSize}`);
      break;
    case 'struct':
      type.children.forEach((_, k) => needChildLength(child(k), phys, at(k), `the struct refers to`));
      break;
    case 'union': {
      const childOf = new Map(type.typeIds.map((id, k) => [id, k]));
      const ids = entries(raw.buffers[0] ?? null, 1, true, phys, `${path}.buffers[0]`);
      const offsets = type.mode === 'dense' ? entries(raw.buffers[1] ?? null, 4, true, phys, `${path}.buffers[1]`) : null;
      for (let i = offset; scan && i < phys; i++) {
        const id = ids(i);
        const k = childOf.get(id);
        if (k === undefined) throw fail(`${path}.buffers[0]`, `slot ${i} has type id ${id}, expected one of ${type.typeIds.join(', ')}`);
        if (offsets !== null) {
          const j = offsets(i);
          if (j < 0 || j >= child(k).length) throw fail(`${path}.buffers[1]`, `offset ${j} at slot ${i} is outside ${at(k)} of length ${child(k).length}`);
        }
      }
      if (type.mode === 'sparse') type.children.forEach((_, k) => needChildLength(child(k), phys, at(k), 'the sparse union refers to'));
      break;
    }
    case 'dictionary': {
      const w = byteWidth(type);
      const indices = entries(raw.buffers[1] ?? null, w, type.indexType.signed, phys, `${path}.buffers[1]`);
      const dict = raw.dictionary;
      if (dict === null) throw fail(path, `dictionary-encoded array without a dictionary`);
      // An 8-, 16- or 32-bit index outside the dictionary reads as null there
      // (a negative one as an empty value), within the input: as for string
      // offsets, the pass over every such index is left to 'full'.
      for (let i = offset; scan && w === 8 && i < phys; i++) {
        if (!read(i)) continue;
        const index = indices(i);
        if (index < 0 || index >= dict.length) throw fail(`${path}.buffers[1]`, `index ${index} at slot ${i} is outside the dictionary of length ${dict.length}`);
      }
      checkShape(dict, `${path}.dictionary`, scan);
      return;
    }
    case 'run_end_encoded':
      if (scan) checkRunEnds(raw, child(0), child(1), path);
      break;
    case 'binary_view': case 'utf8_view':
      if (scan) checkViews(raw, read, path);
      break;
    default:
      needBytes(raw, 1, phys * byteWidth(type), path);
  }
  raw.children.forEach((c, k) => checkShape(c, at(k), scan));
}

/** Offsets [offset, offset + length] ascending inside [0, limit] (target names what they index). */
function checkOffsets(raw: RawArray, limit: number, what: string, target: string): void {
  const w = offsetWidth(raw.type);
  const b = raw.buffers[1] ?? null;
  const phys = raw.offset + raw.length;
  // A zero-length array may come without offsets (apache-arrow is given one).
  if (phys === 0 && (b === null || b.byteLength === 0)) return;
  const at = entries(b, w, true, phys + 1, what);
  let previous = 0;
  for (let i = raw.offset; i <= phys; i++) {
    const o = at(i);
    if (o < 0 || o > limit) throw fail(what, `offset ${o} at slot ${i} is outside ${target}`);
    if (i > raw.offset && o < previous) throw fail(what, `offset ${o} at slot ${i} is less than the offset before it (${previous})`);
    previous = o;
  }
}

/** Run ends ascending and positive, the last covering the parent, each run with a value. */
function checkRunEnds(raw: RawArray, runEnds: RawArray, values: RawArray, path: string): void {
  const w = byteWidth(runEnds.type);
  const what = `${path}.children[0].buffers[1]`;
  const at = entries(runEnds.buffers[1] ?? null, w, true, runEnds.offset + runEnds.length, what);
  let previous = 0;
  for (let k = 0; k < runEnds.length; k++) {
    const end = at(runEnds.offset + k);
    if (end <= previous) throw fail(what, `run end ${end} at run ${k} is not greater than the one before it (${previous})`);
    previous = end;
  }
  const phys = raw.offset + raw.length;
  if (phys > 0 && previous < phys) throw fail(what, `the last run ends at ${previous}, before the ${phys} slots of ${path}`);
  needChildLength(values, runEnds.length, `${path}.children[1]`, `of ${runEnds.length} runs`);
}

/** Each read view's bytes inside the view or its variadic buffer. */
function checkViews(raw: RawArray, read: (i: number) => boolean, path: string): void {
  const phys = raw.offset + raw.length;
  const word = entries(raw.buffers[1] ?? null, 4, true, phys * 4, `${path}.buffers[1]`);
  const nVariadic = raw.buffers.length - 3;
  for (let i = raw.offset; i < phys; i++) {
    if (!read(i)) continue;
    const size = word(4 * i);
    if (size <= 12) continue;
    const index = word(4 * i + 2);
    const start = word(4 * i + 3);
    const b = index >= 0 && index < nVariadic ? raw.buffers[2 + index] ?? null : undefined;
    if (b === undefined) throw fail(`${path}.buffers[1]`, `view ${i} names buffer ${index}, expected one in [0, ${nVariadic})`);
    if (start < 0 || start + size > (b?.byteLength ?? 0)) {
      throw fail(`${path}.buffers[${2 + index}]`, `view ${i} reads bytes [${start}, ${start + size}), outside the ${b?.byteLength ?? 0}-byte buffer`);
    }
  }
}
