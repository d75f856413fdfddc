// The async device stream (ArrowAsyncDeviceStreamHandler, ArrowAsyncProducer,
// ArrowAsyncTask; experimental in the spec), produced in TypeScript:
// produceAsync makes an async iterable or ReadableStream of batches (and
// produceAsyncRaw one of raw arrays of any type) drive any consumer's
// handler: on_schema first, on_next_task only within the credit given by
// request(n) and never from inside request (the work runs from a microtask),
// on_next_task(NULL) at the end, on_error then release on a failure, release
// only after cancel. The handler may be in another module's
// memory ({ into }): where the structs go and how the handler is called is
// async-targets.ts. The consumer is in async-consumer.ts, the low-level
// structs in async-structs.ts, the C producer and consumer in c-backed.ts;
// all are re-exported here.
// Longer than 400 lines because its public functions and types carry their
// reference documentation (docs/api/ is generated from it), ownership included.

import { checkOptions, optionKeys } from '../abi/option-keys.js';
import * as arrow from 'apache-arrow';
import type { CoreRef } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, EIO } from '../abi/errors.js';
import type { ForeignModule } from '../foreign/module.js';
import { coreTarget, intoTarget, type AsyncTarget } from './async-targets.js';
import {
  asyncIteratorOf, batchField, batchItem, rawItem, rawStreamField, schemaField, sourceSchema, streamDevice,
  type Device, type DeviceSpec, type StreamItem, type ToItem,
} from './batches.js';
import { failure, streamRuntime, type ProducerCallbacks, type StreamRuntime } from './runtime.js';
import type { RawArray } from '../model/raw.js';
import type { Field, Metadata, Schema } from '../model/types.js';

export { AsyncStreamConsumer } from './async-consumer.js';
export type { AsyncBatch, AsyncConsumerOptions, AsyncRawConsumerOptions } from './async-extract.js';
export { disposeHandler, freeProducer, makeHandler, makeProducer, makeTask } from './async-structs.js';
export { CAsyncConsumer, startCAsyncProducer, type CAsyncConsumerOptions } from './c-backed.js';

/**
 * What an async producer reads batches from: a Table, a RecordBatchReader, a sync or async iterable of batches, or a ReadableStream of them.
 */
export type AsyncBatchSource =
  | arrow.Table
  | arrow.RecordBatchReader
  | Iterable<arrow.RecordBatch>
  | AsyncIterable<arrow.RecordBatch>
  | ReadableStream<arrow.RecordBatch>;

/** What an async stream of raw arrays (any type of the spec) can be made from. */
export type AsyncRawSource = Iterable<RawArray> | AsyncIterable<RawArray> | ReadableStream<RawArray>;

// ---- producing ----------------------------------------------------------------------------

/** Options of `produceAsync`. */
export interface ProduceAsyncOptions {
  /** The stream's schema; by default the first batch's (or the source's when it has none). */
  schema?: arrow.Schema;
  /**
   * Where the batches are exported (`'cpu'` by default, `'cuda:1'`, `{ type: 'rocm', id: 2 }`, ...).
   */
  device?: DeviceSpec | Device;
  /** ArrowAsyncProducer.additional_metadata (valid until the handler is released). */
  additionalMetadata?: Metadata | null;
  /** The metadata passed with each on_next_task (valid during the call only). */
  taskMetadata?: (batch: arrow.RecordBatch, index: number) => Metadata | null;
  /**
   * The module whose memory holds the handler (acd.foreign(); it needs a
   * growable table and an allocator): a handler made by its own code, whose
   * callbacks are called through its table. The schema, the
   * ArrowAsyncProducer (with additional_metadata), each ArrowAsyncTask with
   * its batch, and the metadata and message strings are then allocated in
   * its memory by its allocator; request, cancel and extract_data are our
   * functions installed in its table (freed once the producer is done and
   * its last task extracted). CPU arrays only.
   */
  into?: ForeignModule;
}

/** produceAsyncRaw's options: its schema is an argument of its own, and taskMetadata is given raw arrays. */
export interface RawProduceAsyncOptions extends Omit<ProduceAsyncOptions, 'schema' | 'taskMetadata'> {
  /** The metadata passed with each on_next_task, given the raw array and its index (valid during the call only). */
  taskMetadata?: (batch: RawArray, index: number) => Metadata | null;
}

export const PRODUCE_ASYNC_OPTION_KEYS = optionKeys<ProduceAsyncOptions>()(['schema', 'device', 'additionalMetadata', 'taskMetadata', 'into']);
export const RAW_PRODUCE_ASYNC_OPTION_KEYS = optionKeys<RawProduceAsyncOptions>()(['device', 'additionalMetadata', 'taskMetadata', 'into']);

