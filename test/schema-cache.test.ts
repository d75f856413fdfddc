// Imported schemas are read once per key (ts/exchange/schema-cache.ts, key
// from csrc/validate/schema_key.c): equal trees share one frozen Field and one
// apache-arrow Schema; any difference a reader would see (a name, a format, a
// flag, metadata, a child, a dictionary) makes another key.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { ArrowCDevice } from '../ts/api.js';
import type { RawArray } from '../ts/model/raw.js';
import * as t from '../ts/model/types.js';
import { bytesMark, core } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});
const mark = bytesMark(() => acd);

/** The Field an import of an export of `field` reads. */
function imported(field: t.Field): t.Field {
  const e = acd.exportSchema(field);
  const s = acd.importSchema(e.ptr);
  const read = s.field;
  s.release();
  e.release();
  return read;
}

const base = (): t.Field => t.field('', t.struct([
  t.field('a', t.int32(), true, new Map([['k', 'v']])),
  t.field('b', t.list(t.field('item', t.utf8()))),
  t.field('c', t.dictionary(t.int16(), t.utf8())),
]), false, new Map([['schema', 'm']]));

describe('the imported schemas cache', () => {
  test('equal schemas: one frozen Field', () => {
    mark();
    const first = imported(base());
    const second = imported(base());
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.type)).toBe(true);
    expect(() => { (first as { name: string }).name = 'x'; }).toThrow(TypeError);
  });

  const variants: [string, (f: t.Field) => t.Field][] = [
    ['a column name', (f) => t.field(f.name, t.struct([t.field('A', t.int32(), true, new Map([['k', 'v']])), ...(f.type as { children: t.Field[] }).children.slice(1)]), f.nullable, f.metadata)],
    ['a column type', (f) => t.field(f.name, t.struct([t.field('a', t.int64(), true, new Map([['k', 'v']])), ...(f.type as { children: t.Field[] }).children.slice(1)]), f.nullable, f.metadata)],
    ['nullability', (f) => t.field(f.name, f.type, true, f.metadata)],
    ['schema metadata', (f) => t.field(f.name, f.type, f.nullable, new Map([['schema', 'n']]))],
    ['no metadata', (f) => t.field(f.name, f.type, f.nullable, null)],
    ['column metadata', (f) => t.field(f.name, t.struct([t.field('a', t.int32(), true, new Map([['k', 'w']])), ...(f.type as { children: t.Field[] }).children.slice(1)]), f.nullable, f.metadata)],
    ['a nested name', (f) => t.field(f.name, t.struct([(f.type as { children: t.Field[] }).children[0]!, t.field('b', t.list(t.field('element', t.utf8()))), (f.type as { children: t.Field[] }).children[2]!]), f.nullable, f.metadata)],
    ['a dictionary index type', (f) => t.field(f.name, t.struct([...(f.type as { children: t.Field[] }).children.slice(0, 2), t.field('c', t.dictionary(t.int32(), t.utf8()))]), f.nullable, f.metadata)],
    ['a dictionary value type', (f) => t.field(f.name, t.struct([...(f.type as { children: t.Field[] }).children.slice(0, 2), t.field('c', t.dictionary(t.int16(), t.binary()))]), f.nullable, f.metadata)],
    ['one column fewer', (f) => t.field(f.name, t.struct((f.type as { children: t.Field[] }).children.slice(0, 2)), f.nullable, f.metadata)],
  ];
  test.each(variants)('%s: another Field, read as it is', (_, change) => {
    mark();
    const original = imported(base());
    const changed = change(base());
    const read = imported(changed);
    expect(read).not.toBe(original);
    expect(read).toEqual(changed);
  });

  test('the batches of a stream share one apache-arrow Schema and types', () => {
    mark();
    const table = new arrow.Table({
      x: arrow.makeVector(Int32Array.from([1, 2, 3])),
      y: arrow.vectorFromArray(['a', 'b', 'a'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
    });
    const batches = [...table.batches, ...table.batches];
    const exports = batches.map((b) => acd.exportBatch(b));
    const imports = exports.map((e) => acd.importBatch(e.schema, e.array));
    expect(imports[1]!.value.schema).toBe(imports[0]!.value.schema);
    expect(imports[1]!.value.data.type).toBe(imports[0]!.value.data.type);
    // The struct's children are the schema's fields: one dictionary type (one id) for the column.
    expect(imports[0]!.value.data.children[1]!.type).toBe(imports[0]!.value.schema.fields[1]!.type);
    expect(imports.map((i) => i.value.toArray().map((r) => r.toJSON()))).toEqual(batches.map((b) => b.toArray().map((r) => r.toJSON())));
    imports.forEach((i) => i.release());
    exports.forEach((e) => e.release());
  });
});

