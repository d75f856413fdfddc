// The public entry point: ArrowCDevice, a loaded core with every operation of
// the C Data, C Stream and C Device Data interfaces as a method. It is a thin
// facade: each method is one call into the module that owns its concept
// (docs/architecture.md): ts/exchange/ (raw structs, handles, options),
// ts/arrow-js/ (apache-arrow), ts/device/, ts/stream/.

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

/** Where an export goes: the core's memory (default), or `into` another module's (acd.foreign()). */
export interface ExportOptions {
  into?: ForeignModule;
}

export const EXPORT_OPTION_KEYS = optionKeys<ExportOptions>()(['into']);
/** importSchema's options. */
const SCHEMA_IMPORT_OPTION_KEYS = optionKeys<{ from?: ForeignSource }>()(['from']);

/** The C Data and C Device Data interfaces over one instance of the wasm core. */
export class ArrowCDevice {
  private constructor(readonly core: Core) {}

  /** Loads a new instance of the core (its own memory). */
  static async load(options?: LoadOptions): Promise<ArrowCDevice> {
    return new ArrowCDevice(await Core.load(options));
  }

  static #attached = new WeakMap<Core, ArrowCDevice>();

  /**
   * Linked mode: binds the facade to an Emscripten module that linked the
   * core as a static library (`dist/lib/libarrow_c_device.a`, headers in
   * `dist/include`), so that its C/C++ code and this facade share one memory
   * and pointers pass both ways as they are. `module` is what the module's
   * factory resolves to. Its wasm binary is needed (to know its function
   * table's signatures): pass it to the factory as `wasmBinary` (or here).
   * The link flags it needs are checked, and a missing one is named in the
   * error; attaching the same module again gives the same facade.
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

  /** The core's linear memory, where every struct and buffer lives. */
  get memory(): WebAssembly.Memory {
    return this.core.memory;
  }

  /** Live bytes allocated by the core. */
  bytesAllocated(): number {
    return this.core.bytesAllocated();
  }

  /**
   * Another wasm module, to import from: { memory, table, malloc, free }, or
   * its instance.exports (Emscripten's and wasm-bindgen's names are found).
   * Pass it as { from } to an import.
   */
  foreign(module: ForeignModuleOptions | ModuleExports, name?: string): ForeignModule {
    return new ForeignModule(module, name);
  }

  // ---- export (ts/arrow-js/export.ts, ts/exchange/export.ts, ts/device/exchange.ts)

  /** Exports a schema, field or type (apache-arrow or the model) as an ArrowSchema. */
  exportSchema(x: arrow.Schema | arrow.Field | Schema | Field, options: ExportOptions = {}): ExportedSchema {
    checkOptions('exportSchema', options, EXPORT_OPTION_KEYS);
    return exportSchema(this.core, x, options.into);
  }

  /** Exports a record batch as a struct ArrowArray with its ArrowSchema. */
  exportBatch(batch: arrow.RecordBatch, options: ExportOptions = {}): ExportedArray {
    checkBatchArgument('exportBatch', batch);
    checkOptions('exportBatch', options, EXPORT_OPTION_KEYS);
    return exportBatch(this.core, batch, options.into);
  }

  /** Exports a single-chunk vector (or Data) as an ArrowArray with its ArrowSchema. */
  exportVector(vector: arrow.Vector | arrow.Data, name = '', options: ExportOptions = {}): ExportedArray {
    checkOptions('exportVector', options, EXPORT_OPTION_KEYS);
    return exportVector(this.core, vector, name, options.into);
  }

  /** Exports every batch of a table (one ExportedArray each). */
  exportTable(table: arrow.Table, options: ExportOptions = {}): ExportedArray[] {
    checkOptions('exportTable', options, EXPORT_OPTION_KEYS);
    return exportTable(this.core, table, options.into);
  }

  /**
   * Exports a record batch as an ArrowDeviceArray: on the CPU by default
   * (device_id -1, no sync event), or on a simulated device, where every
   * buffer of every child is that device's memory, copied there on its stream,
   * with a sync event recorded after the copies (device types that have one).
   */
  exportDeviceBatch(batch: arrow.RecordBatch, options: DeviceExportOptions = {}): ExportedArray {
    checkBatchArgument('exportDeviceBatch', batch);
    checkOptions('exportDeviceBatch', options, DEVICE_EXPORT_OPTION_KEYS);
    return exportDeviceBatch(this.core, batch, options);
  }

