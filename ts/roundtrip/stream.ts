// A table (apache-arrow batches) or a file read by this library (raw arrays
// of any type) sent through a stream interface and back, in both directions
// of each: the CLI's `roundtrip --via stream|async`.
//   stream: TS producer (ArrowDeviceArrayStream over the table's batches) →
//           C consumer (drains it into a list, checking every batch) →
//           C producer (a stream of that list) → TS consumer (a reader).
//   async:  TS producer (produceAsync over the batches) → C consumer (a
//           handler collecting a list) → C producer (csrc/stream/async_producer.c) →
//           TS consumer (AsyncStreamConsumer, of batches or raw arrays).
// Every batch that comes back is compared with the one sent, value by value,
// and nothing may be left: bytes, table slots, stream objects.

import type * as arrow from 'apache-arrow';
import type { CoreRef } from '../abi/core.js';
import { deviceBytesAllocated, deviceStats } from '../device/accounting.js';
import type { Imported } from '../exchange/handles.js';
import type { RawImport, ValidationLevel } from '../exchange/options.js';
import { checkOptions, optionKeys } from '../abi/option-keys.js';
import { compareBatches, schemaDifferences, type Mismatch } from '../arrow-js/compare.js';
import type { IntegrationFile } from '../io/json/read.js';
import type { RawArray } from '../model/raw.js';
import { AsyncStreamConsumer, CAsyncConsumer, produceAsync, produceAsyncRaw, startCAsyncProducer } from '../stream/async.js';
import { rawReading } from '../stream/async-extract.js';
import { schemaField, streamDevice, CPU, type Device, type DeviceSpec } from '../stream/batches.js';
import { streamRuntime } from '../stream/runtime.js';
import { BatchList, CBatchSource, cStream, drainStream } from '../stream/c-backed.js';
import {
  exportDeviceArrayStream, exportRawDeviceArrayStream, importDeviceArrayStream, importRawDeviceArrayStream,
  type ExportedStream,
} from '../stream/pull.js';
import { fieldsEqual, recordBatchField, type Field } from '../model/types.js';

import { batchMismatches, schemaMismatches, type ReaderName, type RoundtripSummary } from './roundtrip.js';

/**
 * Which stream interface a round trip goes through: the pull stream or the async device stream.
 */
export type Via = 'stream' | 'async';

/** The CLI's roundtrip summary, with the interface used and what streams could leak. */
export interface StreamRoundtripSummary extends RoundtripSummary {
  /** The interface used. */
  via: Via;
  /** Function table slots and stream objects (TS and C) left behind. */
  tableSlotsLeaked: number;
  /** Stream objects (TS-made structs' state) left after the run. */
  objectsLeaked: number;
}

/** Options of `roundtripStream`. */
export interface StreamRoundtripOptions {
  /** Named in the summary. */
  file?: string;
  /** Where the batches travel ('cpu' by default; 'cuda', 'cuda:1', ...); imported back with a copy to the host. */
  device?: DeviceSpec | Device;
  /** Validation level of each import (the import's default when absent). */
  validate?: ValidationLevel;
  /** Called after each batch that came back, with the batches back and the number sent (the CLI's progress). */
  onBatch?: (done: number, total: number) => void;
}

export const STREAM_ROUNDTRIP_OPTION_KEYS = optionKeys<StreamRoundtripOptions>()(['file', 'device', 'validate', 'onBatch']);

/** Options of `roundtripStreamRaw`: those of `roundtripStream`, and which reader read the file (named in the summary). */
export type RawStreamRoundtripOptions = StreamRoundtripOptions & { reader?: ReaderName };
export const RAW_STREAM_ROUNDTRIP_OPTION_KEYS = optionKeys<RawStreamRoundtripOptions>()([...STREAM_ROUNDTRIP_OPTION_KEYS, 'reader']);

/** How each batch is imported back. */
interface BackOptions {
  mode: 'copy' | 'view';
  validate?: ValidationLevel;
  device?: 'copy';
}

/** What goes through the streams, and how it comes back: apache-arrow batches or raw arrays (T). */
interface Carried<T> {
  sent: number;
  exportStream(device: Device): ExportedStream;
  importStream(ptr: number, options: BackOptions): { field: Field; nextHandle(): Imported<unknown> | null; release(): void };
  produce(handler: number, device: Device): Promise<unknown>;
  consumer(options: BackOptions & { window: number }): AsyncStreamConsumer<T>;
  item(value: unknown): T;
  /** Batch b as it came back, against the one sent. */
  check(item: T, b: number): Mismatch[];
  /** The stream's schema as it came back, against the one sent (errors). */
  checkSchema(field: Field | null): string[];
}

