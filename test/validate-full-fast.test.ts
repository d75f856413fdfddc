// FULL validation's fast passes (csrc/validate/content.c): for string and
// binary offsets (the offsets scanned in SIMD blocks, the bytes from the
// first offset to the last checked as one UTF-8 text, every offset inside
// them at the start of a character) and for dictionary indices (all of them,
// null slots' too, scanned against the dictionary's length), each accepts
// only what the slot-by-slot loop accepts and leaves everything else to it.
// Random arrays of every kind of wrong byte, offset and index, held to a
// reference written here from the rule (offsets never decrease and end at
// the last one; every valid slot's bytes are UTF-8, as TextDecoder with
// fatal: true reads them; every valid slot's index lies in the dictionary):
// the same arrays refused, at the same slot.
import { beforeAll, describe, expect, test } from '@jest/globals';
import type { ArrowCDevice } from '../ts/api.js';
import type { RawArray } from '../ts/model/raw.js';
import * as t from '../ts/model/types.js';
import { core } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});

/** A generator of 32-bit numbers (LCG), seeded: the same cases every run. */
function seeded(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
}

// Pieces a slot's bytes are made of: ASCII, valid characters of 2, 3 and 4 bytes, and what RFC 3629 refuses.
const VALID = [[0x61], [0x7a, 0x30], [0xc3, 0xa9], [0xe6, 0x97, 0xa5], [0xf0, 0x9f, 0x9a, 0x80], [0xed, 0x9f, 0xbf], [0xf4, 0x8f, 0xbf, 0xbf]];
const INVALID = [[0xff], [0x80], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe6, 0x97], [0xf8, 0x88, 0x80, 0x80, 0x80]];

const fatal = new TextDecoder('utf-8', { fatal: true });
const isUtf8 = (b: Uint8Array) => {
  try {
    fatal.decode(b);
    return true;
  } catch {
    return false;
  }
};

/** What the rule says of the slots [offset, offset + length): null, or the part of the message that names the first wrong slot. */
function reference(offsets: number[], data: Uint8Array, valid: boolean[] | null, offset: number, length: number, utf8: boolean): string | null {
  const last = offsets[offset + length]!;
  let start = offsets[offset]!;
  for (let j = offset; j < offset + length; j++) {
    const stop = offsets[j + 1]!;
    if (stop < start || stop > last) return `expected offsets[${j + 1}] in ${start}..${last}`;
    if (utf8 && stop > start && (valid === null || valid[j]) && !isUtf8(data.subarray(start, stop))) return `expected UTF-8 in slot ${j - offset} `;
    start = stop;
  }
  return null;
}

/** The message of a 'full' import of raw (null when it is accepted). */
function fullImport(field: t.Field, raw: RawArray): string | null {
  const e = acd.exportRaw(field, raw);
  try {
    acd.importRaw(e.schema, e.array, { validate: 'full' }).release();
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    e.release();
  }
}

/** The validity bitmap of `valid` (null: none) and the nulls of slots [offset, offset + length). */
function bitmapOf(valid: boolean[] | null, offset: number, length: number): [Uint8Array | null, number] {
  if (valid === null) return [null, 0];
  const bitmap = new Uint8Array(Math.ceil(valid.length / 8));
  valid.forEach((v, i) => { if (v) bitmap[i >> 3]! |= 1 << (i & 7); });
  return [bitmap, valid.slice(offset, offset + length).filter((v) => !v).length];
}

/** A random case: its rule's verdict (null, or the part of the message naming the slot) and the import's message. */
type Case = (next: (n: number) => number, phys: number, offset: number, length: number, valid: boolean[] | null) => [want: string | null, got: string | null];

/**
 * 3,000 random cases of up to `slots` slots (sliced, a third with nulls),
 * each refused as the rule says or accepted; at least `accepted` and
 * `refused` of each; nothing left allocated.
 */
