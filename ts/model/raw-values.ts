// The logical values of a raw array as plain, JSON-comparable data, and a
// value-by-value comparison of two raw arrays that ignores physical layout
// (offsets, bits past the end of bitmaps, contents of null slots).
//
// Normalization, per slot (null for a null slot):
//   bool → boolean; ints up to 32 bits, float16/32/64, date32, time32 → number
//   (NaN, Infinity, -Infinity as strings); 64-bit ints, date64, time64,
//   timestamps, durations, decimals (the unscaled integer) → decimal string;
//   binary kinds → uppercase hex; utf8 kinds → string (invalid UTF-8 as U+FFFD);
//   intervals → {months} | {days, milliseconds} | {months, days, nanoseconds (string)};
//   lists of every kind → arrays; struct → [name, value] pairs (names may repeat);
//   map → [key, value] pairs; union → {typeId, value}, null when the child's
//   slot is null; run-end encoded → the run's value; dictionary → the value.

import { ArrowCDeviceError, EINVAL, EOVERFLOW } from '../abi/errors.js';
import type { RawArray } from './raw.js';
import { typesEqual, typeToString, type DataType } from './types.js';

const views = new WeakMap<Uint8Array, DataView>();
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

function dataView(b: Uint8Array): DataView {
  let v = views.get(b);
  if (v === undefined) {
    v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    views.set(b, v);
  }
  return v;
}

function outside(b: Uint8Array | null, start: number, size: number, what: string): ArrowCDeviceError {
  return new ArrowCDeviceError(`${what}: expected bytes [${start}, ${start + size}), found a buffer of ${b?.byteLength ?? 0} bytes`, EINVAL, what);
}

/**
 * The one bounds check of every read here: a DataView of all of b once
 * [start, start + size) is known to lie inside it (a negative index too).
 */
function viewOf(b: Uint8Array | null, start: number, size: number, what: string): DataView {
  if (b === null || !(start >= 0 && size >= 0 && start + size <= b.byteLength)) throw outside(b, start, size, what);
  return dataView(b);
}

const NO_BYTES = new Uint8Array(0);

function bytesAt(b: Uint8Array | null, start: number, size: number, what: string): Uint8Array {
  // A buffer whose size would be 0 MAY be NULL (CDataInterface.rst, ArrowArray.buffers): no bytes are read from it.
  if (b === null && size === 0 && start >= 0) return NO_BYTES;
  if (b === null || !(start >= 0 && size >= 0 && start + size <= b.byteLength)) throw outside(b, start, size, what);
  return b.subarray(start, start + size);
}

/** Entry i of a little-endian integer buffer of the given byte width (64-bit as a number, exact up to 2^53). */
export function intAt(b: Uint8Array | null, width: number, i: number, signed = true, what = 'buffer'): number {
  const v = viewOf(b, i * width, width, what);
  switch (width) {
    case 1: return signed ? v.getInt8(i) : v.getUint8(i);
    case 2: return signed ? v.getInt16(i * 2, true) : v.getUint16(i * 2, true);
    case 4: return signed ? v.getInt32(i * 4, true) : v.getUint32(i * 4, true);
    default: return Number(signed ? v.getBigInt64(i * 8, true) : v.getBigUint64(i * 8, true));
  }
}

/** Whether physical slot i of a raw array is valid by its validity bitmap (true when there is none). */
export function isValid(raw: RawArray, i: number): boolean {
  const bitmap = raw.buffers[0];
  if (bitmap === null || bitmap === undefined) return true;
  return ((bitmap[i >> 3]! >> (i & 7)) & 1) === 1;
}

const HEX_CODES = new TextEncoder().encode('0123456789ABCDEF');
/** Each byte's two hex digits as one 16-bit word, first digit in the low byte (JS engines are little-endian, as wasm is). */
const HEX_PAIRS = Uint16Array.from({ length: 256 }, (_, b) => HEX_CODES[b >> 4]! | (HEX_CODES[b & 15]! << 8));
const ASCII = new TextDecoder('latin1');
/** V8's String::kMaxLength on 64-bit (the other engines allow longer strings). */
const MAX_STRING_LENGTH = 2 ** 29 - 24;

/**
 * Bytes as uppercase hex: one 16-bit write per byte into one array, decoded
 * at once (a string per byte, then a code unit per digit, made MiB values
 * take seconds: 135 MB took 4.7 s, now 1.3 s).
 */
