// Streams of raw arrays: every kind of stream (ArrowArrayStream,
// ArrowDeviceArrayStream, the async device stream) carries every type of the
// spec, run-end encoded and list views included, from TypeScript to
// TypeScript and through the C core's consumers and producers (a TS producer
// drained by C, that list handed out again by a C producer, read by TS).
// "Every type" is the fixture corpus (ts/fixtures/cases*.ts): each case's
// batches, values compared with compareRaw after full validation, and
// nothing left behind (bytes, table slots, stream objects, device memory).
import { beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArrowCDevice } from '../ts/api.js';
import { EINVAL, ENOSYS } from '../ts/abi/errors.js';
import { batchOf, dictionaryOf, listViewOf, runEndEncodedOf, fixed, binaryLike, slice } from '../ts/fixtures/build.js';
import { fixtureCases } from '../ts/fixtures/cases.js';
import type { FixtureCase } from '../ts/fixtures/case.js';
import { writeIntegrationJson } from '../ts/io/json/write.js';
import type { RawArray } from '../ts/model/raw.js';
import { roundtripStreamRaw } from '../ts/roundtrip/stream.js';
import { compareRaw, rawValues } from '../ts/model/raw-values.js';
import * as t from '../ts/model/types.js';
import { fieldsEqual, recordBatchField, type Field, type Schema } from '../ts/model/types.js';
import { BatchList, CAsyncConsumer, CBatchSource, cStream, drainStream, startCAsyncProducer } from '../ts/stream/c-backed.js';
import type { StreamKind } from '../ts/stream/pull.js';
import { instantiate, producerWasm } from './foreign/module.js';
import { libraryError, MODES } from './helpers.js';
import { leakGuard } from './stream-helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await ArrowCDevice.load();
});

/** Every valid case of the corpus but the device twins (the same batches as their originals). */
const CASES = fixtureCases().filter((c) => !c.name.endsWith('-device'));

/** A case's batches, twice (a stream of several batches), and its field. */
function streamOf(c: FixtureCase): { schema: Schema; field: Field; batches: RawArray[] } {
  return { schema: c.schema, field: recordBatchField(c.schema), batches: [...c.batches, ...c.batches] };
}

/** What a reader gave, batch by batch, against what was sent: [] when equal. */
function differences(expected: readonly RawArray[], got: readonly RawArray[]): string[] {
  if (got.length !== expected.length) return [`${got.length} batches instead of ${expected.length}`];
  return expected.flatMap((e, i) => compareRaw(e, got[i]!, `batches[${i}]`));
}

test('the corpus has every type: run-end encoded, list views, views, unions, dictionaries and the rest', () => {
  const kinds = new Set<string>();
  const visit = (type: t.DataType): void => {
    kinds.add(type.kind);
    t.childFields(type).forEach((f) => visit(f.type));
    if (type.kind === 'dictionary') visit(type.valueType);
  };
  for (const c of CASES) c.schema.fields.forEach((f) => visit(f.type));
  expect([...kinds].sort()).toEqual([
    'binary', 'binary_view', 'bool', 'date', 'decimal', 'dictionary', 'duration', 'fixed_size_binary', 'fixed_size_list', 'float', 'int',
    'interval', 'large_binary', 'large_list', 'large_list_view', 'large_utf8', 'list', 'list_view', 'map', 'null', 'run_end_encoded',
    'struct', 'time', 'timestamp', 'union', 'utf8', 'utf8_view',
  ]);
});

