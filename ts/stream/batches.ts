// What the TypeScript producers of streams share: the stream's schema from a
// source of apache-arrow batches, the check that every batch has it, the
// device a stream is on, and writing one batch into an ArrowArray or an
// ArrowDeviceArray on that device.

import * as arrow from 'apache-arrow';
import type { CoreRef } from '../abi/core.js';
import { exportDeviceBatch } from '../device/exchange.js';
import { fromArrowBatch, fromArrowSchema } from '../arrow-js/arrow-types.js';
import { parseDevice, type Device, type DeviceSpec } from '../device/device.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { writeArray } from '../arrow-js/export.js';
import { constants } from '../abi/generated/layout.js';
import { fieldsEqual, recordBatchField, typeToString, type Field } from '../model/types.js';

export type { Device, DeviceSpec };

export const CPU: Device = parseDevice('cpu');

/** The device of a stream: the CPU when none is given. */
export function streamDevice(spec: DeviceSpec | Device | undefined): Device {
  return spec === undefined ? CPU : parseDevice(spec);
}

export function batchField(batch: arrow.RecordBatch): Field {
  return recordBatchField(fromArrowBatch(batch));
}

export function schemaField(schema: arrow.Schema): Field {
  return recordBatchField(fromArrowSchema(schema));
}

/** Throws EINVAL unless batch has the stream's schema. */
export function checkBatch(stream: Field, batch: arrow.RecordBatch): Field {
  const field = batchField(batch);
  if (!fieldsEqual(field, stream)) {
    throw new ArrowCDeviceError(`its schema ${typeToString(field.type)} is not the stream's ${typeToString(stream.type)}` +
      (typeToString(field.type) === typeToString(stream.type) ? ' (names, nullability or metadata differ)' : ''), EINVAL);
  }
  return field;
}

/** A source that some batch or the source itself gives a schema for. */
export function sourceSchema(source: unknown): arrow.Schema | undefined {
  if (source instanceof arrow.Table) return source.schema;
  if (source instanceof arrow.RecordBatchReader) return source.schema ?? undefined;
  return undefined;
}

/**
 * Writes batch (with the stream's field) into the ArrowDeviceArray at out on
 * `device`. On failure out is released. The CPU is written directly; other
 * devices go through the core's device export (`exportDeviceBatch(batch,
 * { device })`: buffers copied onto the device, a sync event recorded), whose
 * array is moved into out.
 */
export function writeDeviceBatch(acd: CoreRef, out: number, batch: arrow.RecordBatch, field: Field, device: Device): void {
  const core = acd.core;
  const s = core.structs;
  if (device.type === constants.ARROW_DEVICE_CPU) {
    writeArray(core, out + s.offsetOf('ArrowDeviceArray', 'array'), batch.data, field.type);
    core.deviceArrayInitDevice(out, constants.ARROW_DEVICE_CPU, -1);
    return;
  }
  const exported = exportDeviceBatch(acd.core, batch, { device });
  try {
    const type = s.i32('ArrowDeviceArray', exported.array, 'device_type');
    const id = s.i64('ArrowDeviceArray', exported.array, 'device_id');
    if (type !== device.type || id !== device.id) {
      throw new ArrowCDeviceError(`device: exporting onto ${device.name} gave an array on device type ${type} id ${id}`, EINVAL);
    }
    core.deviceArrayMove(exported.array, out);
  } finally {
    exported.release();
  }
}

/** Writes batch into the ArrowArray at out (CPU). On failure out is released. */
export function writePlainBatch(acd: CoreRef, out: number, batch: arrow.RecordBatch, field: Field): void {
  writeArray(acd.core, out, batch.data, field.type);
}

/** Marks the array at out released: the end of a stream. */
export function markEnd(acd: CoreRef, out: number, device: boolean): void {
  const s = acd.core.structs;
  const at = device ? out + s.offsetOf('ArrowDeviceArray', 'array') : out;
  s.setPtr('ArrowArray', at, 'release', 0);
}
