// Pull streams (ArrowArrayStream, ArrowDeviceArrayStream), both directions:
// TypeScript producers over Tables, readers, arrays and iterables; the reader
// over any stream; the C generator and the C drain consumer; errors in every
// combination; every gold file through TS → C → TS.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { ArrowCDeviceError, EINVAL, EIO, ENODEV, ENOMEM } from '../ts/abi/errors.js';
import { roundtripStream } from '../ts/roundtrip/stream.js';
import { BatchList, CBatchSource, cStream, drainStream } from '../ts/stream/c-backed.js';
import { exportArrayStream, exportDeviceArrayStream, importArrayStream, importDeviceArrayStream, type StreamKind } from '../ts/stream/pull.js';
import { streamRuntime } from '../ts/stream/runtime.js';
import { AsyncStreamConsumer, produceAsync } from '../ts/stream/async.js';
import { core, goldFiles, goldLevel, MODES } from './helpers.js';
import { generatedRows, isReleased, leakGuard, rowsOf, sampleBatches } from './stream-helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
  streamRuntime(acd.core); // its one permanent table slot is taken before any test counts
});

const KINDS: StreamKind[] = ['array', 'device'];
const exportFor = (kind: StreamKind) => (kind === 'array' ? exportArrayStream : exportDeviceArrayStream);
const importFor = (kind: StreamKind) => (kind === 'array' ? importArrayStream : importDeviceArrayStream);
const structOf = (kind: StreamKind) => (kind === 'array' ? 'ArrowArrayStream' : 'ArrowDeviceArrayStream');

describe.each(KINDS)('%s stream: TS producer → TS reader', (kind) => {
  test.each(MODES)('a Table in %s mode: every batch, value by value; the import moves the stream', async (mode) => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(3, 7);
    const table = new arrow.Table(batches);
    const exported = exportFor(kind)(acd, table);
    const reader = importFor(kind)(acd, exported.ptr, { mode });
    expect(isReleased(acd, structOf(kind), exported.ptr)).toBe(true); // moved, not released
    exported.release();
    expect(reader.schema.fields.map((f) => f.name)).toEqual(['id', 'name', 'list', 'color']);
    expect(reader.deviceType).toBe(1);
    const back = reader.readAll();
    expect(back.map(rowsOf)).toEqual(batches.map(rowsOf));
    expect(reader.batchesRead).toBe(3);
    expect(reader.done).toBe(true);
    reader.release();
    await guard.check();
  });

  test('an array of batches, a RecordBatchReader and a generator function', async () => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(2, 5);
    const table = new arrow.Table(batches);
    const fromReader = arrow.RecordBatchReader.from(arrow.tableToIPC(table, 'stream'));
    function* generate() {
      yield* batches;
    }
    for (const source of [batches, fromReader, generate()]) {
      const exported = exportFor(kind)(acd, source);
      const reader = importFor(kind)(acd, exported.ptr);
      expect([...reader].map(rowsOf)).toEqual(batches.map(rowsOf));
      exported.release();
      reader.release();
    }
    await guard.check();
  });

  test('the source is pulled lazily: one batch per get_next (and one ahead for the schema)', async () => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(4, 2);
    let pulled = 0;
    function* counting() {
      for (const b of batches) {
        pulled++;
        yield b;
      }
    }
    const exported = exportFor(kind)(acd, counting());
    expect(pulled).toBe(1);
    const reader = importFor(kind)(acd, exported.ptr);
    exported.release();
    reader.next();
    expect(pulled).toBe(1);
    reader.next();
    expect(pulled).toBe(2);
    reader.release();
    await guard.check();
  });

  test('leaving a loop early releases the stream, which closes the source', async () => {
    const guard = leakGuard(acd);
    let closed = false;
    function* source() {
      try {
        yield* sampleBatches(5, 2);
      } finally {
        closed = true;
      }
    }
    const exported = exportFor(kind)(acd, source());
    const reader = importFor(kind)(acd, exported.ptr);
    exported.release();
    for (const batch of reader) {
      expect(batch.numRows).toBe(2);
      break;
    }
    expect(closed).toBe(true);
    expect(reader.done).toBe(true);
    await guard.check(); // copy mode: nothing left, even without reader.release()
    reader.release();
  });

  test('async iteration of a reader', async () => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(3, 3);
    const exported = exportFor(kind)(acd, batches);
    const reader = importFor(kind)(acd, exported.ptr);
    exported.release();
    const back: arrow.RecordBatch[] = [];
    for await (const b of reader) back.push(b);
    expect(back.map(rowsOf)).toEqual(batches.map(rowsOf));
    await guard.check();
  });

  test('an empty source: the schema from options (or the Table), then the end', async () => {
    const guard = leakGuard(acd);
    const schema = sampleBatches(1)[0]!.schema;
    for (const [source, options] of [[[], { schema }], [new arrow.Table(schema), {}]] as const) {
      const exported = exportFor(kind)(acd, source, options);
      const reader = importFor(kind)(acd, exported.ptr);
      exported.release();
      expect(reader.schema.fields.map((f) => String(f.type))).toEqual(schema.fields.map((f) => String(f.type)));
      expect(reader.readAll()).toEqual([]);
      reader.release();
    }
    expect(() => exportFor(kind)(acd, [])).toThrow(/no batch and no schema; pass options.schema/);
    await guard.check();
  });

  test('a batch without the stream\'s schema: get_next fails with EINVAL and says how', async () => {
    const guard = leakGuard(acd);
    const good = sampleBatches(1)[0]!;
    const other = new arrow.Table({ x: arrow.vectorFromArray([1, 2], new arrow.Float64()) }).batches[0]!;
    const exported = exportFor(kind)(acd, [good, other]);
    const reader = importFor(kind)(acd, exported.ptr);
    exported.release();
    expect(reader.next().done).toBe(false);
    const error = thrown(() => reader.next());
    expect(error).toBeInstanceOf(ArrowCDeviceError);
    expect((error as ArrowCDeviceError).errno).toBe(EINVAL);
    expect((error as Error).message).toMatch(/^batch 1: get_next: its schema struct<x: float64> is not the stream's struct<id: int32, name: utf8, /);
    expect(reader.done).toBe(true);
    await guard.check();
  });

  test('a batch of the stream\'s schema whose data is short of its length: get_next fails with EINVAL and the buffer\'s path', async () => {
    const guard = leakGuard(acd);
    const good = shortBatch(4);
    const short = shortBatch(2);
    const exported = exportFor(kind)(acd, [good, short]);
    const reader = importFor(kind)(acd, exported.ptr);
    exported.release();
    expect(reader.next().value!.getChildAt(0)!.toArray()).toEqual(Int32Array.of(0, 1, 2, 3));
    const error = thrown(() => reader.next());
    expect(error).toBeInstanceOf(ArrowCDeviceError);
    expect((error as ArrowCDeviceError).errno).toBe(EINVAL);
    expect((error as Error).message).toMatch(/^batch 1: get_next: array\.children\[0\]\.buffers\[1\]: expected at least 16 bytes, found 8$/);
    expect(reader.done).toBe(true);
    await guard.check();
  });
});

