// The async device stream, both directions and in all four combinations of
// TS and C producers and consumers: values, back-pressure, cancellation,
// errors mid-stream, and every gold file through TS → C → TS.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { AsyncStreamConsumer, CAsyncConsumer, produceAsync, startCAsyncProducer } from '../ts/stream/async.js';
import { ArrowCDeviceError, EINVAL, EIO, ENODEV, ENOMEM } from '../ts/abi/errors.js';
import { roundtripStream } from '../ts/roundtrip/stream.js';
import { streamRuntime } from '../ts/stream/runtime.js';
import { CBatchSource, cStream } from '../ts/stream/c-backed.js';
import { importDeviceArrayStream } from '../ts/stream/pull.js';
import { core, goldFiles, goldLevel, MODES } from './helpers.js';
import { generatedRows, leakGuard, rowsOf, sampleBatches, tick } from './stream-helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
  streamRuntime(acd.core);
});

async function* slowly<T>(items: Iterable<T>, onPull?: () => void): AsyncGenerator<T> {
  for (const item of items) {
    onPull?.();
    await tick();
    yield item;
  }
}

/** The C consumer's list, read back through a C stream. */
function collected(consumer: CAsyncConsumer): arrow.RecordBatch[] {
  const stream = cStream(acd.core, CBatchSource.fromList(acd.core, consumer.list.ptr), 'device');
  const reader = importDeviceArrayStream(acd, stream.ptr);
  stream.release();
  return reader.readAll();
}

