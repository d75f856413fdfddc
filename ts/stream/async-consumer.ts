// The async device stream's TypeScript consumer: a handler whose tasks come
// out as an AsyncIterable or a ReadableStream, with back-pressure
// (request(window) from on_schema, then request(1) per batch taken) and
// extract_data called exactly once per task (NULL when the data is not
// wanted), each batch an apache-arrow batch or a raw array (async-extract.ts).
// The stream may live in another module's memory ({ from }): the calls that
// differ are in async-calls.ts.
// Longer than 400 lines because its public members carry their reference
// documentation (docs/api/ is generated from it), ownership included.

import type * as arrow from 'apache-arrow';
import type { ImportedSchema, Imported } from '../exchange/handles.js';
import type { CoreRef } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, EIO } from '../abi/errors.js';
import { asyncDispose, dispose } from '../abi/handles.js';
import { checkOptions } from '../abi/option-keys.js';
import { ForeignModule } from '../foreign/module.js';
import { decodeMetadataAt } from '../model/metadata.js';
import { coreAsyncCalls, foreignAsyncCalls, type AsyncCalls } from './async-calls.js';
import {
  ASYNC_CONSUMER_OPTION_KEYS, batchReading, extractTask, type AsyncBatch, type AsyncConsumerOptions, type AsyncReading,
} from './async-extract.js';
import { failure } from './runtime.js';
import type { StreamImportOptions } from './reader.js';
import type { Field, Metadata } from '../model/types.js';

// WASI numbering, as in errors.ts: on_schema's answer after cancel.
const ECANCELED = 11;

interface QueuedTask {
  task: number;
  metadata: Metadata | null;
}

/**
 * A consumer of the async device stream: `handler` is the struct to give to a producer. Batches come out of `[Symbol.asyncIterator]`, `entries()` or `readable()`. Leaving a loop early cancels the producer; tasks that still arrive are extracted with NULL. Cancelled before on_schema (the producer cannot be called yet), the consumer answers on_schema with ECANCELED: the spec's way to refuse a stream, after which the producer calls release only. `T`: apache-arrow batches (`acd.asyncConsumer()`), or raw arrays of any type (`acd.asyncRawConsumer()`, whose stream's schema may be of any type).
 *
 * Ownership: the caller owns the consumer and must `release()` it (or use `await using`). The handler itself is freed when the producer releases it (`done` resolves then); a handler no producer took is freed by `release()`. In view mode the batches (or raw arrays) stay valid until `release()`.
 */
export class AsyncStreamConsumer<T = arrow.RecordBatch> implements AsyncIterable<T> {
  /** The address of the ArrowAsyncDeviceStreamHandler, to give to a producer. */
  readonly handler: number;
  /**
   * Resolves when the handler was released (by the producer, or by `release()` when no producer took it).
   */
  readonly done: Promise<void>;
  /** The stream's schema for apache-arrow, once on_schema came (null for raw arrays: see field). */
  schema: arrow.Schema | null = null;
  /** The stream's schema in the model, once on_schema came (a record batch's: a struct of its columns). */
  field: Field | null = null;
  /** The producer's additional_metadata (copied in on_schema). */
  additionalMetadata: Metadata | null = null;
  /** The producer's device type (from on_schema). */
  deviceType = 0;
  /** The sum of the n this consumer gave to `request`. */
  requested = 0n;
  /** How many `request` calls it made. */
  requestCalls = 0;
  private readonly calls: AsyncCalls;
  private imported: ImportedSchema | null = null;
  private producer = 0;
  private readonly queue: QueuedTask[] = [];
  private error: ArrowCDeviceError | null = null;
  private errorThrown = false;
  private ended = false;
  private released = false;
  private cancelled = false;
  private readonly handles: Imported<unknown>[] = [];
  private wake: (() => void) | null = null;
  private resolveDone!: () => void;
  private readonly window: bigint;
  private readonly importOptions: StreamImportOptions;
  private taken = 0;

