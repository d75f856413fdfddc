// Arguments of the wrong kind (issue 15, errors): a TypeError naming the
// method, the argument and what to pass, before anything is read or moved.
import { beforeAll, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { ArrowCDevice } from '../ts/api.js';
import { MemorySpace } from '../ts/abi/address-space.js';
import { wasm32 } from '../ts/abi/generated/layout.js';
import { DEVICE_IMPORT_OPTION_KEYS } from '../ts/device/exchange.js';
import { IMPORT_OPTION_KEYS } from '../ts/exchange/options.js';
import { fixtureFiles } from '../ts/fixtures/corpus.js';
import { structTree } from '../ts/inspect/tree.js';
import type { RawArray } from '../ts/model/raw.js';
import * as types from '../ts/model/types.js';
import { roundtripRaw } from '../ts/roundtrip/roundtrip.js';
import { roundtripStream, roundtripStreamRaw } from '../ts/roundtrip/stream.js';
import { CAsyncConsumer, CBatchSource } from '../ts/stream/c-backed.js';
import { STREAM_IMPORT_OPTION_KEYS } from '../ts/stream/reader.js';
import { core } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await core(); });

const thrown = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('nothing was thrown');
};

test('a Table where a batch belongs', () => {
  const table = arrow.tableFromArrays({ x: Int32Array.of(1, 2) });
  for (const method of ['exportBatch', 'exportDeviceBatch'] as const) {
    const e = thrown(() => acd[method](table as unknown as arrow.RecordBatch));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe(`${method}: batch: expected an apache-arrow RecordBatch, found a Table: pass one of table.batches, or use exportTable for all of them`);
  }
  expect(thrown(() => acd.exportBatch(42 as unknown as arrow.RecordBatch)).message).toBe('exportBatch: batch: expected an apache-arrow RecordBatch, found 42');
  expect(acd.bytesAllocated()).toBe(0);
});

test('a BigInt, negative or fractional address, and an object that is no ImportedSchema', () => {
  const exported = acd.exportBatch(arrow.tableFromArrays({ x: Int32Array.of(1, 2) }).batches[0]!);
  try {
    const cases: [() => unknown, string][] = [
      [() => acd.importBatch(BigInt(exported.schema) as unknown as number, exported.array),
        `importBatch: schema: expected an address in wasm memory (a non-negative integer), found the bigint ${exported.schema}n (pass Number(${exported.schema}n): addresses are numbers)`],
      [() => acd.importRaw(exported.schema, -8), "importRaw: array: expected an address in wasm memory (a non-negative integer), found -8 (a wasm export's i32 result for an address of 2 GiB or more is negative: pass -8 >>> 0, that is 4294967288)"],
      [() => acd.importRaw(exported.schema, -(2 ** 31) - 8), `importRaw: array: expected an address in wasm memory (a non-negative integer), found ${-(2 ** 31) - 8}`],
      [() => acd.importVector(exported.schema, 1.5), 'importVector: array: expected an address in wasm memory (a non-negative integer), found 1.5'],
      [() => acd.importDeviceRaw({ schema: 1 } as unknown as number, exported.array),
        'importDeviceRaw: schema: expected an address in wasm memory or an ImportedSchema (from importSchema), found an object (Object)'],
      [() => acd.importDeviceRaw(exported.schema, undefined as unknown as number), 'importDeviceRaw: deviceArray: expected an address in wasm memory (a non-negative integer), found undefined'],
      [() => acd.importSchema('16' as unknown as number), 'importSchema: ptr: expected an address in wasm memory (a non-negative integer), found a string'],
    ];
    for (const [f, message] of cases) {
      const e = thrown(f);
      expect({ type: e.constructor.name, message: e.message }).toEqual({ type: 'TypeError', message });
    }
    // Nothing was moved: the structs import as they are.
    const back = acd.importBatch(exported.schema, exported.array);
    expect(back.value.getChildAt(0)!.toArray()).toEqual(Int32Array.of(1, 2));
    back.release();
  } finally {
    exported.release();
  }
  expect(acd.bytesAllocated()).toBe(0);
});

// ---- unknown option keys ---------------------------------------------------------------

