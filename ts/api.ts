// The public entry point: ArrowCDevice, a loaded core with every operation of
// the C Data, C Stream and C Device Data interfaces as a method. It is a thin
// facade: each method is one call into the module that owns its concept
// (docs/architecture.md): ts/exchange/ (raw structs, handles, options),
// ts/arrow-js/ (apache-arrow), ts/device/, ts/stream/. Longer than 400 lines
// because each public method carries its reference documentation (what it
// takes and returns, what it throws, who owns what after), from which
// docs/api/ is generated.

import type * as arrow from 'apache-arrow';
import type { AttachOptions } from './abi/attach.js';
import { Core, type LoadOptions } from './abi/core.js';
import { ArrowCDeviceError, EINVAL } from './abi/errors.js';
import { Handle } from './abi/handles.js';
import { checkOptions, optionKeys } from './abi/option-keys.js';
import type { DeviceTotals } from './abi/device-exports.js';
import { exportBatch, exportSchema, exportTable, exportVector } from './arrow-js/export.js';
import { importBatch, importVector } from './arrow-js/import.js';
import { deviceBytesAllocated, deviceOwnerOf, deviceStats, readDeviceMemory, syncDeviceArray } from './device/accounting.js';
import type { Device, DeviceSpec } from './device/device.js';
import {
  DEVICE_EXPORT_OPTION_KEYS, DEVICE_IMPORT_OPTION_KEYS, exportDeviceBatch, exportDeviceRaw, importDeviceBatch, importDeviceRaw,
  type DeviceExportOptions, type DeviceImportOptions,
} from './device/exchange.js';
import type { DeviceResident } from './device/resident.js';
import { exportRaw } from './exchange/export.js';
import { ImportedSchema, type ExportedArray, type ExportedSchema, type Imported } from './exchange/handles.js';
import { importRaw, importSchema } from './exchange/import.js';
import { IMPORT_OPTION_KEYS, type ForeignSource, type ImportOptions, type RawImport } from './exchange/options.js';
import { ForeignModule, type ForeignModuleOptions, type ModuleExports } from './foreign/module.js';
import {
  ARROW_C_ARRAY, ARROW_C_DEVICE_ARRAY, ARROW_C_DEVICE_STREAM, ARROW_C_SCHEMA, ARROW_C_STREAM, descriptorOf,
  type ArrowCDescriptor, type ArrowCProvider,
} from './exchange/protocol.js';
import { checkAddress, checkBatchArgument, checkPointers } from './exchange/arguments.js';
import type { RawArray } from './model/raw.js';
import type { Field, Schema } from './model/types.js';
import {
  AsyncStreamConsumer, produceAsync, produceAsyncRaw, type AsyncBatchSource, type AsyncConsumerOptions, type AsyncRawConsumerOptions,
  type AsyncRawSource, type ProduceAsyncOptions, type Production, type RawProduceAsyncOptions,
} from './stream/async.js';
import { ASYNC_RAW_CONSUMER_OPTION_KEYS, rawReading } from './stream/async-extract.js';
import {
  exportArrayStream, exportDeviceArrayStream, exportRawArrayStream, exportRawDeviceArrayStream, importArrayStream, importDeviceArrayStream,
  importRawArrayStream, importRawDeviceArrayStream,
  type ExportedStream, type RawStreamExportOptions, type RawStreamImportOptions, type RawStreamReader, type StreamExportOptions,
  type StreamImportOptions, type StreamReader, type SyncBatchSource, type SyncRawSource,
} from './stream/pull.js';

// The names this module has always exported, from the modules that own them now.
export { ExportedArray, ExportedSchema, Imported, ImportedSchema } from './exchange/handles.js';
export type { ImportOptions, RawImport, ValidationLevel } from './exchange/options.js';
export type { DeviceExportOptions, DeviceImportOptions, DevicePolicy } from './device/exchange.js';

/** Where an export goes: the core's memory (the default), or `into` another module's. */
export interface ExportOptions {
  /**
   * Another module (from `acd.foreign()`): the structs and buffers are allocated there by its own `malloc`, and its code releases them.
   */
  into?: ForeignModule;
}

export const EXPORT_OPTION_KEYS = optionKeys<ExportOptions>()(['into']);
/** importSchema's options. */
const SCHEMA_IMPORT_OPTION_KEYS = optionKeys<{ from?: ForeignSource }>()(['from']);

/**
 * The C Data and C Device Data interfaces over one instance of the wasm core: every export, import, stream and device operation as a method.
 *
 * Ownership: an export's handle owns its structs until a consumer moves them out; an import takes ownership of the structs at the addresses it is given (the producer's copies are marked released) and returns a handle the caller must `release()` (or dispose with `using`). A failed import moves and releases nothing. Handles never released are freed by a `FinalizationRegistry` at some later garbage collection.
 */
export class ArrowCDevice {
  private constructor(
    /**
     * The loaded core (its memory, allocator and function table), which the
     * methods call: lower level than this facade, for tools that read
     * structs through `core.space`.
     */
    readonly core: Core,
  ) {}