/** What the producer needs of its options, whatever its items. */
interface ProducerOptions<T> extends Omit<RawProduceAsyncOptions, 'taskMetadata'> {
  taskMetadata?: (batch: T, index: number) => Metadata | null;
}

/** How a producer learns its stream's field: reading ahead one item when it must (that item is then sent first). */
type OpenField<T> = (iterator: AsyncIterator<T>) => Promise<{ field: Field; first: T | null }>;

/** An apache-arrow source's field: options.schema, else the first batch's, else the source's own. */
function batchSourceField(source: AsyncBatchSource, schema: arrow.Schema | undefined): OpenField<arrow.RecordBatch> {
  return async (iterator) => {
    let first: arrow.RecordBatch | null = null;
    if (schema === undefined) {
      const r = await iterator.next();
      first = r.done ? null : r.value;
    }
    const known = schema ?? (source instanceof arrow.RecordBatchReader ? source.schema ?? undefined : sourceSchema(source));
    if (first === null && known === undefined) throw new ArrowCDeviceError('source: it has no batch and no schema; pass options.schema', EINVAL);
    return { field: first !== null ? batchField(first) : schemaField(known!), first };
  };
}

/**
 * What a producer did, for tests and summaries. JSON-safe: JSON.stringify
 * gives `requested` (a bigint, exact to int64) as a decimal string and
 * `error` as its name, code and message.
 */
export interface ProducerStats {
  /** The sum of the n the consumer gave to `request`. */
  requested: bigint;
  /** How many tasks were handed to on_next_task. */
  tasks: number;
  /** How many tasks the consumer extracted the data of. */
  extracted: number;
  /** How many tasks were extracted with NULL (data not wanted) or never extracted. */
  discarded: number;
  /** Whether the consumer called `cancel`. */
  cancelled: boolean;
  /** The error reported with on_error, if any. */
  error: ArrowCDeviceError | null;
}

/**
 * Drives the consumer's handler at `handler` from `source`. Before returning it sets `handler->producer`; everything else happens later, from microtasks. The returned promise resolves once the handler was released (with the producer's stats); it does not reject: failures go to on_error, and so does what a handler callback throws (a trap, a foreign exception: named after the callback; after on_error, release only).
 *
 * Ownership: the consumer owns the handler throughout (the producer calls its release at the end); the producer owns the ArrowAsyncProducer and frees it after calling the handler's release. Each batch is moved into the consumer by extract_data. Nothing is left for the caller to release.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param handler - the address of a struct ArrowAsyncDeviceStreamHandler.
 * @param source - the batches.
 * @param options - `schema`, `device`, `into`, the metadata.
 * @returns a promise of the final stats, with `done` (the same promise) and the live `stats` on it.
 * @throws `ArrowCDeviceError` (EINVAL), touching nothing, when `source` or `options` are not usable.
 */
export function produceAsync(acd: CoreRef, handler: number, source: AsyncBatchSource, options: ProduceAsyncOptions = {}): Production {
  checkOptions('produceAsync', options, PRODUCE_ASYNC_OPTION_KEYS);
  const iterator = asyncIteratorOf<arrow.RecordBatch>(source, 'a Table, a RecordBatchReader, a ReadableStream or an (async) iterable of RecordBatches');
  return production(new AsyncProducer(acd, handler, iterator, batchSourceField(source, options.schema), batchItem, options));
}

/**
 * Like `produceAsync`, over raw arrays of any type of the spec (run-end encoded and list views included): every raw array must be of the stream's type (else on_error with EINVAL). The function form of `ArrowCDevice.produceAsyncRaw`.
 *
 * Ownership: as `produceAsync`: borrows the handler until the producer calls its `release` (the handler's owner frees it then); the producer, its tasks and the arrays it hands out are freed as the consumer releases them; nothing is left for the caller to release.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param handler - the address of a struct ArrowAsyncDeviceStreamHandler.
 * @param schema - the stream's schema: a Schema (a record batch's struct of its fields) or any Field.
 * @param source - the raw arrays: an (async) iterable or a ReadableStream.
 * @param options - `device`, `additionalMetadata`, `taskMetadata`, `into`.
 * @returns a promise of the final stats, with the live `stats` and `done` on it.
 * @throws `ArrowCDeviceError` (EINVAL) for an unknown option key.
 */
export function produceAsyncRaw(acd: CoreRef, handler: number, schema: Schema | Field, source: AsyncRawSource, options: RawProduceAsyncOptions = {}): Production {
  checkOptions('produceAsyncRaw', options, RAW_PRODUCE_ASYNC_OPTION_KEYS);
  const field = rawStreamField(schema);
  const iterator = asyncIteratorOf<RawArray>(source, 'a ReadableStream or an (async) iterable of raw arrays');
  return production(new AsyncProducer(acd, handler, iterator, async () => ({ field, first: null }), rawItem, options));
}

