// Every MUST and MUST NOT (and the "must"/"should" that make the protocol) of
// CStreamInterface.rst and of the Device Stream and Async Device Stream
// sections of CDeviceDataInterface.rst, each test named after its rule, run
// against every implementation it binds: our TS and C producers (through a
// spy consumer) and our TS and C consumers (through a spy producer).
// Longer than 400 lines because it is the spec's list of rules, one test each;
// splitting it would split the list a reader checks against the spec.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { AsyncStreamConsumer, CAsyncConsumer, produceAsync, startCAsyncProducer } from '../ts/stream/async.js';
import { ArrowCDeviceError, EINVAL, EIO, ENOMEM } from '../ts/abi/errors.js';
import { streamRuntime } from '../ts/stream/runtime.js';
import { BatchList, CBatchSource, cStream, drainStream } from '../ts/stream/c-backed.js';
import {
  exportArrayStream, exportDeviceArrayStream, importArrayStream, importDeviceArrayStream, type ExportedStream, type StreamKind,
} from '../ts/stream/pull.js';
import { core } from './helpers.js';
import { isReleased, leakGuard, rowsOf, sampleBatches, tick } from './stream-helpers.js';
import { SpyHandler, SpyProducer, SpyStream, until, type SpyHandlerScript, type SpyStreamScript } from './stream-spies.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
  streamRuntime(acd.core);
});

const KINDS: StreamKind[] = ['array', 'device'];
const STRUCT = { array: 'ArrowArrayStream', device: 'ArrowDeviceArrayStream' } as const;
const batches = () => sampleBatches(3, 2);

// ---- pull streams -------------------------------------------------------------------------

interface PullOutcome {
  batches: number;
  error: ArrowCDeviceError | null;
}

/** Our two pull consumers: each consumes the whole stream at ptr. */
const PULL_CONSUMERS: [string, (kind: StreamKind, ptr: number) => PullOutcome][] = [
  ['TS reader', (kind, ptr) => {
    const reader = (kind === 'array' ? importArrayStream : importDeviceArrayStream)(acd, ptr);
    try {
      reader.readAll();
      return { batches: reader.batchesRead, error: null };
    } catch (e) {
      return { batches: reader.batchesRead, error: e as ArrowCDeviceError };
    } finally {
      // A released stream is never called again: more reads just say "done".
      expect(reader.next().done).toBe(true);
      reader.release();
    }
  }],
  ['C drain', (kind, ptr) => {
    const list = BatchList.create(acd.core);
    try {
      return { batches: drainStream(acd.core, ptr, kind, list).batches, error: null };
    } catch (e) {
      return { batches: list.length, error: e as ArrowCDeviceError };
    } finally {
      list.release();
    }
  }],
];

/** Our two pull producers, with n batches and an optional failure at get_next call failAt. */
const PULL_PRODUCERS: [string, (kind: StreamKind, o: { n?: number; failAt?: number; code?: number; message?: string }) => ExportedStream][] = [
  ['TS producer', (kind, o) => {
    const all = sampleBatches(o.n ?? 3, 2);
    function* source() {
      for (let i = 0; i < all.length; i++) {
        if (i === o.failAt) throw new ArrowCDeviceError(o.message ?? 'boom', o.code ?? EIO);
        yield all[i]!;
      }
    }
    return (kind === 'array' ? exportArrayStream : exportDeviceArrayStream)(acd, source(), { schema: all[0]!.schema });
  }],
  ['C producer', (kind, o) => cStream(acd.core, CBatchSource.generator(acd.core, {
    batches: o.n ?? 3, rowsPerBatch: 2, failAt: o.failAt, failCode: o.code ?? EIO, failMessage: o.message ?? 'boom',
  }), kind)],
];

/** Raw calls of a stream's callbacks, as a foreign consumer makes them. */
function raw(kind: StreamKind) {
  const s = acd.core.stream;
  return kind === 'array'
    ? { getSchema: s.arrayStreamCallGetSchema, getNext: s.arrayStreamCallGetNext, getLastError: s.arrayStreamCallGetLastError, release: s.arrayStreamCallRelease }
    : { getSchema: s.deviceArrayStreamCallGetSchema, getNext: s.deviceArrayStreamCallGetNext, getLastError: s.deviceArrayStreamCallGetLastError, release: s.deviceArrayStreamCallRelease };
}

function outStruct(kind: StreamKind): { ptr: number; array: number; free(): void } {
  const c = acd.core;
  const ptr = c.alloc(c.structs.size(kind === 'array' ? 'ArrowArray' : 'ArrowDeviceArray'));
  const array = kind === 'array' ? ptr : ptr + c.structs.offsetOf('ArrowDeviceArray', 'array');
  return { ptr, array, free: () => { c.arrayRelease(array); c.free(ptr); } };
}