function randomCases(seed: number, slots: number, one: Case, accepted: number, refused: number): void {
  const next = seeded(seed);
  const start = acd.bytesAllocated();
  const seen = { accepted: 0, refused: 0 };
  for (let c = 0; c < 3000; c++) {
    const phys = next(slots);
    const offset = next(Math.min(phys, 10) + 1);
    const valid = next(3) === 0 ? Array.from({ length: phys }, () => next(4) !== 0) : null;
    const [want, got] = one(next, phys, offset, phys - offset, valid);
    if (want === null) {
      expect(got).toBeNull();
      seen.accepted++;
    } else {
      expect(got).toContain(want);
      seen.refused++;
    }
  }
  // Both ways, many times: the fast pass accepts, the slot-by-slot loop names.
  expect(seen.accepted).toBeGreaterThan(accepted);
  expect(seen.refused).toBeGreaterThan(refused);
  expect(acd.bytesAllocated()).toBe(start);
}

const KINDS = [
  ['utf8', t.utf8(), 4, true],
  ['large_utf8', t.largeUtf8(), 8, true],
  ['binary', t.binary(), 4, false],
] as const;

describe.each(KINDS)('%s at full validation', (_, type, width, utf8) => {
  function rawOf(offsets: number[], data: Uint8Array, valid: boolean[] | null, offset: number, length: number): RawArray {
    const words = width === 4 ? new Uint8Array(Int32Array.from(offsets).buffer) : new Uint8Array(BigInt64Array.from(offsets.map(BigInt)).buffer);
    const [bitmap, nulls] = bitmapOf(valid, offset, length);
    return { type, length, nullCount: nulls, offset, dictionary: null, children: [], buffers: [bitmap, words, data] };
  }

  test('3,000 random arrays (wrong bytes, characters cut by an offset, wrong bytes under nulls, decreasing offsets): refused as the rule says, at its slot', () => {
    randomCases(width * 7 + (utf8 ? 1 : 0), 120, (next, phys, offset, length, valid) => {
      const bytes: number[] = [];
      const offsets = [0];
      for (let i = 0; i < phys; i++) {
        for (let k = next(6); k > 0; k--) bytes.push(...(next(60) === 0 ? INVALID[next(INVALID.length)]! : VALID[next(VALID.length)]!));
        offsets.push(bytes.length);
      }
      // Offsets inside the slice only (its first and last are checked at 'default', before).
      const mischief = length >= 2 ? next(6) : 5;
      const j = offset + 1 + next(Math.max(length - 1, 1));
      if (mischief === 0) {
        // An offset moved by one byte: it may cut a character, or go below the one before.
        offsets[j] = Math.max(0, offsets[j]! + (next(2) === 0 ? 1 : -1));
      } else if (mischief === 1) {
        // A middle offset past the last one, or far below the one before.
        offsets[j] = next(2) === 0 ? bytes.length + 1 + next(5) : 0;
      }
      const data = new Uint8Array(bytes);
      return [reference(offsets, data, valid, offset, length, utf8), fullImport(t.field('s', type), rawOf(offsets, data, valid, offset, length))];
    }, utf8 ? 400 : 1000, utf8 ? 1500 : 200);
  });

  test('100,000 slots: a character cut, or a wrong byte, at the ends of the scan\'s blocks and at the last slots; under a null slot a wrong byte is accepted', () => {
    const n = 100_000;
    // Slot i: "é" then "x" (3 bytes).
    const data = new Uint8Array(3 * n);
    for (let i = 0; i < n; i++) data.set([0xc3, 0xa9, 0x78], 3 * i);
    const offsets = Array.from({ length: n + 1 }, (_, i) => 3 * i);
    const valid = Array.from({ length: n }, () => true);
    expect(fullImport(t.field('s', type), rawOf(offsets, data, null, 0, n))).toBeNull();
    for (const i of [1, 31, 32, 33, 64, 65, 50_000, n - 2, n - 1]) {
      if (utf8) {
        // Offset i one byte on: slot i - 1 ends inside "é" of slot i.
        offsets[i] = 3 * i + 1;
        expect(fullImport(t.field('s', type), rawOf(offsets, data, null, 0, n))).toContain(`expected UTF-8 in slot ${i - 1} `);
        offsets[i] = 3 * i;
        data[3 * i + 2] = 0xff;
        expect(fullImport(t.field('s', type), rawOf(offsets, data, null, 0, n))).toContain(`expected UTF-8 in slot ${i} `);
        valid[i] = false;
        expect(fullImport(t.field('s', type), rawOf(offsets, data, valid, 0, n))).toBeNull();
        valid[i] = true;
        data[3 * i + 2] = 0x78;
      }
      // Offset i below the one before it.
      offsets[i] = 3 * i - 4;
      expect(fullImport(t.field('s', type), rawOf(offsets, data, null, 0, n))).toContain(`expected offsets[${i}] in ${3 * i - 3}..${3 * n}`);
      offsets[i] = 3 * i;
    }
  });
});