/**
 * Sends every batch of table through the pull stream or the async device
 * stream and back (TS → C → TS), compares them and checks for leaks.
 *
 * Ownership: every stream and batch it makes is released before the promise resolves (what was not is reported as leaked); nothing to release.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param table - the batches.
 * @param via - `stream` or `async`.
 * @param mode - how the imports read.
 * @param options - file name, device, validation level.
 */
export async function roundtripStream(acd: CoreRef, table: arrow.Table, via: Via, mode: 'copy' | 'view',
  options: StreamRoundtripOptions = {}): Promise<StreamRoundtripSummary> {
  checkOptions('roundtripStream', options, STREAM_ROUNDTRIP_OPTION_KEYS);
  const schema = schemaField(table.schema);
  const carried: Carried<arrow.RecordBatch> = {
    sent: table.batches.length,
    exportStream: (device) => exportDeviceArrayStream(acd, table, { device }),
    importStream: (ptr, o) => {
      const reader = importDeviceArrayStream(acd, ptr, o);
      return { field: schemaField(reader.schema), nextHandle: () => reader.nextHandle(), release: () => reader.release() };
    },
    produce: (handler, device) => produceAsync(acd, handler, asAsync(table.batches), { device, schema: table.batches.length === 0 ? table.schema : undefined }),
    consumer: (o) => new AsyncStreamConsumer(acd, o),
    item: (value) => value as arrow.RecordBatch,
    check: (batch, b) => {
      const sent = table.batches[b]!;
      return [...schemaDifferences(sent, batch).map((d) => ({ batch: b, column: '(schema)', row: -1, expected: d, found: '' })), ...compareBatches(sent, batch, b)];
    },
    checkSchema: (field) => (field === null ? ['no schema came back'] : table.batches.length === 0 && !fieldsEqual(field, schema) ? ['the schema differs'] : []),
  };
  const summary = await through(acd, carried, via, mode, options);
  return { ...summary, reader: 'apache-arrow', batches: table.batches.length, rows: table.numRows, columns: table.numCols };
}

/**
 * Like `roundtripStream`, for raw arrays of any type of the spec (a file read by this library's own readers, run-end encoded and list views included): the streams carry them as they are.
 *
 * Ownership: every stream and array it makes is released before the promise resolves (what was not is reported as leaked); `file` is only read; nothing to release.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param file - the schema and batches, as this library's IPC or JSON reader gives them.
 * @param via - `stream` or `async`.
 * @param mode - how the imports read.
 * @param options - file name, reader name, device, validation level, `onBatch`.
 * @returns the summary: batches, rows, columns, mismatches and leaks.
 * @throws `ArrowCDeviceError` (EINVAL) for an unknown option key.
 */
export async function roundtripStreamRaw(acd: CoreRef, file: IntegrationFile, via: Via, mode: 'copy' | 'view',
  options: RawStreamRoundtripOptions = {}): Promise<StreamRoundtripSummary> {
  checkOptions('roundtripStreamRaw', options, RAW_STREAM_ROUNDTRIP_OPTION_KEYS);
  const schema = recordBatchField(file.schema);
  const carried: Carried<RawArray> = {
    sent: file.batches.length,
    exportStream: (device) => exportRawDeviceArrayStream(acd, file.schema, file.batches, { device }),
    importStream: (ptr, o) => importRawDeviceArrayStream(acd, ptr, o),
    produce: (handler, device) => produceAsyncRaw(acd, handler, file.schema, file.batches, { device }),
    consumer: (o) => new AsyncStreamConsumer(acd, o, rawReading),
    item: (value) => (value as RawImport).array,
    check: (raw, b) => batchMismatches(file.batches[b]!, raw, file.schema.fields, b),
    checkSchema: (field) => (field === null ? ['no schema came back'] : schemaMismatches(schema, field, -1).map((m) => `the schema differs: expected ${m.expected}, found ${m.found}`)),
  };
  const summary = await through(acd, carried, via, mode, options);
  return {
    ...summary, reader: options.reader ?? 'own', batches: file.batches.length,
    rows: file.batches.reduce((n, b) => n + b.length, 0), columns: file.schema.fields.length,
  };
}

