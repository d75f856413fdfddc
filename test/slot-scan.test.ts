// The slot scans in wasm (csrc/validate/slots.c, ts/abi/slot-scan.ts): the
// passes of ts/validate/raw-shape.ts over every offset and union slot, run by
// the core, over buffers in its own memory where they are, over others (another
// module's memory, copies) a part at a time through its scratch area. They must
// find the slot the TypeScript loops find, for every corruption, at every
// place of a block and of a part: the same raw arrays are checked both ways
// and must give the same error (or none). Then the imports that use them.
// Longer than 400 lines: the comparisons of the three scans (offsets, union
// slots, binary views) share this file's placing of buffers and its counting
// scan, which a split would have to export.
import { afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { ArrowCDevice } from '../ts/api.js';
import { ArrowCDeviceError } from '../ts/abi/errors.js';
import type { SlotScan, SlotScanExports } from '../ts/abi/slot-scan.js';
import type { RawArray } from '../ts/model/raw.js';
import * as t from '../ts/model/types.js';
import { checkShape } from '../ts/validate/raw-shape.js';
import { bytesMark, core, coreAsModule, MODES, values } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});
// Before the check of the live bytes (afterEach hooks run in the order they are declared): a failed test's allocations too.
afterEach(() => freeAll());
const mark = bytesMark(() => acd);

/** A generator of 32-bit numbers (LCG), seeded: the same cases every run. */
function seeded(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
}

/** Allocations in the core for one test, freed after it. */
const taken: number[] = [];

/** Where a test puts the buffers it checks: the core's memory (scanned there) or a buffer of its own (copied in parts). */
type Place = 'core' | 'elsewhere';
let place: Place = 'core';

/** The bytes of `a` copied to the current place, at an address `skew` bytes past an 8-byte boundary: a view of them there. */
function inCore(a: ArrayBufferView, skew = 0): Uint8Array {
  if (place === 'elsewhere') {
    const out = new Uint8Array(new ArrayBuffer(a.byteLength + 16), skew, a.byteLength);
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    return out;
  }
  const at = acd.core.alloc(a.byteLength + 16) + skew;
  taken.push(at - skew);
  acd.core.bytes.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
  return new Uint8Array(acd.core.memory.buffer, at, a.byteLength);
}

function freeAll(): void {
  taken.splice(0).forEach((p) => acd.core.free(p));
}

/** The core's scans, counting their calls. */
function counting(): { scan: SlotScan; calls: () => number } {
  const real = acd.core.slotScan;
  if (real === null) throw new Error('the loaded core has no slot scans');
  let n = 0;
  const scan: SlotScan = {
    offsets: (...a) => (n++, real.offsets(...a)),
    union: (...a) => (n++, real.union(...a)),
    views: (...a) => (n++, real.views(...a)),
  };
  return { scan, calls: () => n };
}

/** The message of the ArrowCDeviceError f throws (fails the test when it throws none). */
function errorOf(f: () => void): string {
  const message = messageOf(f);
  expect(message).not.toBeNull();
  return message!;
}

/**
 * Checks raw with the TypeScript loops and with `scan` (counting), expects
 * the same error or none, and that the scan was called when `scanned`; frees
 * the test's allocations. Whether raw was refused.
 */
function compareBoth(raw: RawArray, { scan, calls }: ReturnType<typeof counting>, scanned: boolean): boolean {
  const before = calls();
  const inTs = messageOf(() => checkShape(raw, 'array', true, null));
  const inCoreScan = messageOf(() => checkShape(raw, 'array', true, scan));
  expect(inCoreScan).toBe(inTs);
  if (scanned) expect(calls()).toBeGreaterThan(before);
  freeAll();
  return inTs !== null;
}

/**
 * 3,000 seeded random raw arrays of up to `maxSlots` slots from slot 0 to
 * `maxFrom` - 1, each made by `make` (the raw array and whether the core
 * must have been called for it), checked both ways by compareBoth; more than
 * `refused` of them refused.
 */
