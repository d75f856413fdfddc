// The reader's leaf encoders: JSON entries of a column (VALIDITY, hex DATA,
// VIEWS, fixed-width DATA) → the little-endian buffers the C Data Interface
// lays out, each entry checked and its place named when it is refused.

import { typeToString, type DataType } from '../../model/types.js';
import type { JsonObject, JsonValue } from './parse.js';
import { array, bigInteger, describe, encoder, fail, integer, object, string } from './read-values.js';

export function bytes(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

export function readValidity(entries: JsonValue[], path: string): { bitmap: Uint8Array; nulls: number } {
  const bitmap = new Uint8Array(Math.ceil(entries.length / 8));
  let nulls = 0;
  entries.forEach((v, i) => {
    if (v === 1 || v === true) bitmap[i >> 3] |= 1 << (i & 7);
    else if (v === 0 || v === false) nulls++;
    else fail(`${path}[${i}]`, `expected 1 or 0, found ${describe(v)}`);
  });
  return { bitmap, nulls };
}

export function hex(v: JsonValue, path: string): Uint8Array {
  const s = string(v, path);
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) fail(path, `expected a hex string of whole bytes, found ${describe(s)}`);
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** VIEWS and VARIADIC_DATA_BUFFERS → [views, ...variadic buffers, variadic sizes]. */
export function readViews(kind: 'binary_view' | 'utf8_view', views: JsonValue[], variadic: JsonValue | undefined, path: string): Uint8Array[] {
  const buffers = (variadic === undefined ? [] : array(variadic, `${path}.VARIADIC_DATA_BUFFERS`))
    .map((b, i) => hex(b, `${path}.VARIADIC_DATA_BUFFERS[${i}]`));
  const out = new Uint8Array(views.length * 16);
  const dv = new DataView(out.buffer);
  views.forEach((v, i) => {
    const at = `${path}.VIEWS[${i}]`;
    const view = object(v, at);
    const size = integer(view.SIZE, `${at}.SIZE`, 0, 2 ** 31 - 1);
    dv.setInt32(i * 16, size, true);
    if (size <= 12) {
      if (view.INLINED === undefined) fail(at, `expected INLINED for a view of ${size} bytes, found ${Object.keys(view).join(', ')}`);
      const inlined = kind === 'utf8_view' ? encoder.encode(string(view.INLINED, `${at}.INLINED`)) : hex(view.INLINED, `${at}.INLINED`);
      if (inlined.length !== size) fail(`${at}.INLINED`, `expected ${size} bytes (SIZE), found ${inlined.length}`);
      out.set(inlined, i * 16 + 4);
      return;
    }
    const prefix = hex(view.PREFIX_HEX ?? null, `${at}.PREFIX_HEX`);
    if (prefix.length !== 4) fail(`${at}.PREFIX_HEX`, `expected 4 bytes, found ${prefix.length}`);
    const index = integer(view.BUFFER_INDEX, `${at}.BUFFER_INDEX`, 0, Math.max(0, buffers.length - 1));
    const buffer = buffers[index];
    if (buffer === undefined) fail(`${at}.BUFFER_INDEX`, `expected an index into VARIADIC_DATA_BUFFERS, found ${index} with none`);
    const offset = integer(view.OFFSET, `${at}.OFFSET`, 0, 2 ** 31 - 1);
    if (offset + size > buffer.length) fail(`${at}.OFFSET`, `bytes [${offset}, ${offset + size}) run past buffer ${index} of ${buffer.length} bytes`);
    if (!prefix.every((b, k) => buffer[offset + k] === b)) fail(`${at}.PREFIX_HEX`, `expected the first 4 bytes of the viewed data, found ${describe(view.PREFIX_HEX ?? null)}`);
    out.set(prefix, i * 16 + 4);
    dv.setInt32(i * 16 + 8, index, true);
    dv.setInt32(i * 16 + 12, offset, true);
  });
  const sizes = BigInt64Array.from(buffers, (b) => BigInt(b.length));
  return [out, ...buffers, bytes(sizes)];
}

/** IEEE 754 half-precision bits of a number, rounded to nearest, ties to even. */
function toHalf(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00; // 65520 is halfway between 65504 and 2^16: ties round to infinity
  const roundEven = (m: number) => {
    const f = Math.floor(m);
    const d = m - f;
    return d > 0.5 || (d === 0.5 && f % 2 === 1) ? f + 1 : f;
  };
  if (a < 2 ** -14) return sign | roundEven(a * 2 ** 24); // subnormal (1024 carries into the exponent)
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  let m = roundEven(a * 2 ** (10 - e));
  if (m === 2048) {
    m = 1024;
    e++;
  }
  return sign | ((e + 15) << 10) | (m - 1024);
}

function float(v: JsonValue, path: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && (v === 'NaN' || /^[-+]?(Infinity|\d+(\.\d*)?([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)$/.test(v))) return Number(v);
  return fail(path, `expected a number, found ${describe(v)}`);
}

function int32Field(o: JsonObject, key: string, path: string): number {
  return integer(o[key], `${path}.${key}`, -(2 ** 31), 2 ** 31 - 1);
}

function int64(v: JsonValue | undefined, path: string): bigint {
  const b = bigInteger(v, path);
  if (b < -(2n ** 63n) || b >= 2n ** 63n) fail(path, `expected a signed 64-bit integer, found ${b}`);
  return b;
}

/** DATA of a fixed-width type as its little-endian values buffer. */
export function fixedWidth(type: DataType, values: JsonValue[], path: string): Uint8Array {
  const n = values.length;
  const at = (i: number) => `${path}[${i}]`;
  switch (type.kind) {
    case 'int': {
      const { bitWidth, signed } = type;
      if (bitWidth === 64) {
        const out = signed ? new BigInt64Array(n) : new BigUint64Array(n);
        values.forEach((v, i) => {
          const b = bigInteger(v, at(i));
          const ok = signed ? b >= -(2n ** 63n) && b < 2n ** 63n : b >= 0n && b < 2n ** 64n;
          if (!ok) fail(at(i), `expected an ${signed ? '' : 'u'}int64, found ${b}`);
          out[i] = b;
        });
        return bytes(out);
      }
      const min = signed ? -(2 ** (bitWidth - 1)) : 0;
      const max = signed ? 2 ** (bitWidth - 1) - 1 : 2 ** bitWidth - 1;
      const Ctor = { 8: signed ? Int8Array : Uint8Array, 16: signed ? Int16Array : Uint16Array, 32: signed ? Int32Array : Uint32Array }[bitWidth];
      const out = new Ctor(n);
      values.forEach((v, i) => {
        if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) out[i] = v;
        else out[i] = integer(v, at(i), min, max);
      });
      return bytes(out);
    }
    case 'float': {
      if (type.bitWidth === 16) return bytes(Uint16Array.from(values, (v, i) => toHalf(float(v, at(i)))));
      const numbers = values.map((v, i) => float(v, at(i)));
      return bytes(type.bitWidth === 32 ? Float32Array.from(numbers) : Float64Array.from(numbers));
    }
    case 'decimal': {
      const w = type.bitWidth / 8;
      const out = new Uint8Array(n * w);
      const limit = 1n << BigInt(type.bitWidth - 1);
      values.forEach((v, i) => {
        let b = bigInteger(v, at(i));
        if (b < -limit || b >= limit) fail(at(i), `expected an integer that fits ${type.bitWidth} bits, found ${b}`);
        if (b < 0n) b += limit << 1n;
        for (let k = 0; k < w; k++, b >>= 8n) out[i * w + k] = Number(b & 0xffn);
      });
      return out;
    }
    case 'date':
      return fixedWidth({ kind: 'int', bitWidth: type.unit === 'day' ? 32 : 64, signed: true }, values, path);
    case 'time':
      return fixedWidth({ kind: 'int', bitWidth: type.unit === 's' || type.unit === 'ms' ? 32 : 64, signed: true }, values, path);
    case 'timestamp': case 'duration':
      return fixedWidth({ kind: 'int', bitWidth: 64, signed: true }, values, path);
    case 'interval': {
      if (type.unit === 'months') return fixedWidth({ kind: 'int', bitWidth: 32, signed: true }, values, path);
      if (type.unit === 'day_time') {
        const out = new Int32Array(2 * n);
        values.forEach((v, i) => {
          const o = object(v, at(i));
          out[2 * i] = int32Field(o, 'days', at(i));
          out[2 * i + 1] = int32Field(o, 'milliseconds', at(i));
        });
        return bytes(out);
      }
      const out = new Uint8Array(16 * n);
      const dv = new DataView(out.buffer);
      values.forEach((v, i) => {
        const o = object(v, at(i));
        dv.setInt32(16 * i, int32Field(o, 'months', at(i)), true);
        dv.setInt32(16 * i + 4, int32Field(o, 'days', at(i)), true);
        dv.setBigInt64(16 * i + 8, int64(o.nanoseconds, `${at(i)}.nanoseconds`), true);
      });
      return out;
    }
    default:
      return fail(path, `${typeToString(type)} has no DATA of fixed width`);
  }
}
