// Consuming a pull stream (ArrowArrayStream or ArrowDeviceArrayStream) that
// lives in wasm memory (ours, the C core's, another module's): the stream is
// moved in, its schema imported, and its batches read one get_next at a time
// as apache-arrow batches (StreamReader) or as raw arrays of any type
// (RawStreamReader), sync and async iterable. Producing is in pull.ts.

import * as arrow from 'apache-arrow';
import type { ImportedSchema, Imported } from '../exchange/handles.js';
import { importRaw, importSchema } from '../exchange/import.js';
import { IMPORT_OPTION_KEYS, type ImportOptions, type RawImport } from '../exchange/options.js';
import { checkOptions, optionKeys } from '../abi/option-keys.js';
import { importBatch } from '../arrow-js/import.js';
import { importDeviceBatch, importDeviceRaw } from '../device/exchange.js';
import { toArrowSchema } from '../arrow-js/arrow-types.js';
import { convertedType } from '../arrow-js/arrow-data.js';
import type { CoreRef } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../abi/errors.js';
import { constants } from '../abi/generated/layout.js';
import { Handle } from '../abi/handles.js';
import type { RawArray } from '../model/raw.js';
import type { Conversion, Field } from '../model/types.js';
import { coreCalls, foreignCalls, outRoom, STREAM_STRUCT, type PullCalls, type StreamKind } from './pull-calls.js';
import { failure } from './runtime.js';

/**
 * Import options of each batch of a stream: those of `ImportOptions` (`mode`, `validate`, `convert`, `from`, ...) and, for batches not on the CPU, `device`: `'copy'` (the default: copied to the host) or `'reject'`.
 */
export type StreamImportOptions = ImportOptions & { device?: 'copy' | 'reject' };
export const STREAM_IMPORT_OPTION_KEYS = optionKeys<StreamImportOptions>()([...IMPORT_OPTION_KEYS, 'device']);

/** Raw streams: the same, without convert (a raw array keeps every type as it is). */
export type RawStreamImportOptions = Omit<StreamImportOptions, 'convert'>;
export const RAW_STREAM_IMPORT_OPTION_KEYS = optionKeys<RawStreamImportOptions>()(['from', 'mode', 'inPlace', 'requestedSchema', 'validate', 'device']);

interface ReaderState {
  /** The calls on the stream, in the memory it lives in (the core's, or another module's). */
  calls: PullCalls;
  kind: StreamKind;
  own: number;
  out: number;
  schema: ImportedSchema | null;
  handles: Imported<unknown>[];
  done: boolean;
}

/** Releases the stream, its structs and the schema; view-mode batches stay. */
function finish(st: ReaderState): void {
  if (st.done) return;
  st.done = true;
  st.calls.releaseStream(st.own);
  st.calls.free(st.own);
  st.calls.free(st.out);
  st.schema?.release();
  st.schema = null;
}

/**
 * What `StreamReader` and `RawStreamReader` share: `next()`, `nextHandle()`, `readAll()`, sync and async iteration, `batchesRead`, `done`. `H` is a batch's handle value, `T` what iteration gives.
 *
 * Ownership: it owns the stream (moved in from the producer's struct). Reaching the end, an error, or leaving a loop early releases the stream; in copy mode (the default) nothing is then left to release, in view mode the batches stay valid until `release()`, which the caller must then call (or use `using`).
 */
export abstract class PullReader<H, T> extends Handle implements Iterable<T>, AsyncIterable<T> {
  /** The stream's ArrowDeviceType (ARROW_DEVICE_CPU for an ArrowArrayStream). */
  readonly deviceType: number;
  private readonly st: ReaderState;
  private count = 0;

  /** The import options of each batch. */
  readonly options: StreamImportOptions;
  /** The instance the batches are imported with. */
  protected readonly acd: CoreRef;
  /**
   * Made by the stream imports (`importArrayStream`, `importRawArrayStream`, ...); not meant to be called directly.
   *
   * Ownership: takes ownership of the moved stream and its schema in `st`.
   * @param acd - the instance.
   * @param st - the stream's state.
   * @param options - the import options of each batch.
   */
  constructor(acd: CoreRef, st: ReaderState, options: StreamImportOptions) {
    super(() => {
      for (const h of st.handles) h.release();
      st.handles.length = 0;
      finish(st);
    });
    this.acd = acd;
    this.options = options;
    this.st = st;
    this.deviceType = st.kind === 'device'
      ? st.calls.structs.i32('ArrowDeviceArrayStream', st.own, 'device_type')
      : constants.ARROW_DEVICE_CPU;
  }

