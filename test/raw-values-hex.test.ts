// rawValues renders binary values as hex (toHex, ts/model/raw-values.ts): one
// 16-bit write per byte and one latin1 decode. Past the longest string V8
// makes it must throw the library's error (the join it replaced threw a
// RangeError; Node's latin1 decoder aborts the whole process: fuzz seed 127).
import { describe, expect, test } from '@jest/globals';
import { EOVERFLOW } from '../ts/abi/errors.js';
import { toHex } from '../ts/model/raw-values.js';
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
