// The reader's typed accessors of parsed integration JSON values: each checks
// the value's JSON type (and range) and otherwise throws ArrowCDeviceError
// (EINVAL) naming the place, what was expected and what was found. Shared by
// the schema reader (read-schema.ts), the buffer encoders (read-buffers.ts)
// and the data reader (read.ts).

import { ArrowCDeviceError, EINVAL } from '../../abi/errors.js';
import type { Metadata } from '../../model/types.js';
import type { JsonObject, JsonValue } from './parse.js';

export const encoder = new TextEncoder();

export function fail(path: string, message: string): never {
  throw new ArrowCDeviceError(`${path}: ${message}`, EINVAL, path);
}

/** A short description of a JSON value for error messages. */
export function describe(v: JsonValue | undefined): string {
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return `an array of ${v.length} entries`;
  if (typeof v === 'bigint') return v.toString();
  if (v !== null && typeof v === 'object') return 'an object';
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

export function object(v: JsonValue | undefined, path: string): JsonObject {
  if (v === null || v === undefined || typeof v !== 'object' || Array.isArray(v)) fail(path, `expected an object, found ${describe(v)}`);
  return v as JsonObject;
}

export function array(v: JsonValue | undefined, path: string): JsonValue[] {
  if (!Array.isArray(v)) fail(path, `expected an array, found ${describe(v)}`);
  return v;
}

export function string(v: JsonValue | undefined, path: string): string {
  if (typeof v !== 'string') fail(path, `expected a string, found ${describe(v)}`);
  return v;
}

export function boolean(v: JsonValue | undefined, path: string): boolean {
  if (typeof v !== 'boolean') fail(path, `expected true or false, found ${describe(v)}`);
  return v;
}

/** An integer given as a JSON number, a big integer or a decimal string. */
export function bigInteger(v: JsonValue | undefined, path: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  return fail(path, `expected an integer, found ${describe(v)}`);
}

/** A number-sized integer in [min, max]. */
export function integer(v: JsonValue | undefined, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) return v;
  const big = bigInteger(v, path);
  if (big < BigInt(min) || big > BigInt(max)) fail(path, `expected an integer in [${min}, ${max}], found ${big}`);
  return Number(big);
}

export function metadata(v: JsonValue | undefined, path: string): Metadata | null {
  if (v === undefined || v === null) return null;
  const m = new Map<string, string>();
  array(v, path).forEach((entry, i) => {
    const o = object(entry, `${path}[${i}]`);
    m.set(string(o.key, `${path}[${i}].key`), string(o.value, `${path}[${i}].value`));
  });
  return m;
}