/** The round trip itself, whatever is carried; the leaks counted around it. */
async function through<T>(acd: CoreRef, carried: Carried<T>, via: Via, mode: 'copy' | 'view',
  options: StreamRoundtripOptions): Promise<Omit<StreamRoundtripSummary, 'reader' | 'batches' | 'rows' | 'columns'>> {
  const core = acd.core;
  const rt = streamRuntime(core);
  const device = streamDevice(options.device);
  const before = deviceStats(core);
  const start = { bytes: core.bytesAllocated(), deviceBytes: deviceBytesAllocated(core), slots: core.tableSlotsLive(), objects: rt.liveObjects() + cLive(rt) };
  const mismatches: Mismatch[] = [];
  const errors: string[] = [];
  let received = 0;
  // Non-CPU batches come back through a copy to the host.
  const importOptions: BackOptions = device.type === CPU.type ? { mode, validate: options.validate } : { mode, device: 'copy', validate: options.validate };
  const check = (item: T) => {
    const b = received++;
    if (b >= carried.sent) errors.push(`batch ${b}: one more batch than the ${carried.sent} sent`);
    else mismatches.push(...carried.check(item, b));
    options.onBatch?.(b + 1, carried.sent);
  };

  try {
    if (via === 'stream') {
      const exported = carried.exportStream(device);
      const list = BatchList.create(core);
      try {
        drainStream(core, exported.ptr, 'device', list);
        const stream = cStream(core, CBatchSource.fromList(core, list), 'device');
        const reader = carried.importStream(stream.ptr, importOptions);
        stream.release();
        try {
          errors.push(...carried.checkSchema(reader.field));
          for (let h = reader.nextHandle(); h !== null; h = reader.nextHandle()) {
            // In view mode the item views the handle's array: checked before its release.
            check(carried.item(h.value));
            h.release();
          }
        } finally {
          reader.release();
        }
      } finally {
        list.release();
        exported.release();
      }
    } else {
      const collector = new CAsyncConsumer(core, { window: 4, extractLater: true });
      try {
        await carried.produce(collector.handler, device);
        await collector.whenReleased();
        const state = collector.state();
        if (state.errorCode !== 0) throw new Error(`the C consumer: ${state.errorMessage}`);
        const consumer = carried.consumer({ ...importOptions, window: 2 });
        try {
          startCAsyncProducer(core, consumer.handler, CBatchSource.fromList(core, collector.list.ptr));
          for await (const item of consumer) check(item);
          await consumer.done;
          errors.push(...carried.checkSchema(consumer.field));
        } finally {
          consumer.release();
        }
      } finally {
        collector.release();
      }
    }
    if (received !== carried.sent) errors.push(`expected ${carried.sent} batches back, found ${received}`);
  } catch (e) {
    errors.push(`batch ${received}: ${(e as Error).message}`);
  }
  // The C pump may still have a step to run (a producer freeing itself).
  await new Promise((r) => setTimeout(r, 0));
  const bytesLeaked = core.bytesAllocated() - start.bytes;
  const deviceBytesLeaked = deviceBytesAllocated(core) - start.deviceBytes;
  const after = deviceStats(core);
  const tableSlotsLeaked = core.tableSlotsLive() - start.slots;
  const objectsLeaked = rt.liveObjects() + cLive(rt) - start.objects;
  return {
    ok: mismatches.length === 0 && errors.length === 0 && bytesLeaked === 0 && deviceBytesLeaked === 0 && tableSlotsLeaked === 0 && objectsLeaked === 0,
    file: options.file ?? '', mode, via, device: device.name,
    events: { recorded: after.eventsRecorded - before.eventsRecorded, waited: after.eventsWaited - before.eventsWaited },
    bytesLeaked, deviceBytesLeaked, tableSlotsLeaked, objectsLeaked, mismatches, errors,
  };
}

function cLive(rt: ReturnType<typeof streamRuntime>): number {
  const s = rt.cAsyncStats();
  return s.producersLive + s.consumersLive + s.tasksLive;
}

async function* asAsync(batches: readonly arrow.RecordBatch[]): AsyncGenerator<arrow.RecordBatch> {
  for (const b of batches) yield b;
}
