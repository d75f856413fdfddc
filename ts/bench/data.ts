// The benchmark's data sets, generated from a fixed seed with apache-arrow's
// makeData over typed arrays (no per-value JS objects, so building them is
// quick and does not perturb the measurements with garbage).

import * as arrow from 'apache-arrow';
import { seeded } from './random.js';

export type SetName = 'mixed' | 'narrow' | 'wide' | 'batches' | 'nested' | 'stream';

/** How big each set is. */
export interface SetSizes {
  /** Rows per batch of the many-batches set; the mixed set has batches × batchRows rows. */
  batchRows: number;
  batches: number;
  narrowRows: number;
  wideColumns: number;
  wideRows: number;
  /** Rows of the nested set (one batch). */
  nestedRows: number;
  /** Batches of the stream set, of streamRows rows each (the mixed schema). */
  streamBatches: number;
  streamRows: number;
}

export const FULL_SIZES: SetSizes = {
  batchRows: 1000, batches: 1000, narrowRows: 10_000_000, wideColumns: 1000, wideRows: 1000,
  nestedRows: 100_000, streamBatches: 10_000, streamRows: 100,
};
/**
 * --quick: the per-column and per-batch sets keep their shape, the byte-heavy
 * ones shrink 10×; the nested set keeps its 100,000 rows (it is small), the
 * stream set keeps its 100-row batches but has 10× fewer of them.
 */
export const QUICK_SIZES: SetSizes = {
  batchRows: 1000, batches: 100, narrowRows: 1_000_000, wideColumns: 1000, wideRows: 1000,
  nestedRows: 100_000, streamBatches: 1000, streamRows: 100,
};

/** Scales the counts (rows, columns, batches) by `scale`, keeping a small minimum of each. */
export function scaleSizes(s: SetSizes, scale: number): SetSizes {
  const at = (n: number, min: number) => Math.max(min, Math.round(n * scale));
  return {
    batchRows: s.batchRows, batches: at(s.batches, 4), narrowRows: at(s.narrowRows, 1000), wideColumns: at(s.wideColumns, 8), wideRows: s.wideRows,
    nestedRows: at(s.nestedRows, 1000), streamBatches: at(s.streamBatches, 4), streamRows: s.streamRows,
  };
}

export interface BenchSet {
  name: SetName;
  /** What the set is, for the table ("1,000,000 rows × 8 columns"). */
  shape: string;
  schema: arrow.Schema;
  batches: arrow.RecordBatch[];
  table: arrow.Table;
  rows: number;
  columns: number;
  /** Bytes of every buffer of every batch (dictionaries included): what an export copies. */
  bytes: number;
  /** The unit a per-unit figure is given in (µs per column of the wide set, per batch of the many-batches set). */
  unit: { name: 'column' | 'batch'; count: number } | null;
}

export const SET_NAMES: readonly SetName[] = ['mixed', 'narrow', 'wide', 'batches', 'nested', 'stream'];

/** Builds the six sets (makeSet, in SET_NAMES' order). */
export function makeSets(sizes: SetSizes, seed = 0x5eed): BenchSet[] {
  return SET_NAMES.map((name) => makeSet(name, sizes, seed));
}

/**
 * Builds one set, from a generator seeded by `seed` and the set's place in
 * SET_NAMES: identical from run to run, and the same whether it is built
 * alone or with the others.
 */
export function makeSet(name: SetName, sizes: SetSizes, seed = 0x5eed): BenchSet {
  const next = seeded((seed + Math.imul(SET_NAMES.indexOf(name) + 1, 0x9e3779b1)) >>> 0);
  const dictionary = categories(100);
  switch (name) {
    case 'mixed': {
      const rows = sizes.batches * sizes.batchRows;
      return set('mixed', `${count(rows)} rows × 8 columns`, [mixedBatch(rows, next, dictionary)], null);
    }
    case 'narrow':
      return set('narrow', `${count(sizes.narrowRows)} rows × 1 float64`, [narrowBatch(sizes.narrowRows, next)], null);
    case 'wide':
      return set('wide', `${count(sizes.wideColumns)} int32 columns × ${count(sizes.wideRows)} rows`,
        [wideBatch(sizes.wideColumns, sizes.wideRows, next)], { name: 'column', count: sizes.wideColumns });
    case 'batches':
      return set('batches', `${count(sizes.batches)} batches × ${count(sizes.batchRows)} rows × 8 columns (the mixed schema)`,
        Array.from({ length: sizes.batches }, () => mixedBatch(sizes.batchRows, next, dictionary)), { name: 'batch', count: sizes.batches });
    case 'nested':
      return set('nested', `${count(sizes.nestedRows)} rows × 3 nested columns (list<struct<utf8, int64>>, map<utf8, int32>, dense union)`,
        [nestedBatch(sizes.nestedRows, next)], null);
    case 'stream':
      return set('stream', `${count(sizes.streamBatches)} batches × ${count(sizes.streamRows)} rows × 8 columns (the mixed schema)`,
        Array.from({ length: sizes.streamBatches }, () => mixedBatch(sizes.streamRows, next, dictionary)), { name: 'batch', count: sizes.streamBatches });
  }
}

