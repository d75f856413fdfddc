// The public entry point: a loaded core with export (apache-arrow → C structs
// in wasm memory) and import (C structs → apache-arrow), CPU arrays and device
// arrays on the simulated devices, with explicit ownership.

import * as arrow from 'apache-arrow';
import { convertedType, toRecordBatch, type Conversion } from './arrow-js/arrow-data.js';
import { fromArrowBatch, fromArrowField, fromArrowSchema, toArrowSchema } from './arrow-js/arrow-types.js';
import { Core, type LoadOptions } from './abi/core.js';
import type { DeviceTotals } from './device/exports.js';
import { DeviceResident } from './device/resident.js';
import { deviceName, parseDevice, type Device, type DeviceSpec } from './device/device.js';
import { ArrowCDeviceError, EINVAL, ENODEV, ENOSYS } from './abi/errors.js';
import { writeArray, writeSchema } from './arrow-js/export.js';
import { constants } from './generated/layout.js';
import { Handle } from './abi/handles.js';
import { buildArrow, readData, readField, type ImportMode } from './arrow-js/import.js';
import { AsyncStreamConsumer, produceAsync, type AsyncBatchSource, type AsyncConsumerOptions, type ProduceAsyncOptions, type ProducerStats } from './stream/async.js';
import {
  exportArrayStream, exportDeviceArrayStream, importArrayStream, importDeviceArrayStream,
  type ExportedStream, type StreamExportOptions, type StreamImportOptions, type StreamReader, type SyncBatchSource,
} from './stream/pull.js';
import { readRaw, writeRaw, type RawArray } from './model/raw.js';
import { recordBatchField, type Field, type Schema } from './model/types.js';

export type ValidationLevel = 'none' | 'minimal' | 'default' | 'full';

/** A raw import: the field and the array as its C buffers and children. */
export interface RawImport {
  readonly field: Field;
  readonly array: RawArray;
}

/** Reads an imported (validated, moved) ArrowArray at ptr into T. */
type Reader<T> = (schema: ImportedSchema, ptr: number, mode: ImportMode) => T;

const rawReader = (core: Core): Reader<RawImport> => (s, ptr, mode) => ({ field: s.field, array: readRaw(core, ptr, s.field.type, mode) });
const LEVELS: Record<ValidationLevel, number> = { none: 0, minimal: 1, default: 2, full: 3 };

export interface ImportOptions {
  /** 'copy' (default): owned copies, the C array is released at once; 'view': zero-copy until release(). */
  mode?: ImportMode;
  /** How much the C validator checks before anything is read (default 'default'). */
  validate?: ValidationLevel;
  /**
   * Types apache-arrow lacks to convert into ones it has: 'run_end_encoded'
   * (expanded into plain values), 'list_view' (gathered into lists). Without
   * it such data throws; importRaw keeps any type as it is.
   */
  convert?: readonly Conversion[];
}

/** What importDeviceBatch does with an array that is not on the CPU. */
export type DevicePolicy = 'copy' | 'keep' | 'reject';

export interface DeviceImportOptions extends ImportOptions {
  /**
   * 'copy' (default): wait on the sync event, copy every buffer to the host,
   * import that (validated at `validate`, default 'full'); 'keep': return a
   * DeviceResident handle, the data left on its device; 'reject': throw.
   * CPU arrays import as they are, except that 'keep' gives a handle too.
   */
  device?: DevicePolicy;
}

export interface DeviceExportOptions {
  /** The device to put the data on: 'cpu' (default), 'cuda:1', 'webgpu', { type: 'rocm', id: 2 }, ... */
  device?: DeviceSpec | Device;
}

/** An ArrowSchema this library produced, in wasm memory at `ptr`. */
export class ExportedSchema extends Handle {
  constructor(core: Core, readonly ptr: number) {
    super(() => { core.schemaRelease(ptr); core.free(ptr); });
  }
}