  /**
   * Imports the batch at `out` (an ArrowArray, or an ArrowDeviceArray for a device stream).
   *
   * Ownership: moves the array at `out` into the returned handle.
   * @param schema - the stream's schema.
   * @param out - the array's address.
   * @param device - whether `out` is an ArrowDeviceArray.
   */
  protected abstract importAt(schema: ImportedSchema, out: number, device: boolean): Imported<H>;

  /**
   * What iteration gives for a batch's handle value.
   *
   * Ownership: nothing changes hands.
   * @param value - the handle's value.
   */
  protected abstract item(value: H): T;

  /** Batches read so far. */
  get batchesRead(): number {
    return this.count;
  }

  /** Whether the stream was released (end reached, error, or release()). */
  get done(): boolean {
    return this.st.done;
  }

  /**
   * The next batch as a handle, or null at the end.
   *
   * Ownership: the caller owns the returned handle (view mode: it owns the C array until its `release()`, which the reader's `release()` also does).
   * @throws `ArrowCDeviceError` with the producer's code and message (from get_last_error).
   */
  nextHandle(): Imported<H> | null {
    const st = this.st;
    if (st.done) return null;
    const code = st.calls.getNext(st.own, st.out);
    if (code !== 0) {
      const message = st.calls.lastError();
      finish(st);
      throw new ArrowCDeviceError(`batch ${this.count}: ${message}`, code);
    }
    const arrayAt = st.kind === 'device' ? st.out + st.calls.structs.offsetOf('ArrowDeviceArray', 'array') : st.out;
    if (st.calls.structs.ptr('ArrowArray', arrayAt, 'release') === 0) {
      finish(st);
      return null;
    }
    let handle: Imported<H>;
    try {
      handle = this.importAt(st.schema!, st.out, st.kind === 'device');
    } catch (e) {
      st.calls.releaseArray(arrayAt); // still ours: the import moved nothing
      finish(st);
      const f = failure(e);
      throw new ArrowCDeviceError(`batch ${this.count}: ${f.message}`, f.errno, f.details);
    }
    this.count++;
    if ((this.options.mode ?? 'copy') === 'view') st.handles.push(handle);
    return handle;
  }

  /**
   * The next batch, as an iterator result (`done` at the end).
   *
   * Ownership: copy mode: the batch is JS memory; view mode: the reader keeps the batch's C array until its `release()`.
   * @throws `ArrowCDeviceError` with the producer's code and message.
   */
  next(): IteratorResult<T, undefined> {
    const h = this.nextHandle();
    return h === null ? { done: true, value: undefined } : { done: false, value: this.item(h.value) };
  }

  /**
   * Every remaining batch.
   *
   * Ownership: as `next()`.
   */
  readAll(): T[] {
    const out: T[] = [];
    for (let r = this.next(); !r.done; r = this.next()) out.push(r.value);
    return out;
  }

  /**
   * Sync iteration over the remaining batches; leaving the loop early releases the stream.
   *
   * Ownership: as `next()`.
   */
  [Symbol.iterator](): Iterator<T, undefined> {
    return {
      next: () => this.next(),
      return: () => {
        finish(this.st);
        return { done: true, value: undefined };
      },
    };
  }

  /**
   * Async iteration (`for await`) over the remaining batches; leaving the loop early releases the stream.
   *
   * Ownership: as `next()`.
   */
  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return {
      next: async () => this.next(),
      return: async () => {
        finish(this.st);
        return { done: true, value: undefined };
      },
    };
  }
}

/**
 * A stream's schema for apache-arrow: a record batch's (a struct), with the types `convert`
 * converts converted, as each batch has them. A type apache-arrow lacks throws ENOSYS, naming both ways out.
 */
