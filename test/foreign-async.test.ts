// Issue 11: the async device stream with another wasm module, both ways,
// against test/foreign/async.c built into the foreign test module (its own
// memory, allocator and table; only the spec's header). A C producer drives
// the handler of acd.asyncConsumer({ from }), which lives in its memory with
// our callbacks in its table; acd.produceAsync(handler, source, { into })
// drives a handler its C consumer made. Values, metadata, back-pressure,
// cancellation, errors both ways, callbacks of the wrong kind, and nothing
// left on either side.
import { afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { ArrowCDeviceError, EINVAL, EIO, ENOSYS } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import type { ForeignModule } from '../ts/foreign/module.js';
import { streamRuntime } from '../ts/stream/runtime.js';
import { error, instantiate, producerWasm, type Producer } from './foreign/module.js';

// async_stat(i) and async_consumer_result(h, i) of test/foreign/async.c.
const STAT = { requestCalls: 0, requested: 1, cancelCalls: 2, extracted: 3, discarded: 4, batchesReleased: 5, schemasReleased: 6, producersFreed: 7 } as const;
const RESULT = { batches: 0, rows: 1, sum: 2, nulls: 3, metadataSeen: 4, discarded: 5, error: 6, released: 7, ended: 8, schemaOk: 9, additionalSeen: 10 } as const;

let acd: ArrowCDevice;
beforeAll(async () => {
  producerWasm();
  acd = await ArrowCDevice.load();
}, 120_000);

let baseline = 0;
let uncaught = 0;
beforeAll(() => {
  baseline = acd.bytesAllocated();
  uncaught = streamRuntime(acd.core).uncaught.length;
});

// After each case: nothing of the core's left, no callback failed unseen, and the core still works.
afterEach(() => {
  expect(streamRuntime(acd.core).uncaught.slice(uncaught).map(String)).toEqual([]);
  const v = arrow.vectorFromArray([1, null, 3], new arrow.Int32());
  const exported = acd.exportVector(v, 'v');
  const back = acd.importVector(exported.schema, exported.array);
  expect([...back.value]).toEqual([1, null, 3]);
  back.release();
  exported.release();
  expect(acd.bytesAllocated()).toBe(baseline);
});

function load(name: string): { p: Producer; module: ForeignModule } {
  const p = instantiate();
  p.async_reset_stats();
  return { p, module: acd.foreign(p as unknown as Record<string, unknown>, name) };
}

const stat = (p: Producer, name: keyof typeof STAT) => p.async_stat(STAT[name]);
const result = (p: Producer, handler: number, name: keyof typeof RESULT) => p.async_consumer_result(handler, RESULT[name]);

/** What the C producer puts in column x of batch b. */
const expectedX = (b: number, rows: number) => Array.from({ length: rows }, (_, i) => (i % 4 === 3 ? null : b * 100 + i));

/**
 * Pumps the C producer (`perTick` steps per macrotask, so the consumer runs
 * in between) until it released the handler.
 */
function pumpProducer(p: Producer, producer: number, perTick = 1): Promise<number> {
  return new Promise((resolve, reject) => {
    let steps = 0;
    const step = () => {
      for (let i = 0; i < perTick; i++) {
        steps++;
        if (p.async_producer_pump(producer) === 0) return resolve(steps);
      }
      if (steps > 10_000) return reject(new Error('the C producer never finished'));
      setImmediate(step);
    };
    setImmediate(step);
  });
}

/** The four callbacks our handler installed in the module's table. */
function handlerSlots(module: ForeignModule, handler: number): number[] {
  const s = module.space.structs;
  return (['on_schema', 'on_next_task', 'on_error', 'release'] as const).map((f) => s.ptr('ArrowAsyncDeviceStreamHandler', handler, f));
}

describe('a C producer in another module drives acd.asyncConsumer({ from })', () => {
  test.each(['copy', 'view'] as const)('%s mode: every batch with its metadata, the handler freed by its release, nothing left', async (mode) => {
    const { p, module: from } = load('producer');
    const consumer = acd.asyncConsumer({ from, mode, window: 2, validate: 'full' });
    // The handler is in the module's memory, its callbacks are functions of its table.
    expect(from.bytesAllocated()).toBe(from.space.structs.size('ArrowAsyncDeviceStreamHandler'));
    const slots = handlerSlots(from, consumer.handler);
    for (const slot of slots) expect(from.table!.get(slot)).toBeInstanceOf(Function);
    const producer = p.async_producer_start(consumer.handler, 5n, 6n, -1n);
    const pumping = pumpProducer(p, producer);
    const got: { x: unknown[]; metadata: unknown }[] = [];
    for await (const { batch, metadata } of consumer.entries()) {
      const x = batch.getChild('x')!;
      // View mode: zero copy, the values are a view of the module's memory.
      expect(x.data[0]!.values.buffer === from.space.memory.buffer).toBe(mode === 'view');
      got.push({ x: [...x], metadata });
    }
    await pumping;
    await consumer.done;
    expect(got).toEqual([0, 1, 2, 3, 4].map((b) => ({ x: expectedX(b, 6), metadata: new Map([['batch', String(b)]]) })));
    expect(consumer.additionalMetadata).toEqual(new Map([['producer', 'c']]));
    expect(consumer.deviceType).toBe(1);
    expect(consumer.schema!.fields.map((f) => `${f.name}: ${f.type}`)).toEqual(['x: Int32']);
    // Back-pressure: request(2) in on_schema, then request(1) per batch taken, each called through its table.
    expect([stat(p, 'requestCalls'), stat(p, 'requested')]).toEqual([BigInt(consumer.requestCalls), consumer.requested]);
    expect(consumer.requested).toBe(7n);
    expect([stat(p, 'extracted'), stat(p, 'discarded'), stat(p, 'schemasReleased'), stat(p, 'cancelCalls')]).toEqual([5n, 0n, 1n, 0n]);
    // Copy mode released each batch through its table at once; view mode holds them until release().
    expect(stat(p, 'batchesReleased')).toBe(mode === 'copy' ? 5n : 0n);
    consumer.release();
    expect(stat(p, 'batchesReleased')).toBe(5n);
    expect(stat(p, 'producersFreed')).toBe(1n);
    for (const slot of slots) expect(from.table!.get(slot)).toBeNull();
    expect(p.async_live_blocks()).toBe(0);
    expect(from.bytesAllocated()).toBe(0);
  });

  test('leaving the loop early cancels it through its table; tasks that still come are extracted with NULL', async () => {
    const { p, module: from } = load('producer');
    const consumer = acd.asyncConsumer({ from, window: 4 });
    const producer = p.async_producer_start(consumer.handler, 20n, 3n, -1n);
    const pumping = pumpProducer(p, producer, 4); // tasks queue up between the consumer's turns
    const got: unknown[][] = [];
    for await (const batch of consumer) {
      got.push([...batch.getChild('x')!]);
      if (got.length === 2) break;
    }
    await pumping;
    await consumer.done;
    expect(got).toEqual([expectedX(0, 3), expectedX(1, 3)]);
    expect(stat(p, 'cancelCalls')).toBe(1n);
    expect(stat(p, 'extracted')).toBe(2n);
    // The window let more come before the cancel: each was extracted exactly once (the producer's state is freed only then).
    expect(stat(p, 'discarded')).toBeGreaterThan(0n);
    expect(stat(p, 'producersFreed')).toBe(1n);
    consumer.release();
    expect(p.async_live_blocks()).toBe(0);
    expect(from.bytesAllocated()).toBe(0);
  });

  test("the producer's on_error reaches the consumer with its code and message, after the batches before it", async () => {
    const { p, module: from } = load('producer');
    const consumer = acd.asyncConsumer({ from, window: 8 });
    const pumping = pumpProducer(p, p.async_producer_start(consumer.handler, 5n, 2n, 2n));
    const got: unknown[][] = [];
    let thrown: unknown;
    try {
      for await (const batch of consumer) got.push([...batch.getChild('x')!]);
    } catch (e) {
      thrown = e;
    }
    await pumping;
    await consumer.done;
    expect(got).toEqual([expectedX(0, 2), expectedX(1, 2)]);
    expect(thrown).toBeInstanceOf(ArrowCDeviceError);
    expect((thrown as ArrowCDeviceError).errno).toBe(EIO);
    expect((thrown as ArrowCDeviceError).message).toBe('simulated failure producing a batch');
    consumer.release();
    expect(stat(p, 'producersFreed')).toBe(1n);
    expect(p.async_live_blocks()).toBe(0);
    expect(from.bytesAllocated()).toBe(0);
  });

  test('a producer.request of the wrong kind is refused before it runs: the error names it, the producer is cancelled, no trap', async () => {
    const { p, module: from } = load('producer');
    const consumer = acd.asyncConsumer({ from });
    const producer = p.async_producer_start(consumer.handler, 3n, 2n, -1n);
    const s = from.space.structs;
    const struct = s.ptr('ArrowAsyncDeviceStreamHandler', consumer.handler, 'producer');
    s.setPtr('ArrowAsyncProducer', struct, 'request', p.boom_ptr()); // void(void*), and it would trap
    const pumping = pumpProducer(p, producer);
    const err = await consumer.readAll().then(() => null, (e: unknown) => e as ArrowCDeviceError);
    await pumping;
    await consumer.done;
    expect(err).toBeInstanceOf(ArrowCDeviceError);
    expect(err!.errno).toBe(EINVAL);
    expect(err!.message).toBe(`producer: producer.request: function pointer ${p.boom_ptr()} is not a function of signature 'vij' in producer's table`);
    expect([stat(p, 'requestCalls'), stat(p, 'cancelCalls'), stat(p, 'extracted')]).toEqual([0n, 1n, 0n]);
    consumer.release();
    expect(p.async_live_blocks()).toBe(0);
    expect(from.bytesAllocated()).toBe(0);
  });

  test('a consumer released before any producer took it frees the handler and its slots', () => {
    const { module: from } = load('producer');
    const consumer = acd.asyncConsumer({ from });
    const slots = handlerSlots(from, consumer.handler);
    // Our callbacks serve their own handler only: another struct (a stale or forged pointer) is refused.
    const other = from.space.allocator!.alloc(64);
    expect(from.space.table!.call(slots[0]!, 'iii', [other, other], 'on_schema')).toBe(EINVAL);
    expect(from.space.table!.call(slots[1]!, 'iiii', [other, other, 0], 'on_next_task')).toBe(EINVAL);
    from.space.table!.call(slots[3]!, 'vi', [other], 'release');
    expect(consumer.isReleased).toBe(false);
    from.space.allocator!.free(other);
    consumer.release();
    expect(consumer.isReleased).toBe(true);
    for (const slot of slots) expect(from.table!.get(slot)).toBeNull();
    expect(from.bytesAllocated()).toBe(0);
  });
});

/** struct<x: int32> batches: x = b * 10 + i, every third null; the last one sliced. */
function batches(n: number, rows: number): arrow.RecordBatch[] {
  const out = Array.from({ length: n }, (_, b) => new arrow.Table({
    x: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => (i % 3 === 2 ? null : b * 10 + i)), new arrow.Int32()),
  }).batches[0]!);
  out[n - 1] = out[n - 1]!.slice(1, rows);
  return out;
}