/**
 * An ArrowSchema and an ArrowArray (or ArrowDeviceArray) this library produced,
 * in wasm memory. A consumer may move either struct out; release() calls the
 * release callback of whatever is still there and frees both base structs.
 */
export class ExportedArray extends Handle {
  constructor(core: Core, readonly schema: number, readonly array: number) {
    super(() => {
      core.schemaRelease(schema);
      core.arrayRelease(array);
      core.free(schema);
      core.free(array);
    });
  }
}

/** A schema moved out of a producer's struct into this library's memory. */
export class ImportedSchema extends Handle {
  /** The schema (a record batch's: a struct whose children are the columns). */
  readonly field: Field;

  constructor(core: Core, readonly ptr: number) {
    // Read before the handle exists: when reading fails, the caller takes the struct back.
    const field = readField(core.structs, ptr);
    super(() => { core.schemaRelease(ptr); core.free(ptr); });
    this.field = field;
  }

  /** The columns and metadata, when the schema is a struct (a record batch's). */
  get schema(): Schema {
    if (this.field.type.kind !== 'struct') {
      throw new ArrowCDeviceError(`schema: a record batch schema is a struct ('+s'), found ${this.field.type.kind}`, EINVAL);
    }
    return { fields: this.field.type.children, metadata: this.field.metadata };
  }
}

/**
 * Imported data. In copy mode it owns only JS memory: the C array was
 * released during the import, so `value` is never rebuilt. In view mode it
 * owns the moved C array until release(); `value` is rebuilt over the new
 * buffer if wasm memory grew (views made earlier are then detached).
 */
export class Imported<T> extends Handle {
  #value: T;
  #buffer: ArrayBufferLike;
  readonly #rebuild: (() => T) | null;

  /**
   * `value` is built before the handle exists, so a failed read leaves no
   * half-built handle whose finalizer would free what the caller took back.
   * `rebuild` (view mode only) reads the owned C array again.
   */
  constructor(private readonly core: Core, value: T, rebuild: (() => T) | null, cleanup: () => void) {
    super(cleanup);
    this.#value = value;
    this.#rebuild = rebuild;
    this.#buffer = core.memory.buffer;
  }

  get value(): T {
    if (this.released) throw new ArrowCDeviceError('imported data used after release()', EINVAL);
    if (this.#rebuild !== null && this.#buffer !== this.core.memory.buffer) {
      this.#value = this.#rebuild();
      this.#buffer = this.core.memory.buffer;
    }
    return this.#value;
  }
}

/** The C Data and C Device Data interfaces over one instance of the wasm core. */
export class ArrowCDevice {
  private constructor(readonly core: Core) {}

  /** Loads a new instance of the core (its own memory). */
  static async load(options?: LoadOptions): Promise<ArrowCDevice> {
    return new ArrowCDevice(await Core.load(options));
  }

  /** The core's linear memory, where every struct and buffer lives. */
  get memory(): WebAssembly.Memory {
    return this.core.memory;
  }

  /** Live bytes allocated by the core. */
  bytesAllocated(): number {
    return this.core.bytesAllocated();
  }

  // ---- export -------------------------------------------------------------

  /** Exports a schema, field or type (apache-arrow or the model) as an ArrowSchema. */
  exportSchema(x: arrow.Schema | arrow.Field | Schema | Field): ExportedSchema {
    const ptr = this.core.alloc(this.core.structs.size('ArrowSchema'));
    try {
      writeSchema(this.core, ptr, toModelField(x));
    } catch (e) {
      this.core.free(ptr);
      throw e;
    }
    return new ExportedSchema(this.core, ptr);
  }

  /** Exports a record batch as a struct ArrowArray with its ArrowSchema. */
  exportBatch(batch: arrow.RecordBatch): ExportedArray {
    return this.exportData(batch.data, recordBatchField(fromArrowBatch(batch)), 'ArrowArray');
  }