export function arrowStreamSchema(schema: ImportedSchema, convert: readonly Conversion[]): arrow.Schema {
  const { fields, metadata } = schema.schema;
  try {
    return toArrowSchema({ fields: fields.map((f) => ({ ...f, type: convertedType(f.type, convert) })), metadata });
  } catch (e) {
    const f = failure(e);
    if (f.errno !== ENOSYS) throw e;
    throw new ArrowCDeviceError(`schema: ${f.message}; read the stream with { convert: ['run_end_encoded', 'list_view', 'dictionary_index64'] }, ` +
      'or as raw arrays (importRawArrayStream, importRawDeviceArrayStream, asyncRawConsumer) to keep every type as it is', ENOSYS);
  }
}

/**
 * A stream read as apache-arrow batches, like a RecordBatchReader: `schema`, `next()`, sync and async iteration, `readAll()` (from `PullReader`).
 *
 * Ownership: it owns the stream (moved in from the producer's struct). Reaching the end, an error, or leaving a loop early releases the stream; in copy mode (the default) nothing is then left to release, in view mode the batches stay valid until `release()`, which the caller must then call (or use `using`).
 */
export class StreamReader extends PullReader<arrow.RecordBatch, arrow.RecordBatch> {
  /** The stream's schema, as apache-arrow's (with the types `convert` asked for). */
  readonly schema: arrow.Schema;

  /**
   * Made by `importArrayStream` and `importDeviceArrayStream`; not meant to be called directly.
   *
   * Ownership: takes ownership of the moved stream and its schema in `st`.
   * @param acd - the instance.
   * @param st - the stream's state.
   * @param options - the import options of each batch.
   * @throws `ArrowCDeviceError` (ENOSYS) for a schema with a type apache-arrow lacks (nothing is then taken).
   */
  constructor(acd: CoreRef, st: ReaderState, options: StreamImportOptions) {
    super(acd, st, options);
    this.schema = arrowStreamSchema(st.schema!, options.convert ?? []);
  }

  /**
   * Imports the batch at `out` as an apache-arrow batch.
   *
   * Ownership: moves the array at `out` into the returned handle.
   * @param schema - the stream's schema.
   * @param out - the array's address.
   * @param device - whether `out` is an ArrowDeviceArray.
   */
  protected importAt(schema: ImportedSchema, out: number, device: boolean): Imported<arrow.RecordBatch> {
    return device ? importDeviceBatch(this.acd.core, schema, out, this.options) : importBatch(this.acd.core, schema, out, this.options);
  }

  /**
   * The batch itself.
   *
   * Ownership: nothing changes hands.
   * @param value - the batch.
   */
  protected item(value: arrow.RecordBatch): arrow.RecordBatch {
    return value;
  }
}

/**
 * A stream read as raw arrays (any type of the spec, as their C buffers and children): `field`, then one RawArray per batch from `next()`, iteration and `readAll()` (from `PullReader`); `nextHandle()` gives what `importRaw` gives.
 *
 * Ownership: it owns the stream (moved in from the producer's struct). Reaching the end, an error, or leaving a loop early releases the stream; in copy mode (the default) nothing is then left to release, in view mode the arrays stay valid until `release()`, which the caller must then call (or use `using`).
 */
export class RawStreamReader extends PullReader<RawImport, RawArray> {
  /** The stream's schema in the model (a record batch's is a struct whose children are the columns). */
  readonly field: Field;

  /**
   * Made by `importRawArrayStream` and `importRawDeviceArrayStream`; not meant to be called directly.
   *
   * Ownership: takes ownership of the moved stream and its schema in `st`.
   * @param acd - the instance.
   * @param st - the stream's state.
   * @param options - the import options of each array.
   */
  constructor(acd: CoreRef, st: ReaderState, options: RawStreamImportOptions) {
    super(acd, st, options);
    this.field = st.schema!.field;
  }

  /**
   * Imports the array at `out` as a raw array.
   *
   * Ownership: moves the array at `out` into the returned handle.
   * @param schema - the stream's schema.
   * @param out - the array's address.
   * @param device - whether `out` is an ArrowDeviceArray.
   */
  protected importAt(schema: ImportedSchema, out: number, device: boolean): Imported<RawImport> {
    return device ? importDeviceRaw(this.acd.core, schema, out, this.options) : importRaw(this.acd.core, schema, out, this.options);
  }

