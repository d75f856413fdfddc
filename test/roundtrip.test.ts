// Every type of the foundation through export → C structs → import, in copy
// and view mode, with nulls, slices, zero-length arrays and empty batches.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { core, MODES, roundtripBatch, roundtripVector, values } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await core(); });

const f = (name: string, type: arrow.DataType, nullable = true) => new arrow.Field(name, type, nullable);
const bytes = (...b: number[]) => Uint8Array.from(b);
const day = 86_400_000;

/** name → a vector with nulls (at least 10 values, so that slices cross a byte of bitmap). */
const CASES: Record<string, () => arrow.Vector> = {
  null: () => arrow.makeVector(arrow.makeData({ type: new arrow.Null(), length: 11 })),
  bool: () => arrow.vectorFromArray([true, false, null, true, true, false, null, false, true, true, false], new arrow.Bool()),
  int8: () => arrow.vectorFromArray([1, -2, null, 127, -128, 0, 5, null, 9, 10, 11], new arrow.Int8()),
  uint8: () => arrow.vectorFromArray([1, 2, null, 255, 0, 7, 8, null, 9, 10, 11], new arrow.Uint8()),
  int16: () => arrow.vectorFromArray([1, -2, null, 32767, -32768, 0, 5, null, 9, 10, 11], new arrow.Int16()),
  uint16: () => arrow.vectorFromArray([1, 2, null, 65535, 0, 7, 8, null, 9, 10, 11], new arrow.Uint16()),
  int32: () => arrow.vectorFromArray([1, -2, null, 2 ** 31 - 1, -(2 ** 31), 0, 5, null, 9, 10, 11], new arrow.Int32()),
  uint32: () => arrow.vectorFromArray([1, 2, null, 2 ** 32 - 1, 0, 7, 8, null, 9, 10, 11], new arrow.Uint32()),
  int64: () => arrow.vectorFromArray([1n, -2n, null, 2n ** 63n - 1n, -(2n ** 63n), 0n, 5n, null, 9n, 10n, 11n], new arrow.Int64()),
  uint64: () => arrow.vectorFromArray([1n, 2n, null, 2n ** 64n - 1n, 0n, 7n, 8n, null, 9n, 10n, 11n], new arrow.Uint64()),
  float16: () => arrow.vectorFromArray([1.5, -2, null, 65504, 0, 0.25, 5, null, 9, 10, 11], new arrow.Float16()),
  float32: () => arrow.vectorFromArray([1.5, -2, null, 3.4e38, 0, NaN, 5, null, 9, 10, 11], new arrow.Float32()),
  float64: () => arrow.vectorFromArray([1.5, -2, null, 1.7e308, -0, NaN, Infinity, null, 9, 10, 11], new arrow.Float64()),
  utf8: () => arrow.vectorFromArray(['a', '', null, 'héllo', '値🎉', 'x', 'yy', null, 'zzz', 'w', 'v'], new arrow.Utf8()),
  large_utf8: () => arrow.vectorFromArray(['a', '', null, 'héllo', '値🎉', 'x', 'yy', null, 'zzz', 'w', 'v'], new arrow.LargeUtf8()),
  binary: () => arrow.vectorFromArray([bytes(1), bytes(), null, bytes(0, 255), bytes(3, 4, 5), bytes(6), bytes(7), null, bytes(8), bytes(9), bytes(10)], new arrow.Binary()),
  large_binary: () => arrow.vectorFromArray([bytes(1), bytes(), null, bytes(0, 255), bytes(3, 4, 5), bytes(6), bytes(7), null, bytes(8), bytes(9), bytes(10)], new arrow.LargeBinary()),
  fixed_size_binary: () => arrow.vectorFromArray([bytes(1, 2, 3), null, bytes(4, 5, 6), bytes(7, 8, 9), bytes(0, 0, 0), bytes(1, 1, 1), null, bytes(2, 2, 2), bytes(3, 3, 3), bytes(4, 4, 4), bytes(5, 5, 5)], new arrow.FixedSizeBinary(3)),
  date_day: () => arrow.vectorFromArray([0, day, null, -day, 365 * day, 2 * day, 3 * day, null, 4 * day, 5 * day, 6 * day].map((d) => (d === null ? null : new Date(d))), new arrow.DateDay()),
  date_ms: () => arrow.vectorFromArray([0, 1, null, -day, 365 * day + 7, 2, 3, null, 4, 5, 6].map((d) => (d === null ? null : new Date(d))), new arrow.DateMillisecond()),
  time_s: () => arrow.vectorFromArray([0, 1, null, 86399, 5, 6, 7, null, 8, 9, 10], new arrow.TimeSecond()),
  time_ms: () => arrow.vectorFromArray([0, 1, null, 86399999, 5, 6, 7, null, 8, 9, 10], new arrow.TimeMillisecond()),
  time_us: () => arrow.vectorFromArray([0n, 1n, null, 86399999999n, 5n, 6n, 7n, null, 8n, 9n, 10n], new arrow.TimeMicrosecond()),
  time_ns: () => arrow.vectorFromArray([0n, 1n, null, 86399999999999n, 5n, 6n, 7n, null, 8n, 9n, 10n], new arrow.TimeNanosecond()),
  timestamp_s_utc: () => arrow.vectorFromArray([0, 1000, null, -1000, 5000, 6000, 7000, null, 8000, 9000, 10000], new arrow.TimestampSecond('UTC')),
  timestamp_ms: () => arrow.vectorFromArray([0, 1, null, -1, 5, 6, 7, null, 8, 9, 10], new arrow.TimestampMillisecond()),
  timestamp_us_tz: () => arrow.vectorFromArray([0, 1, null, -1, 5, 6, 7, null, 8, 9, 10], new arrow.TimestampMicrosecond('Europe/Paris')),
  timestamp_ns: () => arrow.vectorFromArray([0, 1, null, -1, 5, 6, 7, null, 8, 9, 10], new arrow.TimestampNanosecond('+07:30')),
  duration_s: () => arrow.vectorFromArray([0n, 1n, null, -1n, 5n, 6n, 7n, null, 8n, 9n, 10n], new arrow.DurationSecond()),
  duration_ns: () => arrow.vectorFromArray([0n, 1n, null, -1n, 5n, 6n, 7n, null, 8n, 9n, 10n], new arrow.DurationNanosecond()),
  list: () => arrow.vectorFromArray([[1, 2], [], null, [3], [4, null, 5], [6], [7, 8, 9], null, [10], [11, 12], []], new arrow.List(f('item', new arrow.Int32()))),
  large_list: () => arrow.vectorFromArray([['a'], [], null, ['b', 'c'], [null], ['d'], ['e', 'f'], null, ['g'], [], ['h']], new arrow.LargeList(f('item', new arrow.Utf8()))),
  fixed_size_list: () => arrow.vectorFromArray([[1, 2], [3, null], null, [5, 6], [7, 8], [9, 10], [11, 12], null, [13, 14], [15, 16], [17, 18]], new arrow.FixedSizeList(2, f('item', new arrow.Float64()))),
  struct: () => arrow.vectorFromArray(
    [{ a: 1, b: 'x' }, { a: null, b: 'y' }, null, { a: 3, b: null }, { a: 4, b: 'z' }, { a: 5, b: '' }, { a: 6, b: 'w' }, null, { a: 8, b: 'v' }, { a: 9, b: 'u' }, { a: 10, b: 't' }],
    new arrow.Struct([f('a', new arrow.Int32()), f('b', new arrow.Utf8())])),
  map: () => arrow.vectorFromArray(
    [new Map([['a', 1]]), new Map(), null, new Map([['b', 2], ['c', null]]), new Map([['d', 4]]), new Map([['e', 5]]), new Map(), null, new Map([['f', 6]]), new Map([['g', 7]]), new Map([['h', 8]])],
    new arrow.Map_(f('entries', new arrow.Struct([f('key', new arrow.Utf8(), false), f('value', new arrow.Int32())]), false))),
  dictionary: () => arrow.vectorFromArray(['red', 'green', null, 'red', 'blue', 'blue', 'green', null, 'red', 'red', 'violet'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
  dictionary_int8_ordered: () => arrow.vectorFromArray(['lo', 'hi', null, 'lo', 'mid', 'hi', 'lo', null, 'mid', 'mid', 'hi'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int8(), null, true)),
  list_of_struct: () => arrow.vectorFromArray(
    [[{ x: 1n }], [], null, [{ x: null }, { x: 3n }], [{ x: 4n }], [], [{ x: 6n }], null, [{ x: 8n }], [{ x: 9n }], [{ x: 10n }]],
    new arrow.List(f('item', new arrow.Struct([f('x', new arrow.Int64())])))),
};

describe.each(MODES)('%s mode', (mode) => {
  test.each(Object.keys(CASES))('%s', (name) => {
    const v = CASES[name]();
    expect(v.length).toBe(11);
    roundtripVector(acd, v, mode);
  });

  test.each(Object.keys(CASES))('%s sliced (bit offsets 3 and 8)', (name) => {
    const v = CASES[name]();
    roundtripVector(acd, v.slice(3, 10), mode);
    roundtripVector(acd, v.slice(8), mode);
  });

  test.each(Object.keys(CASES))('%s zero-length', (name) => {
    const v = CASES[name]();
    roundtripVector(acd, v.slice(0, 0), mode);
    roundtripVector(acd, v.slice(5, 5), mode);
  });

  test('a record batch of every column, with schema and field metadata', () => {
    const columns = Object.fromEntries(Object.entries(CASES).map(([k, make]) => [k, make()]));
    const table = new arrow.Table(columns);
    const fields = table.schema.fields.map((x, i) => x.clone({ metadata: new Map([['position', String(i)], ['clé', '値🎉']]) }));
    const schema = new arrow.Schema(fields, new Map([['origin', 'roundtrip.test.ts'], ['', 'empty key']]));
    const batch = new arrow.RecordBatch(schema, table.batches[0].data);
    roundtripBatch(acd, batch, mode);
    roundtripBatch(acd, batch.slice(2, 9), mode);
  });

  test('an empty batch (zero rows) and a batch of zero columns', () => {
    const table = new arrow.Table({ a: CASES.int32(), s: CASES.utf8() });
    roundtripBatch(acd, table.batches[0].slice(0, 0), mode);
    const none = new arrow.RecordBatch(new arrow.Schema([]), arrow.makeData({ type: new arrow.Struct([]), length: 4, children: [] }));
    roundtripBatch(acd, none, mode);
  });
});

describe('offsets set by the producer on every level', () => {
  // Exports a struct<a: int32, s: utf8, l: list<int32>> and then rewrites the
  // exported structs as another producer could: parent offset 2 (length 5), the
  // children with their own offsets 1, 3 and 0; the import must apply both.
  test.each(MODES)('%s mode', (mode) => {
    const a = CASES.int32();
    const s = CASES.utf8();
    const l = CASES.list();
    const vector = arrow.makeVector(arrow.makeData({
      type: new arrow.Struct([f('a', a.type), f('s', s.type), f('l', l.type)]),
      length: 11, nullCount: 0, children: [a.data[0], s.data[0], l.data[0]],
    }));
    const start = acd.bytesAllocated();
    const exported = acd.exportVector(vector);
    const st = acd.core.structs;
    const child = (i: number) => st.ptrAt(st.ptr('ArrowArray', exported.array, 'children') + i * 4);
    st.setI64('ArrowArray', exported.array, 'offset', 2);
    st.setI64('ArrowArray', exported.array, 'length', 5);
    const childOffsets = [1, 3, 0];
    childOffsets.forEach((o, i) => {
      st.setI64('ArrowArray', child(i), 'offset', o);
      st.setI64('ArrowArray', child(i), 'length', 11 - o);
      st.setI64('ArrowArray', child(i), 'null_count', -1);
    });
    const imported = acd.importVector(exported.schema, exported.array, { mode });
    const back = imported.value;
    expect(back.length).toBe(5);
    const column = (i: number) => back.data[0].children[i];
    expect(values(arrow.makeVector(column(0)))).toEqual(values(a.slice(3, 8)));
    expect(values(arrow.makeVector(column(1)))).toEqual(values(s.slice(5, 10)));
    expect(values(arrow.makeVector(column(2)))).toEqual(values(l.slice(2, 7)));
    imported.release();
    exported.release();
    expect(acd.bytesAllocated()).toBe(start);
  });
});

describe('record batches made without the RecordBatch constructor', () => {
  // Imports build batches directly (the constructor is quadratic in the column
  // count); they must be what the constructor gives.
  test.each(MODES)('%s mode: same schema, values and behaviour as the constructor', (mode) => {
    const table = new arrow.Table({ a: CASES.int32(), s: CASES.utf8(), l: CASES.list() });
    const schema = new arrow.Schema(table.schema.fields, new Map([['k', 'v']]));
    const original = new arrow.RecordBatch(schema, table.batches[0].data);
    const exported = acd.exportBatch(original);
    const imported = acd.importBatch(exported.schema, exported.array, { mode });
    const fast = imported.value;
    const slow = new arrow.RecordBatch(fast.schema, fast.data);
    expect(fast).toBeInstanceOf(arrow.RecordBatch);
    expect(arrow.RecordBatch.isRecordBatch(fast)).toBe(true);
    expect(fast.schema.fields.map(String)).toEqual(slow.schema.fields.map(String));
    expect([...fast.schema.metadata]).toEqual([['k', 'v']]);
    expect(fast.metadata).toEqual(slow.metadata);
    expect(fast.numRows).toBe(slow.numRows);
    expect(fast.numCols).toBe(slow.numCols);
    expect(JSON.stringify(fast.toArray())).toEqual(JSON.stringify(slow.toArray()));
    expect(values(fast.selectAt([1]).getChildAt(0)!)).toEqual(values(slow.selectAt([1]).getChildAt(0)!));
    expect(values(fast.selectAt([1]).getChildAt(0)!)).toEqual(values(slow.getChild('s')!));
    expect(values(fast.slice(2, 5).getChild('a')!)).toEqual(values(slow.slice(2, 5).getChild('a')!));
    expect(new arrow.Table([fast, fast]).numRows).toBe(22);
    expect(arrow.tableFromIPC(arrow.tableToIPC(new arrow.Table(fast))).numRows).toBe(11);
    imported.release();
    exported.release();
  });

  test('columns with the same name stay apart (the constructor would merge them)', () => {
    const a = CASES.int32();
    const s = CASES.utf8();
    const fields = [new arrow.Field('x', a.type, true), new arrow.Field('x', s.type, true)];
    const data = arrow.makeData({ type: new arrow.Struct(fields), length: 11, nullCount: 0, children: [a.data[0], s.data[0]] });
    const batch = Object.assign(Object.create(arrow.RecordBatch.prototype), { schema: new arrow.Schema(fields), data, _metadata: new Map() });
    const exported = acd.exportBatch(batch);
    const imported = acd.importBatch(exported.schema, exported.array);
    expect(imported.value.schema.fields.map((f) => String(f.type))).toEqual(['Int32', 'Utf8']);
    expect(values(imported.value.getChildAt(1)!)).toEqual(values(s));
    imported.release();
    exported.release();
  });
});