function compareMany(seed: number, maxSlots: number, maxFrom: number, refused: number,
  make: (next: (n: number) => number, slots: number, from: number) => [raw: RawArray, scanned: boolean]): void {
  mark();
  const next = seeded(seed);
  const counted = counting();
  let failures = 0;
  for (let c = 0; c < 3000; c++) {
    const slots = next(maxSlots + 1);
    const from = next(maxFrom);
    const [raw, scanned] = make(next, slots, from);
    if (compareBoth(raw, counted, scanned)) failures++;
  }
  expect(failures).toBeGreaterThan(refused);
}

/** The message checkShape throws, or null. */
function messageOf(f: () => void): string | null {
  try {
    f();
    return null;
  } catch (e) {
    if (!(e instanceof ArrowCDeviceError)) throw e;
    return (e as Error).message;
  }
}

const leaf = (type: t.DataType, length: number, values: ArrayBufferView | null): RawArray =>
  ({ type, length, nullCount: 0, offset: 0, buffers: [null, values === null ? null : inCore(values)], children: [], dictionary: null });

/**
 * Ascending offsets for `slots` lists from slot `from` (the entries before it
 * anything: they are not read), ending at most at `limit`.
 */
function ascending(next: (n: number) => number, from: number, slots: number, limit: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < from; i++) out.push(next(3) - 1);
  let o = next(Math.max(1, Math.floor(limit / 4) + 1));
  for (let i = 0; i <= slots; i++) {
    out.push(o);
    o = Math.min(limit, o + next(3));
  }
  return out;
}

/** The ways an offset can be wrong, at slot i of offsets o (limit: what they index). */
const BREAKS: ((o: number[], i: number, limit: number) => number)[] = [
  () => -1,
  (_, __, limit) => limit + 1,
  () => -2147483648,
  () => 2147483647,
  (o, i) => (i > 0 ? o[i - 1]! - 1 : -1),
];

describe.each(['core', 'elsewhere'] as const)('the core scans offsets as the TypeScript loop does (buffers in: %s)', (where) => {
  beforeEach(() => {
    place = where;
  });
  for (const kind of ['list', 'large_list', 'map'] as const) {
    test(`${kind}: 3,000 arrays of 0 to 200 slots, sliced, each with a wrong offset anywhere or none: the same error both ways`, () => {
      compareMany(kind.length * 7919 + where.length, 200, 4, 1500, (next, slots, from) => {
        const limit = next(300);
        const o = ascending(next, from, slots, limit);
        const at = next(o.length + 1) - 1; // -1: leave every offset right
        if (at >= 0) o[at] = BREAKS[next(BREAKS.length)]!(o, at, limit);
        const wide = kind === 'large_list';
        const entries = wide ? BigInt64Array.from(o, BigInt) : Int32Array.from(o);
        // Every eighth array at an address its width does not divide (copied to the scratch area to be scanned).
        const skew = next(8) === 0 ? 2 : 0;
        const type = kind === 'map' ? t.map(t.int32(), t.int32()) : kind === 'list' ? t.list(t.int32()) : t.largeList(t.int32());
        // A map's child is its entries: a struct of keys and values.
        const child: RawArray = kind === 'map'
          ? { type: t.childFields(type)[0]!.type, length: limit, nullCount: 0, offset: 0, dictionary: null, buffers: [null],
            children: [leaf(t.int32(), limit, new Int32Array(limit)), leaf(t.int32(), limit, new Int32Array(limit))] }
          : leaf(t.int32(), limit, new Int32Array(limit));
        return [{ type, length: slots, nullCount: 0, offset: from, dictionary: null, buffers: [null, inCore(entries, skew)], children: [child] }, true];
      });
    });
  }

  // A part of the scratch area holds 16,384 32-bit offsets or 8,192 64-bit ones, each part after the first starting with the last of the one before.
  test.each([4, 8] as const)('a message names the first wrong slot of a 100,000-slot list of %i-byte offsets, wherever it is (blocks, parts, the ends)', (width) => {
    mark();
    const n = 100_000;
    const part = 65536 / width;
    const o = width === 4 ? Int32Array.from({ length: n + 1 }, (_, i) => i) : BigInt64Array.from({ length: n + 1 }, (_, i) => BigInt(i));
    const type = width === 4 ? t.list(t.int32()) : t.largeList(t.int32());
    const raw: RawArray = { type, length: n, nullCount: 0, offset: 0, dictionary: null, buffers: [null, inCore(o)], children: [leaf(t.int32(), n, new Int32Array(n))] };
    const view = new DataView(raw.buffers[1]!.buffer, raw.buffers[1]!.byteOffset, (n + 1) * width);
    const set = (i: number, v: number) => (width === 4 ? view.setInt32(i * 4, v, true) : view.setBigInt64(i * 8, BigInt(v), true));
    const slots = [0, 1, 2, 31, 32, 33, 63, 64, 65, part - 2, part - 1, part, part + 1, 2 * part - 2, 2 * part - 1, 2 * part, 50_000, 99_968, 99_999, 100_000];
    for (const i of slots) {
      set(i, i < 2 ? -5 : i - 2);
      const e = messageOf(() => checkShape(raw, 'array', true, acd.core.slotScan));
      expect(e).toBe(i < 2 ? `array.buffers[1]: offset -5 at slot ${i} is outside array.children[0] of length 100000`
        : `array.buffers[1]: offset ${i - 2} at slot ${i} is less than the offset before it (${i - 1})`);
      set(i, n + 1);
      expect(messageOf(() => checkShape(raw, 'array', true, acd.core.slotScan)))
        .toBe(`array.buffers[1]: offset ${n + 1} at slot ${i} is outside array.children[0] of length 100000`);
      set(i, i);
    }
    expect(messageOf(() => checkShape(raw, 'array', true, acd.core.slotScan))).toBeNull();
    // Sliced: the scan starts at the slice's first offset.
    const sliced: RawArray = { ...raw, offset: 40_000, length: 60_000 };
    set(39_000, -7);
    expect(messageOf(() => checkShape(sliced, 'array', true, acd.core.slotScan))).toBeNull();
    set(40_000 + part, 3);
    expect(messageOf(() => checkShape(sliced, 'array', true, acd.core.slotScan)))
      .toBe(`array.buffers[1]: offset 3 at slot ${40_000 + part} is less than the offset before it (${40_000 + part - 1})`);
    freeAll();
  });
});