  /** Exports a single-chunk vector (or Data) as an ArrowArray with its ArrowSchema. */
  exportVector(vector: arrow.Vector | arrow.Data, name = ''): ExportedArray {
    const data = vector instanceof arrow.Data ? vector : onlyChunk(vector);
    const field: Field = { ...fromArrowField(new arrow.Field(name, data.type, true)), name };
    return this.exportData(data, field, 'ArrowArray');
  }

  /** Exports every batch of a table (one ExportedArray each). */
  exportTable(table: arrow.Table): ExportedArray[] {
    const out: ExportedArray[] = [];
    try {
      for (const batch of table.batches) out.push(this.exportBatch(batch));
    } catch (e) {
      out.forEach((h) => h.release());
      throw e;
    }
    return out;
  }

  /**
   * Exports a record batch as an ArrowDeviceArray: on the CPU by default
   * (device_id -1, no sync event), or on a simulated device, where every
   * buffer of every child is that device's memory, copied there on its stream,
   * with a sync event recorded after the copies (device types that have one).
   */
  exportDeviceBatch(batch: arrow.RecordBatch, options: DeviceExportOptions = {}): ExportedArray {
    const device = parseDevice(options.device ?? 'cpu');
    return this.exportData(batch.data, recordBatchField(fromArrowBatch(batch)), 'ArrowDeviceArray', device);
  }

  /** Exports a raw array (any type of the spec, as its C buffers) and its field as an ArrowSchema and ArrowArray. */
  exportRaw(field: Field, raw: RawArray): ExportedArray {
    return this.exportWith(field, 'ArrowArray', undefined, (ptr) => writeRaw(this.core, ptr, raw));
  }

  /** Like exportRaw, as an ArrowDeviceArray on options.device (the CPU by default). */
  exportDeviceRaw(field: Field, raw: RawArray, options: DeviceExportOptions = {}): ExportedArray {
    return this.exportWith(field, 'ArrowDeviceArray', parseDevice(options.device ?? 'cpu'), (ptr) => writeRaw(this.core, ptr, raw));
  }

  private exportData(data: arrow.Data, field: Field, struct: 'ArrowArray' | 'ArrowDeviceArray', device?: Device): ExportedArray {
    return this.exportWith(field, struct, device, (ptr) => writeArray(this.core, ptr, data, field.type));
  }

  /**
   * Exports field as an ArrowSchema and, with `write`, the array as an
   * ArrowArray or (onto device) an ArrowDeviceArray.
   */
  private exportWith(field: Field, struct: 'ArrowArray' | 'ArrowDeviceArray', device: Device | undefined,
    write: (ptr: number) => void): ExportedArray {
    const core = this.core;
    const schema = core.alloc(core.structs.size('ArrowSchema'));
    const array = core.alloc(core.structs.size(struct));
    let written = false;
    try {
      writeSchema(core, schema, field);
      written = true;
      write(struct === 'ArrowDeviceArray' ? array + core.structs.offsetOf('ArrowDeviceArray', 'array') : array);
      if (struct === 'ArrowDeviceArray') {
        core.deviceArrayInitDevice(array, constants.ARROW_DEVICE_CPU, -1);
        if (device !== undefined && device.type !== constants.ARROW_DEVICE_CPU) this.moveOnto(schema, array, device);
      }
    } catch (e) {
      if (written) core.schemaRelease(schema);
      core.free(schema);
      core.free(array);
      throw e;
    }
    return new ExportedArray(core, schema, array);
  }

  /** Moves the CPU device array at `array` onto device, in place; on failure it is released. */
  private moveOnto(schema: number, array: number, device: Device): void {
    const core = this.core;
    const host = core.alloc(core.structs.size('ArrowDeviceArray'));
    core.deviceArrayMove(array, host);
    try {
      core.checkDevice(core.device.deviceArrayMoveToDevice(schema, host, device.type, device.id, array), `exporting onto ${device.name}`);
    } catch (e) {
      core.arrayRelease(host);
      throw e;
    } finally {
      core.free(host);
    }
  }