const INDEX_TYPES = [t.int8(), t.uint8(), t.int16(), t.uint16(), t.int32(), t.uint32(), t.int64(), t.uint64()];

describe.each(INDEX_TYPES.map((type) => [`${type.signed ? '' : 'u'}int${type.bitWidth}`, type] as const))('dictionary indices of %s at full validation', (_, indexType) => {
  const width = indexType.bitWidth / 8;
  function rawOf(indices: number[], valid: boolean[] | null, offset: number, length: number, dictionaryLength: number): RawArray {
    const bytes = new Uint8Array(indices.length * width);
    const view = new DataView(bytes.buffer);
    indices.forEach((x, i) => {
      if (width === 1) view.setUint8(i, x & 0xff);
      else if (width === 2) view.setUint16(2 * i, x & 0xffff, true);
      else if (width === 4) view.setUint32(4 * i, x >>> 0, true);
      else view.setBigInt64(8 * i, BigInt(x), true);
    });
    const [bitmap, nulls] = bitmapOf(valid, offset, length);
    const dictionary: RawArray = { type: t.int32(), length: dictionaryLength, nullCount: 0, offset: 0, dictionary: null, children: [],
      buffers: [null, new Uint8Array(Int32Array.from({ length: dictionaryLength }, (_, k) => k).buffer)] };
    return { type: t.dictionary(indexType, t.int32()), length, nullCount: nulls, offset, dictionary, children: [], buffers: [bitmap, bytes] };
  }
  /** An index as the type reads it (the bytes rawOf writes). */
  const asRead = (x: number) => {
    if (width === 8) return indexType.signed ? x : x < 0 ? 2 ** 64 + x : x;
    const bits = 8 * width;
    const u = width === 4 ? x >>> 0 : x & ((1 << bits) - 1);
    return indexType.signed && u >= 2 ** (bits - 1) ? u - 2 ** bits : u;
  };

  test('3,000 random arrays (indices past the dictionary, negative, or wrong only under nulls): refused as the rule says, at its slot', () => {
    randomCases(width * 13 + (indexType.signed ? 1 : 0), 150, (next, phys, offset, length, valid) => {
      const dictionaryLength = [1, 5, 100, 127, 128, 255, 256][next(7)]!;
      const indices = Array.from({ length: phys }, () => next(dictionaryLength));
      for (let k = next(3); k > 0 && phys > 0; k--) {
        indices[next(phys)] = [dictionaryLength, dictionaryLength + next(50), -1, -128, 255, 65_535, -(2 ** 31), 2 ** 31 - 1][next(8)]!;
      }
      let want: string | null = null;
      for (let i = offset; i < offset + length && want === null; i++) {
        const x = asRead(indices[i]!);
        if ((valid === null || valid[i]) && !(x >= 0 && x < dictionaryLength)) want = `expected 0 <= indices[${i}] < ${dictionaryLength} (the dictionary's length), found `;
      }
      return [want, fullImport(t.field('d', t.dictionary(indexType, t.int32())), rawOf(indices, valid, offset, length, dictionaryLength))];
    }, 600, 600);
  });

  test('100,000 slots: an index past the dictionary at the ends of the blocks and in the last slots, refused there; under a null slot, accepted', () => {
    const n = 100_000;
    const indices = Array.from({ length: n }, (_, i) => i % 100);
    const valid = Array.from({ length: n }, () => true);
    const field = t.field('d', t.dictionary(indexType, t.int32()));
    expect(fullImport(field, rawOf(indices, null, 0, n, 100))).toBeNull();
    for (const i of [0, 31, 32, 33, 64, 50_000, n - 2, n - 1]) {
      indices[i] = 100;
      expect(fullImport(field, rawOf(indices, null, 0, n, 100))).toContain(`expected 0 <= indices[${i}] < 100`);
      valid[i] = false;
      expect(fullImport(field, rawOf(indices, valid, 0, n, 100))).toBeNull();
      valid[i] = true;
      indices[i] = i % 100;
    }
  });
});