  /**
   * Made by `ArrowCDevice.asyncConsumer` (apache-arrow batches) or `ArrowCDevice.asyncRawConsumer` (raw arrays).
   *
   * Ownership: allocates the handler (in the core's memory, or in `options.from`'s); the caller owns the consumer and must `release()` it.
   * @param acd - the instance.
   * @param options - `window`, `from`, and the import options of each batch.
   * @param reading - how each batch is read: as an apache-arrow batch (the default) or as a raw array.
   * @throws `ArrowCDeviceError` (EINVAL) for a window that is not a positive integer, a `from` that is not a ForeignModule, or an unknown option key.
   */
  constructor(private readonly acd: CoreRef, options: AsyncConsumerOptions = {},
    private readonly reading = batchReading as unknown as AsyncReading<T>) {
    if (reading === batchReading as unknown as AsyncReading<T>) checkOptions('asyncConsumer', options, ASYNC_CONSUMER_OPTION_KEYS);
    const { window: _window, from, ...importOptions } = options;
    if (from !== undefined && !(from instanceof ForeignModule)) {
      throw new ArrowCDeviceError('from: expected a ForeignModule (acd.foreign()): the handler is installed in its table', EINVAL);
    }
    this.importOptions = importOptions;
    const window = options.window ?? 4;
    if (!Number.isSafeInteger(window) || window <= 0) throw new ArrowCDeviceError(`window: expected an integer > 0, found ${window}`, EINVAL);
    this.window = BigInt(window);
    this.calls = from === undefined ? coreAsyncCalls(acd.core) : foreignAsyncCalls(acd.core, from);
    this.done = new Promise((r) => { this.resolveDone = r; });
    this.handler = this.calls.makeHandler({
      onSchema: (schema) => this.onSchema(schema),
      onNextTask: (task, metadata) => this.onNextTask(task, metadata),
      onError: (code, message, metadata) => this.onError(code, message, metadata),
      release: () => this.onRelease(),
    });
  }

  /** Whether the producer released the handler (nothing more will come). */
  get isReleased(): boolean {
    return this.released;
  }

  // ---- the handler's callbacks (called by the producer) ----

  private onSchema(schema: number): number {
    const calls = this.calls;
    const s = calls.space.structs;
    if (this.cancelled) {
      calls.releaseSchema(schema); // ours even when refused
      return ECANCELED;
    }
    if (this.imported !== null || this.error !== null) {
      calls.releaseSchema(schema);
      return this.failLocally(new ArrowCDeviceError('on_schema: called a second time', EINVAL));
    }
    this.producer = s.ptr('ArrowAsyncDeviceStreamHandler', this.handler, 'producer');
    if (this.producer === 0) {
      calls.releaseSchema(schema);
      return this.failLocally(new ArrowCDeviceError('on_schema: the producer member is NULL', EINVAL));
    }
    try {
      this.imported = calls.importSchema(schema); // moved (or copied and released): ours now
      this.field = this.imported.field;
      this.schema = this.reading.schemaOf(this.imported, this.importOptions);
      this.deviceType = s.i32('ArrowAsyncProducer', this.producer, 'device_type');
      const metadata = s.ptr('ArrowAsyncProducer', this.producer, 'additional_metadata');
      this.additionalMetadata = metadata === 0 ? null : decodeMetadataAt(calls.space, metadata, 'producer.additional_metadata');
    } catch (e) {
      calls.releaseSchema(schema); // ours even when we fail (a NOP once moved)
      this.imported?.release();
      this.imported = null;
      const f = failure(e);
      return this.failLocally(new ArrowCDeviceError(`on_schema: ${f.message}`, f.errno, f.details));
    }
    this.request(this.window); // valid from inside on_schema
    this.notify();
    return 0;
  }