describe.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
  test.each(MODES)('pull streams, TS → TS (%s mode): ArrowArrayStream, and ArrowDeviceArrayStream on the CPU and on cuda:1', async (mode) => {
    const guard = leakGuard(acd);
    const { schema, field, batches } = streamOf(c);
    for (const [kind, device] of [['array', undefined], ['device', undefined], ['device', 'cuda:1']] as const) {
      const s = kind === 'array' ? acd.exportRawArrayStream(schema, batches) : acd.exportRawDeviceArrayStream(schema, batches, { device });
      const reader = kind === 'array' ? acd.importRawArrayStream(s.ptr, { mode, validate: 'full' }) : acd.importRawDeviceArrayStream(s.ptr, { mode, validate: 'full' });
      expect(fieldsEqual(reader.field, field)).toBe(true);
      expect([kind, device, differences(batches, reader.readAll())]).toEqual([kind, device, []]);
      reader.release();
      s.release();
    }
    await guard.check();
  });

  test.each(MODES)('the async device stream, TS → TS (%s mode), on the CPU and on rocm:2', async (mode) => {
    const guard = leakGuard(acd);
    const { schema, field, batches } = streamOf(c);
    for (const device of ['cpu', 'rocm:2']) {
      const consumer = acd.asyncRawConsumer({ mode, window: 2, validate: 'full' });
      const production = acd.produceAsyncRaw(consumer.handler, schema, batches, { device, taskMetadata: (_b, i) => new Map([['i', String(i)]]) });
      const got: RawArray[] = [];
      for await (const { batch, metadata } of consumer.entries()) {
        expect(metadata).toEqual(new Map([['i', String(got.length)]]));
        got.push(batch);
      }
      expect(fieldsEqual(consumer.field!, field)).toBe(true);
      expect(consumer.schema).toBeNull();
      expect([device, differences(batches, got)]).toEqual([device, []]);
      expect(await production).toMatchObject({ tasks: batches.length, extracted: batches.length, error: null });
      consumer.release();
    }
    await guard.check();
  });

  test.each(['array', 'device'] as StreamKind[])('pull streams through the C core (%s): TS producer → C drain → C producer → TS reader', async (kind) => {
    const guard = leakGuard(acd);
    const { schema, batches } = streamOf(c);
    const exported = kind === 'array' ? acd.exportRawArrayStream(schema, batches) : acd.exportRawDeviceArrayStream(schema, batches, { device: 'cuda:0' });
    const list = BatchList.create(acd.core);
    expect(drainStream(acd.core, exported.ptr, kind, list)).toEqual({ batches: batches.length, rows: batches.reduce((n, b) => n + b.length, 0) });
    exported.release();
    const again = cStream(acd.core, CBatchSource.fromList(acd.core, list), kind);
    list.release();
    const reader = kind === 'array' ? acd.importRawArrayStream(again.ptr, { validate: 'full' }) : acd.importRawDeviceArrayStream(again.ptr, { validate: 'full' });
    expect(reader.deviceType).toBe(kind === 'array' ? 1 : 2);
    expect(differences(batches, reader.readAll())).toEqual([]);
    reader.release();
    again.release();
    await guard.check();
  });

  test('the async device stream through the C core: TS producer → C consumer, its list → C producer → TS consumer', async () => {
    const guard = leakGuard(acd);
    const { schema, batches } = streamOf(c);
    const cConsumer = new CAsyncConsumer(acd.core, { window: 2, extractLater: true });
    const production = acd.produceAsyncRaw(cConsumer.handler, schema, batches, { device: 'cuda:0' });
    await production;
    await cConsumer.whenReleased();
    expect(cConsumer.state()).toMatchObject({ schemaReceived: true, ended: true, errorCode: 0, tasks: batches.length });
    const consumer = acd.asyncRawConsumer({ window: 3, validate: 'full' });
    startCAsyncProducer(acd.core, consumer.handler, CBatchSource.fromList(acd.core, cConsumer.list.ptr));
    expect(differences(batches, await consumer.readAll())).toEqual([]);
    await consumer.done;
    consumer.release();
    cConsumer.release();
    await guard.check();
  });
});

// ---- beyond the corpus ------------------------------------------------------------------

