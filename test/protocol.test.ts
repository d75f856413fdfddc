// Issue 11, item 5 (in part): the JS exchange protocol (docs/protocol.md).
// Export handles hand their structs over under Symbol.for('arrow.c_array')
// and the other well-known symbols, in a descriptor that names the memory
// and table; imports take any object that offers them, from the core's
// memory or from another module's.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { EINVAL } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import { ARROW_C_ARRAY, ARROW_C_SCHEMA, ARROW_C_STREAM, type ArrowCProvider } from '../ts/exchange/protocol.js';
import { coreAsModule, libraryError as error } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await ArrowCDevice.load(); });

const batch = (k = 1) => arrow.tableFromArrays({ a: Int32Array.from([k, k + 1, k + 2]), s: ['x', null, 'z'] }).batches[0];
const rows = (b: arrow.RecordBatch) => b.toArray().map((r) => r.toJSON());

describe('the protocol', () => {
  test('the symbols are the well-known ones', () => {
    expect(ARROW_C_ARRAY).toBe(Symbol.for('arrow.c_array'));
    expect(ARROW_C_SCHEMA).toBe(Symbol.for('arrow.c_schema'));
    expect(ARROW_C_STREAM).toBe(Symbol.for('arrow.c_stream'));
  });

  test('an export hands its structs over once; an import takes the export itself', () => {
    const e = acd.exportBatch(batch());
    const b = acd.importBatch(e as unknown as ArrowCProvider);
    expect(rows(b.value)).toEqual(rows(batch()));
    b.release();
    expect(error(() => e[Symbol.for('arrow.c_array') as typeof ARROW_C_ARRAY]()).message).toBe('ArrowSchema: handed over or moved out already');
    e.release();
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('the descriptor names the memory and table; unconsumed, its release() frees everything', () => {
    const e = acd.exportBatch(batch());
    const d = e[ARROW_C_ARRAY]();
    expect(d.memory).toBe(acd.memory);
    expect(d.table).toBe(acd.core.table);
    expect(d.schema).not.toBe(e.schema);
    expect(acd.core.structs.ptr('ArrowArray', e.array, 'release')).toBe(0); // moved into the descriptor's
    d.release();
    d.release(); // idempotent
    e.release();
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('any object offering the method will do; in another memory it is imported { from } it', async () => {
    const other = await ArrowCDevice.load();
    const into = coreAsModule(acd, other);
    const e = acd.exportBatch(batch(7), { into });
    const provider = { [Symbol.for('arrow.c_array')]: () => e[ARROW_C_ARRAY]() };
    const b = acd.importBatch(provider as ArrowCProvider, { validate: 'full' });
    expect(rows(b.value)).toEqual(rows(batch(7)));
    b.release();
    e.release();
    expect(into.bytesAllocated()).toBe(0);
    expect(other.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('streams and schemas', () => {
    const s = acd.exportArrayStream([batch(1), batch(4)]);
    const reader = acd.importArrayStream(s as unknown as ArrowCProvider);
    expect(reader.readAll().map(rows)).toEqual([rows(batch(1)), rows(batch(4))]);
    reader.release();
    s.release();
    const schema = acd.exportSchema(batch().schema);
    const imported = acd.importSchema(schema as unknown as ArrowCProvider);
    expect(imported.field.type.kind).toBe('struct');
    imported.release();
    schema.release();
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('a failed import releases the descriptor: nothing leaks', () => {
    const e = acd.exportBatch(batch());
    const d = e[ARROW_C_ARRAY]();
    acd.core.structs.setI64('ArrowArray', d.array!, 'length', -1);
    const err = error(() => acd.importBatch({ [Symbol.for('arrow.c_array')]: () => d } as ArrowCProvider));
    expect(err.errno).toBe(EINVAL);
    e.release();
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('an object without the method, or an export of the other kind, is refused clearly', () => {
    expect(error(() => acd.importBatch({} as ArrowCProvider)).message).toBe("importBatch: the object has no [Symbol.for('arrow.c_array')]() method");
    const e = acd.exportDeviceBatch(batch());
    expect(error(() => e[ARROW_C_ARRAY]()).message).toBe('arrow.c_array: this export is an ArrowDeviceArray');
    const raw = acd.importDeviceRawFrom(e as unknown as ArrowCProvider);
    expect(raw.value.array.children[0].length).toBe(3);
    raw.release();
    e.release();
    expect(acd.bytesAllocated()).toBe(0);
  });
});

describe('the protocol with another memory, in view mode, and for device arrays', () => {
  async function other() {
    const core = await ArrowCDevice.load();
    const into = acd.foreign({ memory: core.memory, table: core.core.table, malloc: (n) => core.core.alloc(n), free: (p) => core.core.free(p) }, 'other');
    return { core, into };
  }

  test("view mode: the descriptor shares the memory's allocator, so the structs are moved within it and read as views there", async () => {
    const { core, into } = await other();
    const e = acd.exportBatch(batch(3), { into });
    const b = acd.importBatch(e as unknown as ArrowCProvider, { mode: 'view', validate: 'full' });
    expect(rows(b.value)).toEqual(rows(batch(3)));
    expect(b.value.getChild('a')!.data[0].values.buffer).toBe(core.memory.buffer);
    b.release();
    e.release();
    expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('view mode from a provider that shares no allocator: owned where the descriptor holds them, the descriptor released with the import', async () => {
    const { core, into } = await other();
    const e = acd.exportBatch(batch(5), { into });
    let releases = 0;
    const provider = {
      [Symbol.for('arrow.c_array')]: () => {
        const d = e[ARROW_C_ARRAY]();
        return { memory: d.memory, table: d.table, schema: d.schema, array: d.array, release: () => { releases++; d.release(); } };
      },
    };
    const b = acd.importBatch(provider as ArrowCProvider, { mode: 'view', validate: 'full' });
    expect(rows(b.value)).toEqual(rows(batch(5)));
    expect(b.value.getChild('a')!.data[0].values.buffer).toBe(core.memory.buffer);
    expect(releases).toBe(0); // held: its structs are being read in place
    b.release();
    expect(releases).toBe(1);
    e.release();
    expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('importDeviceBatch takes a provider of arrow.c_device_array, in the core and in another memory; a stream from another memory too', async () => {
    const local = acd.exportDeviceBatch(batch(2));
    const b = acd.importDeviceBatch(local as unknown as ArrowCProvider);
    expect(rows(b.value)).toEqual(rows(batch(2)));
    b.release();
    local.release();
    const { into } = await other();
    const e = acd.exportDeviceBatch(batch(8), { into });
    const f = acd.importDeviceBatch(e as unknown as ArrowCProvider, { validate: 'full' });
    expect(rows(f.value)).toEqual(rows(batch(8)));
    f.release();
    e.release();
    expect(error(() => acd.importDeviceBatch(e as unknown as ArrowCProvider, { device: 'keep' })).errno).toBe(EINVAL);
    const s = acd.exportArrayStream([batch(1), batch(4)], { into });
    const reader = acd.importArrayStream(s as unknown as ArrowCProvider, { mode: 'view' });
    expect(reader.readAll().map(rows)).toEqual([rows(batch(1)), rows(batch(4))]);
    reader.release();
    s.release();
    expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });
});

describe('requestedSchema (best effort, as PyCapsule requested_schema)', () => {
  const strings = (type: arrow.Utf8 | arrow.LargeUtf8) => new arrow.RecordBatch({
    a: arrow.vectorFromArray([1, 2, 3], new arrow.Int32()).data[0],
    s: arrow.vectorFromArray(['x', null, 'zz'], type).data[0],
    l: arrow.vectorFromArray([[1], [], [2, 3]], new arrow.List(new arrow.Field('item', new arrow.Int32(), true))).data[0],
  });
  const schemaOf = (s: arrow.DataType, l: arrow.DataType, names = ['a', 's', 'l']) =>
    acd.exportSchema(new arrow.Schema([new arrow.Field(names[0], new arrow.Int32()), new arrow.Field(names[1], s), new arrow.Field(names[2], l)]));
  const rows = (b: arrow.RecordBatch) => b.toArray().map((r) => {
    const { a, s, l } = r.toJSON() as { a: number; s: string | null; l: Iterable<number> | null };
    return { a, s, l: l === null ? null : [...l] };
  });
  const largeList = new arrow.LargeList(new arrow.Field('item', new arrow.Int32(), true));
  const list = new arrow.List(new arrow.Field('item', new arrow.Int32(), true));

  test.each(['core', 'another module'] as const)('32-bit offsets to 64-bit and back, in %s: the data converted, names kept', async (where) => {
    const other = where === 'core' ? undefined : await ArrowCDevice.load();
    const into = other === undefined ? undefined : coreAsModule(acd, other);
    const e = acd.exportBatch(strings(new arrow.Utf8()), { into });
    const wide = schemaOf(new arrow.LargeUtf8(), largeList);
    const b = acd.importBatch(e as unknown as ArrowCProvider, { requestedSchema: wide, validate: 'full' });
    expect(b.value.schema.fields.map((f) => String(f.type))).toEqual(['Int32', 'LargeUtf8', 'LargeList<Int32>']);
    expect(rows(b.value)).toEqual(rows(strings(new arrow.Utf8())));
    b.release();
    e.release();
    const e2 = acd.exportBatch(strings(new arrow.LargeUtf8()), { into });
    const narrow = schemaOf(new arrow.Utf8(), list);
    const n = acd.importBatch(e2 as unknown as ArrowCProvider, { requestedSchema: narrow, validate: 'full' });
    expect(n.value.schema.fields.map((f) => String(f.type))).toEqual(['Int32', 'Utf8', 'List<Int32>']);
    expect(rows(n.value)).toEqual(rows(strings(new arrow.Utf8())));
    n.release();
    e2.release();
    wide.release();
    narrow.release();
    if (into !== undefined) expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('a request it cannot meet gets the export as it is; a request for other data is refused, nothing handed over', () => {
    const e = acd.exportBatch(strings(new arrow.Utf8()));
    const ints = acd.exportSchema(new arrow.Schema([new arrow.Field('a', new arrow.Int64()), new arrow.Field('s', new arrow.Utf8()), new arrow.Field('l', list)]));
    const renamed = schemaOf(new arrow.Utf8(), list, ['a', 'text', 'l']);
    const err = error(() => acd.importBatch(e as unknown as ArrowCProvider, { requestedSchema: renamed }));
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toBe('requestedSchema: schema: fields [a, s, l] and [a, text, l] are other data, not another representation of the same (the protocol negotiates representations only)');
    expect(acd.core.structs.ptr('ArrowArray', e.array, 'release')).not.toBe(0); // still the export's
    const b = acd.importBatch(e as unknown as ArrowCProvider, { requestedSchema: ints });
    expect(String(b.value.schema.fields[0].type)).toBe('Int32'); // its own
    b.release();
    e.release();
    ints.release();
    renamed.release();
    expect(acd.bytesAllocated()).toBe(0);
  });
});