describe.each(['core', 'elsewhere'] as const)('the core scans union slots as the TypeScript loop does (buffers in: %s)', (where) => {
  beforeEach(() => {
    place = where;
  });
  for (const mode of ['dense', 'sparse'] as const) {
    test(`${mode}: 3,000 unions of 0 to 200 slots, with wrong type ids or offsets, repeated ids and missing children: the same error both ways`, () => {
      compareMany((mode === 'dense' ? 17 : 29) + where.length, 200, 3, 1000, (next, slots, from) => {
        const phys = from + slots;
        // 1 to 4 children, ids from -3 to 126 or (half the unions: the core's shuffle path) from 0 to 15,
        // sometimes one repeated; sometimes one child fewer than ids. Dense children of 0 to 59 slots,
        // or of bounds that take two or three bytes.
        const nIds = 1 + next(4);
        const small = next(2) === 0;
        const typeIds = Array.from({ length: nIds }, () => (small ? next(16) : next(130) - 3));
        if (nIds > 1 && next(4) === 0) typeIds[nIds - 1] = typeIds[0]!;
        const sized = () => [() => next(60), () => 200 + next(800), () => 65_000 + next(10_000)][[0, 0, 0, 0, 0, 0, 1, 1, 1, 2][next(10)]!]!();
        const lengths = typeIds.map(() => (mode === 'sparse' ? phys : sized()));
        const nChildren = next(6) === 0 ? nIds - 1 : nIds;
        const ids = Int8Array.from({ length: phys }, () => typeIds[next(nIds)]!);
        const offsets = Int32Array.from(ids, (id) => {
          const k = typeIds.lastIndexOf(id);
          return lengths[k]! > 0 ? next(lengths[k]!) : 0;
        });
        const wrong = next(3);
        const at = from + next(Math.max(slots, 1));
        if (slots > 0 && wrong === 1) ids[at] = [127, -128, 100, -1, 16, next(16)][next(6)]!;
        if (slots > 0 && wrong === 2) {
          // The child's length (the first offset outside it), or past it by a unit of the bound's second or third byte.
          const bound = lengths[typeIds.lastIndexOf(ids[at]!)]!;
          offsets[at] = [-1, 60, 2147483647, -2147483648, bound, bound + 256, bound + 65_536][next(7)]!;
        }
        const children = Array.from({ length: nChildren }, (_, k) => leaf(t.int32(), lengths[k]!, new Int32Array(lengths[k]!)));
        const fields = typeIds.map((_, k) => t.field(`c${k}`, t.int32()));
        const type = mode === 'dense' ? t.denseUnion(fields, typeIds) : t.sparseUnion(fields, typeIds);
        const raw: RawArray = {
          type, length: slots, nullCount: 0, offset: from, dictionary: null, children,
          buffers: mode === 'dense' ? [inCore(ids), inCore(offsets)] : [inCore(ids)],
        };
        // (An empty union has no slots to scan.)
        return [raw, phys > 0];
      });
    });
  }

  test('a union of more than 128 children, or with an id outside int8, is scanned by the TypeScript loop', () => {
    mark();
    const { scan, calls } = counting();
    const many = Array.from({ length: 130 }, (_, k) => k - 2);
    const fields = many.map((_, k) => t.field(`c${k}`, t.int32()));
    const ids = Int8Array.from([0, 5, 127, -2]);
    const raw: RawArray = {
      type: t.sparseUnion(fields, many), length: 4, nullCount: 0, offset: 0, dictionary: null, buffers: [inCore(ids)],
      children: many.map(() => leaf(t.int32(), 4, new Int32Array(4))),
    };
    expect(messageOf(() => checkShape(raw, 'array', true, scan))).toBeNull();
    expect(calls()).toBe(1);
    ids[1] = -3;
    const bad: RawArray = { ...raw, buffers: [inCore(ids)] };
    expect(messageOf(() => checkShape(bad, 'array', true, scan))).toBe(messageOf(() => checkShape(bad, 'array', true, null)));
    freeAll();
  });

  // A part of the scratch area holds 13,104 slots of a dense union (ids and offsets), 65,536 of a sparse one.
  test.each(['dense', 'sparse'] as const)('a %s union of 140,000 slots: a wrong id or offset at the ends of blocks and parts', (mode) => {
    mark();
    const n = 140_000;
    const part = mode === 'dense' ? 13_104 : 65_536;
    const ids = Int8Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 9 : 4));
    const offsets = Int32Array.from({ length: n }, (_, i) => i >> 1);
    const fields = [t.field('a', t.int32()), t.field('b', t.int32())];
    const type = mode === 'dense' ? t.denseUnion(fields, [4, 9]) : t.sparseUnion(fields, [4, 9]);
    const children = [leaf(t.int32(), n, new Int32Array(n)), leaf(t.int32(), n, new Int32Array(n))];
    const raw: RawArray = { type, length: n, nullCount: 0, offset: 0, dictionary: null, children,
      buffers: mode === 'dense' ? [inCore(ids), inCore(offsets)] : [inCore(ids)] };
    const idsThere = raw.buffers[0]!;
    const offsetsThere = mode === 'dense' ? new Int32Array(raw.buffers[1]!.buffer, raw.buffers[1]!.byteOffset, n) : null;
    const { scan, calls } = counting();
    for (const i of [0, 31, 32, part - 1, part, part + 1, 2 * part - 1, 2 * part, n - 33, n - 1]) {
      idsThere[i] = 5;
      expect(messageOf(() => checkShape(raw, 'array', true, scan))).toBe(`array.buffers[0]: slot ${i} has type id 5, expected one of 4, 9`);
      idsThere[i] = ids[i]!;
      if (offsetsThere !== null) {
        offsetsThere[i] = -1;
        expect(messageOf(() => checkShape(raw, 'array', true, scan)))
          .toBe(`array.buffers[1]: offset -1 at slot ${i} is outside array.children[${i % 3 === 0 ? 1 : 0}] of length ${n}`);
        offsetsThere[i] = offsets[i]!;
      }
    }
    expect(messageOf(() => checkShape(raw, 'array', true, scan))).toBeNull();
    expect(calls()).toBeGreaterThan(10);
    freeAll();
  });
});

