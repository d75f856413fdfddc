// What the TypeScript consumer of the async device stream (async-consumer.ts)
// is asked for and reads: its options, apache-arrow batches or raw arrays of
// any type (an AsyncReading); and taking one task out of the producer's
// hands: extract_data into a fresh ArrowDeviceArray (in the memory the stream
// lives in), checked (its code, a live array, the producer's device type) and
// imported ({ from } the other module when the stream is in its memory).

import type * as arrow from 'apache-arrow';
import type { Core, CoreRef } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, errnoName } from '../abi/errors.js';
import { importDeviceBatch, importDeviceRaw } from '../device/exchange.js';
import type { Imported, ImportedSchema } from '../exchange/handles.js';
import type { RawImport } from '../exchange/options.js';
import type { ForeignModule } from '../foreign/module.js';
import type { RawArray } from '../model/raw.js';
import type { Metadata } from '../model/types.js';
import type { AsyncCalls } from './async-calls.js';
import { arrowStreamSchema, STREAM_IMPORT_OPTION_KEYS, type StreamImportOptions } from './reader.js';
import { optionKeys } from '../abi/option-keys.js';

/**
 * Options of `ArrowCDevice.asyncConsumer`: the import options of each batch, the module the handler lives in, and the window of credit.
 */
export interface AsyncConsumerOptions extends Omit<StreamImportOptions, 'from'> {
  /**
   * The module whose producer will drive the handler (`acd.foreign()`; it needs a growable table and an allocator). The handler is then allocated in its memory, and its on_schema, on_next_task, on_error and release are our functions installed in its table, so that its own code calls them; the producer's request and cancel and each task's extract_data are called through its table. The schema and each batch are imported from it: copied (`mode: 'copy'`, the default) or viewed in its memory (`mode: 'view'`, until `release()`). The handler's release frees it and those slots.
   */
  from?: ForeignModule;
  /** How many batches may be requested ahead of the ones taken (default 4). */
  window?: number;
}

/** Options of `ArrowCDevice.asyncRawConsumer`: those of `asyncConsumer` but `convert` (a raw array keeps every type as it is). */
export type AsyncRawConsumerOptions = Omit<AsyncConsumerOptions, 'convert'>;

export const ASYNC_CONSUMER_OPTION_KEYS = optionKeys<AsyncConsumerOptions>()([...STREAM_IMPORT_OPTION_KEYS, 'window']);
export const ASYNC_RAW_CONSUMER_OPTION_KEYS = optionKeys<AsyncRawConsumerOptions>()(['from', 'mode', 'inPlace', 'requestedSchema', 'validate', 'device', 'window']);

/** One batch as it came (an apache-arrow batch, or a raw array): with the metadata of its on_next_task call. */
export interface AsyncBatch<T = arrow.RecordBatch> {
  /** The batch (or raw array). */
  batch: T;
  /** The metadata of its on_next_task call, or null. */
  metadata: Metadata | null;
}

/** How a consumer reads the stream: its schema, and each batch as an item T (an apache-arrow batch or a raw array). */
export interface AsyncReading<T> {
  /** The stream's schema for apache-arrow (a record batch's: throws unless a struct), or null for raw arrays (any type). */
  schemaOf(schema: ImportedSchema, options: StreamImportOptions): arrow.Schema | null;
  /** Imports the CPU ArrowDeviceArray at out, with the stream's schema. */
  importAt(core: Core, schema: ImportedSchema, out: number, options: StreamImportOptions): Imported<unknown>;
  item(value: unknown): T;
}

export const batchReading: AsyncReading<arrow.RecordBatch> = {
  schemaOf: (schema, options) => arrowStreamSchema(schema, options.convert ?? []),
  importAt: (core, schema, out, options) => importDeviceBatch(core, schema, out, options),
  item: (value) => value as arrow.RecordBatch,
};

export const rawReading: AsyncReading<RawArray> = {
  schemaOf: () => null,
  importAt: (core, schema, out, options) => importDeviceRaw(core, schema, out, options),
  item: (value) => (value as RawImport).array,
};

/**
 * Extracts and imports one queued task: `task` is the consumer's copy of the
 * task struct (in calls.space), freed here whatever happens; the producer's
 * device type and the stream's schema are asked for after the extraction.
 * On success the batch is the caller's (in view mode, release the handle);
 * on failure nothing extracted is left unreleased, and the
 * ArrowCDeviceError says why.
 */
export function extractTask(
  acd: CoreRef, calls: AsyncCalls, task: number, deviceType: () => number, schema: () => ImportedSchema, options: StreamImportOptions,
  reading: AsyncReading<unknown>,
): Imported<unknown> {
  const s = calls.space.structs;
  const out = calls.alloc(s.size('ArrowDeviceArray'));
  try {
    let code: number;
    try {
      code = calls.extract(task, out);
    } finally {
      calls.free(task);
    }
    if (code !== 0) {
      const refused = calls.refusal();
      const why = refused === '' ? '' : `: ${refused}`;
      const where = calls.from === undefined ? '' : `${calls.from.name}: `;
      throw new ArrowCDeviceError(`${where}extract_data returned ${code} (${errnoName(code)})${why}`, code);
    }
    const arrayAt = out + s.offsetOf('ArrowDeviceArray', 'array');
    if (s.ptr('ArrowArray', arrayAt, 'release') === 0) {
      throw new ArrowCDeviceError('extract_data returned 0 and a released array', EINVAL);
    }
    const type = s.i32('ArrowDeviceArray', out, 'device_type');
    const expected = deviceType();
    if (type !== expected) {
      calls.releaseArray(arrayAt);
      throw new ArrowCDeviceError(`device_type: expected ${expected} (the producer's), found ${type}`, EINVAL);
    }
    try {
      // From another module: copied out (its release called at once) or, in
      // view mode, moved within its memory; either way `out` is left released.
      return reading.importAt(acd.core, schema(), out, { ...options, from: calls.from });
    } catch (e) {
      calls.releaseArray(arrayAt); // the import moved nothing: still ours
      throw e;
    }
  } finally {
    calls.free(out);
  }
}