function totals(list: arrow.RecordBatch[]): { rows: bigint; sum: bigint; nulls: bigint } {
  let sum = 0n;
  let nulls = 0n;
  for (const b of list) for (const v of b.getChild('x')!) if (v === null) nulls++; else sum += BigInt(v as number);
  return { rows: BigInt(list.reduce((n, b) => n + b.numRows, 0)), sum, nulls };
}

describe('acd.produceAsync(handler, source, { into }) drives a handler its C consumer made', () => {
  test('every batch reaches its C code, which sums them through our extract_data; our slots are freed and reused', async () => {
    const { p, module: into } = load('consumer');
    const tableLength: number[] = [];
    for (let run = 0; run < 2; run++) {
      const handler = p.async_consumer_new(2n, 0n, 0);
      const source = batches(4, 5);
      const production = acd.produceAsync(handler, source, {
        into,
        additionalMetadata: new Map([['from', 'ts']]),
        taskMetadata: (_b, i) => new Map([['index', String(i)]]),
      });
      const s = into.space.structs;
      const producer = s.ptr('ArrowAsyncDeviceStreamHandler', handler, 'producer');
      const request = s.ptr('ArrowAsyncProducer', producer, 'request');
      expect(into.table!.get(request)).toBeInstanceOf(Function);
      const stats = await production.done;
      expect(stats).toMatchObject({ tasks: 4, extracted: 4, discarded: 0, cancelled: false, error: null });
      expect(stats.requested).toBe(2n + 4n); // its window, then one per batch it took
      const expected = totals(source);
      expect([result(p, handler, 'batches'), result(p, handler, 'rows'), result(p, handler, 'sum'), result(p, handler, 'nulls')])
        .toEqual([4n, expected.rows, expected.sum, expected.nulls]);
      expect([result(p, handler, 'metadataSeen'), result(p, handler, 'additionalSeen'), result(p, handler, 'schemaOk')]).toEqual([4n, 1n, 1n]);
      expect([result(p, handler, 'ended'), result(p, handler, 'released'), result(p, handler, 'error')]).toEqual([1n, 1n, 0n]);
      expect(into.table!.get(request)).toBeNull();
      p.async_consumer_free(handler);
      expect(p.async_live_blocks()).toBe(0);
      expect(into.bytesAllocated()).toBe(0);
      tableLength.push(into.table!.length);
    }
    expect(tableLength[1]).toBe(tableLength[0]);
  });

  test('a consumer that keeps the tasks (copied) and extracts them after the handler was released', async () => {
    const { p, module: into } = load('consumer');
    const handler = p.async_consumer_new(10n, 0n, 1);
    const source = batches(3, 4);
    const stats = await acd.produceAsync(handler, source, { into }).done;
    expect([result(p, handler, 'released'), result(p, handler, 'batches')]).toEqual([1n, 0n]);
    expect(stats.extracted).toBe(0);
    expect(into.bytesAllocated()).toBeGreaterThan(0); // the three batches, owned by their tasks
    expect(p.async_consumer_pump(handler)).toBe(0n);
    expect(stats).toMatchObject({ tasks: 3, extracted: 3, discarded: 0 });
    const expected = totals(source);
    expect([result(p, handler, 'rows'), result(p, handler, 'sum')]).toEqual([expected.rows, expected.sum]);
    p.async_consumer_free(handler);
    expect(p.async_live_blocks()).toBe(0);
    expect(into.bytesAllocated()).toBe(0);
  });

  test('its cancel (from its on_next_task) stops the source; release only, no on_error', async () => {
    const { p, module: into } = load('consumer');
    const handler = p.async_consumer_new(1n, 2n, 0);
    let closed = false;
    async function* source() {
      try {
        for (const b of batches(10, 3)) yield b;
      } finally {
        closed = true;
      }
    }
    const stats = await acd.produceAsync(handler, source(), { into }).done;
    expect(stats).toMatchObject({ cancelled: true, tasks: 2, extracted: 2, error: null });
    expect(closed).toBe(true);
    expect([result(p, handler, 'batches'), result(p, handler, 'released'), result(p, handler, 'ended'), result(p, handler, 'error')]).toEqual([2n, 1n, 0n, 0n]);
    expect(stat(p, 'cancelCalls')).toBe(0n); // its own producer was not involved
    p.async_consumer_free(handler);
    expect(p.async_live_blocks()).toBe(0);
    expect(into.bytesAllocated()).toBe(0);
  });

  test("the source's failure reaches its on_error with the code and message", async () => {
    const { p, module: into } = load('consumer');
    const handler = p.async_consumer_new(4n, 0n, 0);
    async function* source() {
      yield* batches(2, 3);
      throw new Error('the source broke');
    }
    const stats = await acd.produceAsync(handler, source(), { into }).done;
    expect(stats.error?.message).toBe('the source broke');
    expect([result(p, handler, 'batches'), result(p, handler, 'error'), result(p, handler, 'released')]).toEqual([2n, BigInt(EIO), 1n]);
    expect(into.space.structs.cString(p.async_consumer_message(handler), 'message')).toBe('the source broke');
    p.async_consumer_free(handler);
    expect(p.async_live_blocks()).toBe(0);
    expect(into.bytesAllocated()).toBe(0);
  });

  test('an on_next_task of the wrong kind is refused before it runs: the task is dropped, on_error and release follow, no trap', async () => {
    const { p, module: into } = load('consumer');
    const handler = p.async_consumer_new(2n, 0n, 0);
    into.space.structs.setPtr('ArrowAsyncDeviceStreamHandler', handler, 'on_next_task', p.boom_ptr());
    const stats = await acd.produceAsync(handler, batches(3, 2), { into }).done;
    const message = `consumer: handler.on_next_task: function pointer ${p.boom_ptr()} is not a function of signature 'iiii' in consumer's table`;
    expect(stats).toMatchObject({ tasks: 1, extracted: 0, discarded: 1 });
    expect([stats.error?.code, stats.error?.errno, stats.error?.message]).toEqual(['EINVAL', EINVAL, message]);
    expect([result(p, handler, 'error'), result(p, handler, 'released')]).toEqual([BigInt(EINVAL), 1n]);
    expect(into.space.structs.cString(p.async_consumer_message(handler), 'message')).toBe(message);
    p.async_consumer_free(handler);
    expect(p.async_live_blocks()).toBe(0);
    expect(into.bytesAllocated()).toBe(0);
  });

  test('a handler.release that traps in its code: an EIO error naming it, the producer cleaned up, the core untouched', async () => {
    const { p, module: into } = load('consumer');
    const handler = p.async_consumer_new(4n, 0n, 0);
    into.space.structs.setPtr('ArrowAsyncDeviceStreamHandler', handler, 'release', p.boom_ptr()); // void(void*): the right kind
    const stats = await acd.produceAsync(handler, batches(2, 3), { into }).done;
    expect(stats).toMatchObject({ tasks: 2, extracted: 2 });
    expect(stats.error?.errno).toBe(EIO);
    expect(stats.error?.message).toMatch(/^consumer: handler\.release: the callback trapped in consumer \(/);
    expect([result(p, handler, 'batches'), result(p, handler, 'ended'), result(p, handler, 'released')]).toEqual([2n, 1n, 0n]);
    p.async_consumer_free(handler);
    expect(p.async_live_blocks()).toBe(0);
    expect(into.bytesAllocated()).toBe(0);
  });
});

describe('both sides ours, every struct and call in the other module', () => {
  test.each(['copy', 'view'] as const)('%s mode: our producer calls our handler through its table', async (mode) => {
    const { p, module } = load('m');
    const consumer = acd.asyncConsumer({ from: module, mode, window: 1 });
    const source = batches(3, 4);
    const production = acd.produceAsync(consumer.handler, source, { into: module, taskMetadata: (_b, i) => new Map([['i', String(i)]]) });
    const got: unknown[] = [];
    for await (const { batch, metadata } of consumer.entries()) got.push({ x: [...batch.getChild('x')!], metadata });
    expect(got).toEqual(source.map((b, i) => ({ x: [...b.getChild('x')!], metadata: new Map([['i', String(i)]]) })));
    expect(await production.done).toMatchObject({ tasks: 3, extracted: 3, discarded: 0, error: null });
    await consumer.done;
    consumer.release();
    expect(module.bytesAllocated()).toBe(0);
    expect(p.async_live_blocks()).toBe(0);
  });
});

describe('refused before anything is touched', () => {
  test('a from that is not a ForeignModule, a device other than the CPU, a module without an allocator', () => {
    const { p, module } = load('m');
    expect(error(() => acd.asyncConsumer({ from: { name: 'x', space: module.space } as unknown as ForeignModule })).errno).toBe(EINVAL);
    const handler = p.async_consumer_new(1n, 0n, 0);
    expect(error(() => acd.produceAsync(handler, [], { into: module, device: 'cuda:0' })).errno).toBe(ENOSYS);
    const bare = acd.foreign({ memory: p.memory, table: p.__indirect_function_table }, 'bare');
    expect(error(() => acd.produceAsync(handler, [], { into: bare })).message).toMatch(/^into: bare needs a function table and an allocator/);
    expect(error(() => acd.asyncConsumer({ from: bare })).message).toMatch(/^from: bare needs a function table and an allocator/);
    expect(into(module, handler)).toBe(0);
    p.async_consumer_free(handler);
    expect(p.async_live_blocks()).toBe(0);
    expect(module.bytesAllocated()).toBe(0);
  });
});

/** The handler's producer member: still NULL (nothing was started). */
function into(module: ForeignModule, handler: number): number {
  return module.space.structs.ptr('ArrowAsyncDeviceStreamHandler', handler, 'producer');
}
