// Pull streams (the C Stream Interface's ArrowArrayStream and the C Device
// Stream Interface's ArrowDeviceArrayStream), both directions:
//  - produced from apache-arrow batches (a Table, a RecordBatchReader, an
//    array or any sync iterable), lazily: get_next pulls the next batch;
//  - or produced from raw arrays of any type (run-end encoded, list views
//    included) with a schema of the model;
//  - consumed from any stream in wasm memory (ours, the C core's, another
//    module's) as a RecordBatchReader-like iterable, sync and async, of
//    apache-arrow batches or raw arrays (reader.ts).
// The C core's producer and consumer are in c-backed.ts.

import { checkOptions, optionKeys } from '../abi/option-keys.js';
import type * as arrow from 'apache-arrow';
import type { CoreRef } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { writeSchema } from '../model/schema.js';
import type { Field, Schema } from '../model/types.js';
import { Handle } from '../abi/handles.js';
import type { AddressSpace } from '../abi/address-space.js';
import type { ForeignModule } from '../foreign/module.js';
import { ARROW_C_DEVICE_STREAM, ARROW_C_STREAM, handOver, type ArrowCDescriptor } from '../exchange/protocol.js';
import {
  batchItem, CPU, markEnd, rawItem, rawStreamField, streamDevice, writeDeviceItem, writePlainBatch,
  type Device, type DeviceSpec, type ToItem,
} from './batches.js';
import { STREAM_STRUCT, type StreamKind } from './pull-calls.js';
import { openRawSource, openSource, PullProducer, type PullSink, type SyncBatchSource, type SyncRawSource } from './producer.js';
import { exportStreamInto, intoSink } from './into.js';
import {
  importRawStream, importStream, RawStreamReader, StreamReader, type PullReader, type RawStreamImportOptions, type StreamImportOptions,
} from './reader.js';
import { streamRuntime } from './runtime.js';

/** 'array': ArrowArrayStream (CPU arrays); 'device': ArrowDeviceArrayStream. */
export type { StreamKind } from './pull-calls.js';

export type { SyncBatchSource, SyncRawSource } from './producer.js';
export { RawStreamReader, StreamReader, type PullReader, type RawStreamImportOptions, type StreamImportOptions };

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

/** A raw stream's options: its schema is an argument of its own. */
export type RawStreamExportOptions = Omit<StreamExportOptions, 'schema'>;

export const STREAM_EXPORT_OPTION_KEYS = optionKeys<StreamExportOptions>()(['schema', 'device', 'into']);
export const RAW_STREAM_EXPORT_OPTION_KEYS = optionKeys<RawStreamExportOptions>()(['device', 'into']);

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
    writeBatch: (out, item, field) => {
      if (kind === 'device') writeDeviceItem(acd, out, item, field, device);
      else writePlainBatch(acd, out, item);
    },
    markEnd: (out) => markEnd(acd, out, kind === 'device'),
    cString: (message) => streamRuntime(acd.core).cString(message),
    free: (ptr) => acd.core.free(ptr),
  };
}

/** The stream's device, checked against its kind. */
function deviceOf(kind: StreamKind, options: RawStreamExportOptions): Device {
  const device = streamDevice(options.device);
  if (kind === 'array' && device.type !== CPU.type) {
    throw new ArrowCDeviceError(`device: an ArrowArrayStream carries CPU arrays, found ${device.name}`, EINVAL);
  }
  return device;
}

function exportStream<T>(acd: CoreRef, kind: StreamKind, device: Device, opened: { iterator: Iterator<T>; first: T | null; field: Field },
  toItem: ToItem<T>, options: RawStreamExportOptions): ExportedStream {
  const core = acd.core;
  const { iterator, first, field } = opened;
  if (options.into !== undefined) {
    return new ExportedStream(options.into, exportStreamInto(options.into, kind, device, new PullProducer(intoSink(options.into, kind), field, iterator, first, toItem)), kind);
  }
  const producer = new PullProducer(coreSink(acd, kind, device), field, iterator, first, toItem);
  const ptr = core.alloc(core.structs.size(STREAM_STRUCT[kind]));
  if (kind === 'device') core.view.setInt32(ptr + core.structs.offsetOf('ArrowDeviceArrayStream', 'device_type'), device.type, true);
  streamRuntime(core).register(RUNTIME_KIND[kind], ptr, producer);
  return new ExportedStream(core, ptr, kind);
}