  // ---- import -------------------------------------------------------------

  /**
   * Takes ownership of the ArrowSchema at ptr: validates it, moves it into
   * this library's memory (the source is marked released) and reads it. On
   * failure nothing is moved or released: the caller still owns the struct.
   */
  importSchema(ptr: number): ImportedSchema {
    const core = this.core;
    core.structs.checkRange(ptr, core.structs.size('ArrowSchema'), 'schema');
    core.schemaValidate(ptr);
    const own = core.alloc(core.structs.size('ArrowSchema'));
    core.schemaMove(ptr, own);
    try {
      return new ImportedSchema(core, own);
    } catch (e) {
      core.schemaMove(own, ptr);
      core.free(own);
      throw e;
    }
  }

  /**
   * Takes ownership of the struct ArrowArray at `array` (and of the schema when
   * given as an address) and imports it as a record batch. On failure nothing
   * is moved or released.
   */
  importBatch(schema: number | ImportedSchema, array: number, options: ImportOptions = {}): Imported<arrow.RecordBatch> {
    return this.importArray(schema, array, 'ArrowArray', options, this.batchReader(options));
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
  importDeviceBatch(schema: number | ImportedSchema, deviceArray: number, options: DeviceImportOptions = {}): Imported<arrow.RecordBatch> | DeviceResident {
    const core = this.core;
    const policy = options.device ?? 'copy';
    if (policy !== 'copy' && policy !== 'keep' && policy !== 'reject') {
      throw new ArrowCDeviceError(`device: expected 'copy', 'keep' or 'reject', found '${String(policy)}'`, EINVAL);
    }
    core.structs.checkRange(deviceArray, core.structs.size('ArrowDeviceArray'), 'ArrowDeviceArray');
    if (policy === 'keep') return this.keepOnDevice(schema, deviceArray);
    const type = core.structs.i32('ArrowDeviceArray', deviceArray, 'device_type');
    const read = this.batchReader(options);
    if (type === constants.ARROW_DEVICE_CPU) return this.importArray(schema, deviceArray, 'ArrowDeviceArray', options, read);
    if (policy === 'reject') throw this.notOnCpu(deviceArray);
    return this.copyToHost(schema, deviceArray, options, read);
  }

  /**
   * Takes ownership of an ArrowArray of any type of the spec and imports it
   * as a raw array (its C buffers and children, as views or copies by mode):
   * the lossless path, for types apache-arrow lacks too.
   */
  importRaw(schema: number | ImportedSchema, array: number, options: ImportOptions = {}): Imported<RawImport> {
    return this.importArray(schema, array, 'ArrowArray', options, rawReader(this.core));
  }

  /** Like importRaw, for an ArrowDeviceArray (non-CPU arrays: options.device 'copy' (default) or 'reject'). */
  importDeviceRaw(schema: number | ImportedSchema, deviceArray: number, options: DeviceImportOptions = {}): Imported<RawImport> {
    const core = this.core;
    const policy = options.device ?? 'copy';
    if (policy !== 'copy' && policy !== 'reject') {
      throw new ArrowCDeviceError(`device: expected 'copy' or 'reject' for a raw import, found '${String(policy)}'`, EINVAL);
    }
    core.structs.checkRange(deviceArray, core.structs.size('ArrowDeviceArray'), 'ArrowDeviceArray');
    const type = core.structs.i32('ArrowDeviceArray', deviceArray, 'device_type');
    if (type === constants.ARROW_DEVICE_CPU) return this.importArray(schema, deviceArray, 'ArrowDeviceArray', options, rawReader(core));
    if (policy === 'reject') throw this.notOnCpu(deviceArray);
    return this.copyToHost(schema, deviceArray, options, rawReader(core));
  }

  /** Reads a moved struct array as a record batch, with the options' conversions. */
  private batchReader(options: ImportOptions): Reader<arrow.RecordBatch> {
    return (s, ptr, mode) => {
      const data = readData(this.core, ptr, s.field.type, mode, options.convert, options.validate === 'full');
      return buildArrow('array', () => toBatch(s, data, options.convert));
    };
  }

  /** Takes ownership of an ArrowArray of any type and imports it as a Vector. */
  importVector(schema: number | ImportedSchema, array: number, options: ImportOptions = {}): Imported<arrow.Vector> {
    return this.importArray(schema, array, 'ArrowArray', options,
      (s, ptr, mode) => {
        const data = readData(this.core, ptr, s.field.type, mode, options.convert, options.validate === 'full');
        return buildArrow('array', () => new arrow.Vector([data]));
      });
  }

  private notOnCpu(deviceArray: number): ArrowCDeviceError {
    const s = this.core.structs;
    const name = deviceName(s.i32('ArrowDeviceArray', deviceArray, 'device_type'), s.i64Big('ArrowDeviceArray', deviceArray, 'device_id'));
    return new ArrowCDeviceError(`device_type: the array is on ${name}, not the CPU, and the import policy is 'reject': ` +
      `import it with { device: 'copy' } to copy it to the host, or { device: 'keep' } to keep it on its device`, ENODEV);
  }

  private importArray<T>(schemaArg: number | ImportedSchema, ptr: number, struct: 'ArrowArray' | 'ArrowDeviceArray',
    options: ImportOptions, read: Reader<T>): Imported<T> {
    const core = this.core;
    const mode = options.mode ?? 'copy';
    if (mode !== 'copy' && mode !== 'view') throw new ArrowCDeviceError(`mode: expected 'copy' or 'view', found '${String(mode)}'`, EINVAL);
    const level = LEVELS[options.validate ?? 'default'];
    if (level === undefined) throw new ArrowCDeviceError(`validate: expected none, minimal, default or full, found '${String(options.validate)}'`, EINVAL);
    core.structs.checkRange(ptr, core.structs.size(struct), struct);
    const arrayPtr = struct === 'ArrowDeviceArray' ? ptr + core.structs.offsetOf('ArrowDeviceArray', 'array') : ptr;
    if (struct === 'ArrowDeviceArray') this.checkCpu(ptr);

    const ownsSchema = typeof schemaArg === 'number';
    const schema = ownsSchema ? this.importSchema(schemaArg) : schemaArg;
    let own = 0;
    try {
      if (schema.released) throw new ArrowCDeviceError('schema: used after release()', EINVAL);
      // The ImportedSchema was validated on import and is owned here: no second schema walk.
      core.arrayValidate(schema.ptr, arrayPtr, level, true);
      // From DEFAULT on the validator names device memory where it finds it;
      // at MINIMAL, check that no buffer is device memory before reading one.
      if (level === LEVELS.minimal) core.checkDevice(core.device.arrayCheckHost(schema.ptr, arrayPtr), 'array');
      own = core.alloc(core.structs.size('ArrowArray'));
      core.arrayMove(arrayPtr, own);
      const owned = own;
      const build = () => read(schema, owned, mode);
      // Built before any handle exists: on failure the catch below is the only owner.
      const value = build();
      if (mode === 'copy') {
        own = 0;
        core.arrayRelease(owned);
        core.free(owned);
        if (ownsSchema) schema.release();
        return new Imported(core, value, null, () => {});
      }
      return new Imported(core, value, build, () => {
        core.arrayRelease(owned);
        core.free(owned);
        if (ownsSchema) schema.release();
      });
    } catch (e) {
      if (own !== 0) {
        core.arrayMove(own, arrayPtr);
        core.free(own);
      }
      if (ownsSchema) {
        core.schemaMove(schema.ptr, schemaArg);
        schema.release();
      }
      throw e;
    }
  }

  /** Copies a device array to the host and imports the copy; see importDeviceBatch. */
  private copyToHost<T>(schemaArg: number | ImportedSchema, ptr: number, options: ImportOptions, read: Reader<T>): Imported<T> {
    const core = this.core;
    const ownsSchema = typeof schemaArg === 'number';
    const schema = ownsSchema ? this.importSchema(schemaArg) : schemaArg;
    let host = 0;
    try {
      if (schema.released) throw new ArrowCDeviceError('schema: used after release()', EINVAL);
      host = core.alloc(core.structs.size('ArrowDeviceArray'));
      // Validates the device array (its buffers unread), waits on its event, copies.
      core.checkDevice(core.device.deviceArrayCopy(schema.ptr, ptr, constants.ARROW_DEVICE_CPU, -1, host), 'ArrowDeviceArray');
      let result: Imported<T>;
      try {
        result = this.importArray(schema, host, 'ArrowDeviceArray', { ...options, validate: options.validate ?? 'full' }, read);
      } catch (e) {
        core.arrayRelease(host);
        throw e;
      }
      // The source is ours now: release it (its device memory and event).
      core.arrayRelease(ptr);
      // The batch's schema was read into JS objects; the C one can go.
      if (ownsSchema) schema.release();
      return result;
    } catch (e) {
      if (ownsSchema) {
        core.schemaMove(schema.ptr, schemaArg);
        schema.release();
      }
      throw e;
    } finally {
      if (host !== 0) core.free(host);
    }
  }

  /** Moves a validated device array (any device) and its schema into a DeviceResident. */
  private keepOnDevice(schemaArg: number | ImportedSchema, ptr: number): DeviceResident {
    const core = this.core;
    const s = core.structs;
    const ownsSchema = typeof schemaArg === 'number';
    const schema = ownsSchema ? this.importSchema(schemaArg) : schemaArg;
    let own = 0;
    let schemaCopy = 0;
    try {
      if (schema.released) throw new ArrowCDeviceError('schema: used after release()', EINVAL);
      core.checkDevice(core.device.deviceArrayValidate(schema.ptr, ptr), 'ArrowDeviceArray');
      const type = s.i32('ArrowDeviceArray', ptr, 'device_type');
      // A CPU array's device_id is only recommended to be -1 (0 is common): there is one CPU.
      const device = parseDevice(type === constants.ARROW_DEVICE_CPU ? 'cpu' : { type, id: s.i64('ArrowDeviceArray', ptr, 'device_id') });
      own = core.alloc(s.size('ArrowDeviceArray'));
      schemaCopy = core.alloc(s.size('ArrowSchema'));
      // The handle owns a schema of its own: the moved one, or one written from the caller's.
      if (ownsSchema) core.schemaMove(schema.ptr, schemaCopy);
      else writeSchema(core, schemaCopy, schema.field);
      core.deviceArrayMove(ptr, own);
      if (ownsSchema) schema.release();
      return new DeviceResident(this, own, schemaCopy, schema.field, device);
    } catch (e) {
      if (own !== 0) core.free(own);
      if (schemaCopy !== 0) core.free(schemaCopy);
      if (ownsSchema) {
        core.schemaMove(schema.ptr, schemaArg);
        schema.release();
      }
      throw e;
    }
  }

  // ---- streams ------------------------------------------------------------

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
  importArrayStream(ptr: number, options?: StreamImportOptions): StreamReader {
    return importArrayStream(this, ptr, options);
  }

  /** Like importArrayStream, for an ArrowDeviceArrayStream (batches off the CPU are copied to the host by default). */
  importDeviceArrayStream(ptr: number, options?: StreamImportOptions): StreamReader {
    return importDeviceArrayStream(this, ptr, options);
  }

  /** Drives the ArrowAsyncDeviceStreamHandler at `handler` from an (async) iterable or ReadableStream of batches. */
  produceAsync(handler: number, source: AsyncBatchSource, options?: ProduceAsyncOptions): { done: Promise<ProducerStats>; stats: ProducerStats } {
    return produceAsync(this, handler, source, options);
  }

  /** An ArrowAsyncDeviceStreamHandler (consumer.handler) whose batches come out as an AsyncIterable or ReadableStream. */
  asyncConsumer(options?: AsyncConsumerOptions): AsyncStreamConsumer {
    return new AsyncStreamConsumer(this, options);
  }

  // ---- devices ------------------------------------------------------------

  /** Every simulated device used so far, with its accounting, and the events over all of them. */
  deviceStats(): DeviceTotals {
    return JSON.parse(this.core.device.deviceStats()) as DeviceTotals;
  }

  /** Live bytes of one device's memory, or of every device's (the CPU's included) without one. */
  deviceBytesAllocated(spec?: DeviceSpec | Device): number {
    const devices = this.deviceStats().devices;
    if (spec === undefined) return devices.reduce((sum, d) => sum + d.bytesAllocated, 0);
    const { type, id } = parseDevice(spec);
    return devices.find((d) => d.type === type && d.id === id)?.bytesAllocated ?? 0;
  }

  /** The device whose memory an address is; null for host memory that no device allocated. */
  deviceOwnerOf(address: number): Device | null {
    const owner = this.core.device.deviceOwnerOf(address);
    if (owner === '') return null;
    const { type, id } = JSON.parse(owner) as { type: number; id: number };
    return parseDevice({ type, id });
  }

  /**
   * Reads size bytes at an address of any device's memory through the
   * simulation, as a debugger would. Throws EBUSY while an operation that
   * writes them is pending (before the sync event was waited on).
   */
  readDeviceMemory(address: number, size: number): Uint8Array {
    const core = this.core;
    const tmp = core.alloc(Math.max(size, 1));
    try {
      core.checkDevice(core.device.deviceRead(address, size, tmp), 'readDeviceMemory');
      return core.bytes.slice(tmp, tmp + size);
    } finally {
      core.free(tmp);
    }
  }

  /** Waits on the sync_event of the ArrowDeviceArray at ptr (as cudaEventSynchronize); it stays the caller's. */
  syncDeviceArray(ptr: number): void {
    this.core.checkDevice(this.core.device.deviceArraySync(ptr), 'sync_event');
  }

  private checkCpu(deviceArray: number): void {
    const s = this.core.structs;
    const type = s.i32('ArrowDeviceArray', deviceArray, 'device_type');
    if (type !== constants.ARROW_DEVICE_CPU) {
      throw new ArrowCDeviceError(`device_type: expected ARROW_DEVICE_CPU (1), found ${type}; non-CPU device arrays are not supported yet`, ENOSYS);
    }
    if (s.ptr('ArrowDeviceArray', deviceArray, 'sync_event') !== 0) {
      throw new ArrowCDeviceError('sync_event: expected NULL for ARROW_DEVICE_CPU, which has no event type', EINVAL);
    }
  }
}

/** apache-arrow's record batch for an imported struct array and its schema. */
function toBatch(s: ImportedSchema, data: arrow.Data, convert: readonly Conversion[] = []): arrow.RecordBatch {
  if (data.nullCount > 0) throw new ArrowCDeviceError('array: a record batch cannot have top-level nulls', EINVAL);
  const { fields, metadata } = s.schema;
  const schema = toArrowSchema({ fields: fields.map((f) => ({ ...f, type: convertedType(f.type, convert) })), metadata });
  return toRecordBatch(schema, data as arrow.Data<arrow.Struct>);
}

function toModelField(x: arrow.Schema | arrow.Field | Schema | Field): Field {
  if (x instanceof arrow.Schema) return recordBatchField(fromArrowSchema(x));
  if (x instanceof arrow.Field) return fromArrowField(x);
  if ('fields' in x) return recordBatchField(x);
  return x;
}

function onlyChunk(vector: arrow.Vector): arrow.Data {
  if (vector.data.length !== 1) {
    throw new ArrowCDeviceError(`vector: expected one chunk, found ${vector.data.length}; export its chunks (vector.data) one by one`, EINVAL);
  }
  return vector.data[0];
}