describe('the C core\'s producer and consumer', () => {
  test.each(KINDS)('C generator → TS reader (%s stream)', async (kind) => {
    const guard = leakGuard(acd);
    const stream = cStream(acd.core, CBatchSource.generator(acd.core, { batches: 4, rowsPerBatch: 9 }), kind);
    const reader = importFor(kind)(acd, stream.ptr, { mode: 'view' });
    stream.release();
    expect(reader.schema.fields.map((f) => `${f.name}: ${f.type}${f.nullable ? '' : ' not null'}`)).toEqual(['id: Int32 not null', 'value: Float64', 'name: Utf8']);
    let b = 0;
    for (const batch of reader) expect(rowsOf(batch)).toEqual(generatedRows(b++, 9));
    expect(b).toBe(4);
    reader.release();
    await guard.check();
  });

  test.each(KINDS)('TS producer → C drain consumer → list → C producer → TS reader (%s stream)', async (kind) => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(3, 6);
    const exported = exportFor(kind)(acd, batches);
    const list = BatchList.create(acd.core);
    expect(drainStream(acd.core, exported.ptr, kind, list)).toEqual({ batches: 3, rows: 18 });
    expect(isReleased(acd, structOf(kind), exported.ptr)).toBe(true); // the drain released it
    exported.release();
    expect(list.length).toBe(3);
    expect(list.deviceType).toBe(1);
    const replay = cStream(acd.core, CBatchSource.fromList(acd.core, list), kind);
    expect(list.length).toBe(0); // moved into the source
    const reader = importFor(kind)(acd, replay.ptr);
    replay.release();
    expect(reader.readAll().map(rowsOf)).toEqual(batches.map(rowsOf));
    list.release();
    await guard.check();
  });

  test('the plain stream carries CPU arrays only', async () => {
    const guard = leakGuard(acd);
    const source = CBatchSource.generator(acd.core, { device: 'cuda:0' });
    expect(() => cStream(acd.core, source, 'array')).toThrow(/an ArrowArrayStream carries CPU arrays \(1\), found 2/);
    source.release();
    expect(() => exportArrayStream(acd, sampleBatches(1), { device: 'cuda' })).toThrow(/an ArrowArrayStream carries CPU arrays/);
    await guard.check();
  });
});