describe.each(['core', 'elsewhere'] as const)('the core scans binary views as the TypeScript loop does (buffers in: %s)', (where) => {
  beforeEach(() => {
    place = where;
  });

  /** A views array of phys slots over `lengths` variadic buffers, valid, with nulls when `nulls`. */
  function viewsOf(next: (n: number) => number, phys: number, lengths: number[], nulls: boolean): { words: Int32Array; validity: Uint8Array | null } {
    const words = new Int32Array(4 * phys);
    for (let i = 0; i < phys; i++) {
      const index = next(lengths.length);
      const inline = next(3) === 0 || lengths[index]! < 13;
      // An inline view's size may be negative too: its other words are never read.
      const size = inline ? next(13) - (next(8) === 0 ? 40 : 0) : 13 + next(lengths[index]! - 12);
      words.set([size, 0x64636261, inline ? next(9) - 4 : index, inline ? 0 : next(lengths[index]! - size + 1)], 4 * i);
    }
    const validity = nulls ? Uint8Array.from({ length: Math.ceil(phys / 8) }, () => next(256)) : null;
    return { words, validity };
  }

  test.each(['utf8_view', 'binary_view'] as const)('%s: 3,000 arrays of 0 to 300 slots, sliced, with nulls, each with a wrong view anywhere or none: the same error both ways', (kind) => {
    compareMany(kind.length * 31 + where.length, 300, 10, 1000, (next, slots, from) => {
      const phys = from + slots;
      // 1 to 6 variadic buffers (the core's blocks take 1 to 4).
      const lengths = Array.from({ length: 1 + next(6) }, () => next(80));
      const nulls = next(2) === 0;
      const { words, validity } = viewsOf(next, phys, lengths, nulls);
      const at = from + next(Math.max(slots, 1));
      if (slots > 0 && next(4) !== 0) {
        const size = 13 + next(40);
        const k = next(lengths.length);
        const wrongs: [number, number][] = [[lengths.length, 0], [-1, 0], [0, -1 - next(5)], [0, lengths[0]! - size + 1 + next(5)],
          [next(lengths.length), 2147483647], [k, lengths[k]! - size + 1], [4, 0]];
        const [index, start] = wrongs[next(wrongs.length)]!;
        words.set([size, 0, index, start], 4 * at);
      }
      // A wrong view before the slice is never read.
      if (from > 0 && next(4) === 0) words.set([30, 0, lengths.length + 5, -9], 4 * next(from));
      const raw: RawArray = {
        type: kind === 'utf8_view' ? t.utf8View() : t.binaryView(), length: slots, nullCount: nulls ? 1 : 0, offset: from, dictionary: null, children: [],
        buffers: [validity === null ? null : inCore(validity), inCore(words), ...lengths.map((n) => inCore(new Uint8Array(n))),
          inCore(BigInt64Array.from(lengths, BigInt))],
      };
      return [raw, slots > 0];
    });
  });

  test('100,000 views: a wrong one at the ends of the scratch area\'s parts (2,048 views), with and without nulls', () => {
    mark();
    const next = seeded(5);
    const n = 100_000;
    const lengths = [1000, 500];
    for (const nulls of [false, true]) {
      const { words } = viewsOf(next, n, lengths, false);
      const bitmap = nulls ? new Uint8Array(Math.ceil(n / 8)).fill(0xff) : null;
      const raw: RawArray = {
        type: t.utf8View(), length: n - 3, nullCount: nulls ? 1 : 0, offset: 3, dictionary: null, children: [],
        buffers: [bitmap === null ? null : inCore(bitmap), inCore(words), ...lengths.map((k) => inCore(new Uint8Array(k))), inCore(BigInt64Array.from(lengths, BigInt))],
      };
      const there = new Int32Array(raw.buffers[1]!.buffer, raw.buffers[1]!.byteOffset, 4 * n);
      const bits = raw.buffers[0];
      for (const i of [3, 4, 2047, 2048, 2049, 4095, 4096, 50_001, n - 1]) {
        const saved = there.slice(4 * i, 4 * i + 4);
        there.set([20, 0, 1, 490], 4 * i);
        expect(messageOf(() => checkShape(raw, 'array', true, acd.core.slotScan)))
          .toBe(`array.buffers[3]: view ${i} reads bytes [490, 510), outside the 500-byte buffer`);
        if (bits !== null) {
          // A null slot's view is not read: no error.
          bits[i >> 3] &= ~(1 << (i & 7));
          expect(messageOf(() => checkShape(raw, 'array', true, acd.core.slotScan))).toBeNull();
          bits[i >> 3] |= 1 << (i & 7);
        }
        there.set(saved, 4 * i);
      }
      expect(messageOf(() => checkShape(raw, 'array', true, acd.core.slotScan))).toBeNull();
      freeAll();
    }
  });
});