export function toHex(bytes: Uint8Array): string {
  // Past the longest string V8 makes: the library's error (a join threw a
  // RangeError there; Node's latin1 TextDecoder aborts the process instead).
  if (bytes.length * 2 > MAX_STRING_LENGTH) {
    throw new ArrowCDeviceError(`a binary value of ${bytes.length} bytes is too long to write as a hex string (at most ${MAX_STRING_LENGTH / 2} bytes)`, EOVERFLOW);
  }
  const pairs = new Uint16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) pairs[i] = HEX_PAIRS[bytes[i]!]!;
  return ASCII.decode(new Uint8Array(pairs.buffer));
}

/** The IEEE 754 half-precision value of 16 bits. */
function halfToNumber(bits: number): number {
  const exp = (bits >> 10) & 0x1f;
  const frac = bits & 0x3ff;
  const sign = bits & 0x8000 ? -1 : 1;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1024 + frac) * 2 ** (exp - 25);
}

function floatValue(x: number): number | string {
  return Number.isFinite(x) ? x : String(x);
}

/** A little-endian two's complement integer of any byte length. */
function signedLE(bytes: Uint8Array): bigint {
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]!);
  return bytes.length > 0 && bytes[bytes.length - 1]! & 0x80 ? v - (1n << BigInt(bytes.length * 8)) : v;
}

/**
 * The plain value of physical slot i of a leaf (non-nested, non-dictionary)
 * array's buffers, ignoring validity: what the slot holds even when it is null.
 */
export function leafValue(type: DataType, buffers: readonly (Uint8Array | null)[], i: number, path = 'array'): unknown {
  const at = (k: number) => `${path}.buffers[${k}]`;
  const data = buffers[1] ?? null;
  switch (type.kind) {
    case 'null':
      return null;
    case 'bool':
      return ((bytesAt(data, i >> 3, 1, at(1))[0]! >> (i & 7)) & 1) === 1;
    case 'int':
      if (type.bitWidth === 64) {
        const v = viewOf(data, i * 8, 8, at(1));
        return (type.signed ? v.getBigInt64(i * 8, true) : v.getBigUint64(i * 8, true)).toString();
      }
      return intAt(data, type.bitWidth / 8, i, type.signed, at(1));
    case 'float': {
      const v = viewOf(data, i * (type.bitWidth / 8), type.bitWidth / 8, at(1));
      if (type.bitWidth === 16) return floatValue(halfToNumber(v.getUint16(i * 2, true)));
      return floatValue(type.bitWidth === 32 ? v.getFloat32(i * 4, true) : v.getFloat64(i * 8, true));
    }
    case 'decimal': {
      const w = type.bitWidth / 8;
      return signedLE(bytesAt(data, i * w, w, at(1))).toString();
    }
    case 'fixed_size_binary':
      return toHex(bytesAt(data, i * type.byteWidth, type.byteWidth, at(1)));
    case 'binary': case 'large_binary': case 'utf8': case 'large_utf8': {
      const w = type.kind === 'binary' || type.kind === 'utf8' ? 4 : 8;
      const start = intAt(data, w, i, true, at(1));
      const bytes = bytesAt(buffers[2] ?? null, start, intAt(data, w, i + 1, true, at(1)) - start, at(2));
      return type.kind === 'binary' || type.kind === 'large_binary' ? toHex(bytes) : utf8.decode(bytes);
    }
    case 'binary_view': case 'utf8_view': {
      const view = bytesAt(data, i * 16, 16, at(1));
      const v = dataView(view);
      const size = v.getInt32(0, true);
      let bytes: Uint8Array;
      if (size <= 12) {
        bytes = bytesAt(view, 4, size, `${at(1)} view ${i}`);
      } else {
        const index = v.getInt32(8, true);
        const nVariadic = buffers.length - 3;
        if (index < 0 || index >= nVariadic) {
          throw new ArrowCDeviceError(`${at(1)} view ${i}: expected a buffer index in [0, ${nVariadic}), found ${index}`, EINVAL);
        }
        bytes = bytesAt(buffers[2 + index] ?? null, v.getInt32(12, true), size, at(2 + index));
      }
      return type.kind === 'binary_view' ? toHex(bytes) : utf8.decode(bytes);
    }
    case 'date':
      return type.unit === 'day' ? intAt(data, 4, i, true, at(1)) : leafValue({ kind: 'int', bitWidth: 64, signed: true }, buffers, i, path);
    case 'time':
      if (type.unit === 's' || type.unit === 'ms') return intAt(data, 4, i, true, at(1));
      return leafValue({ kind: 'int', bitWidth: 64, signed: true }, buffers, i, path);
    case 'timestamp': case 'duration':
      return leafValue({ kind: 'int', bitWidth: 64, signed: true }, buffers, i, path);
    case 'interval': {
      if (type.unit === 'months') return { months: intAt(data, 4, i, true, at(1)) };
      if (type.unit === 'day_time') return { days: intAt(data, 4, 2 * i, true, at(1)), milliseconds: intAt(data, 4, 2 * i + 1, true, at(1)) };
      const v = viewOf(data, i * 16, 16, at(1));
      return { months: v.getInt32(i * 16, true), days: v.getInt32(i * 16 + 4, true), nanoseconds: v.getBigInt64(i * 16 + 8, true).toString() };
    }
    default:
      throw new ArrowCDeviceError(`${path}: ${typeToString(type)} is not a leaf type`, EINVAL, path);
  }
}