  /** Exports a raw array (any type of the spec, as its C buffers) and its field as an ArrowSchema and ArrowArray. */
  exportRaw(field: Field, raw: RawArray, options: ExportOptions = {}): ExportedArray {
    checkOptions('exportRaw', options, EXPORT_OPTION_KEYS);
    return exportRaw(this.core, field, raw, options.into);
  }

  /** Like exportRaw, as an ArrowDeviceArray on options.device (the CPU by default). */
  exportDeviceRaw(field: Field, raw: RawArray, options: DeviceExportOptions = {}): ExportedArray {
    checkOptions('exportDeviceRaw', options, DEVICE_EXPORT_OPTION_KEYS);
    return exportDeviceRaw(this.core, field, raw, options);
  }

  // ---- import (ts/exchange/import.ts, ts/arrow-js/import.ts, ts/device/exchange.ts)

  /**
   * Takes ownership of the ArrowSchema at ptr: validates it, moves it into
   * this library's memory (the source is marked released) and reads it. On
   * failure nothing is moved or released: the caller still owns the struct.
   */
  importSchema(ptr: number | ArrowCProvider, options: { from?: ForeignSource } = {}): ImportedSchema {
    checkOptions('importSchema', options, SCHEMA_IMPORT_OPTION_KEYS);
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_SCHEMA, 'importSchema', options, (d, o) => importSchema(this.core, d.schema, o.from));
    checkAddress('importSchema', 'ptr', ptr);
    return importSchema(this.core, ptr, options.from);
  }

  /**
   * Takes ownership of the struct ArrowArray at `array` (and of the schema when
   * given as an address) and imports it as a record batch. On failure nothing
   * is moved or released.
   */
  importBatch(provider: ArrowCProvider, options?: ImportOptions): Imported<arrow.RecordBatch>;
  importBatch(schema: number | ImportedSchema, array: number, options?: ImportOptions): Imported<arrow.RecordBatch>;
  importBatch(schema: number | ImportedSchema | ArrowCProvider, array?: number | ImportOptions, options: ImportOptions = {}): Imported<arrow.RecordBatch> {
    checkOptions('importBatch', isProvider(schema) ? array : options, IMPORT_OPTION_KEYS);
    if (isProvider(schema)) return this.viaProtocol(schema, ARROW_C_ARRAY, 'importBatch', array as ImportOptions | undefined, (d, o) => importBatch(this.core, d.schema, d.array!, o));
    checkPointers('importBatch', schema, array);
    return importBatch(this.core, schema, array as number, options);
  }

  /**
   * Like importBatch, for an ArrowDeviceArray. Arrays on the CPU import as
   * they are; the others by options.device: copied to the host (default,
   * after waiting on the sync event), kept on their device ('keep': a
   * DeviceResident), or refused ('reject'). On failure nothing is moved or
   * released; on success the source is marked released (its device memory is
   * freed once copied to the host).
   */
  importDeviceBatch(schema: number | ImportedSchema, deviceArray: number, options: DeviceImportOptions & { device: 'keep' }): DeviceResident;
  importDeviceBatch(schema: number | ImportedSchema, deviceArray: number, options?: DeviceImportOptions): Imported<arrow.RecordBatch>;
  /** The protocol form: a provider's arrow.c_device_array (CPU arrays from another memory; any device from the core's). */
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
   * Takes ownership of an ArrowArray of any type of the spec and imports it
   * as a raw array (its C buffers and children, as views or copies by mode):
   * the lossless path, for types apache-arrow lacks too.
   */
  importRaw(provider: ArrowCProvider, options?: ImportOptions): Imported<RawImport>;
  importRaw(schema: number | ImportedSchema, array: number, options?: ImportOptions): Imported<RawImport>;
  importRaw(schema: number | ImportedSchema | ArrowCProvider, array?: number | ImportOptions, options: ImportOptions = {}): Imported<RawImport> {
    checkOptions('importRaw', isProvider(schema) ? array : options, IMPORT_OPTION_KEYS);
    if (isProvider(schema)) return this.viaProtocol(schema, ARROW_C_ARRAY, 'importRaw', array as ImportOptions | undefined, (d, o) => importRaw(this.core, d.schema, d.array!, o));
    checkPointers('importRaw', schema, array);
    return importRaw(this.core, schema, array as number, options);
  }

  /** Like importRaw, for an ArrowDeviceArray (non-CPU arrays: options.device 'copy' (default) or 'reject'). */
  importDeviceRaw(schema: number | ImportedSchema, deviceArray: number, options: DeviceImportOptions = {}): Imported<RawImport> {
    checkOptions('importDeviceRaw', options, DEVICE_IMPORT_OPTION_KEYS);
    checkPointers('importDeviceRaw', schema, deviceArray, 'deviceArray');
    return importDeviceRaw(this.core, schema, deviceArray, options);
  }

  /** Takes ownership of an ArrowArray of any type and imports it as a Vector. */
  importVector(provider: ArrowCProvider, options?: ImportOptions): Imported<arrow.Vector>;
  importVector(schema: number | ImportedSchema, array: number, options?: ImportOptions): Imported<arrow.Vector>;
  importVector(schema: number | ImportedSchema | ArrowCProvider, array?: number | ImportOptions, options: ImportOptions = {}): Imported<arrow.Vector> {
    checkOptions('importVector', isProvider(schema) ? array : options, IMPORT_OPTION_KEYS);
    if (isProvider(schema)) return this.viaProtocol(schema, ARROW_C_ARRAY, 'importVector', array as ImportOptions | undefined, (d, o) => importVector(this.core, d.schema, d.array!, o));
    checkPointers('importVector', schema, array);
    return importVector(this.core, schema, array as number, options);
  }

  /** The device-array form of the protocol: like importDeviceRaw on a provider's arrow.c_device_array. */
  importDeviceRawFrom(provider: ArrowCProvider, options: DeviceImportOptions = {}): Imported<RawImport> {
    checkOptions('importDeviceRawFrom', options, DEVICE_IMPORT_OPTION_KEYS);
    return this.viaProtocol(provider, ARROW_C_DEVICE_ARRAY, 'importDeviceRawFrom', options, (d, o) => importDeviceRaw(this.core, d.schema, d.array!, o));
  }

  /**
   * Runs an import on what a provider hands over by the protocol
   * (docs/protocol.md): structs in another memory are imported { from } it;
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
   * An ArrowArrayStream in wasm memory over a Table, a RecordBatchReader, an
   * array or any iterable of batches, pulled lazily by get_next. The handle
   * owns the struct until a consumer moves it out.
   */
  exportArrayStream(source: SyncBatchSource, options?: StreamExportOptions): ExportedStream {
    return exportArrayStream(this, source, options);
  }

  /** Like exportArrayStream, as an ArrowDeviceArrayStream on options.device (the CPU by default). */
  exportDeviceArrayStream(source: SyncBatchSource, options?: StreamExportOptions): ExportedStream {
    return exportDeviceArrayStream(this, source, options);
  }

  /** Takes ownership of the ArrowArrayStream at ptr and reads it as apache-arrow batches (sync and async iterable). */
  importArrayStream(ptr: number | ArrowCProvider, options?: StreamImportOptions): StreamReader {
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_STREAM, 'importArrayStream', options, (d, o) => importArrayStream(this, d.stream!, o));
    return importArrayStream(this, ptr, options);
  }

  /** Like importArrayStream, for an ArrowDeviceArrayStream (batches off the CPU are copied to the host by default). */
  importDeviceArrayStream(ptr: number | ArrowCProvider, options?: StreamImportOptions): StreamReader {
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_DEVICE_STREAM, 'importDeviceArrayStream', options, (d, o) => importDeviceArrayStream(this, d.stream!, o));
    return importDeviceArrayStream(this, ptr, options);
  }

  /**
   * Streams of raw arrays, any type of the spec (run-end encoded and list
   * views included), as exportRaw exports one: an ArrowArrayStream over the
   * raw arrays of `source` (an array, a generator, any iterable), pulled
   * lazily; `schema` is the stream's (a Schema: a record batch's struct of
   * its fields; or any Field), and each raw array must be of its type.
   */
  exportRawArrayStream(schema: Schema | Field, source: SyncRawSource, options?: RawStreamExportOptions): ExportedStream {
    return exportRawArrayStream(this, schema, source, options);
  }

  /** Like exportRawArrayStream, as an ArrowDeviceArrayStream on options.device (the CPU by default). */
  exportRawDeviceArrayStream(schema: Schema | Field, source: SyncRawSource, options?: RawStreamExportOptions): ExportedStream {
    return exportRawDeviceArrayStream(this, schema, source, options);
  }

  /** Like importArrayStream, each batch read as a raw array (as importRaw does); the stream's schema may be of any type. */
  importRawArrayStream(ptr: number | ArrowCProvider, options?: RawStreamImportOptions): RawStreamReader {
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_STREAM, 'importRawArrayStream', options, (d, o) => importRawArrayStream(this, d.stream!, o));
    return importRawArrayStream(this, ptr, options);
  }

  /** Like importDeviceArrayStream, each batch read as a raw array. */
  importRawDeviceArrayStream(ptr: number | ArrowCProvider, options?: RawStreamImportOptions): RawStreamReader {
    if (isProvider(ptr)) return this.viaProtocol(ptr, ARROW_C_DEVICE_STREAM, 'importRawDeviceArrayStream', options, (d, o) => importRawDeviceArrayStream(this, d.stream!, o));
    return importRawDeviceArrayStream(this, ptr, options);
  }

  /**
   * Drives the ArrowAsyncDeviceStreamHandler at `handler` from an (async)
   * iterable or ReadableStream of batches; with `{ into: foreign }`, a
   * handler in another module's memory, made by its own code.
   */
  produceAsync(handler: number, source: AsyncBatchSource, options?: ProduceAsyncOptions): Production {
    return produceAsync(this, handler, source, options);
  }

  /**
   * An ArrowAsyncDeviceStreamHandler (consumer.handler) whose batches come
   * out as an AsyncIterable or ReadableStream; with `{ from: foreign }`, the
   * handler is in another module's memory, for its own producer code.
   */
  asyncConsumer(options?: AsyncConsumerOptions): AsyncStreamConsumer {
    return new AsyncStreamConsumer(this, options);
  }

  /** Like produceAsync, over raw arrays of any type; `schema` is the stream's (a Schema or any Field). */
  produceAsyncRaw(handler: number, schema: Schema | Field, source: AsyncRawSource, options?: RawProduceAsyncOptions): Production {
    return produceAsyncRaw(this, handler, schema, source, options);
  }

  /** Like asyncConsumer, its batches raw arrays of any type (the stream's schema may be of any type: consumer.field). */
  asyncRawConsumer(options: AsyncRawConsumerOptions = {}): AsyncStreamConsumer<RawArray> {
    if (options != null && (options as AsyncConsumerOptions).convert !== undefined) throw new ArrowCDeviceError('asyncRawConsumer: convert is for apache-arrow imports; a raw array keeps every type as it is', EINVAL);
    checkOptions('asyncRawConsumer', options, ASYNC_RAW_CONSUMER_OPTION_KEYS);
    return new AsyncStreamConsumer(this, options, rawReading);
  }

  // ---- devices (ts/device/accounting.ts) -------------------------------------

  /** Every simulated device used so far, with its accounting, and the events over all of them. */
  deviceStats(): DeviceTotals {
    return deviceStats(this.core);
  }

  /** Live bytes of one device's memory, or of every device's (the CPU's included) without one. */
  deviceBytesAllocated(spec?: DeviceSpec | Device): number {
    return deviceBytesAllocated(this.core, spec);
  }

  /** The device whose memory an address is; null for host memory that no device allocated. */
  deviceOwnerOf(address: number): Device | null {
    return deviceOwnerOf(this.core, address);
  }

  /**
   * Reads size bytes at an address of any device's memory through the
   * simulation, as a debugger would. Throws EBUSY while an operation that
   * writes them is pending (before the sync event was waited on).
   */
  readDeviceMemory(address: number, size: number): Uint8Array {
    return readDeviceMemory(this.core, address, size);
  }

  /** Waits on the sync_event of the ArrowDeviceArray at ptr (as cudaEventSynchronize); it stays the caller's. */
  syncDeviceArray(ptr: number): void {
    syncDeviceArray(this.core, ptr);
  }
}

/** Whether x is a protocol provider rather than an address or an ImportedSchema. */
function isProvider(x: unknown): x is ArrowCProvider {
  return typeof x === 'object' && x !== null && !(x instanceof ImportedSchema);
}
