// Delta dictionaries: apache-arrow keeps a dictionary as a Vector of several
// chunks (its IPC reader appends each delta as a chunk), and a vector or table
// may have a different dictionary per chunk. A C array has exactly one
// dictionary: each export hands out its chunk's whole dictionary (the chunks
// joined), and each batch of a table or stream its own. Every test checks the
// values after an import back, full validation, and that nothing leaked.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { concatRaws } from '../ts/model/concat.js';
import { rawValues } from '../ts/model/raw-values.js';
import type { RawArray } from '../ts/model/raw.js';
import { dictionary, int8, utf8 } from '../ts/model/types.js';
import { bytesMark, core, libraryError, MODES, values } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});
const mark = bytesMark(() => acd);

const utf8Dict = () => new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32());
const strings = (xs: (string | null)[]) => arrow.vectorFromArray(xs, new arrow.Utf8());

/** A validity bitmap with the slots of `nulls` cleared. */
function bitmap(length: number, nulls: number[]): Uint8Array {
  const b = new Uint8Array(Math.ceil(length / 8)).fill(0xff);
  for (const i of nulls) b[i >> 3]! &= ~(1 << (i & 7));
  return b;
}

/** Dictionary-encoded Data over a dictionary Vector made of `chunks`. */
function encoded(type: arrow.Dictionary, indices: (number | null)[], chunks: arrow.Data[]): arrow.Data {
  const nulls = indices.flatMap((v, i) => (v === null ? [i] : []));
  const Ctor = type.indices.ArrayType as unknown as new (xs: number[]) => ArrayBufferView;
  return arrow.makeData({
    type, length: indices.length, nullCount: nulls.length, nullBitmap: nulls.length > 0 ? bitmap(indices.length, nulls) : undefined,
    data: new Ctor(indices.map((v) => v ?? 0)) as never, dictionary: new arrow.Vector(chunks),
  } as never);
}

/** A dictionary of three chunks, the second a slice (its Data has an offset), with a null value. */
function threeChunks(): arrow.Data[] {
  return [strings(['a', 'b']).data[0]!, strings(['x', 'c', null, 'd']).slice(1).data[0]!, strings(['e']).data[0]!];
}

/** Exports a vector (one chunk), imports it back, checks its values. */
function roundtrip(v: arrow.Vector, mode: 'copy' | 'view'): unknown[] {
  const exported = acd.exportVector(v, 'd');
  try {
    const back = acd.importVector(exported.schema, exported.array, { mode, validate: 'full' });
    try {
      expect(back.value.type.toString()).toBe(v.type.toString());
      // One dictionary in the import: the chunks joined.
      if (arrow.DataType.isDictionary(v.type)) expect(back.value.data[0]!.dictionary!.data).toHaveLength(1);
      return values(back.value);
    } finally {
      back.release();
    }
  } finally {
    exported.release();
  }
}

