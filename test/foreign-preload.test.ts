// Issue 14: a view import { from } another module hands the values the C
// validator reads at 'default' (each offsets buffer's first and last
// entries) to the foreign window with the shadow (csrc/abi/window.c's
// preload table, ts/exchange/foreign-shadow.ts), so that the validator makes
// no call into JavaScript for them. These tests count the calls the window
// still makes, for every type with offsets and where it sits in the tree
// (the schema's breadth-first order must be the array's), check slices and
// a batch with more offsets than the table holds, and corrupt the entries
// read: faults are found and named as the reads through the window found
// them.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EINVAL } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import { compareBatches } from '../ts/arrow-js/compare.js';
import { PRELOAD_WORDS, PRELOADS } from '../ts/exchange/foreign-shadow.js';
import type { ForeignModule } from '../ts/foreign/module.js';
import { libraryError, twoCores } from './helpers.js';

let acd: ArrowCDevice;
let other: ArrowCDevice;
let from: ForeignModule;
beforeAll(async () => {
  ({ acd, other, from } = await twoCores());
});

type Read = (address: number, dst: number, n: number) => number;

/** Runs f with the core's window reader wrapped; returns the number of reads it made. */
function readsDuring(f: () => void): number {
  const m = (acd.core as unknown as { m: { acdForeignRead?: Read } }).m;
  // Installed by the first validation through the window.
  if (m.acdForeignRead === undefined) importBack(batch([['warm', arrow.vectorFromArray([1], new arrow.Int32()).data[0]!]]), 'default').release();
  const read = m.acdForeignRead!;
  let calls = 0;
  m.acdForeignRead = (address, dst, n) => {
    calls++;
    return read(address, dst, n);
  };
  try {
    f();
  } finally {
    m.acdForeignRead = read;
  }
  return calls;
}

function batch(columns: [string, arrow.Data][]): arrow.RecordBatch {
  const fields = columns.map(([name, data]) => new arrow.Field(name, data.type, true));
  const length = columns[0]![1].length;
  const struct = arrow.makeData({ type: new arrow.Struct(fields), length, nullCount: 0, children: columns.map(([, data]) => data) });
  return new arrow.RecordBatch(new arrow.Schema(fields), struct);
}

/** Exports b from the other core, imports it { from } it in view mode, checks the values; the caller releases. */
function importBack(b: arrow.RecordBatch, validate: 'default' | 'full') {
  const e = other.exportBatch(b);
  try {
    const back = acd.importBatch(e.schema, e.array, { from, mode: 'view', validate });
    expect(compareBatches(b, back.value, 0)).toEqual([]);
    return { release: () => { back.release(); e.release(); } };
  } catch (err) {
    e.release();
    throw err;
  }
}

const data = (values: unknown[], type: arrow.DataType) => arrow.vectorFromArray(values, type).data[0]!;
const item = (type: arrow.DataType) => new arrow.Field('item', type, true);
const STRINGS = ['a', null, 'bcd', '', 'éz'];