  /**
   * Loads a new instance of the wasm core, with its own memory.
   *
   * Ownership: the instance lives as long as the caller keeps it; it has nothing to release.
   * @param options - where to find the wasm binary, and the core's memory limits.
   * @returns the facade over the new instance.
   */
  static async load(options?: LoadOptions): Promise<ArrowCDevice> {
    return new ArrowCDevice(await Core.load(options));
  }

  static #attached = new WeakMap<Core, ArrowCDevice>();

  /**
   * Linked mode: binds the facade to an Emscripten module that linked the core as a static library (`dist/lib/libarrow_c_device.a`, headers in `dist/include`), so that its C/C++ code and this facade share one memory and pointers pass both ways as they are.
   *
   * Its wasm binary is needed (to know its function table's signatures): pass it to the module's factory as `wasmBinary` (or in `options`). Attaching the same module again gives the same facade.
   *
   * Ownership: borrows the module, which stays the caller's; nothing to release.
   * @param module - what the module's factory resolved to.
   * @param options - the module's wasm binary, when the factory was not given it.
   * @returns the facade over the module's memory.
   * @throws `ArrowCDeviceError` (EINVAL) naming a missing link flag or binding.
   */
  static attach(module: object, options?: AttachOptions): ArrowCDevice {
    const core = Core.attach(module, options);
    let acd = ArrowCDevice.#attached.get(core);
    if (acd === undefined) {
      acd = new ArrowCDevice(core);
      ArrowCDevice.#attached.set(core, acd);
    }
    return acd;
  }

  /** The core's linear memory, where every struct and buffer of this instance lives. */
  get memory(): WebAssembly.Memory {
    return this.core.memory;
  }

  /**
   * Live bytes allocated by the core's counting allocator: what exports and view-mode imports hold until released. An example that released everything ends where it started. The core's own bounded caches are not counted: the keys of the schemas it validated (256 KiB) and up to four schema trees it exported, kept to be copied by later exports of the same schema (at most 1 MiB each).
   *
   * Ownership: reads a counter; nothing to release.
   */
  bytesAllocated(): number {
    return this.core.bytesAllocated();
  }

  /**
   * Describes another wasm module, to import from (`{ from }`) or export into (`{ into }`): its memory, its function table and its allocator, or its `instance.exports` (Emscripten's and wasm-bindgen's names are found).
   *
   * Ownership: borrows the module; the returned description holds no memory of the core and has nothing to release.
   * @param module - `{ memory, table, malloc, free }`, or the module's `instance.exports`.
   * @param name - the module's name, used in error messages.
   * @returns the module as an address space.
   * @throws `ArrowCDeviceError` (EINVAL) when no memory is found.
   */
  foreign(module: ForeignModuleOptions | ModuleExports, name?: string): ForeignModule {
    return new ForeignModule(module, name);
  }

  // ---- export (ts/arrow-js/export.ts, ts/exchange/export.ts, ts/device/exchange.ts)

  /**
   * Exports a schema, field or type (apache-arrow's or the type model's) as a struct ArrowSchema.
   *
   * Ownership: the caller owns the returned handle and must call `release()` (or use `using`); a consumer that imports `handle.schema` moves the struct out, and the handle's release then frees only what is left.
   * @param x - the schema, field or type.
   * @param options - `into`: another module's memory instead of the core's.
   * @returns the handle; `handle.schema` is the struct's address.
   * @throws `ArrowCDeviceError` (ENOMEM) when memory runs out; `TypeError` for an argument of the wrong kind.
   */
  exportSchema(x: arrow.Schema | arrow.Field | Schema | Field, options: ExportOptions = {}): ExportedSchema {
    checkOptions('exportSchema', options, EXPORT_OPTION_KEYS);
    return exportSchema(this.core, x, options.into);
  }

  /**
   * Exports a record batch as a struct ArrowArray (a struct array of its columns) with its ArrowSchema.
   *
   * Ownership: the caller owns the returned handle and must call `release()` (or use `using`); a consumer that imports `handle.schema` and `handle.array` moves them out, and the handle's release then frees only the moved-from base structs.
   * @param batch - an apache-arrow RecordBatch (a Table is refused: use `exportTable`).
   * @param options - `into`: another module's memory instead of the core's.
   * @returns the handle; `handle.schema` and `handle.array` are the structs' addresses.
   * @throws `TypeError` naming the argument when it is not a RecordBatch; `ArrowCDeviceError` (ENOMEM, EINVAL) when the batch cannot be written.
   */
  exportBatch(batch: arrow.RecordBatch, options: ExportOptions = {}): ExportedArray {
    checkBatchArgument('exportBatch', batch);
    checkOptions('exportBatch', options, EXPORT_OPTION_KEYS);
    return exportBatch(this.core, batch, options.into);
  }

  /**
   * Exports a single-chunk vector (or a Data) as a struct ArrowArray with its ArrowSchema.
   *
   * Ownership: the caller owns the returned handle and must call `release()` (or use `using`).
   * @param vector - the vector or Data (one chunk).
   * @param name - the field's name in the ArrowSchema.
   * @param options - `into`: another module's memory instead of the core's.
   * @returns the handle; `handle.schema` and `handle.array` are the structs' addresses.
   * @throws `ArrowCDeviceError` (EINVAL) for a vector of several chunks.
   */
  exportVector(vector: arrow.Vector | arrow.Data, name = '', options: ExportOptions = {}): ExportedArray {
    checkOptions('exportVector', options, EXPORT_OPTION_KEYS);
    return exportVector(this.core, vector, name, options.into);
  }

