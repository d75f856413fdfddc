// arrow-c-device: the Apache Arrow C Data Interface and C Device Data
// Interface for every JavaScript runtime. The package's main entry: the core
// paths (load or attach, export and import, devices, streams, the type model,
// apache-arrow conversion). The readers, writers and tools are subpaths of
// their own (package.json "exports"), so that a bundle of the core leaves
// them out: ./ipc.ts, ./json.ts, ./integration.ts, ./roundtrip.ts,
// ./inspect.ts, ./fixtures.ts.

export { ArrowCDevice, ExportedArray, ExportedSchema, Imported, ImportedSchema } from './api.js';
export type { DeviceExportOptions, DeviceImportOptions, DevicePolicy, ExportOptions, ImportOptions, RawImport, ValidationLevel } from './api.js';
export { toArrowTable, type Conversion } from './arrow-js/arrow-data.js';
export type { RawArray } from './model/raw.js';
export { compareRaw, rawValues } from './model/raw-values.js';
export { CANONICAL_EXTENSIONS, extensionOf, type Extension } from './model/extensions.js';
export { DeviceResident } from './device/resident.js';
export { DEVICE_TYPES, deviceName, deviceTypeName, eventTypeOf, isHostAccessible, parseDevice } from './device/device.js';
export type { Device, DeviceSpec, DeviceTypeName } from './device/device.js';
export type { DeviceStats, DeviceTotals } from './abi/device-exports.js';
export type { ImportMode } from './arrow-js/import.js';
export type { CoreRef, LoadOptions } from './abi/core.js';
export { ImageSpace, MemorySpace, releaseThrough } from './abi/address-space.js';
export type { AddressSpace, Allocator, FunctionTable, MemorySpaceOptions, ReleasableStruct } from './abi/address-space.js';
export { readField } from './model/schema.js';
export { readRaw } from './model/raw.js';
export { ForeignModule, partsFromExports, type ForeignModuleOptions, type ModuleExports } from './foreign/module.js';
export type { ForeignSource } from './exchange/options.js';
export { ARROW_C_ARRAY, ARROW_C_DEVICE_ARRAY, ARROW_C_DEVICE_STREAM, ARROW_C_SCHEMA, ARROW_C_STREAM, type ArrowCDescriptor, type ArrowCProvider } from './exchange/protocol.js';
export { ArrowCDeviceError, EBUSY, EINVAL, EIO, ENODEV, ENOMEM, ENOSYS, EOVERFLOW, ERANGE, errnoName } from './abi/errors.js';
export type { ArrowCDeviceErrorJSON, ErrnoName, ErrorDetails, ErrorLayout, ErrorLevel } from './abi/errors.js';
// The type model: a constructor per type of the spec, fields, schemas, equality (pure functions).
export * as types from './model/types.js';
export type { DataType, Field, Metadata, Schema, TimeUnit } from './model/types.js';
export { ARROW_FLAG_DICTIONARY_ORDERED, ARROW_FLAG_MAP_KEYS_SORTED, ARROW_FLAG_NULLABLE, formatOf, parseFormat, typeFromFormat } from './model/format.js';
export { decodeMetadata, encodeMetadata } from './model/metadata.js';
export { fromArrowField, fromArrowSchema, fromArrowType, toArrowField, toArrowSchema, toArrowType } from './arrow-js/arrow-types.js';
export { constants, lp64, wasm32 } from './abi/generated/layout.js';
export type { FieldLayout, Layout, StructLayout, StructName } from './abi/layout-types.js';

import { ArrowCDevice } from './api.js';
import type { LoadOptions } from './abi/core.js';
import type { AttachOptions } from './abi/attach.js';

/**
 * Loads a new instance of the wasm core, with its own memory: the same as `ArrowCDevice.load`.
 *
 * Ownership: the instance lives as long as the caller keeps it; it has nothing to release.
 * @param options - the wasm binary, when the caller supplies it.
 * @returns the facade over the new instance.
 */
export function load(options?: LoadOptions): Promise<ArrowCDevice> {
  return ArrowCDevice.load(options);
}

/**
 * Linked mode: the facade over an Emscripten module that linked the core's static library (see
 * `ArrowCDevice.attach`).
 *
 * Ownership: borrows the module; nothing to release.
 * @param module - what the module's factory resolved to.
 * @param options - the module's wasm binary, when the factory was not given it.
 * @returns the facade over the module's memory.
 * @throws `ArrowCDeviceError` (EINVAL) naming a missing link flag or binding.
 */
export function attach(module: object, options?: AttachOptions): ArrowCDevice {
  return ArrowCDevice.attach(module, options);
}
export type { AttachOptions } from './abi/attach.js';
export { compareBatches, normalize, schemaDifferences } from './arrow-js/compare.js';
export {
  ExportedStream, RawStreamReader, StreamReader, exportArrayStream, exportDeviceArrayStream, exportRawArrayStream, exportRawDeviceArrayStream,
  importArrayStream, importDeviceArrayStream, importRawArrayStream, importRawDeviceArrayStream,
} from './stream/pull.js';
export type {
  PullReader, RawStreamExportOptions, RawStreamImportOptions, StreamExportOptions, StreamImportOptions, StreamKind, SyncBatchSource, SyncRawSource,
} from './stream/pull.js';
export { AsyncStreamConsumer, disposeHandler, freeProducer, makeHandler, makeProducer, makeTask, produceAsync, produceAsyncRaw } from './stream/async.js';
export type {
  AsyncBatch, AsyncBatchSource, AsyncConsumerOptions, AsyncRawConsumerOptions, AsyncRawSource, ProduceAsyncOptions, ProducerStats, Production,
  RawProduceAsyncOptions,
} from './stream/async.js';
export { BatchList, CAsyncConsumer, CBatchSource, cStream, drainStream, startCAsyncProducer } from './stream/c-backed.js';
export type { CAsyncConsumerOptions, GeneratorOptions } from './stream/c-backed.js';
export { streamRuntime } from './stream/runtime.js';
export type { Mismatch } from './arrow-js/compare.js';
export type { Handle } from './abi/handles.js';
