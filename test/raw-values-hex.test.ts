// rawValues renders binary values as hex (toHex, ts/model/raw-values.ts): one
// 16-bit write per byte and one latin1 decode. Past the longest string V8
// makes it must throw the library's error (the join it replaced threw a
// RangeError; Node's latin1 decoder aborts the whole process: fuzz seed 127).
// Nor may more values than a JavaScript array holds.
import { describe, expect, test } from '@jest/globals';
import { EOVERFLOW } from '../ts/abi/errors.js';
import { rawValues, toHex } from '../ts/model/raw-values.js';
import type { RawArray } from '../ts/model/raw.js';
import * as t from '../ts/model/types.js';
import { libraryError } from './helpers.js';

describe('toHex', () => {
  test('every byte value, uppercase, in order', () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const expected = [...bytes].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join('');
    expect(toHex(bytes)).toBe(expected);
    expect(toHex(new Uint8Array(0))).toBe('');
    expect(toHex(bytes.subarray(250, 253))).toBe('FAFBFC');
  });

  test('a value whose hex would pass the longest string: EOVERFLOW, and the process lives', () => {
    const error = libraryError(() => toHex(new Uint8Array(2 ** 28)));
    expect(error.errno).toBe(EOVERFLOW);
    expect(error.message).toMatch(/268435456 bytes is too long to write as a hex string/);
  });
});

describe('rawValues past the longest JavaScript array', () => {
  // A run-end encoded array of 2^32 slots in one run is valid and small; its
  // values do not fit in one JavaScript array (the engine's RangeError before: fuzz seed 211).
  const runs = (length: number): RawArray => ({
    type: t.runEndEncoded(t.int64(), t.int32()), length, nullCount: 0, offset: 0, buffers: [], dictionary: null,
    children: [
      { type: t.int64(), length: 1, nullCount: 0, offset: 0, buffers: [null, new Uint8Array(BigInt64Array.of(BigInt(length)).buffer)], children: [], dictionary: null },
      { type: t.int32(), length: 1, nullCount: 0, offset: 0, buffers: [null, new Uint8Array(Int32Array.of(7).buffer)], children: [], dictionary: null },
    ],
  });

  test('2^32 slots: EOVERFLOW naming the array and the count, and a shorter one reads', () => {
    const error = libraryError(() => rawValues(runs(2 ** 32)));
    expect(error.errno).toBe(EOVERFLOW);
    expect(error.message).toBe('array: the array has 4294967296 values, more than a JavaScript array holds (4294967295)');
    expect(rawValues(runs(3))).toEqual([7, 7, 7]);
  });
});