  /**
   * The raw array of an import.
   *
   * Ownership: nothing changes hands.
   * @param value - the import.
   */
  protected item(value: RawImport): RawArray {
    return value.array;
  }
}

/**
 * Moves the stream at ptr in and imports its schema (a record batch's, a struct, unless
 * anyType), then makes the reader. On failure nothing is moved or released.
 */
function openStream<R>(acd: CoreRef, kind: StreamKind, ptr: number, options: StreamImportOptions, anyType: boolean,
  make: (st: ReaderState) => R): R {
  const calls = options.from === undefined ? coreCalls(acd.core, kind) : foreignCalls(options.from, kind);
  const s = calls.structs;
  const struct = STREAM_STRUCT[kind];
  const where = options.from === undefined ? '' : `${options.from.name}: `;
  s.checkRange(ptr, s.size(struct), `${where}${struct}`);
  if (s.ptr(struct, ptr, 'release') === 0) throw new ArrowCDeviceError(`${where}${struct}: released`, EINVAL);
  const own = calls.alloc(s.size(struct));
  const schemaPtr = calls.alloc(outRoom(s));
  try {
    return moveIn(acd, calls, kind, ptr, own, schemaPtr, options, anyType, make);
  } finally {
    calls.free(schemaPtr);
  }
}

/** openStream, from the move on: on failure the stream is moved back to ptr. */
function moveIn<R>(acd: CoreRef, calls: PullCalls, kind: StreamKind, ptr: number, own: number, schemaPtr: number,
  options: StreamImportOptions, anyType: boolean, make: (st: ReaderState) => R): R {
  const moveBack = () => {
    calls.move(own, ptr);
    calls.free(own);
  };
  calls.move(ptr, own);
  let code: number;
  try {
    code = calls.getSchema(own, schemaPtr);
  } catch (e) {
    moveBack(); // refused before it ran (a callback of the wrong kind), or it trapped
    throw e;
  }
  if (code !== 0) {
    const message = calls.lastError();
    moveBack();
    throw new ArrowCDeviceError(message, code);
  }
  let schema: ImportedSchema | undefined;
  try {
    schema = importSchema(acd.core, schemaPtr, options.from);
    if (!anyType) schema.schema; // a record batch schema: a struct
  } catch (e) {
    // Ours since get_schema succeeded: moved into `schema` when its import did.
    if (schema === undefined) {
      if (options.from === undefined) acd.core.schemaRelease(schemaPtr);
      else options.from.space.release('ArrowSchema', schemaPtr);
    } else {
      schema.release();
    }
    moveBack();
    throw e;
  }
  const out = calls.alloc(outRoom(calls.structs));
  try {
    return make({ calls, kind, own, out, schema, handles: [], done: false });
  } catch (e) {
    // A schema this reader cannot take (a type apache-arrow lacks): the stream goes back, unread.
    schema.release();
    calls.free(out);
    moveBack();
    throw e;
  }
}

/**
 * Takes ownership of the stream at ptr (moved: the source is marked released) and reads
 * its schema, a record batch's. On failure nothing is moved or released.
 */
export function importStream(acd: CoreRef, kind: StreamKind, ptr: number, options: StreamImportOptions): StreamReader {
  checkOptions(kind === 'array' ? 'importArrayStream' : 'importDeviceArrayStream', options, STREAM_IMPORT_OPTION_KEYS);
  return openStream(acd, kind, ptr, options, false, (st) => new StreamReader(acd, st, options));
}

/** Like importStream, read as raw arrays; the stream's schema may be of any type. */
export function importRawStream(acd: CoreRef, kind: StreamKind, ptr: number, options: RawStreamImportOptions): RawStreamReader {
  if (options != null && (options as StreamImportOptions).convert !== undefined) {
    throw new ArrowCDeviceError('convert: is for apache-arrow imports; a raw array keeps every type as it is', EINVAL);
  }
  checkOptions(kind === 'array' ? 'importRawArrayStream' : 'importRawDeviceArrayStream', options, RAW_STREAM_IMPORT_OPTION_KEYS);
  return openStream(acd, kind, ptr, options, true, (st) => new RawStreamReader(acd, st, options));
}
