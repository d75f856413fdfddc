// Pull streams (the C Stream Interface's ArrowArrayStream and the C Device
// Stream Interface's ArrowDeviceArrayStream), both directions:
//  - produced from apache-arrow batches (a Table, a RecordBatchReader, an
//    array or any sync iterable), lazily: get_next pulls the next batch;
//  - consumed from any stream in wasm memory (ours, the C core's, another
//    module's) as a RecordBatchReader-like iterable, sync and async;
// The C core's producer and consumer are in stream-c.ts.
// Longer than 400 lines because its public members carry their reference
// documentation (docs/api/ is generated from it), ownership included.

import * as arrow from 'apache-arrow';
import type { ImportedSchema, Imported } from '../exchange/handles.js';
import { importSchema } from '../exchange/import.js';
import { IMPORT_OPTION_KEYS, type ImportOptions } from '../exchange/options.js';
import { importBatch } from '../arrow-js/import.js';
import { importDeviceBatch } from '../device/exchange.js';
import { toArrowSchema } from '../arrow-js/arrow-types.js';
import { convertedType } from '../arrow-js/arrow-data.js';
import type { CoreRef } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../abi/errors.js';
import { checkOptions, optionKeys } from '../abi/option-keys.js';
import { writeSchema } from '../model/schema.js';
import { constants } from '../abi/generated/layout.js';
import { Handle } from '../abi/handles.js';
import type { AddressSpace } from '../abi/address-space.js';
import type { ForeignModule } from '../foreign/module.js';
import { ARROW_C_DEVICE_STREAM, ARROW_C_STREAM, handOver, type ArrowCDescriptor } from '../exchange/protocol.js';
import {
  CPU, markEnd, streamDevice, writeDeviceBatch, writePlainBatch,
  type Device, type DeviceSpec,
} from './batches.js';
import { coreCalls, foreignCalls, STREAM_STRUCT, type PullCalls, type StreamKind } from './pull-calls.js';
import { openSource, PullProducer, type PullSink, type SyncBatchSource } from './producer.js';
import { exportStreamInto, intoSink } from './into.js';
import { failure, streamRuntime } from './runtime.js';

/** 'array': ArrowArrayStream (CPU arrays); 'device': ArrowDeviceArrayStream. */
export type { StreamKind } from './pull-calls.js';

export type { SyncBatchSource } from './producer.js';

/** Options of a stream export. */
export interface StreamExportOptions {
  /** The stream's schema; by default the first batch's (or the Table's / reader's when there is none). */
  schema?: arrow.Schema;
  /**
   * Device streams: where the batches are exported (`'cpu'`, the default; `'cuda:1'`, `{ type: 'rocm', id: 2 }`, ...).
   */
  device?: DeviceSpec | Device;
  /**
   * Another module (`acd.foreign()`) to export the stream into: its memory, its table (CPU arrays only).
   */
  into?: ForeignModule;
}

export const STREAM_EXPORT_OPTION_KEYS = optionKeys<StreamExportOptions>()(['schema', 'device', 'into']);

/** The struct of each kind of stream. */
export { STREAM_STRUCT };
const RUNTIME_KIND = { array: 'arrayStream', device: 'deviceArrayStream' } as const;

/**
 * A stream struct in wasm memory at `ptr`.
 *
 * Ownership: the handle owns the struct until a consumer moves it out; the caller must `release()` it (or use `using`) in both cases: after a move it frees only the moved-from struct, otherwise it calls the stream's release callback and frees the struct.
 */
export class ExportedStream extends Handle {
  /** Where the struct lives: the core's memory, or another module's (an export `{ into }` it). */
  readonly space: AddressSpace;

  /** The struct's address. */
  readonly ptr: number;
  /** Which stream struct it is. */
  readonly kind: StreamKind;

