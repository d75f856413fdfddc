// The valid samples the struct-mutation fuzzer starts from: record batches
// (ints with nulls, strings, lists, structs, dictionaries, sliced), vectors,
// and raw arrays of types apache-arrow lacks (run-end encoded, unions, views),
// all exported with the library's own export API.

import * as arrow from 'apache-arrow';
import * as t from '../model/types.js';
import type { RawArray } from '../model/raw.js';
import type { Field } from '../model/types.js';

/** Batches with 4 to 6 rows, several column kinds each. */
export function sampleBatches(): arrow.RecordBatch[] {
  const ints = arrow.vectorFromArray([1, null, 3, 4, null, 6], new arrow.Int32());
  const strings = arrow.vectorFromArray(['a', null, 'ccc', '', 'ee', 'f'], new arrow.Utf8());
  const lists = arrow.vectorFromArray([[1], null, [2, 3], [], [4, 5, 6], [7]], new arrow.List(new arrow.Field('item', new arrow.Int16(), true)));
  const dict = arrow.vectorFromArray(['red', 'green', 'red', null, 'blue', 'green'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int8()));
  const structs = arrow.vectorFromArray([{ a: 1, b: 'x' }, null, { a: 3, b: null }, { a: 4, b: 'yy' }, { a: 5, b: 'z' }, { a: 6, b: '' }],
    new arrow.Struct([new arrow.Field('a', new arrow.Int32(), true), new arrow.Field('b', new arrow.Utf8(), true)]));
  const floats = arrow.vectorFromArray([0.5, 1.5, null, 3.5, 4.5, 5.5], new arrow.Float64());
  const bools = arrow.vectorFromArray([true, false, null, true, true, false], new arrow.Bool());
  const big = arrow.vectorFromArray([1n, 2n, null, 4n, 5n, 6n], new arrow.Int64());
  const table1 = new arrow.Table({ id: ints, name: strings, list: lists, color: dict });
  const table2 = new arrow.Table({ s: structs, f: floats, b: bools, big });
  const nested = arrow.vectorFromArray([[{ a: 1, b: 'p' }], [], null, [{ a: 2, b: null }, { a: 3, b: 'q' }], [null], []],
    new arrow.List(new arrow.Field('item', structs.type, true)));
  const table3 = new arrow.Table({ nested, id: ints });
  const b1 = table1.batches[0]!;
  return [b1, table2.batches[0]!, table3.batches[0]!, b1.slice(1, 5)];
}

/** Single-column vectors (sliced ones have an offset). */
export function sampleVectors(): arrow.Vector[] {
  return [
    arrow.vectorFromArray(['α', null, 'bb', 'ccc', null], new arrow.Utf8()),
    arrow.vectorFromArray([10, null, 30, 40, 50], new arrow.Int32()).slice(1, 4),
    arrow.vectorFromArray([[1, 2], null, [], [3]], new arrow.List(new arrow.Field('item', new arrow.Int32(), true))),
    arrow.vectorFromArray(['x', 'y', 'x', null, 'z'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int16())).slice(1),
    arrow.vectorFromArray([new Uint8Array([1, 2]), null, new Uint8Array([])], new arrow.Binary()),
  ];
}

const bytes = (...xs: number[]) => new Uint8Array(xs);
const i32 = (...xs: number[]) => new Uint8Array(Int32Array.from(xs).buffer);
const bits = (...xs: number[]) => bytes(xs.reduce((a, v, i) => a | (v << i), 0));

function leafInt(values: number[], valid: number[] | null): RawArray {
  return {
    type: t.int32(), length: values.length, nullCount: valid === null ? 0 : valid.filter((v) => v === 0).length, offset: 0,
    buffers: [valid === null ? null : bits(...valid), i32(...values)], children: [], dictionary: null,
  };
}

function leafUtf8(strings: string[]): RawArray {
  const enc = new TextEncoder();
  const parts = strings.map((s) => enc.encode(s));
  const offsets = [0];
  for (const p of parts) offsets.push(offsets[offsets.length - 1]! + p.length);
  const data = new Uint8Array(offsets[offsets.length - 1]!);
  let at = 0;
  for (const p of parts) { data.set(p, at); at += p.length; }
  return { type: t.utf8(), length: strings.length, nullCount: 0, offset: 0, buffers: [null, i32(...offsets), data], children: [], dictionary: null };
}

/** utf8_view: inline strings (<= 12 bytes) and one long string in a variadic buffer. */
function utf8View(): RawArray {
  const enc = new TextEncoder();
  const long = enc.encode('a string longer than twelve');
  const views = new Uint8Array(3 * 16);
  const dv = new DataView(views.buffer);
  const short = enc.encode('short');
  dv.setInt32(0, short.length, true);
  views.set(short, 4);
  dv.setInt32(16, long.length, true);
  views.set(long.subarray(0, 4), 20);
  dv.setInt32(24, 0, true); // buffer index
  dv.setInt32(28, 0, true); // offset
  dv.setInt32(32, 0, true); // the empty string
  const sizes = new Uint8Array(new BigInt64Array([BigInt(long.length)]).buffer);
  return { type: t.utf8View(), length: 3, nullCount: 0, offset: 0, buffers: [null, views, long, sizes], children: [], dictionary: null };
}

/** [field, raw] pairs for exportRaw: run-end encoded, sparse and dense unions, views, sliced. */
export function sampleRaws(): [Field, RawArray][] {
  const ree: RawArray = {
    type: t.runEndEncoded(t.int32(), t.utf8()), length: 6, nullCount: 0, offset: 0, buffers: [],
    children: [leafInt([2, 3, 6], null), leafUtf8(['aa', 'b', 'cccc'])], dictionary: null,
  };
  const sparseType = t.sparseUnion([t.field('i', t.int32()), t.field('s', t.utf8())]);
  const sparse: RawArray = {
    type: sparseType, length: 4, nullCount: 0, offset: 0, buffers: [bytes(0, 1, 1, 0)],
    children: [leafInt([1, 0, 0, 4], [1, 0, 0, 1]), leafUtf8(['', 'x', 'yy', ''])], dictionary: null,
  };
  const denseType = t.denseUnion([t.field('i', t.int32()), t.field('s', t.utf8())]);
  const dense: RawArray = {
    type: denseType, length: 4, nullCount: 0, offset: 0, buffers: [bytes(0, 1, 1, 0), i32(0, 0, 1, 1)],
    children: [leafInt([7, 8], null), leafUtf8(['p', 'qq'])], dictionary: null,
  };
  const sliced: RawArray = { ...leafInt([1, 2, 3, 4, 5], [1, 1, 0, 1, 1]), offset: 1, length: 3 };
  return [
    [t.field('ree', ree.type), ree],
    [t.field('sparse', sparseType, false), sparse],
    [t.field('dense', denseType, false), dense],
    [t.field('view', t.utf8View()), utf8View()],
    [t.field('sliced', t.int32()), sliced],
  ];
}