describe.each(MODES)('%s mode', (mode) => {
  test('a dictionary of several chunks (one sliced, one with a null) exports as one dictionary', () => {
    mark();
    const d = encoded(utf8Dict(), [5, 0, null, 2, 4, 1, 3], threeChunks());
    const v = new arrow.Vector([d]);
    expect(values(v)).toEqual(['e', 'a', null, 'c', 'd', 'b', null]);
    expect(roundtrip(v, mode)).toEqual(values(v));
  });

  test('a slice of such a vector', () => {
    mark();
    const v = new arrow.Vector([encoded(utf8Dict(), [5, 0, null, 2, 4, 1, 3], threeChunks())]);
    for (const [begin, end] of [[1, 5], [3, 7], [2, 3]] as const) {
      const s = v.slice(begin, end);
      expect([begin, roundtrip(s, mode)]).toEqual([begin, values(v).slice(begin, end)]);
    }
  });

  test('nested: a list and a struct of dictionary-encoded values whose dictionary has chunks', () => {
    mark();
    const item = encoded(utf8Dict(), [0, 3, 1, null, 4, 2], [strings(['p', 'q']).data[0]!, strings(['r', 's', 't']).data[0]!]);
    const listType = new arrow.List(new arrow.Field('item', item.type, true));
    const list = arrow.makeData({ type: listType, length: 3, nullCount: 0, valueOffsets: Int32Array.from([0, 2, 2, 6]), child: item });
    const structType = new arrow.Struct([new arrow.Field('k', item.type, true), new arrow.Field('n', new arrow.Int8(), true)]);
    const struct = arrow.makeData({ type: structType, length: 6, nullCount: 0, children: [item, arrow.vectorFromArray([1, 2, 3, 4, 5, 6], new arrow.Int8()).data[0]!] });
    const lists = new arrow.Vector([list]);
    expect(values(lists)).toEqual([['p', 's'], [], ['q', null, 't', 'r']]);
    expect(roundtrip(lists, mode)).toEqual(values(lists));
    expect(roundtrip(lists.slice(1), mode)).toEqual(values(lists).slice(1));
    const structs = new arrow.Vector([struct]);
    expect(roundtrip(structs, mode)).toEqual(values(structs));
    expect(roundtrip(structs.slice(2, 5), mode)).toEqual(values(structs).slice(2, 5));
  });

  test('a dictionary whose chunks are dictionary-encoded over different dictionaries: those are joined, indices shifted', () => {
    mark();
    const inner = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int8());
    const outer = new arrow.Dictionary(inner, new arrow.Int16());
    const chunk1 = encoded(inner, [1, 0], [strings(['u', 'v']).data[0]!]);
    const chunk2 = encoded(inner, [2, null, 0], [strings(['w']).data[0]!, strings(['x', 'y']).data[0]!]);
    const v = new arrow.Vector([encoded(outer, [4, 0, 2, null, 3, 1], [chunk1, chunk2])]);
    expect(values(v)).toEqual(['w', 'v', 'y', null, null, 'u']);
    expect(roundtrip(v, mode)).toEqual(values(v));
  });

  test('a table whose batches have dictionaries of different lengths: each batch its own', () => {
    mark();
    const chunk1 = encoded(utf8Dict(), [1, null, 0], [strings(['a', 'b']).data[0]!]);
    const chunk2 = encoded(utf8Dict(), [3, 0, 2, 1], [strings(['k', 'l']).data[0]!, strings(['m', 'n']).data[0]!]);
    const table = new arrow.Table({ d: new arrow.Vector([chunk1, chunk2]) });
    expect(table.batches).toHaveLength(2);
    const expected = table.batches.map((b) => values(b.getChildAt(0)!));
    expect(expected).toEqual([['b', null, 'a'], ['n', 'k', 'm', 'l']]);
    const exported = acd.exportTable(table);
    try {
      exported.forEach((e, i) => {
        const back = acd.importBatch(e.schema, e.array, { mode, validate: 'full' });
        expect([i, values(back.value.getChildAt(0)!)]).toEqual([i, expected[i]]);
        back.release();
      });
    } finally {
      exported.forEach((e) => e.release());
    }
    // The vector itself has two chunks: exported chunk by chunk.
    const vector = table.getChild('d')!;
    expect(libraryError(() => acd.exportVector(vector)).message).toMatch(/expected one chunk, found 2/);
    expect(vector.data.map((d) => roundtrip(new arrow.Vector([d]), mode))).toEqual(expected);
  });

  test('streams: every batch with its own dictionary, through the pull, device and async device streams', async () => {
    mark();
    const batches = [['a', 'b'], ['a', 'b', 'c'], ['a', 'b', 'c', 'd', 'e']].map((dict, b) => {
      const chunks = [strings(dict.slice(0, 2)).data[0]!, ...(dict.length > 2 ? [strings(dict.slice(2)).data[0]!] : [])];
      return new arrow.Table({ d: new arrow.Vector([encoded(utf8Dict(), [dict.length - 1, null, b], chunks)]) }).batches[0]!;
    });
    const expected = batches.map((b) => values(b.getChildAt(0)!));
    expect(expected).toEqual([['b', null, 'a'], ['c', null, 'b'], ['e', null, 'c']]);
    for (const kind of ['array', 'device'] as const) {
      const s = kind === 'array' ? acd.exportArrayStream(batches) : acd.exportDeviceArrayStream(batches, { device: 'cuda:0' });
      const reader = kind === 'array' ? acd.importArrayStream(s.ptr, { mode, validate: 'full' }) : acd.importDeviceArrayStream(s.ptr, { mode, validate: 'full' });
      const got = [...reader].map((b) => values(b.getChildAt(0)!));
      expect([kind, got]).toEqual([kind, expected]);
      reader.release();
      s.release();
    }
    const consumer = acd.asyncConsumer({ mode, validate: 'full' });
    const production = acd.produceAsync(consumer.handler, batches, { device: 'rocm:1' });
    const got = (await consumer.readAll()).map((b) => values(b.getChildAt(0)!));
    expect(['async', got]).toEqual(['async', expected]);
    expect((await production).tasks).toBe(3);
    consumer.release();
  });

  test('an IPC stream with delta dictionaries, read by apache-arrow, round-trips batch by batch', () => {
    mark();
    // apache-arrow's writer emits a delta when a batch's dictionary extends the previous one's chunks.
    const base = strings(['a', 'b']).data[0]!;
    const more = strings(['c', null]).data[0]!;
    const last = strings(['e']).data[0]!;
    const dicts = [[base], [base, more], [base, more, last]];
    const type = utf8Dict();
    const schema = new arrow.Schema([new arrow.Field('d', type, true)]);
    const inputs = dicts.map((chunks, b) => new arrow.RecordBatch(schema, arrow.makeData({
      type: new arrow.Struct(schema.fields), length: 3, nullCount: 0, children: [encoded(type, [b * 2, 1, null], chunks)],
    })));
    const bytes = arrow.tableToIPC(new arrow.Table(inputs), 'stream');
    const read = arrow.tableFromIPC(bytes);
    // As apache-arrow reads it: the later batches' dictionaries have chunks.
    expect(read.batches.map((b) => b.data.children[0]!.dictionary!.data.length)).toEqual([1, 2, 3]);
    const expected = [['a', 'b', null], ['c', 'b', null], ['e', 'b', null]];
    expect(read.batches.map((b) => values(b.getChildAt(0)!))).toEqual(expected);
    read.batches.forEach((batch, i) => {
      const e = acd.exportBatch(batch);
      const back = acd.importBatch(e.schema, e.array, { mode, validate: 'full' });
      expect([i, values(back.value.getChildAt(0)!)]).toEqual([i, expected[i]]);
      back.release();
      e.release();
    });
  });
});