  private onNextTask(task: number, metadata: number): number {
    const calls = this.calls;
    const s = calls.space.structs;
    if (task === 0) {
      this.ended = true;
      this.notify();
      return 0;
    }
    if (this.cancelled || this.error !== null) {
      this.discard(task); // not wanted: the producer cleans up
      return 0;
    }
    // The task struct is only valid during this call: keep a copy.
    const size = s.size('ArrowAsyncTask');
    let copy: number;
    try {
      s.checkRange(task, size, 'on_next_task: task'); // copyWithin would clamp silently
      copy = calls.alloc(size); // in the producer's memory: its extract_data reads it
    } catch (e) {
      const f = failure(e);
      return this.failLocally(new ArrowCDeviceError(f.message, f.errno, f.details));
    }
    calls.space.bytes.copyWithin(copy, task, task + size);
    let decoded: Metadata | null = null;
    if (metadata !== 0) {
      try {
        decoded = decodeMetadataAt(calls.space, metadata, 'metadata');
      } catch (e) {
        this.discard(copy);
        calls.free(copy);
        const f = failure(e);
        return this.failLocally(new ArrowCDeviceError(`on_next_task: ${f.message}`, f.errno, f.details));
      }
    }
    this.queue.push({ task: copy, metadata: decoded });
    this.notify();
    return 0;
  }

  private onError(code: number, message: number, _metadata: number): void {
    // Copied now: only valid during this call. No producer method is called here.
    const text = message === 0 ? `error ${code} from the producer, with no message` : this.calls.space.structs.cString(message, 'on_error message');
    this.error ??= new ArrowCDeviceError(text, code === 0 ? EIO : code);
    this.notify();
  }

  private onRelease(): void {
    this.released = true;
    this.producer = 0; // no producer call after this
    // Tasks that came before an error are still delivered; after cancel, none.
    if (this.cancelled) this.discardQueue();
    this.notify();
    this.resolveDone();
  }

  // ---- helpers ----

  private failLocally(error: ArrowCDeviceError): number {
    this.error ??= error;
    this.notify();
    return error.errno;
  }

  private request(n: bigint): void {
    if (this.producer === 0 || this.released || this.ended || this.cancelled) return;
    this.requested += n;
    this.requestCalls++;
    try {
      this.calls.request(this.producer, n);
    } catch (e) {
      // The stream's error (never thrown: on_schema and next() go on), and the producer is told.
      this.error ??= e as ArrowCDeviceError;
      this.cancel();
    }
  }

