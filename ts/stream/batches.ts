// What the TypeScript producers of streams share: the stream's schema from a
// source of apache-arrow batches or raw arrays, the check that every batch
// has it (each then written as the core's exports write it, or turned into
// the raw array other paths write), the device a stream is on, and writing
// one batch into an ArrowArray or an ArrowDeviceArray on that device.

import * as arrow from 'apache-arrow';
import type { CoreRef } from '../abi/core.js';
import { exportDeviceRaw } from '../device/exchange.js';
import { fromArrowBatch, fromArrowSchema } from '../arrow-js/arrow-types.js';
import { fromArrowData } from '../arrow-js/arrow-data.js';
import { arrowWriter } from '../arrow-js/arrow-describe.js';
import { batchSchemaPart } from '../arrow-js/schema-parts.js';
import { rawWriter, writeArrayFlat, type ArrayWriter, type SchemaPart } from '../model/flat.js';
import { parseDevice, type Device, type DeviceSpec } from '../device/device.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { constants } from '../abi/generated/layout.js';
import type { RawArray } from '../model/raw.js';
import { fieldsEqual, recordBatchField, typesEqual, typeToString, type DataType, type Field, type Schema } from '../model/types.js';

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

/**
 * Checks a batch's schema part (described once per apache-arrow Schema:
 * ts/arrow-js/schema-parts.ts) against the stream's field; a part found
 * equal to a stream's field is not compared again.
 */
function checkPart(stream: Field, batch: arrow.RecordBatch): void {
  const part = batchSchemaPart(batch);
  if (equalTo.get(part) !== stream) {
    checkField(stream, part.field);
    equalTo.set(part, stream);
  }
}
const equalTo = new WeakMap<SchemaPart, Field>();

/** Throws EINVAL unless a batch's field is the stream's. */
function checkField(stream: Field, field: Field): void {
  if (!fieldsEqual(field, stream)) {
    throw new ArrowCDeviceError(`its schema ${typeToString(field.type)} is not the stream's ${typeToString(stream.type)}` +
      (typeToString(field.type) === typeToString(stream.type) ? ' (names, nullability or metadata differ)' : ''), EINVAL);
  }
}

/** A source that some batch or the source itself gives a schema for. */
export function sourceSchema(source: unknown): arrow.Schema | undefined {
  if (source instanceof arrow.Table) return source.schema;
  if (source instanceof arrow.RecordBatchReader) return source.schema ?? undefined;
  return undefined;
}

/** The field of a raw stream: a schema's record batch struct, or any field as it is. */
export function rawStreamField(schema: Schema | Field): Field {
  if (typeof schema !== 'object' || schema === null || (!('fields' in schema) && !('type' in schema))) {
    throw new TypeError('schema: expected the model\'s Schema ({ fields, metadata }) or Field ({ name, type, nullable, metadata })');
  }
  return 'fields' in schema ? recordBatchField(schema) : schema;
}

/** Throws EINVAL unless raw is a raw array of the stream's type. */
export function checkRaw(stream: Field, raw: RawArray): void {
  if (typeof raw !== 'object' || raw === null || typeof raw.type !== 'object' || !Array.isArray(raw.buffers)) {
    throw new ArrowCDeviceError('expected a raw array ({ type, length, nullCount, offset, buffers, children, dictionary })', EINVAL);
  }
  if (!typesEqual(raw.type, stream.type)) {
    throw new ArrowCDeviceError(`its type ${typeToString(raw.type)} is not the stream's ${typeToString(stream.type)}`, EINVAL);
  }
}

/**
 * A batch of a stream, checked, as it is written: the writer of its nodes
 * (the core's CPU arrays are written by it, as exportBatch writes them), and
 * its raw array (another module's memory, another device).
 */
export interface StreamItem {
  readonly write: ArrayWriter;
  raw(): RawArray;
}

/** Checks an item of a stream's source against the stream's field and gives what is written of it. */
export type ToItem<T> = (item: T, field: Field) => StreamItem;

export const batchItem: ToItem<arrow.RecordBatch> = (batch, field) => {
  checkPart(field, batch);
  return dataItem(batch.data, field.type);
};

/** apache-arrow data of a type as a stream writes it: by the direct writer, or as its raw array. */
function dataItem(data: arrow.Data, type: DataType): StreamItem {
  return { write: arrowWriter(data, type), raw: () => fromArrowData(data, type) };
}

export const rawItem: ToItem<RawArray> = (raw, field) => {
  checkRaw(field, raw);
  return { write: rawWriter(raw), raw: () => raw };
};

/**
 * Writes a stream's item (with the stream's field) into the ArrowDeviceArray
 * at out on `device`. On failure out is released. The CPU is written by the
 * item's writer; other devices go through the core's device export
 * (`exportDeviceRaw(field, raw, { device })` of its raw array: buffers copied
 * onto the device, a sync event recorded), whose array is moved into out.
 */
export function writeDeviceItem(acd: CoreRef, out: number, item: StreamItem, field: Field, device: Device): void {
  const core = acd.core;
  const s = core.structs;
  if (device.type === constants.ARROW_DEVICE_CPU) {
    writeArrayFlat(core, out + s.offsetOf('ArrowDeviceArray', 'array'), item.write);
    core.deviceArrayInitDevice(out, constants.ARROW_DEVICE_CPU, -1);
    return;
  }
  const exported = exportDeviceRaw(acd.core, field, item.raw(), { device });
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

/** Like writeDeviceItem, for an apache-arrow batch (not checked against a stream). */
export function writeDeviceBatch(acd: CoreRef, out: number, batch: arrow.RecordBatch, field: Field, device: Device): void {
  writeDeviceItem(acd, out, dataItem(batch.data, field.type), field, device);
}

/** Writes a stream's item into the ArrowArray at out (CPU). On failure out is released. */
export function writePlainBatch(acd: CoreRef, out: number, item: StreamItem): void {
  writeArrayFlat(acd.core, out, item.write);
}

/** Marks the array at out released: the end of a stream. */
export function markEnd(acd: CoreRef, out: number, device: boolean): void {
  const s = acd.core.structs;
  const at = device ? out + s.offsetOf('ArrowDeviceArray', 'array') : out;
  s.setPtr('ArrowArray', at, 'release', 0);
}

/** An async iterator over a source of an async stream: a Table's batches, a ReadableStream, an (async) iterable. */
export function asyncIteratorOf<T>(source: unknown, expected: string): AsyncIterator<T> {
  if (source instanceof arrow.Table) return toAsync(source.batches[Symbol.iterator]() as Iterator<T>);
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) {
    const reader = (source as ReadableStream<T>).getReader();
    return {
      next: async () => {
        const r = await reader.read();
        return r.done ? { done: true, value: undefined } : { done: false, value: r.value };
      },
      return: async () => {
        await reader.cancel();
        reader.releaseLock();
        return { done: true, value: undefined };
      },
    };
  }
  const s = (source ?? {}) as Partial<AsyncIterable<T> & Iterable<T>>;
  if (typeof s[Symbol.asyncIterator] === 'function') return s[Symbol.asyncIterator]!();
  if (typeof s[Symbol.iterator] === 'function') return toAsync(s[Symbol.iterator]!());
  throw new ArrowCDeviceError(`source: expected ${expected}`, EINVAL);
}

function toAsync<T>(it: Iterator<T>): AsyncIterator<T> {
  return {
    next: async () => it.next(),
    return: async () => it.return?.() ?? { done: true, value: undefined },
  };
}