function set(name: SetName, shape: string, batches: arrow.RecordBatch[], unit: BenchSet['unit']): BenchSet {
  const table = new arrow.Table(batches[0].schema, batches);
  return {
    name, shape, schema: batches[0].schema, batches, table, rows: table.numRows, columns: table.numCols,
    bytes: batches.reduce((n, b) => n + bufferBytes(b.data), 0), unit,
  };
}

const count = (n: number) => n.toLocaleString('en-US');

/** The bytes of every buffer of a Data tree, as an export writes them. */
export function bufferBytes(data: arrow.Data): number {
  let n = (data.values?.byteLength ?? 0) + (data.valueOffsets?.byteLength ?? 0) + (data.typeIds?.byteLength ?? 0);
  if (data.nullCount > 0) n += data.nullBitmap?.byteLength ?? 0;
  for (const child of data.children) n += bufferBytes(child);
  for (const chunk of data.dictionary?.data ?? []) n += bufferBytes(chunk);
  return n;
}

function batchOf(columns: [string, arrow.Data, boolean][]): arrow.RecordBatch {
  const fields = columns.map(([name, data, nullable]) => new arrow.Field(name, data.type, nullable));
  const length = columns[0][1].length;
  const data = arrow.makeData({ type: new arrow.Struct(fields), length, nullCount: 0, children: columns.map(([, d]) => d) });
  return new arrow.RecordBatch(new arrow.Schema(fields), data);
}

/** int32, int64, float64, bool, utf8, nullable float64, dictionary utf8, timestamp[ms, UTC]. */
function mixedBatch(n: number, next: () => number, dictionary: arrow.Vector<arrow.Utf8>): arrow.RecordBatch {
  const i32 = new Int32Array(n);
  for (let i = 0; i < n; i++) i32[i] = next() | 0;
  const i64 = new BigInt64Array(n);
  fillWords(new Uint32Array(i64.buffer), next);
  const f64 = new Float64Array(n);
  for (let i = 0; i < n; i++) f64[i] = next() / 4096;
  const bits = new Uint8Array((n + 7) >> 3);
  fillBytes(bits, next);
  const nullable = new Float64Array(n);
  const validity = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const r = next();
    if (r % 10 === 0) nulls++; // about 10% nulls
    else { validity[i >> 3] |= 1 << (i & 7); nullable[i] = r / 65536; }
  }
  const codes = new Int32Array(n);
  for (let i = 0; i < n; i++) codes[i] = next() % dictionary.length;
  const stamps = new BigInt64Array(n);
  const words = new Uint32Array(stamps.buffer);
  for (let i = 0; i < n; i++) { words[2 * i] = next(); words[2 * i + 1] = 395; } // around 2023 in ms
  const dictType = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), 0);
  return batchOf([
    ['int32', arrow.makeData({ type: new arrow.Int32(), length: n, data: i32 }), false],
    ['int64', arrow.makeData({ type: new arrow.Int64(), length: n, data: i64 }), false],
    ['float64', arrow.makeData({ type: new arrow.Float64(), length: n, data: f64 }), false],
    ['bool', arrow.makeData({ type: new arrow.Bool(), length: n, data: bits }), false],
    ['utf8', randomStrings(n, next), false],
    ['float64?', arrow.makeData({ type: new arrow.Float64(), length: n, nullCount: nulls, nullBitmap: validity, data: nullable }), true],
    ['category', arrow.makeData({ type: dictType, length: n, data: codes, dictionary }), false],
    ['timestamp', arrow.makeData({ type: new arrow.Timestamp(arrow.TimeUnit.MILLISECOND, 'UTC'), length: n, data: stamps }), false],
  ]);
}

function narrowBatch(n: number, next: () => number): arrow.RecordBatch {
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = next() / 4096;
  return batchOf([['float64', arrow.makeData({ type: new arrow.Float64(), length: n, data: values }), false]]);
}

function wideBatch(columns: number, n: number, next: () => number): arrow.RecordBatch {
  return batchOf(Array.from({ length: columns }, (_, c) => {
    const values = new Int32Array(n);
    fillWords(new Uint32Array(values.buffer), next);
    return [`c${c}`, arrow.makeData({ type: new arrow.Int32(), length: n, data: values }), false];
  }));
}

/**
 * list<struct<name: utf8, value: int64>> (0–4 entries, 5% null lists, 10% null
 * values), map<utf8, int32> (0–3 entries, 5% null maps, 10% null values) and a
 * dense union of int32, float64 and utf8 (10% nulls in its int32 child).
 */
/** Offsets, validity and null count of n list-like slots: 5% null, else 0 to `max` entries each. */
function entryOffsets(n: number, max: number, next: () => number): [Int32Array, Uint8Array, number] {
  const offsets = new Int32Array(n + 1);
  const valid = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const r = next();
    if (r % 20 === 0) { nulls++; offsets[i + 1] = offsets[i]; continue; }
    valid[i >> 3] |= 1 << (i & 7);
    offsets[i + 1] = offsets[i] + ((r >>> 8) % (max + 1));
  }
  return [offsets, valid, nulls];
}