describe('concatRaws', () => {
  const raw = (xs: (string | null)[]): RawArray => {
    const e = acd.exportVector(strings(xs));
    const r = acd.importRaw(e.schema, e.array);
    e.release();
    const out = r.value.array;
    r.release();
    return out;
  };
  const dict = (indices: number[], d: RawArray): RawArray => ({
    type: dictionary(int8(), utf8()), length: indices.length, nullCount: 0, offset: 0,
    buffers: [null, Uint8Array.from(indices)], children: [], dictionary: d,
  });

  test('several parts, sliced, end to end', () => {
    const parts = [raw(['a', null]), { ...raw(['x', 'b', 'c']), offset: 1, length: 2 }, raw([]), raw(['d'])];
    expect(rawValues(concatRaws(parts))).toEqual(['a', null, 'b', 'c', 'd']);
  });

  test("nested dictionaries: 'later' keeps the last part's, 'join' keeps every part's values", () => {
    const first = dict([1, 0], raw(['u', 'v']));
    const second = dict([0, 2], raw(['w', 'x', 'y']));
    expect(rawValues(concatRaws([first, second], 'array', 'join'))).toEqual(['v', 'u', 'w', 'y']);
    expect(rawValues(concatRaws([first, second], 'array', 'later'))).toEqual(['x', 'w', 'w', 'y']);
    // The same dictionary object stays shared, not repeated.
    const shared = raw(['p', 'q']);
    expect(concatRaws([dict([0], shared), dict([1], shared)], 'array', 'join').dictionary).toBe(shared);
  });

  test('joined indices that do not fit the index type: EOVERFLOW', () => {
    const big = raw(Array.from({ length: 127 }, (_, i) => `s${i}`));
    const e = libraryError(() => concatRaws([dict([0], big), dict([1], raw(['a', 'b']))], 'array', 'join'));
    expect([e.errno, e.message]).toEqual([61, 'array.buffers[1]: index 128 of slot 1 (dictionaries joined, int8 indices) does not fit']);
  });
});
