// The direct reader (ts/arrow-js/arrow-view.ts) against the general one it
// stands in for (readRaw → toArrowData): for every case of the fixture
// corpus, valid and invalid, and for every field of the struct trees of
// common-kind batches corrupted in turn, it either gives up (null: the
// general path reads the tree) or gives exactly the general path's Data, and
// it never accepts a tree the general path refuses. In copy mode it takes the
// trees it takes in view mode, and gives the same Data over copies.

import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { toArrowData } from '../ts/arrow-js/arrow-data.js';
import { toArrowType } from '../ts/arrow-js/arrow-types.js';
import { viewData } from '../ts/arrow-js/arrow-view.js';
import { corpusCases } from '../ts/fixtures/cases.js';
import { readRaw } from '../ts/model/raw.js';
import type { RawArray } from '../ts/model/raw.js';
import * as t from '../ts/model/types.js';
import { bytesMark, core } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});
const mark = bytesMark(() => acd);

/** A Data tree as plain values, each buffer (absent: null) as `buffer` gives it. */
function plain(d: arrow.Data, buffer: (b: ArrayBufferView) => unknown): unknown {
  const of = (b: ArrayBufferView | undefined | null) => (b === undefined || b === null ? null : buffer(b));
  return {
    type: String(d.type),
    offset: d.offset,
    length: d.length,
    nullCount: d.nullCount,
    buffers: [of(d.valueOffsets), of(d.values), of(d.nullBitmap), of(d.typeIds)],
    children: d.children.map((c) => plain(c, buffer)),
    dictionary: d.dictionary?.data.map((c) => plain(c, buffer)) ?? null,
  };
}

/** A Data tree with every buffer as its class, address and length (views: the same memory). */
function tree(d: arrow.Data): unknown {
  return plain(d, (b) => ({ class: b.constructor.name, at: b.byteOffset, bytes: b.byteLength, memory: b.buffer === acd.memory.buffer }));
}

type Outcome = { data: unknown } | { error: string };

/** The general path's outcome for the array at ptr. */
function general(ptr: number, type: t.DataType, arrowType: arrow.DataType): Outcome {
  try {
    return { data: tree(toArrowData(readRaw(acd.core.space, ptr, type, 'view'), [], 'array', false, arrowType)) };
  } catch (e) {
    return { error: String(e) };
  }
}

/**
 * Checks the direct reader against the general one on the array at ptr:
 * null, or the same Data; never a Data where the general path throws, and
 * never an exception.
 * Returns whether the direct reader took the tree.
 */
function agrees(ptr: number, type: t.DataType, arrowType: arrow.DataType): boolean {
  const expected = general(ptr, type, arrowType);
  // It never throws: whatever it cannot read, it leaves to the general path, whose error names it.
  const direct = viewData(acd.core.space, ptr, type, arrowType, false, acd.core.slotScan);
  const copied = viewData(acd.core.space, ptr, type, arrowType, true, acd.core.slotScan);
  expect(copied === null).toBe(direct === null);
  if (direct === null) return false;
  expect(expected).toEqual({ data: tree(direct) });
  expect(contents(copied!)).toEqual(contents(direct));
  // The copies are apart from wasm memory, and aligned for their class.
  const where = buffersOf(copied!);
  expect(where.length).toBe(buffersOf(direct).length);
  for (const b of where) {
    expect(b.buffer).not.toBe(acd.memory.buffer);
    expect(b.byteOffset % (b as Uint8Array).BYTES_PER_ELEMENT).toBe(0);
  }
  return true;
}

/** A Data tree with every buffer's class and bytes. */
function contents(d: arrow.Data): unknown {
  return plain(d, (b) => ({ class: b.constructor.name, bytes: [...new Uint8Array(b.buffer, b.byteOffset, b.byteLength)] }));
}

/** Every buffer of a Data tree. */
function buffersOf(d: arrow.Data, out: ArrayBufferView[] = []): ArrayBufferView[] {
  for (const b of [d.valueOffsets, d.values, d.nullBitmap, d.typeIds]) if (b !== undefined && b !== null) out.push(b);
  d.children.forEach((c) => buffersOf(c, out));
  d.dictionary?.data.forEach((c) => buffersOf(c, out));
  return out;
}

/** The apache-arrow type of a field's type, or null for one apache-arrow lacks. */
function arrowTypeOf(type: t.DataType): arrow.DataType | null {
  try {
    return toArrowType(type);
  } catch {
    return null;
  }
}