function nestedBatch(n: number, next: () => number): arrow.RecordBatch {
  // list<struct<utf8, int64>>
  const [listOffsets, listValid, listNulls] = entryOffsets(n, 4, next);
  const items = listOffsets[n];
  const itemValues = new BigInt64Array(items);
  fillWords(new Uint32Array(itemValues.buffer), next);
  const [itemValid, itemNulls] = validity(items, 10, next);
  const itemFields = [new arrow.Field('name', new arrow.Utf8(), false), new arrow.Field('value', new arrow.Int64(), true)];
  const item = arrow.makeData({
    type: new arrow.Struct(itemFields), length: items, nullCount: 0, children: [
      randomStrings(items, next),
      arrow.makeData({ type: new arrow.Int64(), length: items, nullCount: itemNulls, nullBitmap: itemValid, data: itemValues }),
    ],
  });
  const listType = new arrow.List(new arrow.Field('item', item.type, false));
  const list = arrow.makeData({ type: listType, length: n, nullCount: listNulls, nullBitmap: listValid, valueOffsets: listOffsets, child: item });

  // map<utf8, int32>
  const [mapOffsets, mapValid, mapNulls] = entryOffsets(n, 3, next);
  const entries = mapOffsets[n];
  const mapValues = new Int32Array(entries);
  fillWords(new Uint32Array(mapValues.buffer), next);
  const [mapValuesValid, mapValueNulls] = validity(entries, 10, next);
  const entryFields = [new arrow.Field('key', new arrow.Utf8(), false), new arrow.Field('value', new arrow.Int32(), true)];
  const entry = arrow.makeData({
    type: new arrow.Struct(entryFields), length: entries, nullCount: 0, children: [
      randomStrings(entries, next),
      arrow.makeData({ type: new arrow.Int32(), length: entries, nullCount: mapValueNulls, nullBitmap: mapValuesValid, data: mapValues }),
    ],
  });
  const mapType = new arrow.Map_(new arrow.Field('entries', entry.type, false), false);
  const map = arrow.makeData({ type: mapType, length: n, nullCount: mapNulls, nullBitmap: mapValid, valueOffsets: mapOffsets, child: entry });

  // dense union<int32, float64, utf8>: each child holds the rows of its type id, in order.
  const typeIds = new Int8Array(n);
  const unionOffsets = new Int32Array(n);
  const lengths = [0, 0, 0];
  for (let i = 0; i < n; i++) {
    const id = next() % 3;
    typeIds[i] = id;
    unionOffsets[i] = lengths[id]++;
  }
  const ints = new Int32Array(lengths[0]);
  fillWords(new Uint32Array(ints.buffer), next);
  const [intsValid, intNulls] = validity(lengths[0], 10, next);
  const floats = new Float64Array(lengths[1]);
  for (let i = 0; i < floats.length; i++) floats[i] = next() / 4096;
  const unionFields = [new arrow.Field('int32', new arrow.Int32(), true), new arrow.Field('float64', new arrow.Float64(), false),
    new arrow.Field('utf8', new arrow.Utf8(), false)];
  const union = arrow.makeData({
    type: new arrow.DenseUnion([0, 1, 2], unionFields), length: n, nullCount: 0, typeIds, valueOffsets: unionOffsets, children: [
      arrow.makeData({ type: new arrow.Int32(), length: lengths[0], nullCount: intNulls, nullBitmap: intsValid, data: ints }),
      arrow.makeData({ type: new arrow.Float64(), length: lengths[1], data: floats }),
      randomStrings(lengths[2], next),
    ],
  });
  return batchOf([['list<struct>', list, true], ['map', map, true], ['union', union, true]]);
}

/** A validity bitmap with about one null in `every` values, and its null count. */
function validity(n: number, every: number, next: () => number): [Uint8Array, number] {
  const bits = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (next() % every === 0) nulls++;
    else bits[i >> 3] |= 1 << (i & 7);
  }
  return [bits, nulls];
}

/** Strings of 0 to 15 lowercase letters. */
function randomStrings(n: number, next: () => number): arrow.Data<arrow.Utf8> {
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + (next() & 15);
  const bytes = new Uint8Array(offsets[n]);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 97 + (next() % 26);
  return arrow.makeData({ type: new arrow.Utf8(), length: n, valueOffsets: offsets, data: bytes });
}

function categories(n: number): arrow.Vector<arrow.Utf8> {
  return arrow.vectorFromArray(Array.from({ length: n }, (_, i) => `category-${i}`), new arrow.Utf8());
}

function fillWords(words: Uint32Array, next: () => number): void {
  for (let i = 0; i < words.length; i++) words[i] = next();
}

function fillBytes(bytes: Uint8Array, next: () => number): void {
  for (let i = 0; i < bytes.length; i++) bytes[i] = next() & 0xff;
}