// A schema whose key equals that of one validated before skips the checks of
// its content (csrc/validate/schema_key.c); whatever is wrong with its
// structs themselves must still be found, with the validator's own message.
describe('a known key does not let a faulty struct tree through', () => {
  // Two children of the same content: a DAG of it has the key of the tree.
  const twins = () => new arrow.Schema([new arrow.Field('a', new arrow.Int32()), new arrow.Field('a', new arrow.Int32())]);
  const s = () => acd.core.structs;
  const slot = (ptr: number, i: number) => s().ptr('ArrowSchema', ptr, 'children') + i * 4;
  const child = (ptr: number, i: number) => s().ptrAt(slot(ptr, i));
  /** Sets the 32-bit word at `at` to `to`; returns what puts it back. */
  const poke = (at: number, to: number) => {
    const was = acd.core.view.getUint32(at, true);
    acd.core.view.setUint32(at, to, true);
    return () => acd.core.view.setUint32(at, was, true);
  };
  const release = (ptr: number) => ptr + s().offsetOf('ArrowSchema', 'release');

  const faults: [string, (ptr: number) => () => void][] = [
    ['a child reached twice (a DAG)', (ptr) => poke(slot(ptr, 1), child(ptr, 0))],
    ['a released child', (ptr) => poke(release(child(ptr, 1)), 0)],
    ['a release that is not a function', (ptr) => poke(release(child(ptr, 1)), 0xfffff)],
    ['a child past the memory', (ptr) => poke(slot(ptr, 1), acd.memory.buffer.byteLength - 8)],
    ['a misaligned child', (ptr) => poke(slot(ptr, 1), child(ptr, 1) + 1)],
    ['a cycle', (ptr) => poke(slot(ptr, 1), ptr)],
  ];

  /** The error the validator gives the schema at ptr. */
  function validatorError(ptr: number): Error {
    try {
      acd.core.schemaValidate(ptr);
    } catch (error) {
      return error as Error;
    }
    throw new Error('the validator accepted the faulty schema');
  }

  test.each(faults)('%s: refused as the validator refuses it, nothing moved', (_, fault) => {
    mark();
    // The key becomes known: the same tree, intact, imported once.
    using first = acd.exportSchema(twins());
    acd.importSchema(first.ptr).release();
    using e = acd.exportSchema(twins());
    const restore = fault(e.ptr);
    const expected = validatorError(e.ptr);
    expect(() => acd.importSchema(e.ptr)).toThrow(expected.message);
    expect(s().ptr('ArrowSchema', e.ptr, 'release')).not.toBe(0);
    restore();
  });

  test.each(faults)('%s: refused with the array too (importBatch), nothing moved', (_, fault) => {
    mark();
    const data = arrow.makeData({ type: new arrow.Struct(twins().fields), length: 2, nullCount: 0, children: [
      arrow.makeData({ type: new arrow.Int32(), data: Int32Array.of(1, 2) }), arrow.makeData({ type: new arrow.Int32(), data: Int32Array.of(3, 4) })] });
    const batch = new arrow.RecordBatch(twins(), data);
    // Known key: the intact batch imported once.
    using first = acd.exportBatch(batch);
    acd.importBatch(first.schema, first.array).release();
    using e = acd.exportBatch(batch);
    const restore = fault(e.schema);
    const expected = validatorError(e.schema);
    expect(() => acd.importBatch(e.schema, e.array)).toThrow(expected.message);
    expect(s().ptr('ArrowSchema', e.schema, 'release')).not.toBe(0);
    expect(s().ptr('ArrowArray', e.array, 'release')).not.toBe(0);
    restore();
  });
});