async function withSpyStream(kind: StreamKind, script: SpyStreamScript, consume: (kind: StreamKind, ptr: number) => PullOutcome): Promise<{ spy: SpyStream; outcome: PullOutcome }> {
  const spy = new SpyStream(acd, kind, script);
  const outcome = consume(kind, spy.ptr);
  spy.dispose();
  return { spy, outcome };
}

describe.each(KINDS)('%s stream (CStreamInterface.rst; CDeviceDataInterface.rst, Device Stream Interface)', (kind) => {
  describe('consumer rules, against our consumers', () => {
    test.each(PULL_CONSUMERS)('get_schema and get_next must NOT be called on a released stream (%s)', async (_name, consume) => {
      const guard = leakGuard(acd);
      const { spy, outcome } = await withSpyStream(kind, { batches: batches() }, consume);
      expect(outcome).toEqual({ batches: 3, error: null });
      expect(spy.calls.at(-1)).toBe('release');
      expect(spy.violations).toEqual([]);
      // The checked calls refuse a released stream without calling it.
      const ptr = acd.core.alloc(acd.core.structs.size(STRUCT[kind]));
      const schema = acd.core.alloc(acd.core.structs.size('ArrowSchema'));
      const s = acd.core.stream;
      expect(kind === 'array' ? s.arrayStreamGetSchema(ptr, schema) : s.deviceArrayStreamGetSchema(ptr, schema)).toBe(EINVAL);
      expect(s.streamLastError()).toBe('get_schema: the stream is released');
      expect(kind === 'array' ? s.arrayStreamGetNext(ptr, schema) : s.deviceArrayStreamGetNext(ptr, schema)).toBe(EINVAL);
      acd.core.free(ptr);
      acd.core.free(schema);
      await guard.check();
    });

    test.each(PULL_CONSUMERS)('on success, the consumer must check whether the array is released: that is the end of the stream (%s)', async (_name, consume) => {
      const guard = leakGuard(acd);
      const { spy, outcome } = await withSpyStream(kind, { batches: batches().slice(0, 2) }, consume);
      expect(outcome).toEqual({ batches: 2, error: null });
      expect(spy.calls).toEqual(['get_schema', 'get_next', 'get_next', 'get_next', 'release']);
      await guard.check();
    });

    test.each(PULL_CONSUMERS)('get_last_error must ONLY be called if the last operation returned an error (%s)', async (_name, consume) => {
      const guard = leakGuard(acd);
      const { spy, outcome } = await withSpyStream(kind, { batches: batches(), failAt: 2, code: EIO, message: 'spy failure' }, consume);
      expect(outcome.batches).toBe(2);
      expect(outcome.error?.errno).toBe(EIO);
      expect(spy.calls).toEqual(['get_schema', 'get_next', 'get_next', 'get_next', 'get_last_error', 'release']);
      expect(spy.violations).toEqual([]);
      await guard.check();
    });

    test.each(PULL_CONSUMERS)('get_last_error must NOT be called on a released stream (%s)', async (_name, consume) => {
      const guard = leakGuard(acd);
      const { spy } = await withSpyStream(kind, { batches: batches(), failAt: 0, message: 'first call fails' }, consume);
      expect(spy.calls.indexOf('get_last_error')).toBeLessThan(spy.calls.indexOf('release'));
      expect(spy.violations).toEqual([]);
      await guard.check();
    });

    test.each(PULL_CONSUMERS)('get_last_error\'s string is only valid until the next call: the consumer copies it at once (%s)', async (_name, consume) => {
      const guard = leakGuard(acd);
      const { outcome } = await withSpyStream(kind, { batches: batches(), failAt: 1, code: ENOMEM, message: 'the spy ran out of memory' }, consume);
      // The spy scribbled over its message in release, right after the failure.
      expect(outcome.error?.message).toBe('batch 1: get_next: the spy ran out of memory');
      expect(outcome.error?.errno).toBe(ENOMEM);
      await guard.check();
    });

    test.each(PULL_CONSUMERS)('get_last_error may return NULL: the consumer still reports the errno code (%s)', async (_name, consume) => {
      const guard = leakGuard(acd);
      const { outcome } = await withSpyStream(kind, { batches: batches(), failAt: 1, code: EIO, message: null }, consume);
      expect(outcome.error?.errno).toBe(EIO);
      expect(outcome.error?.message).toMatch(/get_next: error 29 \(.*\), and get_last_error gave no message/);
      await guard.check();
    });

    test.each(PULL_CONSUMERS)('consumers MUST NOT process private_data (every call reaches the spy through it) (%s)', async (_name, consume) => {
      const guard = leakGuard(acd);
      const { spy } = await withSpyStream(kind, { batches: batches() }, consume);
      expect(spy.calls).toEqual(['get_schema', 'get_next', 'get_next', 'get_next', 'get_next', 'release']);
      await guard.check();
    });

    test.each(PULL_CONSUMERS)('the schema is the same for all data chunks: a chunk that does not match is an error (%s)', async (_name, consume) => {
      const guard = leakGuard(acd);
      const { spy, outcome } = await withSpyStream(kind, { batches: batches(), badAt: 1 }, consume);
      expect(outcome.batches).toBe(1);
      expect(outcome.error?.errno).toBe(EINVAL);
      expect(outcome.error?.message).toMatch(/^batch 1\b.*n_children: expected 4 \(as in the schema\), found 1/);
      expect(spy.calls.at(-1)).toBe('release');
      await guard.check();
    });

    if (kind === 'device') {
      test.each(PULL_CONSUMERS)('the next chunk MUST be accessible from a device type matching device_type: a mismatch is an error (%s)', async (_name, consume) => {
        const guard = leakGuard(acd);
        const { outcome } = await withSpyStream(kind, { batches: batches(), wrongDeviceAt: 1 }, consume);
        expect(outcome.batches).toBe(1);
        expect(outcome.error?.errno).toBe(EINVAL);
        expect(outcome.error?.message).toBe('batch 1: get_next: device_type: expected 1 (the stream\'s), found 2');
        await guard.check(); // the mismatched chunk was released, not leaked
      });
    }

    test('the data returned by get_schema and get_next are released independently of the stream (TS reader, view mode)', async () => {
      const guard = leakGuard(acd);
      const spy = new SpyStream(acd, kind, { batches: batches() });
      const reader = (kind === 'array' ? importArrayStream : importDeviceArrayStream)(acd, spy.ptr, { mode: 'view' });
      const views = reader.readAll();
      expect(spy.released).toBe(true); // the stream is gone, its batches are not
      expect(views.map(rowsOf)).toEqual(batches().map(rowsOf));
      reader.release();
      spy.dispose();
      await guard.check();
    });
  });

  describe('producer rules, against our producers (called as a foreign consumer would)', () => {
    test.each(PULL_PRODUCERS)('the end of the stream is a released array with return code 0, again on every later call (%s)', async (_name, make) => {
      const guard = leakGuard(acd);
      const stream = make(kind, { n: 2 });
      const r = raw(kind);
      const out = outStruct(kind);
      for (let i = 0; i < 2; i++) {
        expect(r.getNext(stream.ptr, out.ptr)).toBe(0);
        expect(acd.core.structs.ptr('ArrowArray', out.array, 'release')).not.toBe(0);
        acd.core.arrayRelease(out.array);
      }
      for (let i = 0; i < 3; i++) {
        expect(r.getNext(stream.ptr, out.ptr)).toBe(0);
        expect(acd.core.structs.ptr('ArrowArray', out.array, 'release')).toBe(0);
      }
      out.free();
      stream.release();
      await guard.check();
    });

    test.each(PULL_PRODUCERS)('get_last_error describes the last failed call; its string is valid until the next call (%s)', async (_name, make) => {
      const guard = leakGuard(acd);
      const stream = make(kind, { failAt: 1, code: EIO, message: 'the disk is gone' });
      const r = raw(kind);
      const out = outStruct(kind);
      expect(r.getNext(stream.ptr, out.ptr)).toBe(0);
      acd.core.arrayRelease(out.array);
      expect(r.getNext(stream.ptr, out.ptr)).toBe(EIO);
      expect(acd.core.structs.ptr('ArrowArray', out.array, 'release')).toBe(0); // nothing to release on failure
      const message = r.getLastError(stream.ptr);
      expect(acd.core.structs.cString(message, 'message')).toBe('the disk is gone');
      expect(acd.core.structs.cString(r.getLastError(stream.ptr), 'message')).toBe('the disk is gone'); // still valid
      // A later call that succeeds: no error to describe (NULL).
      const schema = acd.core.alloc(acd.core.structs.size('ArrowSchema'));
      expect(r.getSchema(stream.ptr, schema)).toBe(0);
      expect(r.getLastError(stream.ptr)).toBe(0);
      acd.core.schemaRelease(schema);
      acd.core.free(schema);
      out.free();
      stream.release();
      await guard.check();
    });

    test.each(PULL_PRODUCERS)('errors are errno codes (EINVAL, ENOMEM, EIO, ...) (%s)', async (_name, make) => {
      const guard = leakGuard(acd);
      for (const code of [EINVAL, ENOMEM, EIO]) {
        const stream = make(kind, { failAt: 0, code });
        const out = outStruct(kind);
        expect(raw(kind).getNext(stream.ptr, out.ptr)).toBe(code);
        out.free();
        stream.release();
      }
      await guard.check();
    });

    test.each(PULL_PRODUCERS)('the data returned by get_schema and get_next must be released independently: they outlive the stream (%s)', async (_name, make) => {
      const guard = leakGuard(acd);
      const stream = make(kind, { n: 2 });
      const r = raw(kind);
      const schema = acd.core.alloc(acd.core.structs.size('ArrowSchema'));
      const out = outStruct(kind);
      expect(r.getSchema(stream.ptr, schema)).toBe(0);
      expect(r.getNext(stream.ptr, out.ptr)).toBe(0);
      r.release(stream.ptr);
      expect(isReleased(acd, STRUCT[kind], stream.ptr)).toBe(true);
      acd.core.arrayValidate(schema, out.array, 3); // every byte still there (FULL validation)
      acd.core.schemaRelease(schema);
      acd.core.free(schema);
      out.free();
      stream.release();
      await guard.check();
    });

    test.each(PULL_PRODUCERS)('the stream\'s lifetime is managed by its release callback, which marks it released (%s)', async (_name, make) => {
      const guard = leakGuard(acd);
      const stream = make(kind, {});
      const s = acd.core.structs;
      for (const f of ['get_schema', 'get_next', 'get_last_error', 'release']) expect(s.ptr(STRUCT[kind], stream.ptr, f)).not.toBe(0); // all mandatory
      raw(kind).release(stream.ptr);
      expect(isReleased(acd, STRUCT[kind], stream.ptr)).toBe(true);
      stream.release(); // releasing a released stream again: nothing happens
      await guard.check();
    });

    test.each(PULL_PRODUCERS)('the schema is the same for all data chunks (%s)', async (_name, make) => {
      const guard = leakGuard(acd);
      const stream = make(kind, { n: 3 });
      const r = raw(kind);
      const schema = acd.core.alloc(acd.core.structs.size('ArrowSchema'));
      expect(r.getSchema(stream.ptr, schema)).toBe(0);
      const out = outStruct(kind);
      for (let i = 0; i < 3; i++) {
        expect(r.getNext(stream.ptr, out.ptr)).toBe(0);
        acd.core.arrayValidate(schema, out.array, 3);
        acd.core.arrayRelease(out.array);
      }
      acd.core.schemaRelease(schema);
      acd.core.free(schema);
      out.free();
      stream.release();
      await guard.check();
    });

    if (kind === 'device') {
      test.each(PULL_PRODUCERS)('the next chunk MUST be accessible from a device type matching device_type (%s)', async (_name, make) => {
        const guard = leakGuard(acd);
        const stream = make(kind, { n: 2 });
        const out = outStruct(kind);
        const streamType = acd.core.structs.i32('ArrowDeviceArrayStream', stream.ptr, 'device_type');
        expect(raw(kind).getNext(stream.ptr, out.ptr)).toBe(0);
        expect(acd.core.structs.i32('ArrowDeviceArray', out.ptr, 'device_type')).toBe(streamType);
        out.free();
        stream.release();
        // A source whose batch is on another device type: the C producer refuses it.
        const wrong = cStream(acd.core, CBatchSource.generator(acd.core, { batches: 2, wrongDeviceAt: 0 }), 'device');
        const out2 = outStruct(kind);
        expect(raw(kind).getNext(wrong.ptr, out2.ptr)).toBe(EINVAL);
        expect(acd.core.structs.cString(raw(kind).getLastError(wrong.ptr), 'message')).toBe('device_type: expected 1 (the stream\'s), found 12');
        out2.free();
        wrong.release();
        await guard.check();
      });
    }
  });
});

