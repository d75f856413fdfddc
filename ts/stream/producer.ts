// The TypeScript producer of a pull stream over a sync source of
// apache-arrow batches (one batch of read-ahead for the schema) or of raw
// arrays (the schema given): get_schema, get_next (every batch checked
// against the schema), get_last_error and release, as callbacks that write
// through a PullSink, into the core's memory (ts/stream/pull.ts) or another
// module's (ts/stream/into.ts).

import * as arrow from 'apache-arrow';
import { ArrowCDeviceError, EINVAL, EIO } from '../abi/errors.js';
import type { RawArray } from '../model/raw.js';
import type { Field } from '../model/types.js';
import { batchField, schemaField, sourceSchema, type StreamItem, type ToItem } from './batches.js';
import { failure, type PullCallbacks } from './runtime.js';

/** What a pull stream can be made from: a Table, a sync RecordBatchReader or any iterable of batches. */
export type SyncBatchSource = arrow.Table | arrow.RecordBatchReader | Iterable<arrow.RecordBatch>;

/** What a pull stream of raw arrays can be made from: an array, a generator, any iterable. */
export type SyncRawSource = Iterable<RawArray>;

/** Where a TS producer writes what get_schema and get_next give, and keeps get_last_error's message. */
export interface PullSink {
  writeSchema(out: number, field: Field): void;
  writeBatch(out: number, item: StreamItem, field: Field): void;
  /** Marks the array at out released: the end of the stream. */
  markEnd(out: number): void;
  /** A NUL-terminated copy of message where the consumer reads it; freed with free(). */
  cString(message: string): number;
  free(ptr: number): void;
}

/** An iterator over a sync source and the stream's schema. */
export function openSource(source: SyncBatchSource, schema: arrow.Schema | undefined): { iterator: Iterator<arrow.RecordBatch>; first: arrow.RecordBatch | null; field: Field } {
  if (source instanceof arrow.RecordBatchReader && !source.isSync()) {
    throw new ArrowCDeviceError('source: an async RecordBatchReader cannot feed a pull stream; use the async device stream', EINVAL);
  }
  const iterable: Iterable<arrow.RecordBatch> = source instanceof arrow.Table ? source.batches : source;
  if (typeof (iterable as Partial<Iterable<unknown>>)[Symbol.iterator] !== 'function') {
    throw new ArrowCDeviceError('source: expected a Table, a RecordBatchReader or an iterable of RecordBatches', EINVAL);
  }
  const iterator = iterable[Symbol.iterator]();
  // One batch of read-ahead: its Data gives the exact types of the schema.
  const r = schema === undefined ? iterator.next() : undefined;
  const first = r === undefined || r.done ? null : r.value;
  const known = schema ?? sourceSchema(source);
  if (first === null && known === undefined) {
    throw new ArrowCDeviceError('source: it has no batch and no schema; pass options.schema', EINVAL);
  }
  return { iterator, first: r === undefined ? null : first, field: first !== null ? batchField(first) : schemaField(known!) };
}

/** An iterator over a sync source of raw arrays (the schema is given). */
export function openRawSource(source: SyncRawSource): Iterator<RawArray> {
  if (typeof (source as Partial<Iterable<unknown>> | null)?.[Symbol.iterator] !== 'function') {
    throw new ArrowCDeviceError('source: expected an iterable of raw arrays', EINVAL);
  }
  return source[Symbol.iterator]();
}

/** The callbacks of a stream made in TypeScript over a sync source of items T (apache-arrow batches or raw arrays). */
export class PullProducer<T = unknown> implements PullCallbacks {
  private errorPtr = 0;
  private failed: { errno: number; message: string } | null = null;
  private ended = false;
  private index = 0;
  private pending: T | null;

  constructor(private readonly sink: PullSink, readonly field: Field,
    private readonly iterator: Iterator<T>, first: T | null, private readonly toItem: ToItem<T>) {
    this.pending = first;
  }

  getSchema(out: number): number {
    this.clearError();
    try {
      this.sink.writeSchema(out, this.field);
      return 0;
    } catch (e) {
      return this.setError(failure(e), 'get_schema');
    }
  }

  getNext(out: number): number {
    this.clearError();
    // After a failure the stream keeps failing the same way.
    if (this.failed !== null) return this.setError(this.failed);
    this.sink.markEnd(out);
    try {
      const item = this.take();
      if (item === null) return 0; // the end: a released array and 0
      this.sink.writeBatch(out, this.toItem(item, this.field), this.field);
      this.index++;
      return 0;
    } catch (e) {
      this.sink.markEnd(out);
      const f = failure(e);
      this.failed = { errno: f.errno === 0 ? EIO : f.errno, message: f.message };
      return this.setError(this.failed);
    }
  }

  getLastError(): number {
    return this.errorPtr;
  }

  release(): void {
    this.clearError();
    if (!this.ended) {
      this.ended = true;
      this.iterator.return?.();
    }
  }

  private take(): T | null {
    if (this.ended) return null;
    if (this.pending !== null) {
      const b = this.pending;
      this.pending = null;
      return b;
    }
    const r = this.iterator.next();
    if (r.done) {
      this.ended = true;
      return null;
    }
    return r.value;
  }

  private clearError(): void {
    if (this.errorPtr !== 0) this.sink.free(this.errorPtr);
    this.errorPtr = 0;
  }

  /** Keeps the message for get_last_error (valid until the next call). */
  private setError(f: { errno: number; message: string }, prefix?: string): number {
    this.clearError();
    this.errorPtr = this.sink.cString(prefix ? `${prefix}: ${f.message}` : f.message);
    return f.errno;
  }
}