function production<T>(p: AsyncProducer<T>): Production {
  // The promise itself is what `await produceAsync(...)` gives: the final stats.
  return Object.assign(p.done.then((stats) => stats), { done: p.done, stats: p.stats });
}

/**
 * A running production: a promise of the final stats (`await` it), with
 * `done` (the same promise) and `stats` (live, updated as it goes).
 */
export type Production = Promise<ProducerStats> & { readonly done: Promise<ProducerStats>; readonly stats: ProducerStats };

/** Stats with a toJSON (not enumerable: comparisons see the plain fields). */
function jsonSafe(stats: ProducerStats): ProducerStats {
  Object.defineProperty(stats, 'toJSON', {
    value: () => ({
      ...stats, requested: stats.requested.toString(),
      error: stats.error === null ? null : { name: stats.error.name, code: stats.error.code, message: stats.error.message },
    }),
  });
  return stats;
}

class AsyncProducer<T> implements ProducerCallbacks {
  readonly stats: ProducerStats = jsonSafe({ requested: 0n, tasks: 0, extracted: 0, discarded: 0, cancelled: false, error: null });
  readonly done: Promise<ProducerStats>;
  private resolve!: (s: ProducerStats) => void;
  private readonly target: AsyncTarget;
  private readonly rt: StreamRuntime;
  private readonly device: Device;
  private readonly producer: number;
  private iterator: AsyncIterator<T> | null;
  private field: Field | null = null;
  private first: T | null = null;
  private credit = 0n;
  private pendingError: ArrowCDeviceError | null = null;
  private running = false;
  private finished = false;
  private index = 0;
  /** The handler callback called last (on_error: a throw is followed by release only). */
  private lastCall: 'on_schema' | 'on_next_task' | 'on_error' | 'release' | null = null;

  constructor(acd: CoreRef, private readonly handler: number, iterator: AsyncIterator<T>,
    private readonly openField: OpenField<T>, private readonly toItem: ToItem<T>, private readonly options: ProducerOptions<T>) {
    this.rt = streamRuntime(acd.core);
    this.done = new Promise((r) => { this.resolve = r; });
    this.device = streamDevice(options.device);
    this.target = options.into === undefined ? coreTarget(acd, this.device) : intoTarget(acd, options.into, this.device);
    const s = this.target.structs;
    s.checkRange(handler, s.size('ArrowAsyncDeviceStreamHandler'), options.into === undefined ? 'handler' : `${options.into.name}: handler`);
    this.iterator = iterator; // a bad source threw before this, before the handler is touched
    this.producer = this.target.makeProducer(this.device.type, options.additionalMetadata ?? null, this);
    // Populated before any callback, as the spec requires.
    s.setPtr('ArrowAsyncDeviceStreamHandler', handler, 'producer', this.producer);
    this.schedule();
  }

  // request and cancel only record and schedule: they never call the handler.
  request(n: bigint): void {
    if (this.stats.cancelled || this.finished) return; // a NOP after cancel
    if (n <= 0n) {
      this.pendingError ??= new ArrowCDeviceError(`request: n must be > 0, found ${n}`, EINVAL);
    } else {
      this.stats.requested += n;
      this.credit += n;
    }
    this.schedule();
  }

