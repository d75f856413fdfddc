// Concatenation of two raw arrays of the same type, for delta dictionary
// batches: the result has offset 0 and new buffers; the inputs may have
// offsets (slices of children are taken by offset and length).

import { ArrowCDeviceError, EINVAL } from '../../abi/errors.js';
import { byteWidth, hasValidity, offsetWidth, type RawArray } from '../../model/raw.js';
import { typesEqual, typeToString, type DataType } from '../../model/types.js';
import { entry } from './body.js';

function fail(path: string, message: string): never {
  throw new ArrowCDeviceError(`${path}: ${message}`, EINVAL);
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

/** The logical slots [start, start + length) of an array, as a slice. */
function slice(a: RawArray, start: number, length: number): RawArray {
  return { ...a, offset: a.offset + start, length, nullCount: -1 };
}

/** a then b, as one array of offset 0. Both must have the same type. */
export function concatRaw(a: RawArray, b: RawArray, path = 'array'): RawArray {
  const type = a.type;
  if (!typesEqual(type, b.type)) fail(path, `cannot concatenate ${typeToString(type)} and ${typeToString(b.type)}`);
  const n = a.length + b.length;
  const parts = [a, b];
  const nullCount = a.nullCount >= 0 && b.nullCount >= 0 ? a.nullCount + b.nullCount : -1;
  const make = (buffers: (Uint8Array | null)[], children: RawArray[] = [], dictionary: RawArray | null = null, nulls = nullCount): RawArray =>
    ({ type, length: n, nullCount: nulls, offset: 0, buffers, children, dictionary });
  const at = (k: number) => `${path}.children[${k}]`;
  const validity = hasValidity(type) && (a.buffers[0] != null || b.buffers[0] != null)
    ? joinBits(parts.map((p) => ({ bits: p.buffers[0] ?? null, offset: p.offset, length: p.length })))
    : null;
  // Fixed-width values of each part's slots.
  const values = (width: number, k = 1) => join(parts.map((p) => range(p.buffers[k], p.offset * width, (p.offset + p.length) * width, `${path}.buffers[${k}]`)));

  switch (type.kind) {
    case 'null':
      return make([], [], null, n);
    case 'bool':
      return make([validity, joinBits(parts.map((p) => ({ bits: range(p.buffers[1], 0, Math.ceil((p.offset + p.length) / 8), `${path}.buffers[1]`), offset: p.offset, length: p.length })))]);
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': {
      const w = offsetWidth(type) as 4 | 8;
      const offsets: number[] = [0];
      const data: Uint8Array[] = [];
      for (const p of parts) {
        const o = range(p.buffers[1], 0, (p.offset + p.length + 1) * w, `${path}.buffers[1]`);
        const start = entry(o, w, p.offset);
        const base = offsets[offsets.length - 1]! - start;
        for (let i = 1; i <= p.length; i++) offsets.push(entry(o, w, p.offset + i) + base);
        data.push(range(p.buffers[2], start, entry(o, w, p.offset + p.length), `${path}.buffers[2]`));
      }
      return make([validity, encodeOffsets(offsets, w), join(data)]);
    }
    case 'binary_view': case 'utf8_view': {
      const views = values(16);
      const dv = new DataView(views.buffer);
      const variadicA = a.buffers.length - 3;
      for (let i = a.length; i < n; i++) {
        if (dv.getInt32(i * 16, true) > 12) dv.setInt32(i * 16 + 8, dv.getInt32(i * 16 + 8, true) + variadicA, true);
      }
      const data = parts.flatMap((p) => p.buffers.slice(2, p.buffers.length - 1)) as Uint8Array[];
      const sizes = new BigInt64Array(data.map((d) => BigInt(d.byteLength)));
      return make([validity, views, ...data, new Uint8Array(sizes.buffer)]);
    }
    case 'list': case 'large_list': case 'map': {
      const w = offsetWidth(type) as 4 | 8;
      const offsets: number[] = [0];
      const kids: RawArray[] = [];
      for (const p of parts) {
        const o = range(p.buffers[1], 0, (p.offset + p.length + 1) * w, `${path}.buffers[1]`);
        const start = entry(o, w, p.offset);
        const base = offsets[offsets.length - 1]! - start;
        for (let i = 1; i <= p.length; i++) offsets.push(entry(o, w, p.offset + i) + base);
        kids.push(slice(p.children[0]!, start, entry(o, w, p.offset + p.length) - start));
      }
      return make([validity, encodeOffsets(offsets, w)], [concatRaw(kids[0]!, kids[1]!, at(0))]);
    }
    case 'list_view': case 'large_list_view': {
      // Views may point anywhere in their child: keep both children whole, shift b's offsets.
      const w = offsetWidth(type) as 4 | 8;
      const offsets: number[] = [];
      parts.forEach((p, k) => {
        const o = range(p.buffers[1], 0, (p.offset + p.length) * w, `${path}.buffers[1]`);
        const shift = k === 0 ? 0 : a.children[0]!.length;
        for (let i = 0; i < p.length; i++) offsets.push(entry(o, w, p.offset + i) + shift);
      });
      return make([validity, encodeOffsets(offsets, w), values(w, 2)], [concatRaw(a.children[0]!, b.children[0]!, at(0))]);
    }
    case 'fixed_size_list': {
      const s = type.listSize;
      const kids = parts.map((p) => slice(p.children[0]!, p.offset * s, p.length * s));
      return make([validity], [concatRaw(kids[0]!, kids[1]!, at(0))]);
    }
    case 'struct':
      return make([validity], type.children.map((_, k) =>
        concatRaw(slice(a.children[k]!, a.offset, a.length), slice(b.children[k]!, b.offset, b.length), at(k))));
    case 'union': {
      const typeIds = values(1, 0);
      if (type.mode === 'sparse') {
        return make([typeIds], type.children.map((_, k) =>
          concatRaw(slice(a.children[k]!, a.offset, a.length), slice(b.children[k]!, b.offset, b.length), at(k))), null, 0);
      }
      const offsets = values(4, 1);
      const dv = new DataView(offsets.buffer);
      for (let i = a.length; i < n; i++) {
        const k = type.typeIds.indexOf(typeIds[i]!);
        if (k < 0) fail(`${path}.buffers[0]`, `slot ${i} has type id ${typeIds[i]}, expected one of ${type.typeIds.join(', ')}`);
        dv.setInt32(i * 4, dv.getInt32(i * 4, true) + a.children[k]!.length, true);
      }
      return make([typeIds, offsets], type.children.map((_, k) => concatRaw(a.children[k]!, b.children[k]!, at(k))), null, 0);
    }
    case 'run_end_encoded': {
      const trimmed = parts.map((p) => trimRuns(p, path));
      const ends = [...trimmed[0]!.ends, ...trimmed[1]!.ends.map((e) => e + a.length)];
      const runType = type.runEnds.type as Extract<DataType, { kind: 'int' }>;
      const w = runType.bitWidth / 8;
      const out = new Uint8Array(ends.length * w);
      const dv = new DataView(out.buffer);
      ends.forEach((e, i) => (w === 2 ? dv.setInt16(i * 2, e, true) : w === 4 ? dv.setInt32(i * 4, e, true) : dv.setBigInt64(i * 8, BigInt(e), true)));
      const runEnds: RawArray = { type: runType, length: ends.length, nullCount: 0, offset: 0, buffers: [null, out], children: [], dictionary: null };
      return make([], [runEnds, concatRaw(trimmed[0]!.values, trimmed[1]!.values, at(1))], null, 0);
    }
    case 'dictionary':
      // A later dictionary of a nested id extends the earlier one (deltas) or replaces it: the later one is current.
      return make([validity, values(byteWidth(type))], [], b.dictionary ?? a.dictionary);
    default:
      return make([validity, values(byteWidth(type))]);
  }
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