/** Logical slot j of a child, as a physical index, after a bounds check. */
function childSlot(child: RawArray, j: number, parentSlot: number, path: string): number {
  if (j < 0 || j >= child.length) {
    throw new ArrowCDeviceError(`${path}: slot ${parentSlot} refers to child slot ${j}, expected one in [0, ${child.length})`, EINVAL, path);
  }
  return child.offset + j;
}

function child(raw: RawArray, k: number, path: string): RawArray {
  const c = raw.children[k];
  if (c === undefined) throw new ArrowCDeviceError(`${path}: expected at least ${k + 1} children, found ${raw.children.length}`, EINVAL, path);
  return c;
}

/** The value of physical slot i (offset already applied). */
function valueAt(raw: RawArray, i: number, path: string): unknown {
  const { type } = raw;
  switch (type.kind) {
    case 'null':
      return null;
    case 'union': {
      const typeId = intAt(raw.buffers[0] ?? null, 1, i, true, `${path}.buffers[0]`);
      const k = type.typeIds.indexOf(typeId);
      if (k < 0) throw new ArrowCDeviceError(`${path}: slot ${i} has type id ${typeId}, expected one of ${type.typeIds.join(', ')}`, EINVAL, path);
      const c = child(raw, k, path);
      const j = type.mode === 'sparse' ? i : intAt(raw.buffers[1] ?? null, 4, i, true, `${path}.buffers[1]`);
      const value = valueAt(c, childSlot(c, j, i, `${path}.children[${k}]`), `${path}.children[${k}]`);
      return value === null ? null : { typeId, value };
    }
    case 'run_end_encoded': {
      const runEnds = child(raw, 0, path);
      const values = child(raw, 1, path);
      const run = findRun(runEnds, i, `${path}.children[0]`);
      return valueAt(values, childSlot(values, run, i, `${path}.children[1]`), `${path}.children[1]`);
    }
    default:
      break;
  }
  if (!isValid(raw, i)) return null;
  switch (type.kind) {
    case 'dictionary': {
      const index = intAt(raw.buffers[1] ?? null, type.indexType.bitWidth / 8, i, type.indexType.signed, `${path}.buffers[1]`);
      const dict = raw.dictionary;
      if (dict === null) throw new ArrowCDeviceError(`${path}: dictionary-encoded array without a dictionary`, EINVAL, path);
      return valueAt(dict, childSlot(dict, index, i, `${path}.dictionary`), `${path}.dictionary`);
    }
    case 'list': case 'large_list': case 'map': case 'list_view': case 'large_list_view': {
      const w = type.kind === 'large_list' || type.kind === 'large_list_view' ? 8 : 4;
      const start = intAt(raw.buffers[1] ?? null, w, i, true, `${path}.buffers[1]`);
      const size = type.kind === 'list_view' || type.kind === 'large_list_view'
        ? intAt(raw.buffers[2] ?? null, w, i, true, `${path}.buffers[2]`)
        : intAt(raw.buffers[1] ?? null, w, i + 1, true, `${path}.buffers[1]`) - start;
      return items(raw, start, size, i, path, type.kind === 'map');
    }
    case 'fixed_size_list':
      return items(raw, i * type.listSize, type.listSize, i, path, false);
    case 'struct':
      return type.children.map((f, k) => {
        const c = child(raw, k, path);
        return [f.name, valueAt(c, childSlot(c, i, i, `${path}.children[${k}]`), `${path}.children[${k}]`)];
      });
    default:
      return leafValue(type, raw.buffers, i, path);
  }
}