/** Columns of every kind whose offsets the validator reads at 'default', at every place in a tree. */
const COLUMNS: [string, () => arrow.Data][] = [
  ['utf8', () => data(STRINGS, new arrow.Utf8())],
  ['binary', () => data([new Uint8Array([1]), null, new Uint8Array([2, 3]), new Uint8Array(0), new Uint8Array([4])], new arrow.Binary())],
  ['large utf8', () => data(STRINGS, new arrow.LargeUtf8())],
  ['large binary', () => data([new Uint8Array([1]), null, new Uint8Array([2, 3]), new Uint8Array(0), new Uint8Array([4])], new arrow.LargeBinary())],
  ['list<int32>', () => data([[1], [], null, [2, 3], [4]], new arrow.List(item(new arrow.Int32())))],
  ['list<utf8> (offsets in a child)', () => data([['x'], [], null, ['yy', null], ['z']], new arrow.List(item(new arrow.Utf8())))],
  ['struct<int32, utf8>', () => data([{ i: 1, s: 'p' }, null, { i: 3, s: null }, { i: 4, s: 'qq' }, { i: 5, s: '' }],
    new arrow.Struct([new arrow.Field('i', new arrow.Int32(), true), new arrow.Field('s', new arrow.Utf8(), true)]))],
  ['map<utf8, int32>', () => data([new Map([['k', 1]]), null, new Map(), new Map([['a', 2], ['b', 3]]), new Map([['c', 4]])],
    new arrow.Map_(new arrow.Field('entries', new arrow.Struct([new arrow.Field('key', new arrow.Utf8(), false),
      new arrow.Field('value', new arrow.Int32(), true)]), false)))],
  ['dictionary<utf8> (offsets in the dictionary)', () => data(['p', 'q', null, 'p', 'rr'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()))],
];

test('the table TypeScript writes is the one C declares (csrc/abi/abi.h): as many entries, of the same size', () => {
  const header = readFileSync(join(__dirname, '..', 'csrc', 'abi', 'abi.h'), 'utf8');
  expect(header).toMatch(new RegExp(`#define ACD_FOREIGN_PRELOADS ${PRELOADS}\\n`));
  // uint64_t at, uint32_t size, uint32_t unused, uint8_t bytes[8]: 24 bytes, 6 words.
  expect(header).toMatch(/struct AcdForeignPreload \{\n  uint64_t at;\n  uint32_t size;\n  uint32_t unused;\n  uint8_t bytes\[8\];\n\};/);
  expect(PRELOAD_WORDS).toBe((8 + 4 + 4 + 8) / 4);
});

describe('the offsets the validator reads come with the shadow: no read through the window at default', () => {
  test.each(COLUMNS)('%s, after an int32 column', (_, column) => {
    const b = batch([['n', data([1, 2, 3, 4, 5], new arrow.Int32())], ['c', column()]]);
    let imported: { release(): void } | undefined;
    expect(readsDuring(() => { imported = importBack(b, 'default'); })).toBe(0);
    imported!.release();
    expect(acd.bytesAllocated()).toBe(0);
    expect(other.bytesAllocated()).toBe(0);
  });

  test('every kind in one batch, two dictionaries among them: the schema\'s order is the array\'s', () => {
    const b = batch([...COLUMNS.map(([name, column]) => [name, column()] as [string, arrow.Data]),
      ['second dictionary', data(['s', null, 't', 's', 'u'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()))]]);
    let imported: { release(): void } | undefined;
    expect(readsDuring(() => { imported = importBack(b, 'default'); })).toBe(0);
    imported!.release();
  });

  test('a slice (offset 1 in the producer\'s struct): the entries at its offset, not at 0', () => {
    const e = other.exportBatch(batch([['s', data(STRINGS, new arrow.Utf8())]]));
    try {
      // The batch and its column made a slice of rows 1 to 4 where they are.
      const s = from.space.structs;
      const view = new DataView(other.memory.buffer);
      const column = s.ptrAt(s.ptr('ArrowArray', e.array, 'children'));
      view.setBigInt64(e.array + s.offsetOf('ArrowArray', 'length'), 4n, true);
      view.setBigInt64(column + s.offsetOf('ArrowArray', 'length'), 4n, true);
      view.setBigInt64(column + s.offsetOf('ArrowArray', 'offset'), 1n, true);
      let back: { value: arrow.RecordBatch; release(): void } | undefined;
      expect(readsDuring(() => { back = acd.importBatch(e.schema, e.array, { from, mode: 'view' }); })).toBe(0);
      expect(back!.value.getChildAt(0)!.toArray()).toEqual(STRINGS.slice(1));
      back!.release();
    } finally {
      e.release();
    }
  });

  test('more offsets than the table holds (40 string columns, 80 entries for 64 places): the rest read through the window', () => {
    const b = batch(Array.from({ length: 40 }, (_, k) => [`s${k}`, data(STRINGS.map((s) => (s === null ? null : `${s}${k}`)), new arrow.Utf8())]));
    let imported: { release(): void } | undefined;
    const reads = readsDuring(() => { imported = importBack(b, 'default'); });
    // 8 columns' two entries each, at most one fetch per entry.
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(16);
    imported!.release();
  });

  test('at full, every offset is read: through the window, as before', () => {
    const b = batch([['s', COLUMNS[0]![1]()]]);
    let imported: { release(): void } | undefined;
    expect(readsDuring(() => { imported = importBack(b, 'full'); })).toBeGreaterThan(0);
    imported!.release();
  });
});