const cases = corpusCases().filter((c) => c.device === undefined || c.device.type === 1);

describe('every case of the fixture corpus: the general path\'s Data, or left to it', () => {
  const taken = new Set<string>();
  test.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const type = t.struct(c.schema.fields);
    const arrowType = arrowTypeOf(type);
    if (arrowType === null) return;
    for (const raw of c.batches) {
      let exported;
      try {
        exported = acd.exportRaw({ name: '', type, nullable: false, metadata: c.schema.metadata }, raw);
      } catch {
        continue; // data the producer refuses (some invalid cases) never reaches a reader
      }
      try {
        if (agrees(exported.array, type, arrowType)) taken.add(c.name);
      } finally {
        exported.release();
      }
    }
  });
  test('the common kinds are read directly', () => {
    // Without an offset or an empty batch, the primitive, string, struct and dictionary cases go the direct way.
    expect(taken.size).toBeGreaterThan(20);
  });
});

const u8 = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** A batch of kinds the direct reader takes, with nulls: int32, int64, float64, bool, utf8, binary, struct, dictionary, fixed-size list. */
function batch(): { type: t.DataType; raw: RawArray } {
  const n = 5;
  const validity = u8(new Uint8Array([0b10111]));
  const leaf = (type: t.DataType, values: ArrayBufferView, nulls = false): RawArray =>
    ({ type, length: n, nullCount: nulls ? 1 : 0, offset: 0, buffers: [nulls ? validity : null, u8(values)], children: [], dictionary: null });
  const strings: RawArray = { type: t.utf8(), length: n, nullCount: 1, offset: 0,
    buffers: [validity, u8(new Int32Array([0, 1, 3, 3, 6, 7])), new TextEncoder().encode('abbcccd')], children: [], dictionary: null };
  const dictValues: RawArray = { ...strings, type: t.utf8(), nullCount: 0, buffers: [null, strings.buffers[1]!, strings.buffers[2]!] };
  const dict: RawArray = { type: t.dictionary(t.int32(), t.utf8()), length: n, nullCount: 1, offset: 0,
    buffers: [validity, u8(new Int32Array([4, 0, 2, 1, 3]))], children: [], dictionary: dictValues };
  const inner = leaf(t.float64(), new Float64Array([1, 2, 3, 4, 5]), true);
  const fields = [
    t.field('i', t.int32()), t.field('l', t.int64()), t.field('b', t.bool()), t.field('s', t.utf8()), t.field('y', t.binary()),
    t.field('st', t.struct([t.field('f', t.float64())])), t.field('d', t.dictionary(t.int32(), t.utf8())),
    t.field('fl', t.fixedSizeList(2, t.int32())),
  ];
  const children: RawArray[] = [
    leaf(t.int32(), new Int32Array([1, 2, 3, 4, 5]), true),
    leaf(t.int64(), new BigInt64Array([1n, 2n, 3n, 4n, 5n])),
    leaf(t.bool(), new Uint8Array([0b10101])),
    strings,
    { ...strings, type: t.binary() },
    { type: fields[5]!.type, length: n, nullCount: 0, offset: 0, buffers: [null], children: [inner], dictionary: null },
    dict,
    { type: fields[7]!.type, length: n, nullCount: 1, offset: 0, buffers: [validity],
      children: [{ type: t.int32(), length: 2 * n, nullCount: 0, offset: 0, buffers: [null, u8(Int32Array.from({ length: 2 * n }, (_, i) => i))], children: [], dictionary: null }],
      dictionary: null },
  ];
  const type = t.struct(fields);
  return { type, raw: { type, length: n, nullCount: 0, offset: 0, buffers: [null], children, dictionary: null } };
}