/** A run-end encoded float32 column and a list view of int32, sliced, as two columns of a batch. */
function reeAndListView(n: number): { schema: Schema; batch: RawArray } {
  const ree = runEndEncodedOf(t.runEndEncoded(t.int32(), t.float32()), [2, 5, 6], fixed(t.float32(), [1.5, null, n]));
  const values = fixed(t.int32(), [1, 2, 3, 4, n]);
  const lv = listViewOf(t.listView(t.int32()), values, [[3, 2], null, [0, 3], [1, 0], [4, 1], [0, 5]]);
  const fields = [t.field('ree', ree.type), t.field('lv', lv.type)];
  return { schema: { fields, metadata: null }, batch: slice(batchOf(fields, [ree, lv]), 1, 5) };
}

describe('streams of dictionaries with 64-bit indices', () => {
  test('apache-arrow readers refuse their batches, naming the conversion; with it, the indices narrowed to int32 and the values as sent', async () => {
    const guard = leakGuard(acd);
    for (const indexType of [t.int64(), t.uint64()]) {
      const field = t.field('d', t.dictionary(indexType, t.utf8()));
      const schema = { fields: [field], metadata: null };
      const stream = () => acd.exportRawArrayStream(schema, [[0, 1, null], [1, 1, 0]].map((ix) =>
        batchOf([field], [dictionaryOf(field.type, ix, binaryLike(t.utf8(), ['p', 'q']))])));
      const first = stream();
      const refused = acd.importArrayStream(first.ptr);
      const e = libraryError(() => refused.readAll());
      expect([e.errno, e.message]).toEqual([ENOSYS, expect.stringMatching(/^batch 0: array.children\[0\]: a dictionary with 64-bit indices \(apache-arrow cannot read through them\) is not supported by apache-arrow; import with \{ convert: \['dictionary_index64'\] \}/)]);
      refused.release();
      first.release();
      const second = stream();
      const reader = acd.importArrayStream(second.ptr, { convert: ['dictionary_index64'] });
      expect(String(reader.schema.fields[0]!.type)).toBe('Dictionary<Int32, Utf8>');
      expect(reader.readAll().map((b) => b.getChild('d')!.toArray())).toEqual([['p', 'q', null], ['q', 'q', 'p']]);
      reader.release();
      second.release();
    }
    await guard.check();
  });
});

