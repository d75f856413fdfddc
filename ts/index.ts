// arrow-c-device: the Apache Arrow C Data Interface and C Device Data
// Interface for every JavaScript runtime.

export { ArrowCDevice, ExportedArray, ExportedSchema, Imported, ImportedSchema } from './api.js';
export type { DeviceExportOptions, DeviceImportOptions, DevicePolicy, ImportOptions, RawImport, ValidationLevel } from './api.js';
export { toArrowTable, type Conversion } from './arrow-data.js';
export type { RawArray } from './raw.js';
export { compareRaw, rawValues } from './raw-values.js';
export { readIntegrationJson, type IntegrationFile } from './json/read.js';
export { writeIntegrationJson } from './json/write.js';
export { readIpc } from './ipc/read.js';
export { CDataIntegration, runIntegration, type IntegrationSummary } from './integration.js';
export { isJson, readOwn, roundtripRaw, roundtripTable, type ReaderName, type RoundtripOptions, type RoundtripSummary } from './roundtrip.js';
export { CANONICAL_EXTENSIONS, extensionOf, type Extension } from './extensions.js';
export { DeviceResident } from './device-resident.js';
export { DEVICE_TYPES, deviceName, deviceTypeName, eventTypeOf, isHostAccessible, parseDevice } from './device.js';
export type { Device, DeviceSpec, DeviceTypeName } from './device.js';
export type { DeviceStats, DeviceTotals } from './device-core.js';
export type { ImportMode } from './import.js';
export type { LoadOptions } from './core.js';
export { ArrowCDeviceError, EBUSY, EINVAL, EIO, ENODEV, ENOMEM, ENOSYS, EOVERFLOW, ERANGE, errnoName } from './errors.js';
export * as types from './types.js';
export type { DataType, Field, Metadata, Schema, TimeUnit } from './types.js';
export { ARROW_FLAG_DICTIONARY_ORDERED, ARROW_FLAG_MAP_KEYS_SORTED, ARROW_FLAG_NULLABLE, formatOf, parseFormat, typeFromFormat } from './format.js';
export { decodeMetadata, encodeMetadata } from './metadata.js';
export { fromArrowField, fromArrowSchema, fromArrowType, toArrowField, toArrowSchema, toArrowType } from './arrow-types.js';
export { constants, lp64, wasm32 } from './generated/layout.js';
export type { FieldLayout, Layout, StructLayout, StructName } from './layout-types.js';

import { ArrowCDevice } from './api.js';
import type { LoadOptions } from './core.js';

/** Loads a new instance of the wasm core. */
export function load(options?: LoadOptions): Promise<ArrowCDevice> {
  return ArrowCDevice.load(options);
}
export { describeArray, describeDeviceArray, describeSchema, describeStruct } from './inspect.js';
export { compareBatches, normalize, schemaDifferences } from './compare.js';
export { ExportedStream, StreamReader, exportArrayStream, exportDeviceArrayStream, importArrayStream, importDeviceArrayStream } from './stream.js';
export type { StreamExportOptions, StreamImportOptions, StreamKind, SyncBatchSource } from './stream.js';
export { AsyncStreamConsumer, disposeHandler, freeProducer, makeHandler, makeProducer, makeTask, produceAsync } from './async-stream.js';
export type { AsyncBatch, AsyncBatchSource, AsyncConsumerOptions, ProduceAsyncOptions, ProducerStats } from './async-stream.js';
export { BatchList, CAsyncConsumer, CBatchSource, cStream, drainStream, startCAsyncProducer } from './stream-c.js';
export type { CAsyncConsumerOptions, GeneratorOptions } from './stream-c.js';
export { roundtripStream } from './stream-roundtrip.js';
export type { StreamRoundtripOptions, StreamRoundtripSummary, Via } from './stream-roundtrip.js';
export { streamRuntime } from './stream-runtime.js';
export type { Mismatch } from './compare.js';