const IMPORT = 'from, mode, inPlace, requestedSchema, validate, convert';
// The raw readers keep every type as it is: no convert.
const RAW_IMPORT = 'from, mode, inPlace, requestedSchema, validate, device';

test('every method that takes options refuses a key it does not know, naming the method, the key and the known ones', async () => {
  const batch = arrow.tableFromArrays({ x: Int32Array.of(1, 2) }).batches[0]!;
  const field = types.field('x', types.int32());
  const raw: RawArray = { type: types.int32(), length: 0, nullCount: 0, offset: 0, buffers: [null, null], children: [], dictionary: null };
  const bad = { bogus: 1 } as never;
  const cases: [string, string, () => unknown][] = [
    ['attach', 'wasmBinary, name', () => ArrowCDevice.attach({}, bad)],
    ['foreign', 'name, memory, table, malloc, free', () => acd.foreign({ memory: new WebAssembly.Memory({ initial: 1 }), bogus: 1 } as never)],
    ['MemorySpace', 'name, memory, layout, table, allocator, release, wasmTable', () => new MemorySpace({ name: 'm', memory: new WebAssembly.Memory({ initial: 1 }), layout: wasm32, bogus: 1 } as never)],
    ['exportSchema', 'into', () => acd.exportSchema(batch.schema, bad)],
    ['exportBatch', 'into', () => acd.exportBatch(batch, bad)],
    ['exportVector', 'into', () => acd.exportVector(batch.getChildAt(0)!, 'x', bad)],
    ['exportTable', 'into', () => acd.exportTable(new arrow.Table(batch), bad)],
    ['exportRaw', 'into', () => acd.exportRaw(field, raw, bad)],
    ['exportDeviceBatch', 'device, into', () => acd.exportDeviceBatch(batch, bad)],
    ['exportDeviceRaw', 'device, into', () => acd.exportDeviceRaw(field, raw, bad)],
    ['importSchema', 'from', () => acd.importSchema(8, bad)],
    ['importBatch', IMPORT, () => acd.importBatch(8, 8, bad)],
    ['importRaw', IMPORT, () => acd.importRaw(8, 8, bad)],
    ['importVector', IMPORT, () => acd.importVector(8, 8, bad)],
    ['importDeviceBatch', `${IMPORT}, device`, () => acd.importDeviceBatch(8, 8, bad)],
    ['importDeviceRaw', `${IMPORT}, device`, () => acd.importDeviceRaw(8, 8, bad)],
    ['importDeviceRawFrom', `${IMPORT}, device`, () => acd.importDeviceRawFrom({} as never, bad)],
    ['exportArrayStream', 'schema, device, into', () => acd.exportArrayStream([batch], bad)],
    ['exportDeviceArrayStream', 'schema, device, into', () => acd.exportDeviceArrayStream([batch], bad)],
    ['importArrayStream', `${IMPORT}, device`, () => acd.importArrayStream(8, bad)],
    ['importDeviceArrayStream', `${IMPORT}, device`, () => acd.importDeviceArrayStream(8, bad)],
    ['produceAsync', 'schema, device, additionalMetadata, taskMetadata, into', () => acd.produceAsync(8, [batch], bad)],
    ['asyncConsumer', `${IMPORT}, device, window`, () => acd.asyncConsumer(bad)],
    ['exportRawArrayStream', 'device, into', () => acd.exportRawArrayStream(field, [raw], bad)],
    ['exportRawDeviceArrayStream', 'device, into', () => acd.exportRawDeviceArrayStream(field, [raw], bad)],
    ['importRawArrayStream', RAW_IMPORT, () => acd.importRawArrayStream(8, bad)],
    ['importRawDeviceArrayStream', RAW_IMPORT, () => acd.importRawDeviceArrayStream(8, bad)],
    ['produceAsyncRaw', 'device, additionalMetadata, taskMetadata, into', () => acd.produceAsyncRaw(8, field, [raw], bad)],
    ['asyncRawConsumer', `${RAW_IMPORT}, window`, () => acd.asyncRawConsumer(bad)],
    ['CAsyncConsumer', 'window, extractLater, cancelAfter, failTaskAt, failSchema', () => new CAsyncConsumer(acd.core, bad)],
    ['CBatchSource.generator', 'batches, rowsPerBatch, device, failAt, failCode, failMessage, failSchema, wrongDeviceAt', () => CBatchSource.generator(acd.core, bad)],
    ['roundtripRaw', 'mode, device, validate, onBatch', () => roundtripRaw(acd, {} as never, 'x', bad)],
    ['structTree', 'preview, devicePreview, loaderCallbacks', () => structTree(acd.core.space, 8, null, bad)],
    ['fixtureFiles', 'layouts, only, progress', () => fixtureFiles(bad)],
    ['fieldsEqual', 'checkNames, checkMetadata', () => types.fieldsEqual(field, field, bad)],
    ['typesEqual', 'checkNames, checkMetadata', () => types.typesEqual(field.type, field.type, bad)],
  ];
  for (const [method, known, f] of cases) {
    const e = thrown(f);
    // Some add a hint after ';' (load, foreign).
    expect({ method, type: e.constructor.name, message: e.message.split(';')[0] }).toEqual({ method, type: 'TypeError', message: `${method}: unknown option 'bogus' (known options: ${known})` });
  }
  // The asynchronous ones reject.
  const load = await ArrowCDevice.load(bad).then(() => null, (e: Error) => e);
  expect([load?.constructor.name, load?.message.split(';')[0]]).toEqual(['TypeError', "load: unknown option 'bogus' (known options: wasmBinary)"]);
  const stream = await roundtripStream(acd, new arrow.Table(batch), 'pull', 'copy', bad).then(() => null, (e: Error) => e);
  expect([stream?.constructor.name, stream?.message]).toEqual(['TypeError', "roundtripStream: unknown option 'bogus' (known options: file, device, validate, onBatch)"]);
  const rawStream = await roundtripStreamRaw(acd, {} as never, 'pull', 'copy', bad).then(() => null, (e: Error) => e);
  expect([rawStream?.constructor.name, rawStream?.message]).toEqual(['TypeError', "roundtripStreamRaw: unknown option 'bogus' (known options: file, device, validate, onBatch, reader)"]);
  expect(acd.bytesAllocated()).toBe(0);
});