describe('streams of any field, not only record batches', () => {
  test('a stream whose schema is a run-end encoded field: its raw arrays as they are, every kind, TS and C', async () => {
    const guard = leakGuard(acd);
    const field = t.field('runs', t.runEndEncoded(t.int16(), t.utf8()));
    const arrays = [1, 2, 3].map((k) => runEndEncodedOf(field.type, [k, 4], binaryLike(t.utf8(), [`x${k}`, null])));
    const expected = arrays.map((a) => rawValues(a));
    expect(expected[0]).toEqual(['x1', null, null, null]);
    for (const kind of ['array', 'device'] as const) {
      const s = kind === 'array' ? acd.exportRawArrayStream(field, arrays) : acd.exportRawDeviceArrayStream(field, arrays);
      const list = BatchList.create(acd.core);
      drainStream(acd.core, s.ptr, kind, list);
      s.release();
      const again = cStream(acd.core, CBatchSource.fromList(acd.core, list), kind);
      list.release();
      const reader = kind === 'array' ? acd.importRawArrayStream(again.ptr) : acd.importRawDeviceArrayStream(again.ptr);
      expect(reader.field).toEqual(field);
      expect(reader.readAll().map((a) => rawValues(a))).toEqual(expected);
      reader.release();
      again.release();
    }
    const consumer = acd.asyncRawConsumer();
    const production = acd.produceAsyncRaw(consumer.handler, field, (async function* () { yield* arrays; })());
    expect((await consumer.readAll()).map((a) => rawValues(a))).toEqual(expected);
    await production;
    consumer.release();
    await guard.check();
  });

  test('apache-arrow readers refuse such a schema, naming both ways out; the stream stays the caller\'s, read raw or converted', async () => {
    const guard = leakGuard(acd);
    const { schema, batch } = reeAndListView(9);
    const hint = /^schema: run_end_encoded<.*> is not supported by apache-arrow; read the stream with \{ convert: \['run_end_encoded', 'list_view', 'dictionary_index64'\] \}, or as raw arrays \(importRawArrayStream, importRawDeviceArrayStream, asyncRawConsumer\)/;
    for (const kind of ['array', 'device'] as const) {
      const s = kind === 'array' ? acd.exportRawArrayStream(schema, [batch]) : acd.exportRawDeviceArrayStream(schema, [batch]);
      const e = libraryError(() => (kind === 'array' ? acd.importArrayStream(s.ptr) : acd.importDeviceArrayStream(s.ptr)));
      expect([e.errno, e.message]).toEqual([ENOSYS, expect.stringMatching(hint)]);
      expect(acd.core.structs.ptr(kind === 'array' ? 'ArrowArrayStream' : 'ArrowDeviceArrayStream', s.ptr, 'release')).not.toBe(0);
      const converted = kind === 'array' ? acd.importArrayStream(s.ptr, { convert: ['run_end_encoded', 'list_view'] }) : acd.importDeviceArrayStream(s.ptr, { convert: ['run_end_encoded', 'list_view'] });
      const rows = converted.readAll().flatMap((b) => b.toArray().map((r) => [r.ree, r.lv === null ? null : [...r.lv]]));
      expect(rows).toEqual([[1.5, null], [null, [1, 2, 3]], [null, []], [null, [9]], [9, [1, 2, 3, 4, 9]]]);
      expect(rows).toEqual((rawValues(batch) as [string, unknown][][]).map((r) => r.map(([, v]) => v)));
      converted.release();
      s.release();
    }
    // The async consumer: on_schema refuses it with the same message; with convert it reads.
    const refusing = acd.asyncConsumer();
    void acd.produceAsyncRaw(refusing.handler, schema, [batch]);
    const e = await refusing.readAll().then(() => null, (x: unknown) => x as Error);
    expect(e?.message).toMatch(/^on_schema: schema: run_end_encoded<.*> is not supported by apache-arrow; read the stream with/);
    await refusing.done;
    refusing.release();
    const converting = acd.asyncConsumer({ convert: ['run_end_encoded', 'list_view'] });
    const production = acd.produceAsyncRaw(converting.handler, schema, [batch]);
    const got = await converting.readAll();
    expect(converting.schema!.fields.map((f) => String(f.type))).toEqual(['Float32', 'List<Int32>']);
    expect(got.map((b) => b.numRows)).toEqual([5]);
    await production;
    converting.release();
    await guard.check();
  });
});