describe('the entries read are the module\'s bytes: corrupted offsets are found', () => {
  /** Column c's offsets buffer (buffers[1]) in the other core's memory. */
  function offsetsOf(array: number, c: number): number {
    const s = from.space.structs;
    const child = s.ptrAt(s.ptr('ArrowArray', array, 'children') + 4 * c);
    return s.ptrAt(s.ptr('ArrowArray', child, 'buffers') + 4);
  }

  test.each([
    ['the first offset above the last', 0, 100, /root\.children\[1\]\.buffers\[1\]: expected 0 <= offsets\[0\] \(the first\) <= offsets\[5\] \(the last\), found 100 and 7/],
    ['the first offset negative', 0, -1, /root\.children\[1\]\.buffers\[1\]: expected 0 <= offsets\[0\] \(the first\) <= offsets\[5\] \(the last\), found -1 and 7/],
    ['the last offset past the module\'s memory', 5, 0x7ffffff0, /root\.children\[1\]\.buffers\[2\]: expected 2147483632 bytes/],
  ] as const)('%s: the import fails with the error a read through the window gave, and nothing moves', (_, entry, value, message) => {
    const b = batch([['n', data([1, 2, 3, 4, 5], new arrow.Int32())], ['s', COLUMNS[0]![1]()]]);
    const e = other.exportBatch(b);
    try {
      const view = new DataView(other.memory.buffer);
      const at = offsetsOf(e.array, 1) + 4 * entry;
      expect(view.getInt32(offsetsOf(e.array, 1) + 20, true)).toBe(7);
      view.setInt32(at, value, true);
      const err = libraryError(() => acd.importBatch(e.schema, e.array, { from, mode: 'view' }));
      expect(err.errno).toBe(EINVAL);
      expect(err.message).toMatch(message);
      // The producer still owns both structs.
      expect(from.space.structs.ptr('ArrowArray', e.array, 'release')).not.toBe(0);
    } finally {
      e.release();
    }
    expect(acd.bytesAllocated()).toBe(0);
    expect(other.bytesAllocated()).toBe(0);
  });

  test('a corrupted offset in a dictionary\'s values (the last node of the walk)', () => {
    const b = batch([['n', data([1, 2, 3, 4, 5], new arrow.Int32())], ['d', COLUMNS[8]![1]()]]);
    const e = other.exportBatch(b);
    try {
      const s = from.space.structs;
      const column = s.ptrAt(s.ptr('ArrowArray', e.array, 'children') + 4);
      const values = s.ptr('ArrowArray', column, 'dictionary');
      const offsets = s.ptrAt(s.ptr('ArrowArray', values, 'buffers') + 4);
      new DataView(other.memory.buffer).setInt32(offsets, 50, true);
      const err = libraryError(() => acd.importBatch(e.schema, e.array, { from, mode: 'view' }));
      expect(err.message).toMatch(/root\.children\[1\]\.dictionary\.buffers\[1\]: expected 0 <= offsets\[0\] \(the first\) <= offsets\[3\] \(the last\), found 50 and 4/);
    } finally {
      e.release();
    }
  });
});
