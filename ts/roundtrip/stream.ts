// A table sent through a stream interface and back, in both directions of
// each: the CLI's `roundtrip --via stream|async`.
//   stream: TS producer (ArrowDeviceArrayStream over the table's batches) →
//           C consumer (drains it into a list, checking every batch) →
//           C producer (a stream of that list) → TS consumer (StreamReader).
//   async:  TS producer (produceAsync over the batches) → C consumer (a
//           handler collecting a list) → C producer (csrc/stream/async_producer.c) →
//           TS consumer (AsyncStreamConsumer).
// Every batch that comes back is compared with the one sent, value by value,
// and nothing may be left: bytes, table slots, stream objects.

import type * as arrow from 'apache-arrow';
import type { CoreRef } from '../abi/core.js';
import { deviceBytesAllocated, deviceStats } from '../device/accounting.js';
import type { ValidationLevel } from '../exchange/options.js';
import { compareBatches, schemaDifferences, type Mismatch } from '../arrow-js/compare.js';
import { AsyncStreamConsumer, CAsyncConsumer, produceAsync, startCAsyncProducer } from '../stream/async.js';
import { schemaField, streamDevice, CPU, type Device, type DeviceSpec } from '../stream/batches.js';
import { streamRuntime } from '../stream/runtime.js';
import { BatchList, CBatchSource, cStream, drainStream } from '../stream/c-backed.js';
import { exportDeviceArrayStream, importDeviceArrayStream } from '../stream/pull.js';
import { fieldsEqual } from '../model/types.js';

import type { RoundtripSummary } from './roundtrip.js';
import { checkOptions, optionKeys } from '../abi/option-keys.js';

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
  const core = acd.core;
  const rt = streamRuntime(core);
  const device = streamDevice(options.device);
  const before = deviceStats(core);
  const start = { bytes: core.bytesAllocated(), deviceBytes: deviceBytesAllocated(core), slots: core.tableSlotsLive(), objects: rt.liveObjects() + cLive(rt) };
  const mismatches: Mismatch[] = [];
  const errors: string[] = [];
  let received = 0;
  // Non-CPU batches come back through a copy to the host.
  const importOptions = device.type === CPU.type ? { mode, validate: options.validate } : { mode, device: 'copy' as const, validate: options.validate };

  const check = (batch: arrow.RecordBatch, b: number) => {
    const sent = table.batches[b];
    if (sent === undefined) {
      errors.push(`batch ${b}: one more batch than the ${table.batches.length} sent`);
      return;
    }
    mismatches.push(...schemaDifferences(sent, batch).map((d) => ({ batch: b, column: '(schema)', row: -1, expected: d, found: '' })));
    mismatches.push(...compareBatches(sent, batch, b));
    options.onBatch?.(b + 1, table.batches.length);
  };
  const checkSchema = (schema: arrow.Schema | null) => {
    if (schema === null) errors.push('no schema came back');
    else if (table.batches.length === 0 && !fieldsEqual(schemaField(schema), schemaField(table.schema))) errors.push('the schema differs');
  };

  try {
    if (via === 'stream') {
      const exported = exportDeviceArrayStream(acd, table, { device });
      const list = BatchList.create(core);
      try {
        drainStream(core, exported.ptr, 'device', list);
        const stream = cStream(core, CBatchSource.fromList(core, list), 'device');
        const reader = importDeviceArrayStream(acd, stream.ptr, importOptions);
        stream.release();
        try {
          checkSchema(reader.schema);
          for (let h = reader.nextHandle(); h !== null; h = reader.nextHandle()) {
            check(h.value, received++);
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
        const production = produceAsync(acd, collector.handler, asAsync(table.batches), { device, schema: table.batches.length === 0 ? table.schema : undefined });
        await production.done;
        await collector.whenReleased();
        const state = collector.state();
        if (state.errorCode !== 0) throw new Error(`the C consumer: ${state.errorMessage}`);
        const consumer = new AsyncStreamConsumer(acd, { ...importOptions, window: 2 });
        try {
          startCAsyncProducer(core, consumer.handler, CBatchSource.fromList(core, collector.list.ptr));
          for await (const batch of consumer) check(batch, received++);
          await consumer.done;
          checkSchema(consumer.schema);
        } finally {
          consumer.release();
        }
      } finally {
        collector.release();
      }
    }
    if (received !== table.batches.length) errors.push(`expected ${table.batches.length} batches back, found ${received}`);
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
    file: options.file ?? '', reader: 'apache-arrow', mode, via, device: device.name,
    events: { recorded: after.eventsRecorded - before.eventsRecorded, waited: after.eventsWaited - before.eventsWaited },
    batches: table.batches.length, rows: table.numRows, columns: table.numCols,
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