describe("the CLI's roundtrip --via stream|async: a file read by this library travels as raw arrays", () => {
  test.each(['stream', 'async'] as const)('roundtripStreamRaw --via %s: every case of the corpus, copy and view, on the CPU and on cuda:1', async (via) => {
    for (const c of CASES) {
      for (const mode of MODES) {
        for (const device of ['cpu', 'cuda:1']) {
          const summary = await roundtripStreamRaw(acd, { schema: c.schema, batches: [...c.batches] }, via, mode, { file: c.name, device, validate: 'full' });
          expect([c.name, mode, device, summary]).toEqual([c.name, mode, device, expect.objectContaining({
            ok: true, via, reader: 'own', batches: c.batches.length, mismatches: [], errors: [],
            bytesLeaked: 0, deviceBytesLeaked: 0, tableSlotsLeaked: 0, objectsLeaked: 0,
          })]);
        }
      }
    }
  }, 120_000);

  test('the bin: an integration JSON file with run-end encoded and list-view columns, --via stream and --via async', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acd-raw-streams-'));
    try {
      const { schema, batch } = reeAndListView(4);
      const file = join(dir, 'ree-and-list-view.json');
      writeFileSync(file, writeIntegrationJson({ schema, batches: [batch, batch] }));
      for (const via of ['stream', 'async']) {
        const r = spawnSync(process.execPath, [join(__dirname, '..', 'bin', 'arrow-c-device.mjs'), 'roundtrip', file, '--via', via, '--device', 'cuda', '--json'],
          { encoding: 'utf8', timeout: 60_000 });
        expect([via, r.status, r.stderr]).toEqual([via, 0, '']);
        expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, via, reader: 'json', device: 'cuda:0', batches: 2, rows: 10, columns: 2, bytesLeaked: 0, deviceBytesLeaked: 0, mismatches: [], errors: [] });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('errors, as the apache-arrow streams have them', () => {
  const { schema, batch } = reeAndListView(7);
  const other = batchOf([t.field('n', t.int32())], [fixed(t.int32(), [1])]);

  test('a raw array of another type: get_next fails with EINVAL, and the reader says which batch', async () => {
    const guard = leakGuard(acd);
    for (const kind of ['array', 'device'] as const) {
      const s = kind === 'array' ? acd.exportRawArrayStream(schema, [batch, other]) : acd.exportRawDeviceArrayStream(schema, [batch, other]);
      const reader = kind === 'array' ? acd.importRawArrayStream(s.ptr) : acd.importRawDeviceArrayStream(s.ptr);
      expect(rawValues(reader.next().value!)).toHaveLength(5);
      const e = libraryError(() => reader.next());
      expect([e.errno, e.message]).toEqual([EINVAL, 'batch 1: get_next: its type struct<n: int32> is not the stream\'s struct<ree: run_end_encoded<run_ends: int32 not null, values: float32>, lv: list_view<item: int32>>']);
      expect(reader.done).toBe(true);
      reader.release();
      s.release();
    }
    const consumer = acd.asyncRawConsumer();
    const production = acd.produceAsyncRaw(consumer.handler, schema, [batch, other]);
    const got: RawArray[] = [];
    const e = await consumer.readAll().then(() => null, (x: unknown) => x as Error);
    expect(e?.message).toMatch(/^batch 1: its type struct<n: int32> is not the stream's/);
    expect((await production).error?.errno).toBe(EINVAL);
    expect(got).toEqual([]);
    consumer.release();
    await guard.check();
  });

  test('what is not a raw array, not a schema, or not an iterable, and convert on a raw import', async () => {
    const guard = leakGuard(acd);
    const s = acd.exportRawArrayStream(schema, [{ nope: 1 } as unknown as RawArray]);
    const reader = acd.importRawArrayStream(s.ptr);
    expect(libraryError(() => reader.next()).message).toBe('batch 0: get_next: expected a raw array ({ type, length, nullCount, offset, buffers, children, dictionary })');
    reader.release();
    s.release();
    expect(() => acd.exportRawArrayStream({ nope: 1 } as unknown as Schema, [])).toThrow(TypeError);
    expect(libraryError(() => acd.exportRawArrayStream(schema, 5 as unknown as RawArray[])).message).toBe('source: expected an iterable of raw arrays');
    expect(libraryError(() => acd.exportRawArrayStream(schema, [], { device: 'cuda:0' })).message).toBe('device: an ArrowArrayStream carries CPU arrays, found cuda:0');
    const ok = acd.exportRawArrayStream(schema, []);
    expect(libraryError(() => acd.importRawArrayStream(ok.ptr, { convert: ['run_end_encoded'] } as object)).message).toBe('convert: is for apache-arrow imports; a raw array keeps every type as it is');
    // Refused before anything moved: the stream is still the caller's, and reads.
    const r = acd.importRawArrayStream(ok.ptr);
    expect(r.readAll()).toEqual([]);
    r.release();
    ok.release();
    expect(libraryError(() => acd.asyncRawConsumer({ convert: ['list_view'] } as object)).errno).toBe(EINVAL);
    const consumer = acd.asyncRawConsumer();
    expect(libraryError(() => acd.produceAsyncRaw(consumer.handler, schema, 3 as unknown as RawArray[])).message).toBe('source: expected a ReadableStream or an (async) iterable of raw arrays');
    consumer.release();
    await guard.check();
  });
});

describe('another module: raw streams exported { into } it and imported { from } it', () => {
  /** Another core as a module: its memory, table and allocator. */
  async function other() {
    const b = await ArrowCDevice.load();
    const module = acd.foreign({ memory: b.memory, table: b.core.table, malloc: (n) => b.core.alloc(n), free: (p) => b.core.free(p) }, 'B');
    return { b, module };
  }

  test.each(MODES)('pull streams (%s mode): ours written into its memory, and its own, read { from } it', async (mode) => {
    const guard = leakGuard(acd);
    const { b, module } = await other();
    const batches = [3, 4].map((n) => reeAndListView(n).batch);
    const { schema } = reeAndListView(0);
    for (const kind of ['array', 'device'] as const) {
      const into = kind === 'array' ? acd.exportRawArrayStream(schema, batches, { into: module }) : acd.exportRawDeviceArrayStream(schema, batches, { into: module });
      const theirs = kind === 'array' ? b.exportRawArrayStream(schema, batches) : b.exportRawDeviceArrayStream(schema, batches);
      for (const s of [into, theirs]) {
        const reader = kind === 'array' ? acd.importRawArrayStream(s.ptr, { from: module, mode }) : acd.importRawDeviceArrayStream(s.ptr, { from: module, mode });
        expect(differences(batches, reader.readAll())).toEqual([]);
        reader.release();
        s.release();
      }
    }
    expect(module.bytesAllocated()).toBe(0);
    expect(b.bytesAllocated()).toBe(0);
    await guard.check();
  });

  // The foreign test module's async consumer and producer (test/foreign/async.c) know struct<x: int32> batches.
  const xField = [t.field('x', t.int32())];
  const xBatch = (values: (number | null)[]) => batchOf(xField, [fixed(t.int32(), values)]);

  test('the async device stream: produceAsyncRaw { into } its C consumer, which sums what it extracts', async () => {
    producerWasm();
    const p = instantiate();
    p.async_reset_stats();
    const into = acd.foreign(p as unknown as Record<string, unknown>, 'consumer');
    const handler = p.async_consumer_new(2n, 0n, 0);
    const batches = [xBatch([1, null, 3]), slice(xBatch([10, 20, null, 40]), 1, 3)];
    const stats = await acd.produceAsyncRaw(handler, { fields: xField, metadata: null }, batches, { into });
    expect(stats).toMatchObject({ tasks: 2, extracted: 2, error: null });
    // async_consumer_result: batches, rows, sum, nulls.
    expect([0, 1, 2, 3].map((i) => p.async_consumer_result(handler, i))).toEqual([2n, 6n, 4n + 20n + 40n, 2n]);
    p.async_consumer_free(handler);
    expect(p.async_live_blocks()).toBe(0);
    expect(into.bytesAllocated()).toBe(0);
  }, 120_000);

  test.each(MODES)('the async device stream (%s mode): its C producer drives asyncRawConsumer({ from })', async (mode) => {
    producerWasm();
    const p = instantiate();
    p.async_reset_stats();
    const from = acd.foreign(p as unknown as Record<string, unknown>, 'producer');
    const consumer = acd.asyncRawConsumer({ from, mode, window: 2, validate: 'full' });
    const producer = p.async_producer_start(consumer.handler, 3n, 5n, -1n);
    const pumping = (async () => {
      for (let i = 0; i < 10_000 && p.async_producer_pump(producer) !== 0; i++) await new Promise((r) => setImmediate(r));
    })();
    const got: unknown[] = [];
    for await (const batch of consumer) got.push(rawValues(batch));
    await pumping;
    await consumer.done;
    // What the C producer puts in x: b * 100 + i, every fourth null.
    const x = (b: number) => Array.from({ length: 5 }, (_, i) => [['x', i % 4 === 3 ? null : b * 100 + i]]);
    expect(got).toEqual([0, 1, 2].map(x));
    expect(consumer.field!.type).toEqual(t.struct(xField));
    consumer.release();
    expect(p.async_live_blocks()).toBe(0);
    expect(from.bytesAllocated()).toBe(0);
  }, 120_000);
});