describe('a batch of every direct kind, each struct field corrupted in turn', () => {
  test('read directly when intact', () => {
    const { type, raw } = batch();
    using exported = acd.exportRaw({ name: '', type, nullable: false, metadata: null }, raw);
    expect(agrees(exported.array, type, toArrowType(type))).toBe(true);
  });

  // Every ArrowArray struct of the tree (root first), and the values each of its fields is set to.
  const FIELDS = ['length', 'null_count', 'offset', 'n_buffers', 'buffers', 'children', 'dictionary'] as const;
  const BAD = [-1n, 0n, 1n, 2n, 3n, 7n, 0xffffffffn, 1n << 32n, 0x7fffffffffffffffn];

  function structsOf(ptr: number, out: number[]): number[] {
    const s = acd.core.structs;
    out.push(ptr);
    const n = s.i64('ArrowArray', ptr, 'n_children');
    for (let i = 0; i < n; i++) structsOf(s.ptrAt(s.ptr('ArrowArray', ptr, 'children') + i * 4), out);
    const d = s.ptr('ArrowArray', ptr, 'dictionary');
    if (d !== 0) structsOf(d, out);
    return out;
  }

  test('every field, every bad value: the general path\'s Data, or left to it', () => {
    mark();
    const { type, raw } = batch();
    const arrowType = toArrowType(type);
    const s = acd.core.structs;
    let cases = 0;
    let refused = 0;
    for (let k = 0; ; k++) {
      using exported = acd.exportRaw({ name: '', type, nullable: false, metadata: null }, raw);
      const nodes = structsOf(exported.array, []);
      if (k >= nodes.length) break;
      const ptr = nodes[k]!;
      for (const field of FIELDS) {
        const at = ptr + s.offsetOf('ArrowArray', field);
        const pointer = field === 'buffers' || field === 'children' || field === 'dictionary';
        const saved = pointer ? acd.core.view.getUint32(at, true) : acd.core.view.getBigInt64(at, true);
        for (const bad of BAD) {
          if (pointer) acd.core.view.setUint32(at, Number(bad & 0xffffffffn), true);
          else acd.core.view.setBigInt64(at, bad, true);
          if ('error' in general(exported.array, type, arrowType)) refused++;
          agrees(exported.array, type, arrowType);
          cases++;
        }
        if (pointer) acd.core.view.setUint32(at, saved as number, true);
        else acd.core.view.setBigInt64(at, saved as bigint, true);
      }
      // Every buffer pointer of the node, moved by one byte (misaligned) and past the memory.
      const n = s.i64('ArrowArray', ptr, 'n_buffers');
      const buffers = s.ptr('ArrowArray', ptr, 'buffers');
      for (let i = 0; i < n; i++) {
        const at = buffers + i * 4;
        const saved = acd.core.view.getUint32(at, true);
        for (const bad of [saved + 1, acd.memory.buffer.byteLength - 2, 0]) {
          acd.core.view.setUint32(at, bad, true);
          if ('error' in general(exported.array, type, arrowType)) refused++;
          agrees(exported.array, type, arrowType);
          cases++;
        }
        acd.core.view.setUint32(at, saved, true);
      }
    }
    // Enough corruptions were tried, and many of them refused by the general path.
    expect(cases).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(100);
  });
});

/** A batch of the kinds the direct reader takes with the core's scans: list<int32> (with nulls), map<utf8, int32>, dense and sparse unions, large_utf8, large_list<int32>. */
function nestedBatch(): { type: t.DataType; raw: RawArray } {
  const n = 5;
  const ints = (values: number[]): RawArray =>
    ({ type: t.int32(), length: values.length, nullCount: 0, offset: 0, buffers: [null, u8(Int32Array.from(values))], children: [], dictionary: null });
  const keys: RawArray = { type: t.utf8(), length: 6, nullCount: 0, offset: 0,
    buffers: [null, u8(new Int32Array([0, 1, 2, 3, 4, 5, 6])), new TextEncoder().encode('abcdef')], children: [], dictionary: null };
  const mapType = t.map(t.utf8(), t.int32());
  const entries: RawArray = { type: t.childFields(mapType)[0]!.type, length: 6, nullCount: 0, offset: 0, buffers: [null],
    children: [keys, ints([1, 2, 3, 4, 5, 6])], dictionary: null };
  const unionFields = [t.field('i', t.int32()), t.field('j', t.int32())];
  const dense = t.denseUnion(unionFields, [2, 7]);
  const sparse = t.sparseUnion(unionFields, [2, 7]);
  const fields = [t.field('l', t.list(t.int32())), t.field('m', mapType), t.field('du', dense), t.field('su', sparse),
    t.field('ls', t.largeUtf8()), t.field('ll', t.largeList(t.int32()))];
  const children: RawArray[] = [
    { type: fields[0]!.type, length: n, nullCount: 1, offset: 0, buffers: [u8(new Uint8Array([0b11101])), u8(new Int32Array([0, 2, 2, 3, 6, 7]))],
      children: [ints([1, 2, 3, 4, 5, 6, 7])], dictionary: null },
    { type: mapType, length: n, nullCount: 0, offset: 0, buffers: [null, u8(new Int32Array([0, 1, 3, 3, 5, 6]))], children: [entries], dictionary: null },
    { type: dense, length: n, nullCount: 0, offset: 0, buffers: [u8(Int8Array.from([2, 7, 7, 2, 7])), u8(new Int32Array([0, 0, 1, 1, 2]))],
      children: [ints([10, 11]), ints([20, 21, 22])], dictionary: null },
    { type: sparse, length: n, nullCount: 0, offset: 0, buffers: [u8(Int8Array.from([7, 2, 2, 7, 2]))],
      children: [ints([1, 2, 3, 4, 5]), ints([6, 7, 8, 9, 10])], dictionary: null },
    { type: t.largeUtf8(), length: n, nullCount: 1, offset: 0,
      buffers: [u8(new Uint8Array([0b11011])), u8(new BigInt64Array([0n, 1n, 3n, 3n, 6n, 7n])), new TextEncoder().encode('abbcccd')], children: [], dictionary: null },
    { type: fields[5]!.type, length: n, nullCount: 0, offset: 0, buffers: [null, u8(new BigInt64Array([0n, 2n, 2n, 3n, 6n, 7n]))],
      children: [ints([1, 2, 3, 4, 5, 6, 7])], dictionary: null },
  ];
  const type = t.struct(fields);
  return { type, raw: { type, length: n, nullCount: 0, offset: 0, buffers: [null], children, dictionary: null } };
}