  /**
   * Exports every batch of a table, one ArrowArray and ArrowSchema each.
   *
   * Ownership: the caller owns every returned handle and must release each one.
   * @param table - the apache-arrow Table.
   * @param options - `into`: another module's memory instead of the core's.
   * @returns one handle per batch, in order.
   */
  exportTable(table: arrow.Table, options: ExportOptions = {}): ExportedArray[] {
    checkOptions('exportTable', options, EXPORT_OPTION_KEYS);
    return exportTable(this.core, table, options.into);
  }

  /**
   * Exports a record batch as a struct ArrowDeviceArray with its ArrowSchema: on the CPU by default (device_id -1, no sync event), or on a simulated device, where every buffer of every child is that device's memory, copied there on its stream, with a sync event recorded after the copies (device types that have one).
   *
   * Ownership: the caller owns the returned handle and must call `release()` (or use `using`), also after a consumer imported the structs (the handle then frees the moved-from base structs). Keep the handle: destructuring only `schema` and `array` drops the owner, and the memory stays allocated until garbage collection.
   * @param batch - an apache-arrow RecordBatch.
   * @param options - `device`: where the data goes (`'cuda:1'`, `{ type: 'rocm', id: 2 }`, ...); `into`: another module (CPU arrays only).
   * @returns the handle; `handle.schema` and `handle.array` (the ArrowDeviceArray) are the structs' addresses.
   * @throws `TypeError` naming the argument when it is not a RecordBatch; `ArrowCDeviceError` (EINVAL for an unknown device, ENOMEM).
   */
  exportDeviceBatch(batch: arrow.RecordBatch, options: DeviceExportOptions = {}): ExportedArray {
    checkBatchArgument('exportDeviceBatch', batch);
    checkOptions('exportDeviceBatch', options, DEVICE_EXPORT_OPTION_KEYS);
    return exportDeviceBatch(this.core, batch, options);
  }

  /**
   * Exports a raw array (any type of the spec, as its C buffers and children) with its field, as an ArrowArray and ArrowSchema: the path for types apache-arrow lacks.
   *
   * Ownership: the caller owns the returned handle and must call `release()` (or use `using`). The raw array's buffers are copied: it stays the caller's.
   * @param field - the field (for a record batch, `types.recordBatchField(schema)`).
   * @param raw - the raw array, in the field's type.
   * @param options - `into`: another module's memory instead of the core's.
   * @returns the handle; `handle.schema` and `handle.array` are the structs' addresses.
   * @throws `ArrowCDeviceError` (EINVAL) naming the path of a buffer that does not fit the type.
   */
  exportRaw(field: Field, raw: RawArray, options: ExportOptions = {}): ExportedArray {
    checkOptions('exportRaw', options, EXPORT_OPTION_KEYS);
    return exportRaw(this.core, field, raw, options.into);
  }

  /**
   * Like `exportRaw`, as an ArrowDeviceArray on `options.device` (the CPU by default).
   *
   * Ownership: the caller owns the returned handle and must call `release()` (or use `using`).
   * @param field - the field.
   * @param raw - the raw array, in the field's type.
   * @param options - `device` and `into`, as for `exportDeviceBatch`.
   * @returns the handle; `handle.array` is the ArrowDeviceArray.
   */
  exportDeviceRaw(field: Field, raw: RawArray, options: DeviceExportOptions = {}): ExportedArray {
    checkOptions('exportDeviceRaw', options, DEVICE_EXPORT_OPTION_KEYS);
    return exportDeviceRaw(this.core, field, raw, options);
  }

  // ---- import (ts/exchange/import.ts, ts/arrow-js/import.ts, ts/device/exchange.ts)

