// Concatenation of raw arrays of one type: delta dictionary batches (the IPC
// reader) and dictionaries that apache-arrow keeps in several chunks (an
// export, which hands out one dictionary per array). The result has offset 0
// and new buffers; the inputs may have offsets (slices of children are taken
// by offset and length).

import { ArrowCDeviceError, EINVAL, EOVERFLOW } from '../abi/errors.js';
import { byteWidth, hasValidity, offsetWidth, type RawArray } from './raw.js';
import { intAt } from './raw-values.js';
import { typesEqual, typeToString, type DataType } from './types.js';

/**
 * What a dictionary-encoded array nested in the parts gets when the parts'
 * dictionaries differ: 'later', the last part's (IPC: a later dictionary of a
 * nested id extends the earlier one by deltas, or replaces it); 'join', all
 * of them end to end, each part's indices shifted to its own dictionary's
 * place (any dictionaries, at the cost of repeating shared values).
 */
export type NestedDictionaries = 'later' | 'join';

function fail(path: string, message: string, code = EINVAL): never {
  throw new ArrowCDeviceError(`${path}: ${message}`, code);
}

/** The bytes [start, end) of a buffer, after a bounds check. */
function range(b: Uint8Array | null | undefined, start: number, end: number, path: string): Uint8Array {
  if (end <= start) return new Uint8Array(0);
  if (b === null || b === undefined || start < 0 || end > b.byteLength) {
    fail(path, `expected bytes ${start}..${end}, found a buffer of ${b?.byteLength ?? 0} bytes`);
  }
  return b.subarray(start, end);
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Bits [offset, offset + n) of each part's bitmap (all set when it has none), end to end. */
function joinBits(parts: { bits: Uint8Array | null; offset: number; length: number }[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(Math.ceil(total / 8));
  let at = 0;
  for (const { bits, offset, length } of parts) {
    for (let i = 0; i < length; i++, at++) {
      const set = bits === null || ((bits[(offset + i) >> 3]! >> ((offset + i) & 7)) & 1) === 1;
      if (set) out[at >> 3] |= 1 << (at & 7);
    }
  }
  return out;
}

function encodeOffsets(values: number[], width: 4 | 8): Uint8Array {
  const a = width === 4 ? Int32Array.from(values) : BigInt64Array.from(values, BigInt);
  return new Uint8Array(a.buffer);
}

function entry(bytes: Uint8Array, width: 4 | 8, i: number): number {
  return intAt(bytes, width, i);
}

/** The logical slots [start, start + length) of an array, as a slice. */
/**
 * The offsets of variable-size parts joined: each part's own offsets rebased
 * to follow the part before it. `each` gets the range [start, end) of the
 * part's values (its data bytes or child slots), to take them.
 */
function joinedOffsets(parts: readonly RawArray[], w: 4 | 8, path: string, each: (p: RawArray, start: number, end: number) => void): number[] {
  const offsets: number[] = [0];
  for (const p of parts) {
    const o = range(p.buffers[1], 0, (p.offset + p.length + 1) * w, `${path}.buffers[1]`);
    const start = entry(o, w, p.offset);
    const base = offsets[offsets.length - 1]! - start;
    for (let i = 1; i <= p.length; i++) offsets.push(entry(o, w, p.offset + i) + base);
    each(p, start, entry(o, w, p.offset + p.length));
  }
  return offsets;
}

function slice(a: RawArray, start: number, length: number): RawArray {
  return { ...a, offset: a.offset + start, length, nullCount: -1 };
}

/** a then b, as one array of offset 0. Both must have the same type; nested dictionaries: the later one's. */
export function concatRaw(a: RawArray, b: RawArray, path = 'array'): RawArray {
  return concatRaws([a, b], path, 'later');
}

/** The parts end to end, as one array of offset 0. All must have the same type (at least one part). */
export function concatRaws(parts: readonly RawArray[], path = 'array', dictionaries: NestedDictionaries = 'later'): RawArray {
  if (parts.length === 0) fail(path, 'nothing to concatenate');
  const type = parts[0]!.type;
  for (const p of parts) if (!typesEqual(type, p.type)) fail(path, `cannot concatenate ${typeToString(type)} and ${typeToString(p.type)}`);
  const n = parts.reduce((sum, p) => sum + p.length, 0);
  const nullCount = parts.every((p) => p.nullCount >= 0) ? parts.reduce((sum, p) => sum + p.nullCount, 0) : -1;
  const make = (buffers: (Uint8Array | null)[], children: RawArray[] = [], dictionary: RawArray | null = null, nulls = nullCount): RawArray =>
    ({ type, length: n, nullCount: nulls, offset: 0, buffers, children, dictionary });
  const at = (k: number) => `${path}.children[${k}]`;
  const again = (kids: RawArray[], k: number) => concatRaws(kids, at(k), dictionaries);
  const validity = hasValidity(type) && parts.some((p) => p.buffers[0] != null)
    ? joinBits(parts.map((p) => ({ bits: p.buffers[0] ?? null, offset: p.offset, length: p.length })))
    : null;
  // Fixed-width values of each part's slots.
  const values = (width: number, k = 1) => join(parts.map((p) => range(p.buffers[k], p.offset * width, (p.offset + p.length) * width, `${path}.buffers[${k}]`)));
  // The first slot of each part in the result.
  const starts = parts.map((_, k) => parts.slice(0, k).reduce((sum, p) => sum + p.length, 0));

  switch (type.kind) {
    case 'null':
      return make([], [], null, n);
    case 'bool':
      return make([validity, joinBits(parts.map((p) => ({ bits: range(p.buffers[1], 0, Math.ceil((p.offset + p.length) / 8), `${path}.buffers[1]`), offset: p.offset, length: p.length })))]);
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': {
      const w = offsetWidth(type) as 4 | 8;
      const data: Uint8Array[] = [];
      const offsets = joinedOffsets(parts, w, path, (p, start, end) => data.push(range(p.buffers[2], start, end, `${path}.buffers[2]`)));
      return make([validity, encodeOffsets(offsets, w), join(data)]);
    }
    case 'binary_view': case 'utf8_view': {
      const views = values(16);
      const dv = new DataView(views.buffer);
      // Each part's views point into its own data buffers, which follow those of the parts before it.
      let before = 0;
      parts.forEach((p, k) => {
        for (let i = starts[k]!; i < starts[k]! + p.length && before > 0; i++) {
          if (dv.getInt32(i * 16, true) > 12) dv.setInt32(i * 16 + 8, dv.getInt32(i * 16 + 8, true) + before, true);
        }
        before += p.buffers.length - 3;
      });
      const data = parts.flatMap((p) => p.buffers.slice(2, p.buffers.length - 1)) as Uint8Array[];
      const sizes = new BigInt64Array(data.map((d) => BigInt(d.byteLength)));
      return make([validity, views, ...data, new Uint8Array(sizes.buffer)]);
    }
    case 'list': case 'large_list': case 'map': {
      const w = offsetWidth(type) as 4 | 8;
      const kids: RawArray[] = [];
      const offsets = joinedOffsets(parts, w, path, (p, start, end) => kids.push(slice(p.children[0]!, start, end - start)));
      return make([validity, encodeOffsets(offsets, w)], [again(kids, 0)]);
    }
    case 'list_view': case 'large_list_view': {
      // Views may point anywhere in their child: keep every child whole, shift each part's offsets past the children before it.
      const w = offsetWidth(type) as 4 | 8;
      const offsets: number[] = [];
      let shift = 0;
      for (const p of parts) {
        const o = range(p.buffers[1], 0, (p.offset + p.length) * w, `${path}.buffers[1]`);
        for (let i = 0; i < p.length; i++) offsets.push(entry(o, w, p.offset + i) + shift);
        shift += p.children[0]!.length;
      }
      return make([validity, encodeOffsets(offsets, w), values(w, 2)], [again(parts.map((p) => p.children[0]!), 0)]);
    }
    case 'fixed_size_list': {
      const s = type.listSize;
      return make([validity], [again(parts.map((p) => slice(p.children[0]!, p.offset * s, p.length * s)), 0)]);
    }
    case 'struct':
      return make([validity], type.children.map((_, k) => again(parts.map((p) => slice(p.children[k]!, p.offset, p.length)), k)));
    case 'union': {
      const typeIds = values(1, 0);
      if (type.mode === 'sparse') {
        return make([typeIds], type.children.map((_, k) => again(parts.map((p) => slice(p.children[k]!, p.offset, p.length)), k)), null, 0);
      }
      // Dense: each part's children stay whole; its offsets shift past the same child of the parts before it.
      const offsets = values(4, 1);
      const dv = new DataView(offsets.buffer);
      const shifts = type.children.map(() => 0);
      parts.forEach((p, k) => {
        for (let i = starts[k]!; i < starts[k]! + p.length; i++) {
          const c = type.typeIds.indexOf(typeIds[i]!);
          if (c < 0) fail(`${path}.buffers[0]`, `slot ${i} has type id ${typeIds[i]}, expected one of ${type.typeIds.join(', ')}`);
          dv.setInt32(i * 4, dv.getInt32(i * 4, true) + shifts[c]!, true);
        }
        p.children.forEach((child, c) => (shifts[c]! += child.length));
      });
      return make([typeIds, offsets], type.children.map((_, k) => again(parts.map((p) => p.children[k]!), k)), null, 0);
    }
    case 'run_end_encoded': {
      const trimmed = parts.map((p) => trimRuns(p, path));
      const ends = trimmed.flatMap((t, k) => t.ends.map((e) => e + starts[k]!));
      const runType = type.runEnds.type as Extract<DataType, { kind: 'int' }>;
      const w = runType.bitWidth / 8;
      const out = new Uint8Array(ends.length * w);
      const dv = new DataView(out.buffer);
      ends.forEach((e, i) => (w === 2 ? dv.setInt16(i * 2, e, true) : w === 4 ? dv.setInt32(i * 4, e, true) : dv.setBigInt64(i * 8, BigInt(e), true)));
      const runEnds: RawArray = { type: runType, length: ends.length, nullCount: 0, offset: 0, buffers: [null, out], children: [], dictionary: null };
      return make([], [runEnds, again(trimmed.map((t) => t.values), 1)], null, 0);
    }
    case 'dictionary':
      return concatDictionaries(parts, type, make, validity, values(byteWidth(type)), path, dictionaries);
    default:
      return make([validity, values(byteWidth(type))]);
  }
}

/** Dictionary-encoded parts: their indices end to end, over one dictionary (see NestedDictionaries). */
function concatDictionaries(parts: readonly RawArray[], type: Extract<DataType, { kind: 'dictionary' }>,
  make: (buffers: (Uint8Array | null)[], children: RawArray[], dictionary: RawArray | null) => RawArray,
  validity: Uint8Array | null, indices: Uint8Array, path: string, dictionaries: NestedDictionaries): RawArray {
  const dicts = parts.map((p) => p.dictionary);
  const first = dicts[0] ?? null;
  if (dicts.every((d) => d === first)) return make([validity, indices], [], first);
  if (dictionaries === 'later') return make([validity, indices], [], dicts.reduce((x, d) => d ?? x, null));
  if (dicts.some((d) => d === null)) fail(`${path}.dictionary`, 'a dictionary-encoded part has no dictionary');
  const w = type.indexType.bitWidth / 8;
  const signed = type.indexType.signed;
  const max = 2 ** (type.indexType.bitWidth - (signed ? 1 : 0)) - 1;
  const dv = new DataView(indices.buffer, indices.byteOffset, indices.byteLength);
  const valid = (i: number) => validity === null || ((validity[i >> 3]! >> (i & 7)) & 1) === 1;
  let slot = 0;
  let shift = 0;
  parts.forEach((p, k) => {
    for (let i = slot; i < slot + p.length; i++) {
      // A null slot's index stays as it is: it already lies within the joined dictionary.
      if (shift === 0 || !valid(i)) continue;
      const v = intAt(indices, w, i, signed) + shift;
      if (v > max) fail(`${path}.buffers[1]`, `index ${v} of slot ${i} (dictionaries joined, ${typeToString(type.indexType)} indices) does not fit`, EOVERFLOW);
      if (w === 1) dv.setUint8(i, v);
      else if (w === 2) dv.setUint16(i * 2, v, true);
      else if (w === 4) dv.setUint32(i * 4, v, true);
      else dv.setBigUint64(i * 8, BigInt(v), true);
    }
    slot += p.length;
    shift += dicts[k]!.length;
  });
  return make([validity, indices], [], concatRaws(dicts as RawArray[], `${path}.dictionary`, 'join'));
}

/** The runs covering a run-end encoded array's slots: their ends relative to its offset, and their values. */
function trimRuns(p: RawArray, path: string): { ends: number[]; values: RawArray } {
  const runEnds = p.children[0]!;
  const w = (runEnds.type as { bitWidth: number }).bitWidth / 8;
  const b = range(runEnds.buffers[1], 0, (runEnds.offset + runEnds.length) * w, `${path}.children[0].buffers[1]`);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const end = (k: number) => {
    const i = runEnds.offset + k;
    return w === 2 ? dv.getInt16(i * 2, true) : w === 4 ? dv.getInt32(i * 4, true) : Number(dv.getBigInt64(i * 8, true));
  };
  const ends: number[] = [];
  let first = -1;
  for (let k = 0; k < runEnds.length && p.length > 0; k++) {
    const e = end(k);
    if (e <= p.offset) continue;
    if (first < 0) first = k;
    ends.push(Math.min(e, p.offset + p.length) - p.offset);
    if (e >= p.offset + p.length) break;
  }
  if (p.length > 0 && (ends.length === 0 || ends[ends.length - 1] !== p.length)) fail(`${path}.children[0]`, `the runs end before slot ${p.offset + p.length}`);
  return { ends, values: slice(p.children[1]!, Math.max(first, 0), ends.length) };
}