function exportBatchStream(acd: CoreRef, kind: StreamKind, source: SyncBatchSource, options: StreamExportOptions): ExportedStream {
  checkOptions(kind === 'array' ? 'exportArrayStream' : 'exportDeviceArrayStream', options, STREAM_EXPORT_OPTION_KEYS);
  const device = deviceOf(kind, options);
  return exportStream(acd, kind, device, openSource(source, options.schema), batchItem, options);
}

function exportRawStream(acd: CoreRef, kind: StreamKind, schema: Schema | Field, source: SyncRawSource, options: RawStreamExportOptions): ExportedStream {
  checkOptions(kind === 'array' ? 'exportRawArrayStream' : 'exportRawDeviceArrayStream', options, RAW_STREAM_EXPORT_OPTION_KEYS);
  const field = rawStreamField(schema);
  const device = deviceOf(kind, options);
  return exportStream(acd, kind, device, { iterator: openRawSource(source), first: null, field }, rawItem, options);
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
  return exportBatchStream(acd, 'array', source, options);
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
  return exportBatchStream(acd, 'device', source, options);
}

/**
/**
 * Like `exportArrayStream`, over raw arrays of any type of the spec (run-end encoded and list views included): every raw array must be of the stream's type (else `get_next` fails with EINVAL). The function form of `ArrowCDevice.exportRawArrayStream`.
 *
 * Ownership: the caller owns the returned handle and must `release()` it; the arrays and the schema a consumer gets are released independently of the stream.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param schema - the stream's schema: a Schema (a record batch's struct of its fields) or any Field.
 * @param source - an array, a generator or any iterable of raw arrays.
 * @param options - `into`.
 * @returns the handle; `handle.ptr` is the struct's address.
 * @throws `ArrowCDeviceError` (EINVAL) for an unknown option key.
 */
export function exportRawArrayStream(acd: CoreRef, schema: Schema | Field, source: SyncRawSource, options: RawStreamExportOptions = {}): ExportedStream {
  return exportRawStream(acd, 'array', schema, source, options);
}

/**
 * Like `exportRawArrayStream`, as an ArrowDeviceArrayStream on `options.device` (the CPU by default).
 *
 * Ownership: the caller owns the returned handle and must `release()` it.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param schema - the stream's schema: a Schema or any Field.
 * @param source - the raw arrays.
 * @param options - `device`, `into`.
 * @returns the handle.
 * @throws `ArrowCDeviceError` (EINVAL) for an unknown option key.
 */
export function exportRawDeviceArrayStream(acd: CoreRef, schema: Schema | Field, source: SyncRawSource, options: RawStreamExportOptions = {}): ExportedStream {
  return exportRawStream(acd, 'device', schema, source, options);
}

// ---- consuming (reader.ts) -----------------------------------------------------------

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
  return importStream(acd, 'device', ptr, options);
}

/**
 * Like `importArrayStream`, each batch read as a raw array (any type of the spec); the stream's schema may be of any type. The function form of `ArrowCDevice.importRawArrayStream`.
 *
 * Ownership: takes ownership of the stream at `ptr`; the returned reader owns it and releases it at its end, on an error or on leaving a loop early; in view mode, or when the reader is left before its end, the caller must `release()` it.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param ptr - the ArrowArrayStream's address.
 * @param options - the import options of each array.
 * @returns the reader.
 * @throws `ArrowCDeviceError` with the producer's code when `get_schema` fails, or (EINVAL) for an unknown option key.
 */
export function importRawArrayStream(acd: CoreRef, ptr: number, options: RawStreamImportOptions = {}): RawStreamReader {
  return importRawStream(acd, 'array', ptr, options);
}

/**
 * Like `importDeviceArrayStream`, each batch read as a raw array.
 *
 * Ownership: as `importRawArrayStream`.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param ptr - the ArrowDeviceArrayStream's address.
 * @param options - the import options of each array, and the device policy.
 * @returns the reader.
 * @throws `ArrowCDeviceError` with the producer's code when `get_schema` fails, or (EINVAL) for an unknown option key.
 */
export function importRawDeviceArrayStream(acd: CoreRef, ptr: number, options: RawStreamImportOptions = {}): RawStreamReader {
  return importRawStream(acd, 'device', ptr, options);
}