/**
 * A JavaScript array holds at most 2^32 − 1 elements: more values (a long
 * run-end encoded array, or lengths no validator checked) are an error that
 * says so, not the engine's RangeError.
 */
function checkArrayLength(n: number, path: string, what: string): void {
  if (n > MAX_JS_ARRAY) {
    throw new ArrowCDeviceError(`${path}: ${what} has ${n} values, more than a JavaScript array holds (${MAX_JS_ARRAY})`, EOVERFLOW, path);
  }
}
const MAX_JS_ARRAY = 2 ** 32 - 1;

/** The values of child slots [start, start + size); map entries as [key, value] pairs. */
function items(raw: RawArray, start: number, size: number, slot: number, path: string, map: boolean): unknown[] {
  const c = child(raw, 0, path);
  const at = `${path}.children[0]`;
  if (size < 0) throw new ArrowCDeviceError(`${path}: slot ${slot} has a negative size ${size}`, EINVAL, path);
  checkArrayLength(size, path, `slot ${slot}`);
  const out: unknown[] = [];
  for (let j = start; j < start + size; j++) {
    const v = valueAt(c, childSlot(c, j, slot, at), at);
    out.push(map && Array.isArray(v) ? v.map((pair) => (pair as [string, unknown])[1]) : v);
  }
  return out;
}

/** The run (index into run_ends' logical slots) holding physical position i of the parent. */
function findRun(runEnds: RawArray, i: number, path: string): number {
  const w = (runEnds.type as { bitWidth: number }).bitWidth / 8;
  const end = (k: number) => intAt(runEnds.buffers[1] ?? null, w, runEnds.offset + k, true, `${path}.buffers[1]`);
  let lo = 0;
  let hi = runEnds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (end(mid) > i) hi = mid;
    else lo = mid + 1;
  }
  if (lo >= runEnds.length) throw new ArrowCDeviceError(`${path}: position ${i} is past the last run end`, EINVAL, path);
  return lo;
}

/**
 * The logical value of every slot of a raw array (its offset applied), as
 * plain data (see the top of this file). Throws ArrowCDeviceError (EINVAL)
 * naming the place when the array refers outside its buffers or children.
 *
 * Ownership: reads the raw array's buffers (which stay their owner's); the result is JS memory.
 * @param raw - the raw array.
 * @param path - where the array is, for messages.
 */
export function rawValues(raw: RawArray, path = 'array'): unknown[] {
  checkArrayLength(raw.length, path, 'the array');
  const out = new Array<unknown>(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = valueAt(raw, raw.offset + i, path);
  return out;
}

/** JSON text of a plain value that tells -0 from 0. */
export function show(v: unknown): string {
  return JSON.stringify(v, (_, x: unknown) => (typeof x === 'number' && Object.is(x, -0) ? '-0' : x)) ?? 'undefined';
}

/**
 * The differences between two raw arrays, at most `limit`: type, length,
 * null counts (where both are known), then values slot by slot. Each message
 * names the path and slot, what was expected and what was found. Empty when
 * the arrays hold the same logical values, whatever their physical layout.
 *
 * Ownership: pure; nothing to release.
 * @param expected - the expected raw array.
 * @param found - the raw array found.
 * @param path - where the array is, for messages.
 * @param limit - how many differences at most.
 */
export function compareRaw(expected: RawArray, found: RawArray, path = 'array', limit = 10): string[] {
  if (!typesEqual(expected.type, found.type)) {
    return [`${path}: expected type ${typeToString(expected.type)}, found ${typeToString(found.type)}`];
  }
  if (expected.length !== found.length) return [`${path}: expected length ${expected.length}, found ${found.length}`];
  const out: string[] = [];
  if (expected.nullCount >= 0 && found.nullCount >= 0 && expected.nullCount !== found.nullCount) {
    out.push(`${path}: expected null count ${expected.nullCount}, found ${found.nullCount}`);
  }
  const a = rawValues(expected, path);
  const b = rawValues(found, path);
  for (let i = 0; i < a.length && out.length < limit; i++) {
    const x = show(a[i]);
    const y = show(b[i]);
    if (x !== y) out.push(`${path}[${i}]: expected ${x}, found ${y}`);
  }
  return out;
}