describe('TS producer → TS consumer', () => {
  test.each(MODES)('an async iterable in %s mode, with additional and per-task metadata', async (mode) => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(5, 3);
    const consumer = new AsyncStreamConsumer(acd, { mode, window: 2 });
    const production = produceAsync(acd, consumer.handler, slowly(batches), {
      additionalMetadata: new Map([['rows', '15']]),
      taskMetadata: (_b, i) => new Map([['index', String(i)]]),
    });
    const got: { rows: unknown; metadata: unknown }[] = [];
    for await (const { batch, metadata } of consumer.entries()) got.push({ rows: rowsOf(batch), metadata: Object.fromEntries(metadata ?? []) });
    expect(got).toEqual(batches.map((b, i) => ({ rows: rowsOf(b), metadata: { index: String(i) } })));
    expect(consumer.additionalMetadata).toEqual(new Map([['rows', '15']]));
    expect(consumer.schema!.fields.map((f) => f.name)).toEqual(['id', 'name', 'list', 'color']);
    const stats = await production.done;
    await consumer.done;
    expect(stats).toMatchObject({ tasks: 5, extracted: 5, discarded: 0, cancelled: false, error: null });
    // The window, then one per batch taken: request(2) and five request(1).
    expect([consumer.requested, consumer.requestCalls]).toEqual([7n, 6]);
    consumer.release();
    await guard.check();
  });

  test('a ReadableStream in, a ReadableStream out', async () => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(4, 2);
    const input = new ReadableStream<arrow.RecordBatch>({
      start(controller) {
        for (const b of batches) controller.enqueue(b);
        controller.close();
      },
    });
    const consumer = new AsyncStreamConsumer(acd);
    produceAsync(acd, consumer.handler, input);
    const out: arrow.RecordBatch[] = [];
    const reader = consumer.readable().getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
    expect(out.map(rowsOf)).toEqual(batches.map(rowsOf));
    await consumer.done;
    consumer.release();
    await guard.check();
  });

  test('back-pressure: the producer pulls only what the window allows', async () => {
    const guard = leakGuard(acd);
    let pulled = 0;
    const batches = sampleBatches(10, 1);
    const consumer = new AsyncStreamConsumer(acd, { window: 3 });
    const production = produceAsync(acd, consumer.handler, slowly(batches, () => pulled++));
    for (let i = 0; i < 20; i++) await tick();
    expect(pulled).toBe(3); // the first (read ahead for the schema) is the first of the 3 requested
    const it = consumer[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    for (let i = 0; i < 20; i++) await tick();
    expect(pulled).toBe(4);
    for (let r = await it.next(); !r.done; r = await it.next());
    expect(pulled).toBe(10);
    await production.done;
    consumer.release();
    await guard.check();
  });

  test('await using: [Symbol.asyncDispose] releases the consumer mid-stream and waits for the producer\'s release', async () => {
    const guard = leakGuard(acd);
    const consumer = new AsyncStreamConsumer(acd, { window: 2 });
    const production = produceAsync(acd, consumer.handler, slowly(sampleBatches(10, 1)));
    const it = consumer[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    let settled = false;
    void consumer.done.then(() => { settled = true; });
    // What `await using consumer = ...` calls at the end of its scope.
    await (consumer as unknown as { [Symbol.asyncDispose](): Promise<void> })[Symbol.asyncDispose]();
    expect(settled).toBe(true);
    const stats = await production.done;
    expect(stats.cancelled).toBe(true);
    expect(stats.tasks).toBeLessThan(10);
    // `using`: the same release, without the wait; a second one does nothing.
    (consumer as unknown as { [Symbol.dispose](): void })[Symbol.dispose]();
    await guard.check();
  });

  test('await produceAsync(...) gives the final stats; done and the live stats are on it too', async () => {
    const guard = leakGuard(acd);
    const consumer = new AsyncStreamConsumer(acd, { window: 4 });
    const production = produceAsync(acd, consumer.handler, slowly(sampleBatches(3, 1)));
    expect(production.stats.tasks).toBe(0);
    let rows = 0;
    for await (const batch of consumer) rows += batch.numRows;
    const stats = await production;
    expect(stats).toBe(production.stats);
    expect(stats).toBe(await production.done);
    expect({ tasks: stats.tasks, extracted: stats.extracted, cancelled: stats.cancelled, rows }).toEqual({ tasks: 3, extracted: 3, cancelled: false, rows: sampleBatches(3, 1).reduce((n, b) => n + b.numRows, 0) });
    // JSON-safe: the bigint as a decimal string.
    expect(JSON.parse(JSON.stringify(stats))).toEqual({ requested: stats.requested.toString(), tasks: 3, extracted: 3, discarded: 0, cancelled: false, error: null });
    consumer.release();
    await guard.check();
  });

  test('leaving the loop early cancels: release, no on_error, the source is closed', async () => {
    const guard = leakGuard(acd);
    let closed = false;
    async function* source() {
      try {
        yield* slowly(sampleBatches(10, 2));
      } finally {
        closed = true;
      }
    }
    const consumer = new AsyncStreamConsumer(acd, { window: 4 });
    const production = produceAsync(acd, consumer.handler, source());
    let n = 0;
    for await (const batch of consumer) {
      expect(batch.numRows).toBe(2);
      if (++n === 2) break;
    }
    const stats = await production.done;
    await consumer.done;
    expect(stats.cancelled).toBe(true);
    expect(stats.error).toBeNull();
    expect(stats.extracted + stats.discarded).toBe(stats.tasks); // every task extracted once
    expect(closed).toBe(true);
    consumer.release();
    await guard.check();
  });

  test('a batch without the stream\'s schema: on_error (EINVAL) with the difference, then release', async () => {
    const guard = leakGuard(acd);
    const other = new arrow.Table({ x: arrow.vectorFromArray([1], new arrow.Float64()) }).batches[0]!;
    const consumer = new AsyncStreamConsumer(acd);
    produceAsync(acd, consumer.handler, [sampleBatches(1)[0]!, other]);
    const it = consumer[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    await expect(it.next()).rejects.toMatchObject({ code: 'EINVAL', message: expect.stringMatching(/^batch 1: its schema struct<x: float64> is not the stream's/) });
    expect((await it.next()).done).toBe(true);
    await consumer.done;
    consumer.release();
    await guard.check();
  });

  test('an empty source with a schema: on_schema, then the end', async () => {
    const guard = leakGuard(acd);
    const schema = sampleBatches(1)[0]!.schema;
    const consumer = new AsyncStreamConsumer(acd);
    produceAsync(acd, consumer.handler, [], { schema });
    expect(await consumer.readAll()).toEqual([]);
    expect(consumer.schema!.fields.length).toBe(4);
    await consumer.done;
    consumer.release();
    // Without a schema: on_error, and the consumer throws it.
    const second = new AsyncStreamConsumer(acd);
    produceAsync(acd, second.handler, []);
    await expect(second.readAll()).rejects.toThrow(/no batch and no schema/);
    await second.done;
    second.release();
    await guard.check();
  });

  test('a source that is not one throws at once, and leaves the handler untouched', async () => {
    const guard = leakGuard(acd);
    const consumer = new AsyncStreamConsumer(acd);
    expect(() => produceAsync(acd, consumer.handler, 42 as never)).toThrow(/expected a Table, a RecordBatchReader, a ReadableStream or an \(async\) iterable/);
    expect(() => produceAsync(acd, consumer.handler, [], { device: 'tpu' })).toThrow(/device: expected TYPE or TYPE:ID/);
    expect(acd.core.structs.ptr('ArrowAsyncDeviceStreamHandler', consumer.handler, 'producer')).toBe(0);
    consumer.release();
    await guard.check();
  });

  test('a handler never given to a producer is freed by release()', async () => {
    const guard = leakGuard(acd);
    new AsyncStreamConsumer(acd).release();
    await guard.check();
  });
});

describe('with the C core', () => {
  test.each([false, true])('TS producer → C consumer (extract later: %s)', async (extractLater) => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(6, 4);
    const consumer = new CAsyncConsumer(acd.core, { window: 2, extractLater });
    const production = produceAsync(acd, consumer.handler, slowly(batches), { additionalMetadata: new Map([['k', 'v']]) });
    await production.done;
    await consumer.whenReleased();
    expect(consumer.state()).toMatchObject({ schemaReceived: true, ended: true, released: true, errorCode: 0, tasks: 6, additionalMetadata: new Map([['k', 'v']]) });
    expect(collected(consumer).map(rowsOf)).toEqual(batches.map(rowsOf));
    consumer.release();
    await guard.check();
  });

  test.each(MODES)('C producer → TS consumer (%s mode)', async (mode) => {
    const guard = leakGuard(acd);
    const consumer = new AsyncStreamConsumer(acd, { mode, window: 3 });
    startCAsyncProducer(acd.core, consumer.handler, CBatchSource.generator(acd.core, { batches: 7, rowsPerBatch: 4 }), new Map([['source', 'c']]));
    let b = 0;
    for await (const batch of consumer) expect(rowsOf(batch)).toEqual(generatedRows(b++, 4));
    expect(b).toBe(7);
    expect(consumer.additionalMetadata).toEqual(new Map([['source', 'c']]));
    await consumer.done;
    consumer.release();
    await guard.check();
  });

  test('a C consumer released mid-stream cancels its producer and goes with the producer\'s release', async () => {
    const guard = leakGuard(acd);
    const consumer = new CAsyncConsumer(acd.core, { window: 1 });
    const production = produceAsync(acd, consumer.handler, slowly(sampleBatches(6, 1)));
    await new Promise<void>((resolve) => {
      const poll = () => (consumer.state().tasks >= 1 ? resolve() : setTimeout(poll, 0));
      poll();
    });
    consumer.release(); // the producer still holds the handler
    const stats = await production.done;
    expect(stats.cancelled).toBe(true);
    expect(stats.error).toBeNull();
    await guard.check(); // the C consumer freed itself in release
  });

  test('C producer → C consumer, pumped from microtasks', async () => {
    const guard = leakGuard(acd);
    const consumer = new CAsyncConsumer(acd.core, { window: 2, extractLater: true });
    startCAsyncProducer(acd.core, consumer.handler, CBatchSource.generator(acd.core, { batches: 5, rowsPerBatch: 3 }));
    expect(consumer.state().schemaReceived).toBe(false); // nothing happens synchronously
    await consumer.whenReleased();
    expect(consumer.state()).toMatchObject({ ended: true, errorCode: 0, tasks: 5 });
    expect(collected(consumer).map(rowsOf)).toEqual([0, 1, 2, 3, 4].map((b) => generatedRows(b, 3)));
    consumer.release();
    await guard.check();
  });

  test('a C consumer that cancels: the TS producer stops, every task is extracted once', async () => {
    const guard = leakGuard(acd);
    const consumer = new CAsyncConsumer(acd.core, { window: 3, cancelAfter: 2 });
    const production = produceAsync(acd, consumer.handler, slowly(sampleBatches(8, 1)));
    const stats = await production.done;
    await consumer.whenReleased();
    expect(stats.cancelled).toBe(true);
    expect(stats.error).toBeNull();
    expect(stats.tasks).toBeLessThan(8);
    expect(stats.extracted + stats.discarded).toBe(stats.tasks);
    expect(consumer.state()).toMatchObject({ released: true, errorCode: 0, ended: false });
    consumer.release();
    await guard.check();
  });
});

// A producer that fails mid-stream delivers its message to the consumer, in
// every combination, and nothing leaks.
describe('errors mid-stream', () => {
  const failingSource = () => (async function* () {
    const batches = sampleBatches(3, 2);
    yield batches[0]!;
    yield batches[1]!;
    throw new ArrowCDeviceError('the upstream socket closed', EIO);
  })();

  test('TS producer → TS consumer', async () => {
    const guard = leakGuard(acd);
    const consumer = new AsyncStreamConsumer(acd);
    const production = produceAsync(acd, consumer.handler, failingSource());
    const got: arrow.RecordBatch[] = [];
    await expect((async () => { for await (const b of consumer) got.push(b); })()).rejects.toMatchObject({ code: 'EIO', message: 'the upstream socket closed' });
    expect(got.length).toBe(2);
    expect((await production.done).error?.message).toBe('the upstream socket closed');
    await consumer.done;
    consumer.release();
    await guard.check();
  });

  test('TS producer → C consumer', async () => {
    const guard = leakGuard(acd);
    const consumer = new CAsyncConsumer(acd.core, { window: 4 });
    produceAsync(acd, consumer.handler, failingSource());
    await consumer.whenReleased();
    expect(consumer.state()).toMatchObject({ released: true, ended: false, errorCode: EIO, errorMessage: 'the upstream socket closed' });
    expect(consumer.list.length).toBe(2);
    consumer.release();
    await guard.check();
  });

  test('C producer → TS consumer', async () => {
    const guard = leakGuard(acd);
    const consumer = new AsyncStreamConsumer(acd);
    startCAsyncProducer(acd.core, consumer.handler, CBatchSource.generator(acd.core, { batches: 5, failAt: 3, failCode: ENOMEM, failMessage: 'the C producer is out of memory' }));
    const got: arrow.RecordBatch[] = [];
    await expect((async () => { for await (const b of consumer) got.push(b); })()).rejects.toMatchObject({ code: 'ENOMEM', message: 'batch 3: the C producer is out of memory' });
    expect(got.length).toBe(3);
    await consumer.done;
    consumer.release();
    await guard.check();
  });

  test('C producer → C consumer', async () => {
    const guard = leakGuard(acd);
    const consumer = new CAsyncConsumer(acd.core, { window: 2, extractLater: true });
    startCAsyncProducer(acd.core, consumer.handler, CBatchSource.generator(acd.core, { batches: 5, failAt: 1, failCode: EIO, failMessage: 'C to C: lost' }));
    await consumer.whenReleased();
    expect(consumer.state()).toMatchObject({ errorCode: EIO, errorMessage: 'batch 1: C to C: lost' });
    expect(consumer.list.length).toBe(1);
    consumer.release();
    await guard.check();
  });
});

describe('on a simulated device', () => {
  test('TS producer on cuda:1 → C consumer (checks the device arrays) → C producer → TS consumer (copies to the host)', async () => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(4, 3);
    const collector = new CAsyncConsumer(acd.core, { window: 2, extractLater: true });
    await produceAsync(acd, collector.handler, slowly(batches), { device: 'cuda:1' }).done;
    await collector.whenReleased();
    expect(collector.state()).toMatchObject({ errorCode: 0, ended: true, tasks: 4 });
    const list = collector.list;
    expect(list.deviceType).toBe(2);
    expect(acd.core.structs.i64('ArrowDeviceArray', list.array(0), 'device_id')).toBe(1);
    expect(acd.deviceBytesAllocated('cuda:1')).toBeGreaterThan(0);
    const consumer = new AsyncStreamConsumer(acd, { device: 'copy' });
    startCAsyncProducer(acd.core, consumer.handler, CBatchSource.fromList(acd.core, list.ptr));
    expect((await consumer.readAll()).map(rowsOf)).toEqual(batches.map(rowsOf));
    expect(consumer.deviceType).toBe(2);
    await consumer.done;
    consumer.release();
    collector.release();
    await guard.check();
  });

  test('a TS consumer that rejects device memory: the error, then the producer is cancelled', async () => {
    const guard = leakGuard(acd);
    const consumer = new AsyncStreamConsumer(acd, { device: 'reject' });
    const production = produceAsync(acd, consumer.handler, slowly(sampleBatches(5, 2)), { device: 'metal:0' });
    await expect(consumer.readAll()).rejects.toMatchObject({ code: 'ENODEV', path: 'device_type', message: expect.stringMatching(/^batch 0: device_type: the array is on metal:0/) });
    const stats = await production.done;
    expect(stats.cancelled).toBe(true);
    expect(stats.extracted + stats.discarded).toBe(stats.tasks);
    await consumer.done;
    consumer.release();
    await guard.check();
  });
});

describe('async round trips of the gold files (TS → C → TS)', () => {
  const ARROW_JS_MISREADS = /^0\.17\.1\/generated_union\./;
  const files = goldFiles().filter(([name]) => !ARROW_JS_MISREADS.test(name));
  describe.each([[undefined, 'copy'], [undefined, 'view'], ['cuda', 'copy'], ['cuda', 'view']] as const)('device %s, %s mode', (device, mode) => {
    test.each(files)('%s', async (name, path) => {
      const table = arrow.tableFromIPC(readFileSync(path));
      const summary = await roundtripStream(acd, table, 'async', mode, { file: name, device, validate: goldLevel(name) });
      expect(summary.errors).toEqual([]);
      expect(summary.mismatches).toEqual([]);
      expect({ bytes: summary.bytesLeaked, device: summary.deviceBytesLeaked, slots: summary.tableSlotsLeaked, objects: summary.objectsLeaked })
        .toEqual({ bytes: 0, device: 0, slots: 0, objects: 0 });
      if (device !== undefined && table.batches.length > 0) expect(summary.events.recorded).toBeGreaterThan(0);
      expect(summary.ok).toBe(true);
    });
  });
});