// ---- the async device stream: producers ------------------------------------------------------

interface AsyncProducerOptions {
  n?: number;
  failAt?: number;
  metadata?: ReadonlyMap<string, string> | null;
}

async function* asyncBatches(o: AsyncProducerOptions): AsyncGenerator<arrow.RecordBatch> {
  const all = sampleBatches(o.n ?? 3, 2);
  for (let i = 0; i < all.length; i++) {
    await tick();
    if (i === o.failAt) throw new ArrowCDeviceError('boom', EIO);
    yield all[i]!;
  }
}

const ASYNC_PRODUCERS: [string, (handler: number, o: AsyncProducerOptions) => void][] = [
  ['TS producer', (handler, o) => {
    produceAsync(acd, handler, asyncBatches(o), { schema: sampleBatches(1)[0]!.schema, additionalMetadata: o.metadata ?? null });
  }],
  ['C producer', (handler, o) => startCAsyncProducer(acd.core, handler, CBatchSource.generator(acd.core, {
    batches: o.n ?? 3, rowsPerBatch: 2, failAt: o.failAt, failCode: EIO, failMessage: 'boom',
  }), o.metadata ?? null)],
];

/** Runs a producer against a spy handler until it releases it. */
async function spyOn(start: (handler: number, o: AsyncProducerOptions) => void, script: SpyHandlerScript, o: AsyncProducerOptions = {}, during?: (spy: SpyHandler) => Promise<void>): Promise<SpyHandler> {
  const spy = new SpyHandler(acd, script);
  start(spy.ptr, o);
  if (during !== undefined) await during(spy);
  await spy.whenReleased();
  return spy;
}