describe('lists, maps and unions, checked by the core\'s scans', () => {
  test('read directly when intact, and left to the general path without the scans', () => {
    const { type, raw } = nestedBatch();
    using exported = acd.exportRaw({ name: '', type, nullable: false, metadata: null }, raw);
    expect(agrees(exported.array, type, toArrowType(type))).toBe(true);
    expect(viewData(acd.core.space, exported.array, type, toArrowType(type))).toBeNull();
    // At 'full' the C validator checked every slot: no scan needed.
    expect(viewData(acd.core.space, exported.array, type, toArrowType(type), false, null, false)).not.toBeNull();
  });

  test('every offset and type id set to every bad value in turn: the general path\'s Data, or left to it', () => {
    mark();
    const { type, raw } = nestedBatch();
    const arrowType = toArrowType(type);
    const s = acd.core.structs;
    let cases = 0;
    let refused = 0;
    // [column, path to the node below it (child indices), buffer, width]
    const targets: [number, number[], number, 1 | 4 | 8][] = [[0, [], 1, 4], [1, [], 1, 4], [2, [], 0, 1], [2, [], 1, 4], [3, [], 0, 1], [1, [0, 0], 1, 4],
      [4, [], 1, 8], [5, [], 1, 8]];
    for (const [column, below, buffer, width] of targets) {
      using exported = acd.exportRaw({ name: '', type, nullable: false, metadata: null }, raw);
      let node = s.ptrAt(s.ptr('ArrowArray', exported.array, 'children') + column * 4);
      for (const c of below) node = s.ptrAt(s.ptr('ArrowArray', node, 'children') + c * 4);
      const at = s.ptrAt(s.ptr('ArrowArray', node, 'buffers') + buffer * 4);
      // Offsets (of a list, a map or a string) have one slot more than the node.
      const slotCount = Number(s.i64('ArrowArray', node, 'length')) + (width > 1 && buffer === 1 && (column < 2 || column > 3) ? 1 : 0);
      const get = (slot: number) => (width === 8 ? acd.core.view.getBigInt64(at + 8 * slot, true)
        : BigInt(width === 4 ? acd.core.view.getInt32(at + 4 * slot, true) : acd.core.view.getInt8(at + slot)));
      const set = (slot: number, v: bigint) => (width === 8 ? acd.core.view.setBigInt64(at + 8 * slot, v, true)
        : width === 4 ? acd.core.view.setInt32(at + 4 * slot, Number(v), true) : acd.core.view.setInt8(at + slot, Number(v)));
      for (let slot = 0; slot < slotCount; slot++) {
        const saved = get(slot);
        for (const bad of [-1n, 0n, 1n, 2n, 3n, 6n, 7n, 8n, 100n, -128n, 127n, ...(width === 8 ? [1n << 32n, -(1n << 40n), 0x7fffffffffffffffn] : [])]) {
          set(slot, bad);
          if ('error' in general(exported.array, type, arrowType)) refused++;
          agrees(exported.array, type, arrowType);
          cases++;
        }
        set(slot, saved);
      }
    }
    expect(cases).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(100);
  });
});