describe('imports check with the core scans, in both modes', () => {
  /** A batch of list<int32> and a dense union, n rows. */
  function batch(n: number): arrow.RecordBatch {
    // List i holds i % 4 values.
    const listOffsets = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) listOffsets[i + 1] = listOffsets[i]! + (i % 4);
    const items = arrow.makeData({ type: new arrow.Int32(), length: listOffsets[n]!, data: Int32Array.from({ length: listOffsets[n]! }, (_, i) => i) });
    const lists = arrow.makeData({ type: new arrow.List(new arrow.Field('item', new arrow.Int32())), length: n, nullCount: 0, valueOffsets: listOffsets, child: items });
    const ids = Int8Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 5 : 3));
    const counts = [0, 0];
    const offsets = Int32Array.from(ids, (id) => counts[id === 3 ? 0 : 1]!++);
    const union = arrow.makeData({
      type: new arrow.DenseUnion([3, 5], [new arrow.Field('i', new arrow.Int32()), new arrow.Field('d', new arrow.Float64())]),
      length: n, nullCount: 0, typeIds: ids, valueOffsets: offsets,
      children: [arrow.makeData({ type: new arrow.Int32(), length: counts[0]!, data: Int32Array.from({ length: counts[0]! }, (_, i) => i) }),
        arrow.makeData({ type: new arrow.Float64(), length: counts[1]!, data: Float64Array.from({ length: counts[1]! }, (_, i) => i / 2) })],
    });
    const schema = new arrow.Schema([new arrow.Field('l', lists.type), new arrow.Field('u', union.type)]);
    return new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children: [lists, union] }));
  }

  /** Buffer i of child c of the exported batch at array. */
  function bufferOf(array: number, c: number, i: number): number {
    const s = acd.core.structs;
    const child = s.ptrAt(s.ptr('ArrowArray', array, 'children') + c * s.layout.pointerSize);
    return s.ptrAt(s.ptr('ArrowArray', child, 'buffers') + i * s.layout.pointerSize);
  }

  test.each(MODES)('a 10,000-row batch reads the values it was given (%s)', (mode) => {
    mark();
    const b = batch(10_000);
    const exported = acd.exportBatch(b);
    const imported = acd.importBatch(exported.schema, exported.array, { mode });
    for (const c of [0, 1]) expect(values(imported.value.getChildAt(c)!)).toEqual(values(b.getChildAt(c)!));
    imported.release();
    exported.release();
  });

  test.each(MODES)('{ from } another module: the same values, and the same errors as from the core\'s own memory (%s)', async (mode) => {
    mark();
    const other = await ArrowCDevice.load();
    const from = coreAsModule(acd, other);
    const b = batch(20_000);
    const there = other.exportBatch(b);
    const imported = acd.importBatch(there.schema, there.array, { mode, from });
    for (const c of [0, 1]) expect(values(imported.value.getChildAt(c)!)).toEqual(values(b.getChildAt(c)!));
    imported.release();
    there.release();
    // Past the first part of the scratch area (16,384 offsets, 13,104 union slots).
    for (const [c, slot, value] of [[0, 17_001, 5], [1, 19_000, 20_000]] as const) {
      const here = acd.exportBatch(b);
      const far = other.exportBatch(b);
      for (const [core, e] of [[acd, here], [other, far]] as const) {
        const s = core.core.structs;
        const child = s.ptrAt(s.ptr('ArrowArray', e.array, 'children') + c * s.layout.pointerSize);
        core.core.view.setInt32(s.ptrAt(s.ptr('ArrowArray', child, 'buffers') + s.layout.pointerSize) + 4 * slot, value, true);
      }
      const own = errorOf(() => acd.importBatch(here.schema, here.array, { mode }).release());
      const foreign = errorOf(() => acd.importBatch(far.schema, far.array, { mode, from }).release());
      expect(foreign).toBe(`other: ${own}`);
      expect(own).toMatch(new RegExp(`at slot ${slot} `));
      here.release();
      far.release();
    }
    expect(other.bytesAllocated()).toBe(0);
  });

  test.each(MODES)('a wrong offset deep in a list, or a wrong dense union offset, is an error naming its slot (%s)', (mode) => {
    mark();
    const cases: [number, number, number, number, string][] = [
      // [child, buffer, slot, value, message]
      [0, 1, 7001, 3, 'array.children[0].buffers[1]: offset 3 at slot 7001 is less than the offset before it (10500)'],
      [0, 1, 9999, 2 ** 30, 'array.children[0].buffers[1]: offset 1073741824 at slot 9999 is outside array.children[0].children[0] of length 15000'],
      // Slot 8000 is one of child 0's (type id 3), which has 6,666 values.
      [1, 1, 8000, 7000, 'array.children[1].buffers[1]: offset 7000 at slot 8000 is outside array.children[1].children[0] of length 6666'],
    ];
    for (const [c, i, slot, value, message] of cases) {
      const exported = acd.exportBatch(batch(10_000));
      acd.core.view.setInt32(bufferOf(exported.array, c, i) + 4 * slot, value, true);
      let error: unknown = null;
      try {
        acd.importBatch(exported.schema, exported.array, { mode }).release();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ArrowCDeviceError);
      expect((error as Error).message).toBe(message);
      // Nothing was moved: the export is still the caller's.
      exported.release();
    }
  });
});