  /**
   * Made by `exportArrayStream` and `exportDeviceArrayStream`; not meant to be called directly.
   *
   * Ownership: takes ownership of the stream struct at `ptr`.
   * @param owner - the core or module whose memory holds the struct.
   * @param ptr - the struct's address.
   * @param kind - which stream struct it is.
   * @param onRelease - called once the struct is freed.
   */
  constructor(owner: { readonly space: AddressSpace }, ptr: number,
    kind: StreamKind, onRelease?: () => void) {
    const space = owner.space;
    super(() => {
      space.release(STREAM_STRUCT[kind], ptr);
      space.allocator!.free(ptr);
      onRelease?.();
    });
    this.ptr = ptr;
    this.kind = kind;
    this.space = space;
  }

  /**
   * The protocol (docs/protocol.md): the ArrowArrayStream, moved into a descriptor.
   *
   * Ownership: the caller owns the descriptor and must call its `release()` (a consumer that imports it moves the stream out first); this handle keeps the moved-from struct, still to be released.
   * @throws `ArrowCDeviceError` (EINVAL) after `release()`, or for a device stream.
   */
  [ARROW_C_STREAM](): ArrowCDescriptor {
    return this.handOver('array', 'arrow.c_stream');
  }

  /**
   * The protocol: the ArrowDeviceArrayStream, moved into a descriptor.
   *
   * Ownership: as `arrow.c_stream`: the caller owns the descriptor and must call its `release()`.
   * @throws `ArrowCDeviceError` (EINVAL) after `release()`, or for an ArrowArrayStream.
   */
  [ARROW_C_DEVICE_STREAM](): ArrowCDescriptor {
    return this.handOver('device', 'arrow.c_device_stream');
  }

  private handOver(kind: StreamKind, method: string): ArrowCDescriptor {
    if (this.released) throw new ArrowCDeviceError('stream: used after release()', EINVAL);
    if (kind !== this.kind) throw new ArrowCDeviceError(`${method}: this export is an ${STREAM_STRUCT[this.kind]}`, EINVAL);
    return handOver(this.space, [[STREAM_STRUCT[kind], this.ptr, 'stream']]);
  }
}

// ---- producing ----------------------------------------------------------------------

/** The core's memory as a PullSink. */
function coreSink(acd: CoreRef, kind: StreamKind, device: Device): PullSink {
  return {
    writeSchema: (out, field) => writeSchema(acd.core, out, field),
    writeBatch: (out, batch, field) => {
      if (kind === 'device') writeDeviceBatch(acd, out, batch, field, device);
      else writePlainBatch(acd, out, batch, field);
    },
    markEnd: (out) => markEnd(acd, out, kind === 'device'),
    cString: (message) => streamRuntime(acd.core).cString(message),
    free: (ptr) => acd.core.free(ptr),
  };
}

function exportStream(acd: CoreRef, kind: StreamKind, source: SyncBatchSource, options: StreamExportOptions): ExportedStream {
  const core = acd.core;
  const device = streamDevice(options.device);
  if (kind === 'array' && device.type !== CPU.type) {
    throw new ArrowCDeviceError(`device: an ArrowArrayStream carries CPU arrays, found ${device.name}`, EINVAL);
  }
  const { iterator, first, field } = openSource(source, options.schema);
  if (options.into !== undefined) {
    return new ExportedStream(options.into, exportStreamInto(options.into, kind, device, new PullProducer(intoSink(options.into, kind), field, iterator, first)), kind);
  }
  const producer = new PullProducer(coreSink(acd, kind, device), field, iterator, first);
  const ptr = core.alloc(core.structs.size(STREAM_STRUCT[kind]));
  if (kind === 'device') core.view.setInt32(ptr + core.structs.offsetOf('ArrowDeviceArrayStream', 'device_type'), device.type, true);
  streamRuntime(core).register(RUNTIME_KIND[kind], ptr, producer);
  return new ExportedStream(core, ptr, kind);
}

/**
 * An ArrowArrayStream in wasm memory whose `get_next` pulls the next batch of `source`. Every batch must have the stream's schema (else `get_next` fails with EINVAL and the message says how it differs). The function form of `ArrowCDevice.exportArrayStream`.
 *
 * Ownership: the caller owns the returned handle and must `release()` it; the batches and the schema a consumer gets are released independently of the stream.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param source - a Table, a RecordBatchReader, an array or any iterable of batches.
 * @param options - `schema`, `into`.
 * @returns the handle; `handle.ptr` is the struct's address.
 */