const ALL = { requestInSchema: 2, requestPerTask: 1 };

describe('Async Device Stream Interface (CDeviceDataInterface.rst): producer rules, against our producers', () => {
  test.each(ASYNC_PRODUCERS)('on_schema is called exactly once, and first (unless on_error) (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, ALL, { n: 3 });
    expect(spy.log.join('')).toBe('STTTNR');
    expect(spy.violations).toEqual([]);
    expect(spy.dispose()).toEqual([2, 2, 2]);
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('the producer MUST populate the producer member before calling on_schema (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = new SpyHandler(acd, ALL);
    start(spy.ptr, {});
    // Set before the start function returned, and nothing called synchronously.
    expect(acd.core.structs.ptr('ArrowAsyncDeviceStreamHandler', spy.ptr, 'producer')).not.toBe(0);
    expect(spy.log).toEqual([]);
    await spy.whenReleased();
    expect(spy.violations).toEqual([]);
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('the producer owns the ArrowAsyncProducer and cleans it up after calling release (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, ALL, { metadata: new Map([['k', 'v']]) });
    // The spy read the producer struct inside release: still valid, unchanged.
    expect(spy.violations).toEqual([]);
    expect(spy.metadataAtRelease).toEqual(spy.metadataAtSchema);
    spy.dispose();
    await guard.check(); // and nothing of it is left afterwards
  });

  test.each(ASYNC_PRODUCERS)('a producer that receives a non-zero result from on_schema calls nothing but release (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, { returnInSchema: EINVAL });
    for (let i = 0; i < 5; i++) await tick();
    expect(spy.log.join('')).toBe('SR');
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('the producer signals the end of the stream with on_next_task(NULL) (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, ALL, { n: 0 });
    expect(spy.log.join('')).toBe('SNR');
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('a producer MUST NOT call handler callbacks concurrently, and waits for each to return (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, { requestInSchema: 1, requestPerTask: 3 }, { n: 6 });
    expect(spy.log.join('')).toBe('STTTTTTNR');
    expect(spy.violations).toEqual([]); // no callback inside another, none after release
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('request must be called to start receiving on_next_task (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, {}, { n: 3 }, async (s) => {
      await until(() => s.log.length > 0, 'on_schema');
      for (let i = 0; i < 10; i++) await tick();
      expect(s.log.join('')).toBe('S');
      s.cancel(); // and the producer releases
    });
    expect(spy.log.join('')).toBe('SR');
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('after on_error, release is the last call on the handler (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, ALL, { n: 4, failAt: 2 });
    for (let i = 0; i < 5; i++) await tick();
    expect(spy.log.join('')).toBe('STTXR');
    expect(spy.errors).toEqual([{ code: EIO, message: expect.stringContaining('boom') }]);
    expect(spy.violations).toEqual([]);
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('producers MUST NOT process the handler\'s private_data (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, ALL, { n: 2 });
    expect(spy.violations).toEqual([]); // checked at every callback
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('a consumer that does not want the data calls extract_data(NULL): the producer cleans up (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, { ...ALL, extractNull: true }, { n: 3 });
    expect(spy.log.join('')).toBe('STTTNR');
    spy.dispose();
    await guard.check(); // every task's data was freed by the producer
  });

  test.each(ASYNC_PRODUCERS)('extract_data gives the array to the consumer: it is released separately, after the producer is gone (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, ALL, { n: 2 });
    for (const a of spy.arrays) expect(acd.core.structs.ptr('ArrowArray', a + acd.core.structs.offsetOf('ArrowDeviceArray', 'array'), 'release')).not.toBe(0);
    expect(spy.dispose()).toEqual([2, 2]);
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('extract_data is only valid exactly once: a second call fails and frees nothing twice (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, ALL, { n: 3 });
    expect(spy.secondExtracts).toEqual([EINVAL, EINVAL, EINVAL]);
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('every ArrowDeviceArray of a producer is on its device_type (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, ALL, { n: 3 });
    expect(spy.deviceType).toBe(1);
    expect(spy.violations).toEqual([]); // the spy compares each extracted array's device_type
    spy.dispose();
    await guard.check();
  });

  test('every ArrowDeviceArray of a producer is on its device_type: a source batch on another device is an error (C producer)', async () => {
    const guard = leakGuard(acd);
    const spy = new SpyHandler(acd, ALL);
    startCAsyncProducer(acd.core, spy.ptr, CBatchSource.generator(acd.core, { batches: 3, wrongDeviceAt: 1 }));
    await spy.whenReleased();
    expect(spy.log.join('')).toBe('STXR');
    expect(spy.errors[0]).toEqual({ code: EINVAL, message: 'batch 1: device_type: expected 1 (the producer\'s), found 12' });
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('request MUST be valid to call synchronously from within on_schema and on_next_task (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, { requestInSchema: 1, requestPerTask: 1 }, { n: 4 });
    expect(spy.log.join('')).toBe('STTTTNR');
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('request MUST NOT synchronously call on_next_task or on_error (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, {}, { n: 2 }, async (s) => {
      await until(() => s.log.length > 0, 'on_schema');
      s.request(1);
      expect(s.log.join('')).toBe('S'); // nothing inside request
      s.request(0); // invalid: the error comes later, through on_error
      expect(s.log.join('')).toBe('S');
    });
    expect(spy.violations).toEqual([]); // the spy flags any callback made from inside request
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('after cancel, calls to request must be a NOP, but allowed (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, { requestInSchema: 1, requestPerTask: 1, cancelAfter: 1 }, { n: 5 });
    expect(spy.log.join('')).toBe('STR'); // the request(5) after cancel produced nothing
    expect(spy.violations).toEqual([]);
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('on_next_task is called only up to the total sum of the requests (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, {}, { n: 6 }, async (s) => {
      await until(() => s.log.length > 0, 'on_schema');
      s.request(2);
      await until(() => s.delivered === 2, 'two tasks');
      for (let i = 0; i < 10; i++) await tick();
      expect(s.delivered).toBe(2); // back-pressure: it waits
      s.request(10);
    });
    expect(spy.log.join('')).toBe('STTTTTTNR');
    expect(spy.violations).toEqual([]);
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('request with n <= 0 is invalid: the producer calls on_error (EINVAL), then release (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    for (const n of [0, -3]) {
      const spy = await spyOn(start, {}, {}, async (s) => {
        await until(() => s.log.length > 0, 'on_schema');
        s.request(n);
      });
      expect(spy.log.join('')).toBe('SXR');
      expect(spy.errors).toEqual([{ code: EINVAL, message: `request: n must be > 0, found ${n}` }]);
      spy.dispose();
    }
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('cancel is idempotent: calls after the first MUST be a NOP (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, { requestInSchema: 2, requestPerTask: 1, cancelAfter: 2 }, { n: 5 });
    expect(spy.log.join('')).toBe('STTR'); // one release, no error, for two cancels
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('cancel MUST NOT call any handler callback other than on_error (and none synchronously) (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, {}, { n: 3 }, async (s) => {
      await until(() => s.log.length > 0, 'on_schema');
      s.cancel();
      expect(s.log.join('')).toBe('S');
    });
    expect(spy.log.join('')).toBe('SR');
    expect(spy.violations).toEqual([]);
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('after cancel, the producer eventually stops calling on_next_task and calls release (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, { requestInSchema: 3, cancelAfter: 1 }, { n: 10 });
    expect(spy.log[spy.log.length - 1]).toBe('R');
    expect(spy.log.filter((c) => c === 'T').length).toBeLessThanOrEqual(3);
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('successful cancelling MUST NOT result in a producer calling on_error (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, { requestInSchema: 2, requestPerTask: 1, cancelAfter: 1 }, { n: 4 });
    expect(spy.log).not.toContain('X');
    expect(spy.errors).toEqual([]);
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('additional_metadata MUST be NULL or metadata as ArrowSchema.metadata, valid for the producer\'s lifetime (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const withNone = await spyOn(start, ALL, { n: 1 });
    expect(withNone.metadataAtSchema).toBeNull();
    withNone.dispose();
    const spy = await spyOn(start, ALL, { n: 1, metadata: new Map([['rows', '2'], ['origin', 'test']]) });
    const expected = new Uint8Array([2, 0, 0, 0, 4, 0, 0, 0, ...new TextEncoder().encode('rows'), 1, 0, 0, 0, ...new TextEncoder().encode('2'),
      6, 0, 0, 0, ...new TextEncoder().encode('origin'), 4, 0, 0, 0, ...new TextEncoder().encode('test')]);
    expect(spy.metadataAtSchema).toEqual(expected);
    expect(spy.metadataAtRelease).toEqual(expected); // still valid when release is called
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('a producer that encounters an error calls on_error, then release after it returns (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, ALL, { n: 3, failAt: 0 });
    expect(spy.log.join('')).toBe('SXR');
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('if on_next_task returns non-zero, the producer does not call on_error, but eventually release (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const spy = await spyOn(start, { ...ALL, failTaskAt: 1 }, { n: 4 });
    for (let i = 0; i < 5; i++) await tick();
    expect(spy.log.join('')).toBe('STTR');
    spy.dispose();
    await guard.check();
  });

  test.each(ASYNC_PRODUCERS)('the ArrowAsyncTask is owned by the producer and cleaned up during extract_data (%s)', async (_name, start) => {
    const guard = leakGuard(acd);
    const rt = streamRuntime(acd.core);
    const spy = await spyOn(start, ALL, { n: 3 });
    expect(rt.liveOf('task')).toBe(0);
    expect(rt.cAsyncStats().tasksLive).toBe(0);
    spy.dispose();
    await guard.check();
  });
});

// ---- the async device stream: consumers ------------------------------------------------------

interface ConsumerUnderTest {
  handler: number;
  /** Waits for what the consumer does with what it got; returns the batches it kept and its error. */
  settle(): Promise<{ rows: unknown[][]; error: { code: number; message: string } | null }>;
  finish(): void;
}

const ASYNC_CONSUMERS: [string, (o: { window?: number; cancelAfter?: number }) => ConsumerUnderTest][] = [
  ['TS consumer', (o) => {
    const c = new AsyncStreamConsumer(acd, { window: o.window ?? 4 });
    let taken = 0;
    return {
      handler: c.handler,
      async settle() {
        const rows: unknown[][] = [];
        try {
          for await (const b of c) {
            rows.push(rowsOf(b));
            if (++taken === o.cancelAfter) c.cancel();
          }
          return { rows, error: null };
        } catch (e) {
          return { rows, error: { code: (e as ArrowCDeviceError).errno, message: (e as Error).message } };
        }
      },
      finish: () => c.release(),
    };
  }],
  ['C consumer', (o) => {
    const c = new CAsyncConsumer(acd.core, { window: o.window ?? 4, cancelAfter: o.cancelAfter, extractLater: true });
    return {
      handler: c.handler,
      async settle() {
        for (let i = 0; i < 5; i++) await tick();
        const state = c.state();
        const stream = cStream(acd.core, CBatchSource.fromList(acd.core, c.list.ptr), 'device');
        const reader = importDeviceArrayStream(acd, stream.ptr);
        stream.release();
        const rows = reader.readAll().map(rowsOf);
        return { rows, error: state.errorCode === 0 ? null : { code: state.errorCode, message: state.errorMessage } };
      },
      finish: () => c.release(),
    };
  }],
];

describe('Async Device Stream Interface (CDeviceDataInterface.rst): consumer rules, against our consumers', () => {
  const b = () => sampleBatches(3, 2);

  test.each(ASYNC_CONSUMERS)('the handler can handle callbacks as soon as it is passed to the producer (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    expect(spy.schema(b()[0]!)).toBe(0); // synchronously, at once
    expect(spy.task(b()[0]!)).toBe(0);
    expect(spy.end()).toBe(0);
    spy.release();
    expect((await c.settle()).rows).toEqual([rowsOf(b()[0]!)]);
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('the consumer CANNOT assume the producer member is valid until on_schema: it makes no call before (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    expect(acd.core.structs.ptr('ArrowAsyncDeviceStreamHandler', c.handler, 'producer')).toBe(0);
    const spy = new SpyProducer(acd, c.handler);
    for (let i = 0; i < 5; i++) await tick();
    expect(spy.calls).toEqual([]);
    spy.schema(b()[0]!);
    expect(spy.calls[0]).toMatch(/^request \d+$/); // the first call, from inside on_schema
    spy.end();
    spy.release();
    await c.settle();
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('the ArrowSchema passed to on_schema is moved to a consumer-owned struct; the pointer MUST NOT be kept (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!); // checks the move, then scribbles over the struct
    spy.task(b()[1]!);
    spy.end();
    spy.release();
    expect(spy.violations).toEqual([]);
    expect((await c.settle()).rows).toEqual([rowsOf(b()[1]!)]); // read with the schema it moved out
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('the task is only valid during on_next_task: a consumer that keeps it copies it (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    for (const batch of b()) spy.task(batch); // each task struct is scribbled over after the call
    spy.end();
    spy.release();
    expect((await c.settle()).rows).toEqual(b().map(rowsOf));
    c.finish();
    await guard.check();
  });

  test('on_next_task\'s metadata: a consumer that keeps it MUST copy it (TS consumer)', async () => {
    const guard = leakGuard(acd);
    const c = new AsyncStreamConsumer(acd);
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    spy.task(b()[0]!, { metadata: new Map([['part', 'one']]) });
    spy.task(b()[1]!, { metadata: new Map([['part', 'two']]) }); // scribbled over after each call
    spy.end();
    spy.release();
    const got: (string | undefined)[] = [];
    for await (const e of c.entries()) got.push(e.metadata?.get('part'));
    expect(got).toEqual(['one', 'two']);
    c.release();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('on_error\'s message is only valid during the call: the consumer copies it (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    spy.task(b()[0]!);
    spy.error(EIO, 'the producer lost its source'); // scribbled over right after
    spy.release();
    const { rows, error } = await c.settle();
    expect(rows.length).toBe(1);
    expect(error).toEqual({ code: EIO, message: 'the producer lost its source' });
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('on_error MUST NOT call any method of the ArrowAsyncProducer (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    spy.error(EIO, 'stop');
    spy.release();
    await c.settle();
    expect(spy.violations).toEqual([]);
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('release MUST NOT call any method of the ArrowAsyncProducer (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    spy.task(b()[0]!);
    spy.release(); // without the end: the stream just stops
    await c.settle();
    expect(spy.violations).toEqual([]);
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('extract_data is called exactly once per task (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    for (const batch of b()) spy.task(batch);
    spy.end();
    spy.release();
    await c.settle();
    expect(spy.extracts).toEqual([{ calls: 1, nulls: 0 }, { calls: 1, nulls: 0 }, { calls: 1, nulls: 0 }]);
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('a consumer that does not want the data must still call extract_data, with NULL (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({ cancelAfter: 1 });
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    spy.task(b()[0]!);
    const first = c.settle(); // takes the first batch, then cancels
    await until(() => spy.cancelled, 'cancel');
    spy.task(b()[1]!); // after cancel: not wanted
    spy.release();
    await first;
    expect(spy.extracts).toEqual([{ calls: 1, nulls: 0 }, { calls: 1, nulls: 1 }]);
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('a consumer MUST be prepared to receive on_next_task or on_error after calling cancel (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({ cancelAfter: 1 });
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    spy.task(b()[0]!);
    const settled = c.settle();
    await until(() => spy.cancelled, 'cancel');
    expect(spy.task(b()[1]!)).toBe(0);
    expect(spy.task(b()[2]!)).toBe(0);
    spy.error(EIO, 'late error');
    spy.release();
    const { rows } = await settled;
    expect(rows.length).toBe(1);
    expect(spy.extracts.map((e) => e.calls)).toEqual([1, 1, 1]);
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('consumers MUST NOT process the producer\'s or the task\'s private_data (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    const key = acd.core.structs.ptr('ArrowAsyncProducer', spy.ptr, 'private_data');
    spy.schema(b()[0]!);
    spy.task(b()[0]!);
    spy.end();
    expect(acd.core.structs.ptr('ArrowAsyncProducer', spy.ptr, 'private_data')).toBe(key);
    spy.release();
    await c.settle();
    // Every request and extract_data reached the spy through the private_data it set.
    expect(spy.requested).toBeGreaterThan(0n);
    expect(spy.extracts[0]!.calls).toBe(1);
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('a non-zero return of extract_data is an error of the stream (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    spy.task(b()[0]!, { extractCode: ENOMEM });
    const settled = c.settle();
    await until(() => spy.cancelled, 'cancel');
    spy.error(ENOMEM, 'extract failed'); // the producer follows with on_error
    spy.release();
    const { error } = await settled;
    expect(error?.code).toBe(ENOMEM);
    c.finish();
    await guard.check();
  });

  test.each(ASYNC_CONSUMERS)('every ArrowDeviceArray must be on the producer\'s device_type: a mismatch is an error (%s)', async (_name, make) => {
    const guard = leakGuard(acd);
    const c = make({});
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    spy.task(b()[0]!, { deviceType: 2 });
    const settled = c.settle();
    await until(() => spy.cancelled, 'cancel');
    spy.release();
    const { rows, error } = await settled;
    expect(rows).toEqual([]);
    expect(error?.code).toBe(EINVAL);
    expect(error?.message).toMatch(/device_type: expected 1 \(the producer's\), found 2/);
    c.finish();
    await guard.check(); // the mismatched array was released
  });

  test('back-pressure: request(window) from on_schema, then one request(1) per batch taken, never n <= 0 (TS consumer)', async () => {
    const guard = leakGuard(acd);
    const c = new AsyncStreamConsumer(acd, { window: 2 });
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    expect(spy.calls).toEqual(['request 2']);
    spy.task(b()[0]!);
    spy.task(b()[1]!);
    expect(spy.calls).toEqual(['request 2']); // nothing taken yet
    const it = c[Symbol.asyncIterator]();
    await it.next();
    expect(spy.calls).toEqual(['request 2', 'request 1']);
    await it.next();
    expect(spy.calls).toEqual(['request 2', 'request 1', 'request 1']);
    spy.end();
    spy.release();
    expect((await it.next()).done).toBe(true);
    c.release();
    await guard.check();
  });

  test('back-pressure: request(window) from on_schema, then one request(1) per batch taken, never n <= 0 (C consumer)', async () => {
    const guard = leakGuard(acd);
    const c = new CAsyncConsumer(acd.core, { window: 2, extractLater: true });
    const spy = new SpyProducer(acd, c.handler);
    spy.schema(b()[0]!);
    expect(spy.calls).toEqual(['request 2']);
    spy.task(b()[0]!);
    spy.task(b()[1]!);
    expect(spy.calls).toEqual(['request 2']); // queued, taken in the pump
    await until(() => spy.calls.length === 3, 'two requests');
    expect(spy.calls).toEqual(['request 2', 'request 1', 'request 1']);
    spy.end();
    spy.release();
    expect(c.list.length).toBe(2);
    c.release();
    await guard.check();
  });
});