  /**
   * Imports the ArrowSchema at `ptr`: validates it, moves it into this library's memory and reads it.
   *
   * Ownership: takes ownership of the struct at `ptr` (or of what a provider hands over): it is moved and the caller's copy is marked released (its release callback is not called). The caller owns the returned handle and must call `release()`; until then it can be passed to `importBatch` and the others in place of a schema address, any number of times. On failure nothing is moved or released: the caller still owns the struct.
   * @param ptr - the address of a struct ArrowSchema, or an object offering `Symbol.for('arrow.c_schema')` (docs/protocol.md).
   * @param options - `from`: the address is in another module's memory (`acd.foreign()`).
   * @returns the imported schema, `value` being the field in the type model.
   * @throws `ArrowCDeviceError` naming the path at fault (EINVAL for a malformed or released struct); `TypeError` for a BigInt, negative or fractional address.
   */
  importSchema(ptr: number | ArrowCProvider, options: { from?: ForeignSource } = {}): ImportedSchema {
    checkOptions('importSchema', options, SCHEMA_IMPORT_OPTION_KEYS);
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_SCHEMA, 'importSchema', options, (d, o) => importSchema(this.core, d.schema, o.from));
    checkAddress('importSchema', 'ptr', ptr);
    return importSchema(this.core, ptr, options.from);
  }

  /**
   * Imports what a provider hands over by the protocol (`Symbol.for('arrow.c_array')`, docs/protocol.md) as a record batch.
   *
   * Ownership: the descriptor the provider hands over is consumed: its structs are moved out by the import and it is released after (all of it when the import fails). The caller owns the returned handle and must call `release()`.
   * @param provider - an object offering `Symbol.for('arrow.c_array')`.
   * @param options - as for the address form.
   * @returns the batch, as `value`.
   */
  importBatch(provider: ArrowCProvider, options?: ImportOptions): Imported<arrow.RecordBatch>;
  /**
   * Imports the struct ArrowArray at `array`, with its schema, as an apache-arrow RecordBatch, after the C validator checked it at `options.validate`.
   *
   * Ownership: takes ownership of the ArrowArray at `array`, and of the ArrowSchema when `schema` is an address (an `ImportedSchema` stays the caller's): they are moved and the caller's copies are marked released. The caller owns the returned handle and must call `release()` (or use `using`): in copy mode (the default) it holds only JS memory; in view mode it keeps the C array alive until then. On failure nothing is moved or released.
   * @param schema - the address of a struct ArrowSchema, or an `ImportedSchema`.
   * @param array - the address of a struct ArrowArray (a struct array whose children are the columns).
   * @param options - `mode` ('copy' or 'view'), `validate` (the validation level), `from` (another module), `convert` (types apache-arrow lacks).
   * @returns the batch, as `value`.
   * @throws `ArrowCDeviceError` naming the path at fault (EINVAL), or the type apache-arrow cannot hold and both ways out; `TypeError` for an argument of the wrong kind.
   */
  importBatch(schema: number | ImportedSchema, array: number, options?: ImportOptions): Imported<arrow.RecordBatch>;
  importBatch(schema: number | ImportedSchema | ArrowCProvider, array?: number | ImportOptions, options: ImportOptions = {}): Imported<arrow.RecordBatch> {
    checkOptions('importBatch', isProvider(schema) ? array : options, IMPORT_OPTION_KEYS);
    if (isProvider(schema)) return this.viaProtocol(schema, ARROW_C_ARRAY, 'importBatch', array as ImportOptions | undefined, (d, o) => importBatch(this.core, d.schema, d.array!, o));
    checkPointers('importBatch', schema, array);
    return importBatch(this.core, schema, array as number, options);
  }

  /**
   * The `'keep'` form: the array stays on its device, as a `DeviceResident`.
   *
   * Ownership: takes ownership of the ArrowDeviceArray at `deviceArray` (and of the ArrowSchema when given as an address): they are moved and the caller's copies are marked released. The caller owns the returned `DeviceResident` and must release it, or consume it with `moveTo` or `toHost`. On failure nothing is moved or released.
   * @param schema - the address of a struct ArrowSchema, or an `ImportedSchema`.
   * @param deviceArray - the address of a struct ArrowDeviceArray.
   * @param options - `device: 'keep'`, and the validation level.
   * @returns the data, left on its device.
   */
  importDeviceBatch(schema: number | ImportedSchema, deviceArray: number, options: DeviceImportOptions & { device: 'keep' }): DeviceResident;
  /**
   * Imports the struct ArrowDeviceArray at `deviceArray` as a record batch. Arrays on the CPU import as they are; the others by `options.device`: copied to the host (`'copy'`, the default, after waiting on the sync event), or refused (`'reject'`).
   *
   * Ownership: takes ownership of the ArrowDeviceArray at `deviceArray` (and of the ArrowSchema when given as an address): they are moved and the caller's copies are marked released; device memory is freed once copied to the host. The caller owns the returned handle and must call `release()`. On failure (a refused device included) nothing is moved or released: the caller still owns the structs.
   * @param schema - the address of a struct ArrowSchema, or an `ImportedSchema`.
   * @param deviceArray - the address of a struct ArrowDeviceArray.
   * @param options - `device` (the policy), `mode`, `validate` (default 'full' for a host copy).
   * @returns the batch, as `value`.
   * @throws `ArrowCDeviceError`: EINVAL naming the path at fault or the refused device, EBUSY when data is read before its event.
   */
  importDeviceBatch(schema: number | ImportedSchema, deviceArray: number, options?: DeviceImportOptions): Imported<arrow.RecordBatch>;
  /**
   * The protocol form: imports a provider's `Symbol.for('arrow.c_device_array')` (CPU arrays from another memory; any device from the core's).
   *
   * Ownership: the descriptor is consumed (released after the import, all of it on failure); the caller owns the returned handle and must call `release()`.
   * @param provider - an object offering `Symbol.for('arrow.c_device_array')`.
   * @param options - as for the address form (`'keep'` is refused).
   * @returns the batch, as `value`.
   */
  importDeviceBatch(provider: ArrowCProvider, options?: DeviceImportOptions): Imported<arrow.RecordBatch>;
  importDeviceBatch(schema: number | ImportedSchema | ArrowCProvider, deviceArray?: number | DeviceImportOptions,
    options: DeviceImportOptions = {}): Imported<arrow.RecordBatch> | DeviceResident {
    checkOptions('importDeviceBatch', isProvider(schema) ? deviceArray : options, DEVICE_IMPORT_OPTION_KEYS);
    if (isProvider(schema)) {
      const o = (deviceArray ?? {}) as DeviceImportOptions;
      if (o.device === 'keep') throw new ArrowCDeviceError("importDeviceBatch: device 'keep' needs addresses, not a provider (the descriptor is released after the import)", EINVAL);
      return this.viaProtocol(schema, ARROW_C_DEVICE_ARRAY, 'importDeviceBatch', o,
        (d, opts) => importDeviceBatch(this.core, d.schema, d.array!, opts) as Imported<arrow.RecordBatch>);
    }
    checkPointers('importDeviceBatch', schema, deviceArray, 'deviceArray');
    return importDeviceBatch(this.core, schema, deviceArray as number, options);
  }

  /**
   * The protocol form of `importRaw`: a provider's `Symbol.for('arrow.c_array')`.
   *
   * Ownership: the descriptor is consumed (released after the import); the caller owns the returned handle and must call `release()`.
   * @param provider - an object offering `Symbol.for('arrow.c_array')`.
   * @param options - `mode`, `validate`, `from`.
   * @returns the field and the raw array, as `value`.
   */
  importRaw(provider: ArrowCProvider, options?: ImportOptions): Imported<RawImport>;
  /**
   * Imports an ArrowArray of any type of the spec as a raw array (its C buffers and children, as views or copies by `options.mode`): the lossless path, for types apache-arrow lacks too.
   *
   * Ownership: takes ownership of the ArrowArray at `array` (and of the ArrowSchema when given as an address): they are moved and the caller's copies are marked released. The caller owns the returned handle and must call `release()`; in view mode the buffers are views over wasm memory, valid until then. On failure nothing is moved or released.
   * @param schema - the address of a struct ArrowSchema, or an `ImportedSchema`.
   * @param array - the address of a struct ArrowArray.
   * @param options - `mode`, `validate`, `from`.
   * @returns `value.field` and `value.array` (a RawArray).
   * @throws `ArrowCDeviceError` naming the path at fault.
   */
  importRaw(schema: number | ImportedSchema, array: number, options?: ImportOptions): Imported<RawImport>;
  importRaw(schema: number | ImportedSchema | ArrowCProvider, array?: number | ImportOptions, options: ImportOptions = {}): Imported<RawImport> {
    checkOptions('importRaw', isProvider(schema) ? array : options, IMPORT_OPTION_KEYS);
    if (isProvider(schema)) return this.viaProtocol(schema, ARROW_C_ARRAY, 'importRaw', array as ImportOptions | undefined, (d, o) => importRaw(this.core, d.schema, d.array!, o));
    checkPointers('importRaw', schema, array);
    return importRaw(this.core, schema, array as number, options);
  }

  /**
   * Like `importRaw`, for an ArrowDeviceArray (arrays off the CPU: `options.device` 'copy', the default, or 'reject').
   *
   * Ownership: takes ownership of the structs, as `importDeviceBatch`; the caller owns the returned handle and must call `release()`. On failure nothing is moved or released.
   * @param schema - the address of a struct ArrowSchema, or an `ImportedSchema`.
   * @param deviceArray - the address of a struct ArrowDeviceArray.
   * @param options - `device`, `mode`, `validate`.
   * @returns the field and the raw array, as `value`.
   */
  importDeviceRaw(schema: number | ImportedSchema, deviceArray: number, options: DeviceImportOptions = {}): Imported<RawImport> {
    checkOptions('importDeviceRaw', options, DEVICE_IMPORT_OPTION_KEYS);
    checkPointers('importDeviceRaw', schema, deviceArray, 'deviceArray');
    return importDeviceRaw(this.core, schema, deviceArray, options);
  }

  /**
   * The protocol form of `importVector`: a provider's `Symbol.for('arrow.c_array')`.
   *
   * Ownership: the descriptor is consumed (released after the import); the caller owns the returned handle and must call `release()`.
   * @param provider - an object offering `Symbol.for('arrow.c_array')`.
   * @param options - `mode`, `validate`, `from`, `convert`.
   * @returns the vector, as `value`.
   */
  importVector(provider: ArrowCProvider, options?: ImportOptions): Imported<arrow.Vector>;
  /**
   * Imports an ArrowArray of any type as an apache-arrow Vector.
   *
   * Ownership: takes ownership of the ArrowArray at `array` (and of the ArrowSchema when given as an address): they are moved and the caller's copies are marked released. The caller owns the returned handle and must call `release()`. On failure nothing is moved or released.
   * @param schema - the address of a struct ArrowSchema, or an `ImportedSchema`.
   * @param array - the address of a struct ArrowArray.
   * @param options - `mode`, `validate`, `from`, `convert`.
   * @returns the vector, as `value`.
   * @throws `ArrowCDeviceError` naming the path at fault.
   */
  importVector(schema: number | ImportedSchema, array: number, options?: ImportOptions): Imported<arrow.Vector>;
  importVector(schema: number | ImportedSchema | ArrowCProvider, array?: number | ImportOptions, options: ImportOptions = {}): Imported<arrow.Vector> {
    checkOptions('importVector', isProvider(schema) ? array : options, IMPORT_OPTION_KEYS);
    if (isProvider(schema)) return this.viaProtocol(schema, ARROW_C_ARRAY, 'importVector', array as ImportOptions | undefined, (d, o) => importVector(this.core, d.schema, d.array!, o));
    checkPointers('importVector', schema, array);
    return importVector(this.core, schema, array as number, options);
  }

  /**
   * The device-array form of the protocol for raw arrays: like `importDeviceRaw` on a provider's `Symbol.for('arrow.c_device_array')`.
   *
   * Ownership: the descriptor is consumed (released after the import); the caller owns the returned handle and must call `release()`.
   * @param provider - an object offering `Symbol.for('arrow.c_device_array')`.
   * @param options - `device`, `mode`, `validate`.
   * @returns the field and the raw array, as `value`.
   */
  importDeviceRawFrom(provider: ArrowCProvider, options: DeviceImportOptions = {}): Imported<RawImport> {
    checkOptions('importDeviceRawFrom', options, DEVICE_IMPORT_OPTION_KEYS);
    return this.viaProtocol(provider, ARROW_C_DEVICE_ARRAY, 'importDeviceRawFrom', options, (d, o) => importDeviceRaw(this.core, d.schema, d.array!, o));
  }

  /**
   * Runs an import on what a provider hands over by the protocol
   * (docs/protocol.md): structs in another memory are imported `{ from }` it;
   * the descriptor is released after, which frees what the import did not
   * move out (all of it, when the import failed).
   */
  private viaProtocol<T, O extends { from?: ForeignSource; mode?: string; inPlace?: boolean; requestedSchema?: object }>(provider: ArrowCProvider, symbol: symbol,
    what: string, options: O | undefined, run: (d: ArrowCDescriptor, options: O) => T): T {
    const d = descriptorOf(provider, symbol, what, options?.requestedSchema);
    let keep = false;
    try {
      const o = (options ?? {}) as O;
      if (d.memory === this.core.memory || o.from !== undefined) return run(d, o);
      const from = this.foreignOf(d);
      // View mode without the memory's allocator: the structs are owned where
      // the descriptor holds them, and the descriptor goes with the import.
      const inPlace = o.mode === 'view' && from.space.allocator === null;
      const result = run(d, { ...o, from, ...(inPlace ? { inPlace: true } : {}) });
      if (inPlace && result instanceof Handle) {
        result.chain(() => d.release());
        keep = true;
      }
      return result;
    } finally {
      if (!keep) d.release();
    }
  }

  #foreign = new WeakMap<WebAssembly.Memory, ForeignModule>();

  /** One ForeignModule per memory a provider hands structs in (with its allocator once one is shared). */
  private foreignOf(d: ArrowCDescriptor): ForeignModule {
    let f = this.#foreign.get(d.memory);
    const allocator = d.allocator;
    if (f === undefined || (f.space.allocator === null && allocator !== undefined)) {
      f = new ForeignModule({
        name: "the provider's module", memory: d.memory, table: d.table,
        ...(allocator !== undefined ? { malloc: (n: number) => allocator.alloc(n), free: (p: number) => allocator.free(p) } : {}),
      });
      this.#foreign.set(d.memory, f);
    }
    return f;
  }

  // ---- streams (ts/stream/) -------------------------------------------------

  /**
   * An ArrowArrayStream in wasm memory over a Table, a RecordBatchReader, an array or any iterable of batches, pulled lazily by `get_next`.
   *
   * Ownership: the caller owns the returned handle and must call `release()`; a consumer that imports `handle.ptr` moves the stream out, and the stream's own release (called by its consumer) frees the source's state. Each batch `get_next` hands out belongs to the consumer.
   * @param source - the batches.
   * @param options - `into`: another module's memory.
   * @returns the handle; `handle.ptr` is the struct's address.
   */
  exportArrayStream(source: SyncBatchSource, options?: StreamExportOptions): ExportedStream {
    return exportArrayStream(this, source, options);
  }

  /**
   * Like `exportArrayStream`, as an ArrowDeviceArrayStream on `options.device` (the CPU by default).
   *
   * Ownership: as `exportArrayStream`: the caller owns the handle and must call `release()`.
   * @param source - the batches.
   * @param options - `device`, `into`.
   * @returns the handle; `handle.ptr` is the struct's address.
   */
  exportDeviceArrayStream(source: SyncBatchSource, options?: StreamExportOptions): ExportedStream {
    return exportDeviceArrayStream(this, source, options);
  }

  /**
   * Imports the ArrowArrayStream at `ptr` and reads it as apache-arrow batches (a sync and async iterable).
   *
   * Ownership: takes ownership of the stream at `ptr` (moved; the caller's copy is marked released). The returned reader owns it: it is released when the reader reaches the end or fails; a reader left before its end must be released with `release()` (or `using`).
   * @param ptr - the address of a struct ArrowArrayStream, or an object offering `Symbol.for('arrow.c_stream')`.
   * @param options - `mode`, `validate`, `from`.
   * @returns the reader.
   * @throws `ArrowCDeviceError` naming the path at fault.
   */
  importArrayStream(ptr: number | ArrowCProvider, options?: StreamImportOptions): StreamReader {
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_STREAM, 'importArrayStream', options, (d, o) => importArrayStream(this, d.stream!, o));
    return importArrayStream(this, ptr, options);
  }

  /**
   * Like `importArrayStream`, for an ArrowDeviceArrayStream (batches off the CPU are copied to the host by default).
   *
   * Ownership: takes ownership of the stream at `ptr`, as `importArrayStream`; the reader releases it at its end, or `release()` does.
   * @param ptr - the address of a struct ArrowDeviceArrayStream, or an object offering `Symbol.for('arrow.c_device_stream')`.
   * @param options - `device`, `mode`, `validate`, `from`.
   * @returns the reader.
   */
  importDeviceArrayStream(ptr: number | ArrowCProvider, options?: StreamImportOptions): StreamReader {
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_DEVICE_STREAM, 'importDeviceArrayStream', options, (d, o) => importDeviceArrayStream(this, d.stream!, o));
    return importDeviceArrayStream(this, ptr, options);
  }

  /**
   * Streams of raw arrays of any type of the spec (run-end encoded and list views included), as `exportRaw` exports one: an ArrowArrayStream in wasm memory over the raw arrays of `source` (an array, a generator, any iterable), pulled lazily by `get_next`.
   *
   * Ownership: the caller owns the returned handle and must call `release()`; a consumer that imports `handle.ptr` moves the stream out, and the stream's own release (called by its consumer) frees the source's state. Each array `get_next` hands out belongs to the consumer.
   * @param schema - the stream's schema: a Schema (a record batch's struct of its fields) or any Field; each raw array must be of its type.
   * @param source - the raw arrays.
   * @param options - `into`: another module's memory.
   * @returns the handle; `handle.ptr` is the struct's address.
   * @throws `ArrowCDeviceError` (EINVAL) for an unknown option key or a schema that cannot be exported.
   */
  exportRawArrayStream(schema: Schema | Field, source: SyncRawSource, options?: RawStreamExportOptions): ExportedStream {
    return exportRawArrayStream(this, schema, source, options);
  }

  /**
   * Like `exportRawArrayStream`, as an ArrowDeviceArrayStream on `options.device` (the CPU by default).
   *
   * Ownership: as `exportRawArrayStream`: the caller owns the handle and must call `release()`.
   * @param schema - the stream's schema: a Schema or any Field.
   * @param source - the raw arrays.
   * @param options - `device`, `into`.
   * @returns the handle; `handle.ptr` is the struct's address.
   * @throws `ArrowCDeviceError` (EINVAL) for an unknown option key.
   */
  exportRawDeviceArrayStream(schema: Schema | Field, source: SyncRawSource, options?: RawStreamExportOptions): ExportedStream {
    return exportRawDeviceArrayStream(this, schema, source, options);
  }

  /**
   * Like `importArrayStream`, each batch read as a raw array (as `importRaw` reads one); the stream's schema may be of any type (`reader.field`).
   *
   * Ownership: takes ownership of the stream at `ptr` (moved; the caller's copy is marked released). The returned reader owns it: it is released when the reader reaches the end or fails; a reader left before its end must be released with `release()` (or `using`). In view mode each array is a handle the caller must release.
   * @param ptr - the address of a struct ArrowArrayStream, or an object offering `Symbol.for('arrow.c_stream')`.
   * @param options - `mode`, `validate`, `from`.
   * @returns the reader.
   * @throws `ArrowCDeviceError` naming the path at fault, or (EINVAL) an unknown option key.
   */
  importRawArrayStream(ptr: number | ArrowCProvider, options?: RawStreamImportOptions): RawStreamReader {
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_STREAM, 'importRawArrayStream', options, (d, o) => importRawArrayStream(this, d.stream!, o));
    return importRawArrayStream(this, ptr, options);
  }

  /**
   * Like `importDeviceArrayStream`, each batch read as a raw array.
   *
   * Ownership: takes ownership of the stream at `ptr`, as `importRawArrayStream`; the reader releases it at its end, or `release()` does.
   * @param ptr - the address of a struct ArrowDeviceArrayStream, or an object offering `Symbol.for('arrow.c_device_stream')`.
   * @param options - `device`, `mode`, `validate`, `from`.
   * @returns the reader.
   * @throws `ArrowCDeviceError` naming the path at fault, or (EINVAL) an unknown option key.
   */
  importRawDeviceArrayStream(ptr: number | ArrowCProvider, options?: RawStreamImportOptions): RawStreamReader {
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_DEVICE_STREAM, 'importRawDeviceArrayStream', options, (d, o) => importRawDeviceArrayStream(this, d.stream!, o));
    return importRawDeviceArrayStream(this, ptr, options);
  }

  /**
   * Drives the ArrowAsyncDeviceStreamHandler at `handler` from an (async) iterable or ReadableStream of batches, within the credit its `request(n)` gives; with `{ into }`, a handler in another module's memory, made by its own code.
   *
   * Ownership: borrows the handler until the producer calls its `release` (the spec's lifetime: the handler's owner frees it then). The producer, its tasks and the batches it hands out are freed as the consumer releases them; nothing is left for the caller to release.
   * @param handler - the address of a struct ArrowAsyncDeviceStreamHandler.
   * @param source - the batches.
   * @param options - `device`, `into`, `signal`.
   * @returns a promise of the final stats, with the live `stats` and `done` on it.
   */
  produceAsync(handler: number, source: AsyncBatchSource, options?: ProduceAsyncOptions): Production {
    return produceAsync(this, handler, source, options);
  }

  /**
   * An ArrowAsyncDeviceStreamHandler (`consumer.handler`) whose batches come out as an AsyncIterable or a ReadableStream; with `{ from }`, the handler is in another module's memory, for its own producer code.
   *
   * Ownership: the caller owns the returned consumer and must `release()` it (or use `await using`, which also waits for the producer's release of the handler). Each batch it yields is JS memory (copy mode) or must be released as its handle says.
   * @param options - `window` (the credit), `mode`, `validate`, `from`.
   * @returns the consumer.
   */
  asyncConsumer(options?: AsyncConsumerOptions): AsyncStreamConsumer {
    return new AsyncStreamConsumer(this, options);
  }

  /**
   * Like `produceAsync`, over raw arrays of any type of the spec (run-end encoded and list views included).
   *
   * Ownership: as `produceAsync`: borrows the handler until the producer calls its `release`; the producer, its tasks and the arrays it hands out are freed as the consumer releases them; nothing is left for the caller to release.
   * @param handler - the address of a struct ArrowAsyncDeviceStreamHandler.
   * @param schema - the stream's schema: a Schema or any Field; each raw array must be of its type.
   * @param source - the raw arrays: an (async) iterable or a ReadableStream.
   * @param options - `device`, `additionalMetadata`, `taskMetadata`, `into`.
   * @returns a promise of the final stats, with the live `stats` and `done` on it.
   * @throws `ArrowCDeviceError` (EINVAL) for an unknown option key.
   */
  produceAsyncRaw(handler: number, schema: Schema | Field, source: AsyncRawSource, options?: RawProduceAsyncOptions): Production {
    return produceAsyncRaw(this, handler, schema, source, options);
  }

  /**
   * Like `asyncConsumer`, its batches raw arrays of any type (the stream's schema may be of any type: `consumer.field`).
   *
   * Ownership: as `asyncConsumer`: the caller owns the returned consumer and must `release()` it (or use `await using`). Each array it yields is JS memory (copy mode) or a handle the caller must release (view mode).
   * @param options - `window` (the credit), `mode`, `validate`, `from`; `convert` is refused (it is for apache-arrow imports).
   * @returns the consumer.
   * @throws `ArrowCDeviceError` (EINVAL) for `convert` or an unknown option key.
   */
  asyncRawConsumer(options: AsyncRawConsumerOptions = {}): AsyncStreamConsumer<RawArray> {
    if (options != null && (options as AsyncConsumerOptions).convert !== undefined) throw new ArrowCDeviceError('asyncRawConsumer: convert is for apache-arrow imports; a raw array keeps every type as it is', EINVAL);
    checkOptions('asyncRawConsumer', options, ASYNC_RAW_CONSUMER_OPTION_KEYS);
    return new AsyncStreamConsumer(this, options, rawReading);
  }

  // ---- devices (ts/device/accounting.ts) -------------------------------------

  /**
   * Every simulated device used so far, with its accounting (live bytes and allocations, stream operations), and the events recorded and waited on over all of them.
   *
   * Ownership: a snapshot in JS memory; nothing to release.
   */
  deviceStats(): DeviceTotals {
    return deviceStats(this.core);
  }

  /**
   * Live bytes of one device's memory, or of every device's (the CPU's included) without one.
   *
   * Ownership: reads counters; nothing to release.
   * @param spec - the device (`'cuda:1'`, `{ type: 'rocm', id: 2 }`), or none for all.
   */
  deviceBytesAllocated(spec?: DeviceSpec | Device): number {
    return deviceBytesAllocated(this.core, spec);
  }

  /**
   * The device whose memory an address is.
   *
   * Ownership: reads; nothing to release.
   * @param address - any address.
   * @returns the device, or null for host memory that no device allocated.
   */
  deviceOwnerOf(address: number): Device | null {
    return deviceOwnerOf(this.core, address);
  }

  /**
   * Reads bytes at an address of any device's memory through the simulation, as a debugger would.
   *
   * Ownership: the returned bytes are a copy in JS memory; nothing to release.
   * @param address - the first byte's address.
   * @param size - how many bytes.
   * @throws `ArrowCDeviceError` (EBUSY) while an operation that writes them is pending (before the sync event was waited on); EINVAL for an address no device allocated.
   */
  readDeviceMemory(address: number, size: number): Uint8Array {
    return readDeviceMemory(this.core, address, size);
  }

  /**
   * Waits on the sync_event of the ArrowDeviceArray at `ptr`, as `cudaEventSynchronize` does.
   *
   * Ownership: borrows the struct, which stays the caller's; nothing to release.
   * @param ptr - the address of a struct ArrowDeviceArray.
   */
  syncDeviceArray(ptr: number): void {
    syncDeviceArray(this.core, ptr);
  }
}

/** Whether x is a protocol provider rather than an address or an ImportedSchema. */
function isProvider(x: unknown): x is ArrowCProvider {
  return typeof x === 'object' && x !== null && !(x instanceof ImportedSchema);
}