test('several unknown keys are all named; options that are not an object are refused; undefined is no options', () => {
  const e = thrown(() => acd.importBatch(8, 8, { mode: 'copy', validat: 'full', frm: null } as never));
  expect(e.message).toBe(`importBatch: unknown options 'validat', 'frm' (known options: ${IMPORT})`);
  expect(thrown(() => acd.importBatch(8, 8, 'view' as never)).message).toBe(`importBatch: options: expected an object (known options: ${IMPORT}), found the string 'view'`);
  expect(thrown(() => acd.exportSchema(arrow.tableFromArrays({ x: Int32Array.of(1) }).schema, [] as never)).message)
    .toBe('exportSchema: options: expected an object (known options: into), found an array');
  expect(thrown(() => acd.importSchema(8, null as never)).message)
    .toBe('importSchema: options: expected an object (known options: from), found null (pass undefined, or {}, for no options)');
  // Known keys with undefined values, and undefined options, are accepted.
  const exported = acd.exportSchema(arrow.tableFromArrays({ x: Int32Array.of(1) }).schema, { into: undefined });
  acd.importSchema(exported.ptr, undefined).release();
  exported.release();
  expect(acd.bytesAllocated()).toBe(0);
});

test("an instance's exports are not options: any names pass", () => {
  const memory = new WebAssembly.Memory({ initial: 1 });
  const exports = Object.assign(Object.create(null) as Record<string, unknown>, { memory, add: () => 0 });
  expect(acd.foreign(exports, 'plain').name).toBe('plain');
});

test('the known keys are listed once, next to each options type (the compiler checks each list against its type)', () => {
  expect(IMPORT_OPTION_KEYS.join(', ')).toBe(IMPORT);
  expect(DEVICE_IMPORT_OPTION_KEYS).toEqual([...IMPORT_OPTION_KEYS, 'device']);
  expect(STREAM_IMPORT_OPTION_KEYS).toEqual([...IMPORT_OPTION_KEYS, 'device']);
  expect(Object.isFrozen(IMPORT_OPTION_KEYS)).toBe(true);
});