  cancel(): void {
    if (this.stats.cancelled) return;
    this.stats.cancelled = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.running || this.finished) return;
    this.running = true;
    // Nothing leaves this microtask: run() reports to the handler, and what
    // even that cannot report ends the stream here.
    queueMicrotask(() => {
      this.run().catch((e: unknown) => {
        this.rt.noteUncaught(e);
        this.stats.error ??= new ArrowCDeviceError(failure(e).message, EIO);
        this.finished = true;
        this.resolve(this.stats);
      });
    });
  }

  /** Calls the handler's callback `name`; a throw (a trap, a foreign exception) names it. */
  private call<T>(name: 'on_schema' | 'on_next_task' | 'on_error' | 'release', f: () => T): T {
    this.lastCall = name;
    try {
      return this.target.unwinding(f);
    } catch (e) {
      if (e instanceof ArrowCDeviceError) throw e;
      throw new ArrowCDeviceError(`${name}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`, EIO);
    }
  }

  private async run(): Promise<void> {
    try {
      if (this.field === null) {
        if (!(await this.sendSchema())) return;
      }
      while (!this.finished) {
        if (this.pendingError !== null) return this.fail(this.pendingError);
        if (this.stats.cancelled) return this.finish(); // no on_error after cancel
        if (this.credit <= 0n) return; // idle until request
        const batch = await this.take();
        if (this.finished) return;
        if (this.stats.cancelled) return this.finish();
        this.credit--;
        if (batch === null) {
          this.call('on_next_task', () => this.target.onNextTask(this.handler, 0, 0));
          return this.finish();
        }
        if (!this.sendTask(batch)) return;
      }
    } catch (e) {
      const f = failure(e);
      const error = new ArrowCDeviceError(f.message, f.errno === 0 ? EIO : f.errno, f.details);
      try {
        if (this.finished) {
          this.stats.error ??= error; // release threw: nothing more to call
        } else if (this.lastCall === 'on_error') {
          this.stats.error ??= error;
          this.finish(); // on_error threw: release is still the last call
        } else {
          this.fail(error);
        }
      } catch (again) {
        // The handler failed again: give up on it.
        this.stats.error ??= new ArrowCDeviceError(failure(again).message, EIO);
        this.abandon();
      }
    } finally {
      this.running = false;
      // Work that arrived while a batch was awaited.
      if (!this.finished && (this.pendingError !== null || this.stats.cancelled || this.credit > 0n)) this.schedule();
    }
  }

  private async sendSchema(): Promise<boolean> {
    const { field, first } = await this.openField(this.iterator!);
    this.field = field;
    this.first = first;
    const t = this.target;
    const ptr = t.alloc(t.structs.size('ArrowSchema'));
    let code: number;
    try {
      t.writeSchema(ptr, this.field);
      code = this.call('on_schema', () => t.onSchema(this.handler, ptr));
    } finally {
      t.releaseSchema(ptr); // the consumer moved it out; release whatever is left
      t.free(ptr);
    }
    if (code !== 0) {
      this.finish(); // a consumer's failure: release only
      return false;
    }
    return true;
  }

  private async take(): Promise<T | null> {
    if (this.first !== null) {
      const b = this.first;
      this.first = null;
      return b;
    }
    const r = await this.iterator!.next();
    if (r.done) {
      this.iterator = null; // exhausted: nothing to close
      return null;
    }
    return r.value;
  }

  /** A failure to check or write the batch being sent: with its index. */
  private batchError(e: unknown): ArrowCDeviceError {
    const f = failure(e);
    return new ArrowCDeviceError(`batch ${this.index}: ${f.message}`, f.errno, f.details);
  }

  /** Exports batch into a task and hands it over; false when the stream is over. */
  private sendTask(batch: T): boolean {
    const t = this.target;
    let item: StreamItem;
    try {
      item = this.toItem(batch, this.field!);
    } catch (e) {
      throw this.batchError(e);
    }
    const metadata = t.metadata(this.options.taskMetadata?.(batch, this.index) ?? null);
    let task: number;
    try {
      task = t.makeTask(item, this.field!, (wanted: boolean) => { if (wanted) this.stats.extracted++; else this.stats.discarded++; });
    } catch (e) {
      if (metadata !== 0) t.free(metadata);
      throw this.batchError(e);
    }
    this.index++;
    this.stats.tasks++;
    let code: number;
    try {
      code = this.call('on_next_task', () => t.onNextTask(this.handler, task, metadata));
    } catch (e) {
      // It threw before taking the task: drop it (a copy it kept now gives EINVAL).
      t.dropTask(task);
      throw e;
    } finally {
      // Valid during the call only: a consumer that keeps the task copied it.
      t.free(task);
      if (metadata !== 0) t.free(metadata);
    }
    if (code !== 0) {
      this.finish();
      return false;
    }
    return true;
  }

  private fail(error: ArrowCDeviceError): void {
    if (this.finished) return;
    this.stats.error = error;
    const message = this.target.cString(error.message);
    try {
      this.call('on_error', () => this.target.onError(this.handler, error.errno, message));
    } finally {
      this.target.free(message);
    }
    this.finish();
  }

  /** release is the last call on the handler; the producer struct goes after it. */
  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    try {
      this.call('release', () => this.target.release(this.handler));
    } finally {
      this.cleanUp();
    }
  }

  /** Stops without calling the handler again (it failed). */
  private abandon(): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanUp();
  }

  private cleanUp(): void {
    this.target.freeProducer(this.producer);
    const iterator = this.iterator;
    this.iterator = null;
    let closing: Promise<unknown> | null = null;
    try {
      if (iterator?.return !== undefined) closing = Promise.resolve(iterator.return());
    } catch {
      // The source failed to close: the stream is over all the same.
    }
    if (closing === null) this.resolve(this.stats);
    else closing.then(() => this.resolve(this.stats), () => this.resolve(this.stats));
  }
}