export function exportArrayStream(acd: CoreRef, source: SyncBatchSource, options: StreamExportOptions = {}): ExportedStream {
  checkOptions('exportArrayStream', options, STREAM_EXPORT_OPTION_KEYS);
  return exportStream(acd, 'array', source, options);
}

/**
 * Like `exportArrayStream`, for an ArrowDeviceArrayStream on `options.device` (the CPU by default).
 *
 * Ownership: the caller owns the returned handle and must `release()` it.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param source - the batches.
 * @param options - `schema`, `device`, `into`.
 * @returns the handle.
 */
export function exportDeviceArrayStream(acd: CoreRef, source: SyncBatchSource, options: StreamExportOptions = {}): ExportedStream {
  checkOptions('exportDeviceArrayStream', options, STREAM_EXPORT_OPTION_KEYS);
  return exportStream(acd, 'device', source, options);
}

// ---- consuming ----------------------------------------------------------------------

/**
 * Import options of each batch: mode, validate, convert and, for batches not
 * on the CPU, device: 'copy' (default: copied to the host) or 'reject'.
 */
export type StreamImportOptions = ImportOptions & { device?: 'copy' | 'reject' };

export const STREAM_IMPORT_OPTION_KEYS = optionKeys<StreamImportOptions>()([...IMPORT_OPTION_KEYS, 'device']);