// importBatch of a schema address and an array address takes both in one
// call; the schema is then the result's (no handle of its own).
describe('a schema imported with its array', () => {
  const ree = (): { field: t.Field; raw: RawArray } => {
    const runEnds: RawArray = { type: t.int32(), length: 2, nullCount: 0, offset: 0, buffers: [null, new Uint8Array(Int32Array.of(2, 3).buffer)], children: [], dictionary: null };
    const values: RawArray = { type: t.int32(), length: 2, nullCount: 0, offset: 0, buffers: [null, new Uint8Array(Int32Array.of(7, 8).buffer)], children: [], dictionary: null };
    const column: RawArray = { type: t.runEndEncoded(t.int32(), t.int32()), length: 3, nullCount: 0, offset: 0, buffers: [], children: [runEnds, values], dictionary: null };
    const type = t.struct([t.field('r', column.type)]);
    return { field: t.field('', type, false), raw: { type, length: 3, nullCount: 0, offset: 0, buffers: [null], children: [column], dictionary: null } };
  };

  test('a read that fails moves both structs back: the caller still owns them, intact', () => {
    mark();
    const { field, raw } = ree();
    using e = acd.exportRaw(field, raw);
    // apache-arrow has no run-end encoded type: the read refuses it after both were moved.
    expect(() => acd.importBatch(e.schema, e.array)).toThrow(/run_end_encoded/);
    expect(acd.core.structs.ptr('ArrowSchema', e.schema, 'release')).not.toBe(0);
    expect(acd.core.structs.ptr('ArrowArray', e.array, 'release')).not.toBe(0);
    // Still whole: imported with the conversion, they read as they were written.
    using imported = acd.importBatch(e.schema, e.array, { convert: ['run_end_encoded'] });
    expect(imported.value.getChildAt(0)!.toArray()).toEqual(Int32Array.of(7, 7, 8));
  });

  test('the result owns the schema: released with it, in view and copy mode', () => {
    mark();
    for (const mode of ['view', 'copy'] as const) {
      const table = new arrow.Table({ x: arrow.makeVector(Int32Array.of(1, 2, 3)) });
      using e = acd.exportBatch(table.batches[0]!);
      const imported = acd.importBatch(e.schema, e.array, { mode });
      expect(imported.value.schema.fields.map((f) => f.name)).toEqual(['x']);
      imported.release();
    }
  });
});

describe('the key ids of the schemas a core remembers', () => {
  const batchOf = (name: string, values: Int32Array) => new arrow.Table({ [name]: arrow.makeVector(values) }).batches[0]!;

  test('two cores number their keys alike: each import reads its own schema', async () => {
    // A second instance remembers its first key under the same id as this one's first: the
    // fields found by id must be per core.
    const other = await ArrowCDevice.load();
    const names = ['first', 'second', 'third'];
    for (let round = 0; round < 3; round++) {
      names.forEach((name, i) => {
        const which = round % 2 === 0 ? acd : other;
        using e = which.exportBatch(batchOf(`${name}${i}`, Int32Array.of(i, i + 1)));
        using imported = which.importBatch(e.schema, e.array, { mode: 'view' });
        expect(imported.value.schema.fields.map((f) => f.name)).toEqual([`${name}${i}`]);
        expect(Array.from(imported.value.getChildAt(0)!.toArray())).toEqual([i, i + 1]);
      });
    }
  });

  test('two new cores, one import each in turn: the same key id, each its own schema', async () => {
    // Both remember their first key under id 1: the last entry found (schema-cache.ts) names its core too.
    const [one, two] = [await ArrowCDevice.load(), await ArrowCDevice.load()];
    for (let round = 0; round < 2; round++) {
      [one, two].forEach((which, i) => {
        using e = which.exportBatch(batchOf(i === 0 ? 'in_one' : 'in_two', Int32Array.of(i)));
        using imported = which.importBatch(e.schema, e.array, { mode: 'view' });
        expect(imported.value.schema.fields.map((f) => f.name)).toEqual([i === 0 ? 'in_one' : 'in_two']);
      });
    }
  });

  test('more schemas than the core remembers: every import reads its own, then the first ones again', () => {
    mark();
    // 300 distinct keys take every slot of the core's set (64) and of the table by id (256) more than once.
    const read = (k: number): string => {
      using e = acd.exportBatch(batchOf(`column_${k}`, Int32Array.of(k)));
      using imported = acd.importBatch(e.schema, e.array, { mode: 'view' });
      expect(imported.value.getChildAt(0)!.get(0)).toBe(k);
      return imported.value.schema.fields[0]!.name;
    };
    for (let k = 0; k < 300; k++) expect(read(k)).toBe(`column_${k}`);
    for (let k = 0; k < 300; k += 7) expect(read(k)).toBe(`column_${k}`);
  });
});