describe('device streams on a simulated device', () => {
  test('a stream on cuda:1: every batch lives in that device\'s memory, the C consumer checks it there, the reader copies it back', async () => {
    const guard = leakGuard(acd);
    const batches = sampleBatches(3, 5);
    const exported = exportDeviceArrayStream(acd, batches, { device: 'cuda:1' });
    expect(acd.core.structs.i32('ArrowDeviceArrayStream', exported.ptr, 'device_type')).toBe(2);
    const list = BatchList.create(acd.core);
    expect(drainStream(acd.core, exported.ptr, 'device', list)).toEqual({ batches: 3, rows: 15 });
    exported.release();
    expect(list.deviceType).toBe(2);
    const s = acd.core.structs;
    for (let b = 0; b < 3; b++) {
      const array = list.array(b);
      expect([s.i32('ArrowDeviceArray', array, 'device_type'), s.i64('ArrowDeviceArray', array, 'device_id')]).toEqual([2, 1]);
      expect(s.ptr('ArrowDeviceArray', array, 'sync_event')).not.toBe(0); // CUDA has events
      const child0 = s.ptrAt(s.ptr('ArrowArray', array, 'children'));
      const values = s.ptrAt(s.ptr('ArrowArray', child0, 'buffers') + s.layout.pointerSize);
      expect(acd.deviceOwnerOf(values)?.name).toBe('cuda:1');
    }
    expect(acd.deviceBytesAllocated('cuda:1')).toBeGreaterThan(0);
    const replay = cStream(acd.core, CBatchSource.fromList(acd.core, list), 'device');
    const reader = importDeviceArrayStream(acd, replay.ptr, { device: 'copy' });
    replay.release();
    expect(reader.deviceType).toBe(2);
    expect(reader.readAll().map(rowsOf)).toEqual(batches.map(rowsOf));
    list.release();
    expect(acd.deviceBytesAllocated('cuda:1')).toBe(0);
    await guard.check();
  });

  test('a reader that rejects device memory fails on the first batch, and releases everything', async () => {
    const guard = leakGuard(acd);
    const exported = exportDeviceArrayStream(acd, sampleBatches(2), { device: 'rocm:0' });
    const reader = importDeviceArrayStream(acd, exported.ptr, { device: 'reject' });
    exported.release();
    // "batch 0: " before the message; the path of the field at fault is kept.
    expect(() => reader.next()).toThrow(expect.objectContaining({ code: 'ENODEV', path: 'device_type', message: expect.stringMatching(/^batch 0: device_type: the array is on rocm:0, not the CPU/) }));
    expect(reader.done).toBe(true);
    await guard.check();
  });

  test('the C consumer refuses a batch labelled with a device whose memory it is not', async () => {
    const guard = leakGuard(acd);
    // The C generator's batches are host memory, labelled CUDA here.
    const stream = cStream(acd.core, CBatchSource.generator(acd.core, { batches: 2, device: 'cuda:0' }), 'device');
    let error: ArrowCDeviceError | undefined;
    try {
      drainStream(acd.core, stream.ptr, 'device');
    } catch (e) {
      error = e as ArrowCDeviceError;
    }
    expect(error?.message).toMatch(/^batch 0 does not match the stream's schema: .*cuda:0/);
    stream.release();
    await guard.check();
  });
});

// A producer that fails mid-stream delivers its message to the consumer, in
// every combination, and nothing leaks.
describe.each(KINDS)('errors mid-stream (%s stream)', (kind) => {
  const failingTs = () => {
    const batches = sampleBatches(3, 2);
    function* source() {
      yield batches[0]!;
      yield batches[1]!;
      throw new ArrowCDeviceError('the network feed broke', EIO);
    }
    return exportFor(kind)(acd, source());
  };
  const failingC = () => cStream(acd.core, CBatchSource.generator(acd.core, { batches: 5, failAt: 2, failCode: ENOMEM, failMessage: 'the C producer is out of memory' }), kind);

  test.each([['TS', failingTs, EIO, 'the network feed broke'], ['C', failingC, ENOMEM, 'the C producer is out of memory']] as const)(
    '%s producer → TS reader', async (_name, make, code, message) => {
      const guard = leakGuard(acd);
      const stream = make();
      const reader = importFor(kind)(acd, stream.ptr);
      stream.release();
      expect(reader.next().done).toBe(false);
      expect(reader.next().done).toBe(false);
      let error: ArrowCDeviceError | undefined;
      try {
        reader.next();
      } catch (e) {
        error = e as ArrowCDeviceError;
      }
      expect(error).toBeInstanceOf(ArrowCDeviceError);
      expect(error!.errno).toBe(code);
      expect(error!.message).toContain(message);
      expect(error!.message).toBe(`batch 2: get_next: ${message}`);
      expect(reader.done).toBe(true);
      expect(reader.next().done).toBe(true); // a released stream is never called again
      await guard.check();
    });

  test.each([['TS', failingTs, EIO, 'the network feed broke'], ['C', failingC, ENOMEM, 'the C producer is out of memory']] as const)(
    '%s producer → C drain consumer', async (_name, make, code, message) => {
      const guard = leakGuard(acd);
      const stream = make();
      const list = BatchList.create(acd.core);
      let error: ArrowCDeviceError | undefined;
      try {
        drainStream(acd.core, stream.ptr, kind, list);
      } catch (e) {
        error = e as ArrowCDeviceError;
      }
      expect(error?.errno).toBe(code);
      expect(error?.message).toBe(`batch 2: get_next: ${message}`);
      expect(list.length).toBe(2); // what came before
      expect(isReleased(acd, structOf(kind), stream.ptr)).toBe(true);
      stream.release();
      list.release();
      await guard.check();
    });
});

describe('stream round trips of the gold files (TS → C → TS)', () => {
  const ARROW_JS_MISREADS = /^0\.17\.1\/generated_union\./;
  const files = goldFiles().filter(([name]) => !ARROW_JS_MISREADS.test(name));
  test('the gold files are there', () => {
    expect(files.length).toBe(64);
  });
  describe.each([[undefined, 'copy'], [undefined, 'view'], ['cuda', 'copy'], ['cuda', 'view']] as const)('device %s, %s mode', (device, mode) => {
    test.each(files)('%s', async (name, path) => {
      const table = arrow.tableFromIPC(readFileSync(path));
      const summary = await roundtripStream(acd, table, 'stream', mode, { file: name, device, validate: goldLevel(name) });
      expect(summary.errors).toEqual([]);
      expect(summary.mismatches).toEqual([]);
      expect({ bytes: summary.bytesLeaked, device: summary.deviceBytesLeaked, slots: summary.tableSlotsLeaked, objects: summary.objectsLeaked })
        .toEqual({ bytes: 0, device: 0, slots: 0, objects: 0 });
      if (device !== undefined && table.batches.length > 0) expect(summary.events.recorded).toBeGreaterThan(0);
      expect(summary.device).toBe(device === undefined ? 'cpu' : 'cuda:0');
      expect(summary.ok).toBe(true);
      expect(summary.batches).toBe(table.batches.length);
    });
  });
});

describe('the async producer', () => {
  test('a batch of the stream\'s schema whose data is short of its length: on_error (EINVAL) with its index and the buffer\'s path', async () => {
    const guard = leakGuard(acd);
    const consumer = new AsyncStreamConsumer(acd);
    produceAsync(acd, consumer.handler, [shortBatch(4), shortBatch(2)]);
    const it = consumer[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    await expect(it.next()).rejects.toMatchObject({ code: 'EINVAL', message: 'batch 1: array.children[0].buffers[1]: expected at least 16 bytes, found 8' });
    expect((await it.next()).done).toBe(true);
    await consumer.done;
    consumer.release();
    await guard.check();
  });
});

/** What f throws (undefined when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** A batch of one int32 column of 4 rows whose values are `values` ints (fewer: data short of its length). */
function shortBatch(values: number): arrow.RecordBatch {
  const x = arrow.makeData({ type: new arrow.Int32(), length: 4, nullCount: 0, data: Int32Array.from({ length: values }, (_, i) => i) });
  const fields = [new arrow.Field('x', new arrow.Int32(), false)];
  const data = arrow.makeData({ type: new arrow.Struct(fields), length: 4, nullCount: 0, children: [x] });
  return new arrow.RecordBatch(new arrow.Schema(fields), data);
}