  /** Extracts a task with NULL; a failure is the stream's error, never thrown. */
  private discard(task: number): void {
    try {
      this.calls.extract(task, 0);
    } catch (e) {
      this.error ??= e as ArrowCDeviceError;
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private discardQueue(): void {
    for (const { task } of this.queue.splice(0)) {
      this.discard(task);
      this.calls.free(task);
    }
  }

  /**
   * Asks the producer to stop; batches still arriving are extracted with
   * NULL. Before on_schema, the producer is told by on_schema's ECANCELED.
   * Idempotent; never throws (a failure of the producer's cancel is the
   * stream's error).
   *
   * Ownership: nothing changes hands; `release()` is still needed.
   */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.discardQueue();
    const producer = this.producer;
    if (producer !== 0 && !this.released && !this.ended) {
      try {
        this.calls.cancel(producer);
      } catch (e) {
        this.error ??= e as ArrowCDeviceError;
      }
    }
    this.notify();
  }

  /** Extracts, checks and imports one queued task. */
  private take(entry: QueuedTask): AsyncBatch<T> {
    const h = extractTask(this.acd, this.calls, entry.task, () => this.deviceType, () => this.importedSchema(), this.importOptions, this.reading);
    if ((this.importOptions.mode ?? 'copy') === 'view') this.handles.push(h);
    return { batch: this.reading.item(h.value), metadata: entry.metadata };
  }

  private importedSchema(): ImportedSchema {
    if (this.imported === null || this.imported.released) {
      throw new ArrowCDeviceError('on_next_task before on_schema', EINVAL);
    }
    return this.imported;
  }

  private async nextEntry(): Promise<IteratorResult<AsyncBatch<T>, undefined>> {
    for (;;) {
      const entry = this.queue.shift();
      if (entry !== undefined) {
        if (this.cancelled) {
          this.discard(entry.task);
          this.calls.free(entry.task);
          continue;
        }
        let value: AsyncBatch<T>;
        try {
          value = this.take(entry);
        } catch (e) {
          const f = failure(e);
          this.error ??= new ArrowCDeviceError(`batch ${this.taken}: ${f.message}`, f.errno, f.details);
          this.cancel();
          continue;
        }
        this.taken++;
        this.request(1n); // back-pressure: one more for the one taken
        return { done: false, value };
      }
      // Nothing queued: the schema is not needed any more once nothing can come.
      if (this.error !== null && !this.errorThrown) {
        this.errorThrown = true;
        this.releaseSchema();
        throw this.error;
      }
      if (this.ended || this.released || this.error !== null || this.cancelled) {
        this.releaseSchema();
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => { this.wake = resolve; });
    }
  }

  /**
   * Batches with the metadata of their on_next_task call.
   *
   * Ownership: copy mode: JS memory; view mode: the consumer keeps each batch's C array until `release()`.
   */
  entries(): AsyncIterableIterator<AsyncBatch<T>> {
    const it: AsyncIterableIterator<AsyncBatch<T>> = {
      next: () => this.nextEntry(),
      return: async () => {
        this.cancel();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]: () => it,
    };
    return it;
  }

  /**
   * The batches (`for await`); leaving the loop early cancels the producer.
   *
   * Ownership: copy mode: JS memory; view mode: the consumer keeps each batch's C array until `release()`.
   */
  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    const entries = this.entries();
    return {
      next: async () => {
        const r = await entries.next();
        return r.done ? { done: true, value: undefined } : { done: false, value: r.value.batch };
      },
      return: async () => {
        this.cancel();
        return { done: true, value: undefined };
      },
    };
  }

  /**
   * The batches as a WHATWG ReadableStream (pulled one at a time: back-pressure holds).
   *
   * Ownership: as the iterator's.
   */
  readable(): ReadableStream<T> {
    const it = this[Symbol.asyncIterator]();
    return new ReadableStream<T>({
      pull: async (controller) => {
        const r = await it.next();
        if (r.done) controller.close();
        else controller.enqueue(r.value);
      },
      cancel: async () => {
        await it.return?.();
      },
    }, { highWaterMark: 0 });
  }

  /**
   * Every batch (throws the producer's error).
   *
   * Ownership: as the iterator's.
   */
  async readAll(): Promise<T[]> {
    const out: T[] = [];
    for await (const b of this) out.push(b);
    return out;
  }

  private releaseSchema(): void {
    this.imported?.release();
    this.imported = null;
  }

  /**
   * Cancels the producer when it is still going, drops the batches not taken (extracted with NULL), releases view-mode batches and the schema, and frees the handler when no producer holds it. A producer holds it from setting `handler->producer` (the spec requires that before its first call other than release; `produceAsync` and `startCAsyncProducer` do it before they return) until its release, which then frees it: a producer that sets the member later must not be raced by this call.
   *
   * Ownership: ends the caller's ownership of the consumer; the handler is freed now, or by the producer's release (see `done`).
   */
  release(): void {
    const unused = !this.released && this.calls.space.structs.ptr('ArrowAsyncDeviceStreamHandler', this.handler, 'producer') === 0;
    this.cancel();
    for (const h of this.handles.splice(0)) h.release();
    this.releaseSchema();
    if (unused) {
      this.calls.disposeHandler(this.handler);
      this.released = true;
      this.resolveDone();
    }
  }

  /**
   * `using`: the same as `release()`.
   *
   * Ownership: as `release()`.
   */
  [dispose](): void { this.release(); }
  /**
   * `await using`: `release()`, then waits until the producer has released the handler (`done`).
   *
   * Ownership: as `release()`; once it resolves, nothing of the stream is left allocated.
   */
  async [asyncDispose](): Promise<void> { this.release(); await this.done; }
}