interface ReaderState {
  /** The calls on the stream, in the memory it lives in (the core's, or another module's). */
  calls: PullCalls;
  kind: StreamKind;
  own: number;
  out: number;
  schema: ImportedSchema | null;
  handles: Imported<arrow.RecordBatch>[];
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
 * A stream read as apache-arrow batches, like a RecordBatchReader: `schema`, `next()`, sync and async iteration, `readAll()`.
 *
 * Ownership: it owns the stream (moved in from the producer's struct). Reaching the end, an error, or leaving a loop early releases the stream; in copy mode (the default) nothing is then left to release, in view mode the batches stay valid until `release()`, which the caller must then call (or use `using`).
 */
export class StreamReader extends Handle implements Iterable<arrow.RecordBatch>, AsyncIterable<arrow.RecordBatch> {
  /** The stream's schema, as apache-arrow's (with the types `convert` asked for). */
  readonly schema: arrow.Schema;
  /** The stream's ArrowDeviceType (ARROW_DEVICE_CPU for an ArrowArrayStream). */
  readonly deviceType: number;
  private readonly st: ReaderState;
  private count = 0;

  /** The import options of each batch. */
  readonly options: StreamImportOptions;

  /**
   * Made by `importArrayStream` and `importDeviceArrayStream`; not meant to be called directly.
   *
   * Ownership: takes ownership of the moved stream and its schema in `st`.
   * @param acd - the instance.
   * @param st - the stream's state.
   * @param options - the import options of each batch.
   */
  constructor(private readonly acd: CoreRef, st: ReaderState, options: StreamImportOptions) {
    super(() => {
      for (const h of st.handles) h.release();
      st.handles.length = 0;
      finish(st);
    });
    this.options = options;
    this.st = st;
    // The batches' schema: with the types options.convert converts converted, as each batch has them.
    const { fields, metadata } = st.schema!.schema;
    this.schema = toArrowSchema({ fields: fields.map((f) => ({ ...f, type: convertedType(f.type, options.convert ?? []) })), metadata });
    this.deviceType = st.kind === 'device'
      ? st.calls.structs.i32('ArrowDeviceArrayStream', st.own, 'device_type')
      : constants.ARROW_DEVICE_CPU;
  }

  /** Batches read so far. */
  get batchesRead(): number {
    return this.count;
  }

  /** Whether the stream was released (end reached, error, or release()). */
  get done(): boolean {
    return this.st.done;
  }

  /**
   * The next batch as a handle (view mode: owns the C array until its
   * release(), which reader.release() also does), or null at the end.
   * Throws the producer's error (code and message from get_last_error).
   *
   * Ownership: the caller owns the returned handle; in view mode the reader's `release()` also releases it.
   */
  nextHandle(): Imported<arrow.RecordBatch> | null {
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
    let handle: Imported<arrow.RecordBatch>;
    try {
      handle = st.kind === 'device'
        ? importDeviceBatch(this.acd.core, st.schema!, st.out, this.options)
        : importBatch(this.acd.core, st.schema!, st.out, this.options);
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
  next(): IteratorResult<arrow.RecordBatch, undefined> {
    const h = this.nextHandle();
    return h === null ? { done: true, value: undefined } : { done: false, value: h.value };
  }

  /**
   * Every remaining batch.
   *
   * Ownership: as `next()`.
   */
  readAll(): arrow.RecordBatch[] {
    const out: arrow.RecordBatch[] = [];
    for (let r = this.next(); !r.done; r = this.next()) out.push(r.value);
    return out;
  }

  /**
   * Sync iteration over the remaining batches; leaving the loop early releases the stream.
   *
   * Ownership: as `next()`.
   */
  [Symbol.iterator](): Iterator<arrow.RecordBatch, undefined> {
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
  [Symbol.asyncIterator](): AsyncIterator<arrow.RecordBatch, undefined> {
    return {
      next: async () => this.next(),
      return: async () => {
        finish(this.st);
        return { done: true, value: undefined };
      },
    };
  }
}

function importStream(acd: CoreRef, kind: StreamKind, ptr: number, options: StreamImportOptions): StreamReader {
  const calls = options.from === undefined ? coreCalls(acd.core, kind) : foreignCalls(options.from, kind);
  const s = calls.structs;
  const struct = STREAM_STRUCT[kind];
  const where = options.from === undefined ? '' : `${options.from.name}: `;
  s.checkRange(ptr, s.size(struct), `${where}${struct}`);
  if (s.ptr(struct, ptr, 'release') === 0) throw new ArrowCDeviceError(`${where}${struct}: released`, EINVAL);
  const own = calls.alloc(s.size(struct));
  const schemaPtr = calls.alloc(s.size('ArrowSchema'));
  const moveBack = () => {
    calls.move(own, ptr);
    calls.free(own);
    calls.free(schemaPtr);
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
    schema.schema; // a record batch schema: a struct
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
  calls.free(schemaPtr);
  const out = calls.alloc(s.size(kind === 'array' ? 'ArrowArray' : 'ArrowDeviceArray'));
  const st: ReaderState = { calls, kind, own, out, schema, handles: [], done: false };
  try {
    return new StreamReader(acd, st, options);
  } catch (e) {
    finish(st);
    throw e;
  }
}

/**
 * Takes ownership of the ArrowArrayStream at ptr (moved: the source is marked
 * released) and reads its schema. On failure nothing is moved or released.
 *
 * The function form of `ArrowCDevice.importArrayStream`.
 *
 * Ownership: takes ownership of the stream at `ptr`; the returned reader owns it and releases it at its end, on an error or on leaving a loop early; in view mode, or when the reader is left before its end, the caller must `release()` it.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param ptr - the ArrowArrayStream's address.
 * @param options - the import options of each batch.
 * @returns the reader.
 * @throws `ArrowCDeviceError` with the producer's code when `get_schema` fails, or naming the path at fault.
 */
export function importArrayStream(acd: CoreRef, ptr: number, options: StreamImportOptions = {}): StreamReader {
  checkOptions('importArrayStream', options, STREAM_IMPORT_OPTION_KEYS);
  return importStream(acd, 'array', ptr, options);
}

/**
 * Like importArrayStream, for an ArrowDeviceArrayStream (each batch must be on its device type).
 *
 * Ownership: as `importArrayStream`.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param ptr - the ArrowDeviceArrayStream's address.
 * @param options - the import options of each batch, and the device policy.
 * @returns the reader.
 */
export function importDeviceArrayStream(acd: CoreRef, ptr: number, options: StreamImportOptions = {}): StreamReader {
  checkOptions('importDeviceArrayStream', options, STREAM_IMPORT_OPTION_KEYS);
  return importStream(acd, 'device', ptr, options);
}