describe('buffers of the core\'s memory that overlap the scans\' own table or scratch area', () => {
  // The scans write both between checks: bytes checked there could change before apache-arrow reads them.
  test('are refused by every scan, whatever their alignment; a buffer just past the scratch area or just before the table is scanned', () => {
    const asm = (acd.core as unknown as { m: { asm: Required<SlotScanExports> } }).m.asm;
    const scan = acd.core.slotScan!;
    const memory = acd.core.memory.buffer;
    const table = asm.acd_scan_table_address();
    const scratch = asm.acd_scan_scratch_address();
    const room = asm.acd_scan_scratch_bytes();
    const overlaps = /^slot scan: a buffer at bytes \[\d+, \d+\) of the core's memory overlaps its scan area/;
    // 36 bytes from `at` (ending inside the area when they start before it), as offsets, type ids, views or validity.
    for (const at of [table, table + 8 * 128 + 1, table - 4, scratch, scratch + 1, scratch + room - 4, scratch - 8]) {
      const bytes = new Uint8Array(memory, at, 36);
      expect(() => scan.offsets(bytes, 4, 0, 8, 1000)).toThrow(overlaps);
      expect(() => scan.union(bytes, null, 0, 8, [0], [8])).toThrow(overlaps);
      expect(() => scan.union(new Uint8Array(memory, 8, 8), bytes, 0, 8, [0], [8])).toThrow(overlaps);
      expect(() => scan.views(bytes, null, 0, 1, [10])).toThrow(overlaps);
      expect(() => scan.views(new Uint8Array(memory, 16, 16), bytes, 0, 1, [10])).toThrow(overlaps);
    }
    for (const at of [scratch + room, table - 36]) {
      const offsets = new Int32Array(memory, at, 9);
      const saved = offsets.slice();
      offsets.set([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      expect(scan.offsets(offsets, 4, 0, 8, 8)).toBe(9);
      offsets.set(saved);
    }
    // Through checkShape: a list whose offsets lie in the scratch area.
    const list: RawArray = { type: t.list(t.int32()), length: 8, nullCount: 0, offset: 0, dictionary: null,
      buffers: [null, new Uint8Array(memory, scratch + 64, 36)], children: [leaf(t.int32(), 1000, new Int32Array(1000))] };
    expect(messageOf(() => checkShape(list, 'array', true, scan))).toMatch(overlaps);
    freeAll();
  });
});
