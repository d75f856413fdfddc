// Issue 14: an import { from } another module given the schema's address
// compares the foreign tree with the last copy in the core's scratch area
// that was validated (ts/exchange/foreign-schema.ts lastCopyOf), and takes
// its field instead of copying and checking again. These tests change one
// thing at a time between imports (a name, a flag, a format, a child, a
// dictionary, metadata), corrupt the tree after a copy was kept, and make
// the array's shadow need the scratch area the copy holds: every import
// reads what the other module holds, and faults are named as without it.
import { beforeAll, describe, expect, jest, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { EINVAL } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import { compareBatches, schemaDifferences } from '../ts/arrow-js/compare.js';
import { scratchHeld } from '../ts/exchange/foreign-schema.js';
import type { ForeignModule } from '../ts/foreign/module.js';
import { coreAsModule, libraryError, twoCores } from './helpers.js';

let acd: ArrowCDevice;
let other: ArrowCDevice;
let from: ForeignModule;
beforeAll(async () => {
  ({ acd, other, from } = await twoCores());
});

const int32 = () => arrow.vectorFromArray([1, 2, null], new arrow.Int32()).data[0]!;
const int64 = () => arrow.vectorFromArray([1n, 2n, null], new arrow.Int64()).data[0]!;
const utf8 = () => arrow.vectorFromArray(['x', null, 'zz'], new arrow.Utf8()).data[0]!;
const dictionary = () => arrow.vectorFromArray(['p', 'q', 'p'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())).data[0]!;
const list = () => arrow.vectorFromArray([[1], [], [2, 3]], new arrow.List(new arrow.Field('item', new arrow.Int32(), true))).data[0]!;

/** A batch of three rows with these columns: [name, data, nullable, metadata]. */
function batch(columns: [string, arrow.Data, boolean?, Map<string, string>?][]): arrow.RecordBatch {
  const fields = columns.map(([name, data, nullable, metadata]) => new arrow.Field(name, data.type, nullable ?? true, metadata));
  const struct = arrow.makeData({ type: new arrow.Struct(fields), length: 3, nullCount: 0, children: columns.map(([, data]) => data) });
  return new arrow.RecordBatch(new arrow.Schema(fields), struct);
}

const base = () => batch([['a', int32()], ['b', utf8()], ['c', dictionary()], ['d', list()]]);
/** The base batch with one thing changed. */
const VARIANTS: [string, () => arrow.RecordBatch][] = [
  ['a column renamed', () => batch([['a', int32()], ['B', utf8()], ['c', dictionary()], ['d', list()]])],
  ['a name one byte longer', () => batch([['a', int32()], ['bb', utf8()], ['c', dictionary()], ['d', list()]])],
  ['a nested field renamed', () => batch([['a', int32()], ['b', utf8()], ['c', dictionary()],
    ['d', arrow.vectorFromArray([[1], [], [2, 3]], new arrow.List(new arrow.Field('element', new arrow.Int32(), true))).data[0]!]])],
  ['a column not nullable', () => batch([['a', int32(), false], ['b', utf8()], ['c', dictionary()], ['d', list()]])],
  ['another format', () => batch([['a', int64()], ['b', utf8()], ['c', dictionary()], ['d', list()]])],
  ['a column fewer', () => batch([['a', int32()], ['b', utf8()], ['c', dictionary()]])],
  ['no dictionary', () => batch([['a', int32()], ['b', utf8()], ['c', utf8()], ['d', list()]])],
  // The same formats, names and nodes, breadth first: only where the dictionary hangs differs.
  ['the dictionary on another column', () => batch([['a', arrow.vectorFromArray(['p', 'q', 'p'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())).data[0]!],
    ['b', utf8()], ['c', int32()], ['d', list()]])],
  ['a column with metadata', () => batch([['a', int32(), true, new Map([['k', 'v']])], ['b', utf8()], ['c', dictionary()], ['d', list()]])],
];

/** Exports b from the other core and imports it { from } it, given the schema's address; checks values and schema. */
function roundTrip(b: arrow.RecordBatch, mode: 'view' | 'copy'): void {
  const e = other.exportBatch(b);
  const back = acd.importBatch(e.schema, e.array, { from, mode });
  expect(compareBatches(b, back.value, 0)).toEqual([]);
  expect(schemaDifferences(b, back.value)).toEqual([]);
  back.release();
  e.release();
}

describe.each(['view', 'copy'] as const)('in %s mode', (mode) => {
  test.each(VARIANTS)('%s, between two imports of the same schema: each import reads the schema the module holds', (_, variant) => {
    const check = jest.spyOn(acd.core, 'schemaCheck');
    try {
      roundTrip(base(), mode);
      roundTrip(base(), mode);
      roundTrip(variant(), mode);
      roundTrip(base(), mode);
      roundTrip(variant(), mode);
    } finally {
      check.mockRestore();
    }
    // The second import of a schema compares and is not checked again; every other one is.
    expect(check.mock.calls.length).toBeLessThanOrEqual(4);
    expect(acd.bytesAllocated()).toBe(0);
    expect(other.bytesAllocated()).toBe(0);
  });
});

describe('a kept copy', () => {
  /** Exports the base batch, lets `corrupt` change its schema in the other memory, imports: the error expected, nothing moved; then, put back, the import. */
  function corrupted(corrupt: (schema: number, s: ForeignModule['space']['structs']) => void, expectedMessage: RegExp): void {
    roundTrip(base(), 'view');
    const e = other.exportBatch(base());
    const s = from.space.structs;
    const saved = from.space.bytes.slice();
    corrupt(e.schema, s);
    const err = libraryError(() => acd.importBatch(e.schema, e.array, { from, mode: 'view' }));
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toMatch(expectedMessage);
    // Nothing was moved or released: put back, the same structs import.
    expect(s.ptr('ArrowArray', e.array, 'release')).not.toBe(0);
    from.space.bytes.set(saved);
    const back = acd.importBatch(e.schema, e.array, { from, mode: 'view' });
    expect(compareBatches(base(), back.value, 0)).toEqual([]);
    back.release();
    e.release();
  }
  const child = (schema: number, s: ForeignModule['space']['structs'], i: number) => s.ptrAt(s.ptr('ArrowSchema', schema, 'children') + 4 * i);

  test('a format made NULL is named, as without one', () => {
    corrupted((schema, s) => s.setPtr('ArrowSchema', child(schema, s, 1), 'format', 0), /^other: schema\.children\[1\]\.format: expected a string, found NULL/);
  });
  test('a child reached twice is named, as without one', () => {
    corrupted((schema, s) => from.space.view.setUint32(s.ptr('ArrowSchema', schema, 'children') + 4, child(schema, s, 0), true),
      /^other: schema\.children\[1\]: the node at \d+ is reached twice/);
  });
  test('a released child is named, as without one', () => {
    corrupted((schema, s) => s.setPtr('ArrowSchema', child(schema, s, 3), 'release', 0), /^other: schema\.children\[3\]: expected a live schema, found a released one/);
  });
  test('a name past the memory is named, as without one', () => {
    corrupted((schema, s) => s.setPtr('ArrowSchema', child(schema, s, 2), 'name', from.space.bytes.length + 8), /^other: schema\.children\[2\]\.name/);
  });

  test('a name made NULL reads as it does without a kept copy', async () => {
    const nameless = (core: ArrowCDevice) => {
      const e = other.exportBatch(base());
      const s = from.space.structs;
      s.setPtr('ArrowSchema', child(e.schema, s, 1), 'name', 0);
      const f = coreAsModule(core, other);
      const back = core.importBatch(e.schema, e.array, { from: f, mode: 'view' });
      const names = back.value.schema.fields.map((field) => field.name);
      back.release();
      e.release();
      return names;
    };
    roundTrip(base(), 'view');
    expect(scratchHeld(acd.core)).toBeGreaterThan(0);
    const fresh = await ArrowCDevice.load();
    expect(nameless(acd)).toEqual(nameless(fresh));
    expect(nameless(fresh)[1]).not.toBe('b');
  });

  test("an array's shadow that needs the scratch area the copy holds is written there, and the next import copies the schema again", () => {
    // A schema of 1,500 columns is kept (about 90 KB of the 256 KB area); a
    // batch of 2,500 columns of another schema, imported through an
    // ImportedSchema, has a shadow of about 180 KB: it fits only over the copy.
    const wide = (n: number, prefix: string) => batch(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, int32()] as [string, arrow.Data]));
    const kept = wide(1500, 'k');
    roundTrip(kept, 'view');
    roundTrip(kept, 'view');
    const big = wide(2500, 'w');
    const e = other.exportBatch(big);
    const schema = acd.importSchema(e.schema, { from });
    const before = acd.bytesAllocated();
    const alloc = jest.spyOn(acd.core, 'alloc');
    try {
      const back = acd.importBatch(schema, e.array, { from, mode: 'view' });
      // In the scratch area: nothing allocated for the shadow, and the copy written over is no longer kept.
      expect(alloc).not.toHaveBeenCalled();
      expect(scratchHeld(acd.core)).toBe(0);
      expect(compareBatches(big, back.value, 0)).toEqual([]);
      back.release();
    } finally {
      alloc.mockRestore();
    }
    expect(acd.bytesAllocated()).toBe(before);
    schema.release();
    e.release();
    const check = jest.spyOn(acd.core, 'schemaCheck');
    try {
      roundTrip(kept, 'view');
      expect(check).toHaveBeenCalledTimes(1);
    } finally {
      check.mockRestore();
    }
  });

  test('a shadow that fits past the copy leaves it kept', () => {
    roundTrip(base(), 'view');
    const e = other.exportBatch(batch([['x', utf8()], ['y', list()]]));
    const schema = acd.importSchema(e.schema, { from });
    const held = scratchHeld(acd.core);
    expect(held).toBeGreaterThan(0);
    const back = acd.importBatch(schema, e.array, { from, mode: 'copy' });
    expect(scratchHeld(acd.core)).toBe(held);
    back.release();
    schema.release();
    e.release();
    const check = jest.spyOn(acd.core, 'schemaCheck');
    try {
      roundTrip(base(), 'view');
      roundTrip(base(), 'copy');
      expect(check).not.toHaveBeenCalled();
    } finally {
      check.mockRestore();
    }
  });
});
