// ArrowDeviceArray exchange: exporting onto a simulated device (the CPU
// array written, then moved there on the device's stream with a sync event),
// and importing by policy: CPU arrays as they are, the others copied to the
// host ('copy'), kept on their device ('keep': a DeviceResident) or refused.

import type * as arrow from 'apache-arrow';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, ENODEV, ENOSYS } from '../abi/errors.js';
import { optionKeys } from '../abi/option-keys.js';
import { batchField, exportData } from '../arrow-js/export.js';
import { batchReader } from '../arrow-js/import.js';
import { exportInto, exportWith } from '../exchange/export.js';
import type { ForeignModule } from '../foreign/module.js';
import { fromArrowData } from '../arrow-js/arrow-data.js';
import type { ExportedArray, Imported, ImportedSchema } from '../exchange/handles.js';
import { importArray, rawReader, withSchema, type Reader } from '../exchange/import.js';
import { IMPORT_OPTION_KEYS, type ImportOptions, type RawImport } from '../exchange/options.js';
import { constants } from '../abi/generated/layout.js';
import { rawWriter } from '../model/flat.js';
import type { RawArray } from '../model/raw.js';
import { writeSchema } from '../model/schema.js';
import type { Field } from '../model/types.js';
import { deviceName, parseDevice, type Device, type DeviceSpec } from './device.js';
import { DeviceResident } from './resident.js';

/** What importDeviceBatch does with an array that is not on the CPU. */
export type DevicePolicy = 'copy' | 'keep' | 'reject';

/**
 * Options of a device import: those of every import, and the policy for arrays not on the CPU.
 */
export interface DeviceImportOptions extends ImportOptions {
  /**
   * 'copy' (default): wait on the sync event, copy every buffer to the host,
   * import that (validated at `validate`, default 'full'); 'keep': return a
   * DeviceResident handle, the data left on its device; 'reject': throw.
   * CPU arrays import as they are, except that 'keep' gives a handle too.
   */
  device?: DevicePolicy;
}

export const DEVICE_IMPORT_OPTION_KEYS = optionKeys<DeviceImportOptions>()([...IMPORT_OPTION_KEYS, 'device']);

/** Options of a device export. */
export interface DeviceExportOptions {
  /**
   * The device to put the data on: `'cpu'` (the default), `'cuda:1'`, `'webgpu'`, `{ type: 'rocm', id: 2 }`, ...
   */
  device?: DeviceSpec | Device;
  /** Another module (`acd.foreign()`) to export into, in its memory (CPU arrays only). */
  into?: ForeignModule;
}

export const DEVICE_EXPORT_OPTION_KEYS = optionKeys<DeviceExportOptions>()(['device', 'into']);

/**
 * Exports a record batch as an ArrowDeviceArray: on the CPU by default
 * (device_id -1, no sync event), or on a simulated device, where every
 * buffer of every child is that device's memory, copied there on its stream,
 * with a sync event recorded after the copies (device types that have one).
 */
export function exportDeviceBatch(core: Core, batch: arrow.RecordBatch, options: DeviceExportOptions = {}): ExportedArray {
  const device = parseDevice(options.device ?? 'cpu');
  if (options.into !== undefined) {
    const field = batchField(batch);
    return exportInto(cpuOnly(options.into, device), field, fromArrowData(batch.data, field.type), 'ArrowDeviceArray');
  }
  return exportData(core, batch.data, batchField(batch), 'ArrowDeviceArray', ontoDevice(core, device));
}

/** Like exportRaw, as an ArrowDeviceArray on options.device (the CPU by default). */
export function exportDeviceRaw(core: Core, field: Field, raw: RawArray, options: DeviceExportOptions = {}): ExportedArray {
  const device = parseDevice(options.device ?? 'cpu');
  if (options.into !== undefined) return exportInto(cpuOnly(options.into, device), field, raw, 'ArrowDeviceArray');
  return exportWith(core, field, 'ArrowDeviceArray', rawWriter(raw), ontoDevice(core, device));
}

/** Another module's memory holds CPU arrays only (the simulated devices are the core's). */
function cpuOnly(into: ForeignModule, device: Device): ForeignModule {
  if (device.type !== constants.ARROW_DEVICE_CPU) {
    throw new ArrowCDeviceError(`device: ${device.name}: an export into ${into.name} is a CPU array in its memory; the simulated devices are the core's`, ENOSYS);
  }
  return into;
}

/** The export hook that moves a CPU device array onto device (none for the CPU). */
function ontoDevice(core: Core, device: Device): ((schema: number, array: number) => void) | undefined {
  return device.type === constants.ARROW_DEVICE_CPU ? undefined : (schema, array) => moveOnto(core, schema, array, device);
}

/** Moves the CPU device array at `array` onto device, in place; on failure it is released. */
function moveOnto(core: Core, schema: number, array: number, device: Device): void {
  const host = core.alloc(core.structs.size('ArrowDeviceArray'));
  core.deviceArrayMove(array, host);
  try {
    core.checkDevice(core.device.deviceArrayMoveToDevice(schema, host, device.type, device.id, array), `exporting onto ${device.name}`);
  } catch (e) {
    core.space.release('ArrowArray', host);
    throw e;
  } finally {
    core.free(host);
  }
}

/**
 * Like importBatch, for an ArrowDeviceArray. Arrays on the CPU import as
 * they are; the others by options.device: copied to the host (default,
 * after waiting on the sync event), kept on their device ('keep': a
 * DeviceResident), or refused ('reject'). On failure nothing is moved or
 * released; on success the source is marked released (its device memory is
 * freed once copied to the host).
 */
export function importDeviceBatch(core: Core, schema: number | ImportedSchema, deviceArray: number,
  options: DeviceImportOptions & { device: 'keep' }): DeviceResident;
export function importDeviceBatch(core: Core, schema: number | ImportedSchema, deviceArray: number,
  options?: DeviceImportOptions): Imported<arrow.RecordBatch>;
export function importDeviceBatch(core: Core, schema: number | ImportedSchema, deviceArray: number,
  options: DeviceImportOptions = {}): Imported<arrow.RecordBatch> | DeviceResident {
  const policy = options.device ?? 'copy';
  if (policy !== 'copy' && policy !== 'keep' && policy !== 'reject') {
    throw new ArrowCDeviceError(`device: expected 'copy', 'keep' or 'reject', found '${String(policy)}'`, EINVAL);
  }
  if (options.from !== undefined) return importForeignDevice(core, schema, deviceArray, options, batchReader(options, core.slotScan));
  core.structs.checkRange(deviceArray, core.structs.size('ArrowDeviceArray'), 'ArrowDeviceArray');
  if (policy === 'keep') return keepOnDevice(core, schema, deviceArray);
  const type = core.structs.i32('ArrowDeviceArray', deviceArray, 'device_type');
  const read = batchReader(options, core.slotScan);
  if (type === constants.ARROW_DEVICE_CPU) return importArray(core, schema, deviceArray, 'ArrowDeviceArray', options, read);
  if (policy === 'reject') throw notOnCpu(core, deviceArray);
  return copyToHost(core, schema, deviceArray, options, read);
}

/** Like importRaw, for an ArrowDeviceArray (non-CPU arrays: options.device 'copy' (default) or 'reject'). */
export function importDeviceRaw(core: Core, schema: number | ImportedSchema, deviceArray: number, options: DeviceImportOptions = {}): Imported<RawImport> {
  const policy = options.device ?? 'copy';
  if (policy !== 'copy' && policy !== 'reject') {
    throw new ArrowCDeviceError(`device: expected 'copy' or 'reject' for a raw import, found '${String(policy)}'`, EINVAL);
  }
  if (options.from !== undefined) return importForeignDevice(core, schema, deviceArray, options, rawReader);
  core.structs.checkRange(deviceArray, core.structs.size('ArrowDeviceArray'), 'ArrowDeviceArray');
  const type = core.structs.i32('ArrowDeviceArray', deviceArray, 'device_type');
  if (type === constants.ARROW_DEVICE_CPU) return importArray(core, schema, deviceArray, 'ArrowDeviceArray', options, rawReader);
  if (policy === 'reject') throw notOnCpu(core, deviceArray);
  return copyToHost(core, schema, deviceArray, options, rawReader);
}

/** A device array in another module's memory: CPU arrays only, copied ('keep' cannot hold one there). */
function importForeignDevice<T>(core: Core, schema: number | ImportedSchema, deviceArray: number, options: DeviceImportOptions,
  read: Reader<T>): Imported<T> {
  if (options.device === 'keep') throw new ArrowCDeviceError(`device: 'keep' cannot keep an array that is in another module's memory; use 'copy'`, ENOSYS);
  return importArray(core, schema, deviceArray, 'ArrowDeviceArray', options, read);
}

function notOnCpu(core: Core, deviceArray: number): ArrowCDeviceError {
  const s = core.structs;
  const name = deviceName(s.i32('ArrowDeviceArray', deviceArray, 'device_type'), s.i64Big('ArrowDeviceArray', deviceArray, 'device_id'));
  return new ArrowCDeviceError(`device_type: the array is on ${name}, not the CPU, and the import policy is 'reject': ` +
    `import it with { device: 'copy' } to copy it to the host, or { device: 'keep' } to keep it on its device`, ENODEV, 'device_type');
}

/** Copies a device array to the host and imports the copy; see importDeviceBatch. */
function copyToHost<T>(core: Core, schemaArg: number | ImportedSchema, ptr: number, options: ImportOptions, read: Reader<T>): Imported<T> {
  return withSchema(core, schemaArg, (schema, ownsSchema) => {
    const host = core.alloc(core.structs.size('ArrowDeviceArray'));
    try {
      // Validates the device array (its buffers unread), waits on its event, copies.
      core.checkDevice(core.device.deviceArrayCopy(schema.ptr, ptr, constants.ARROW_DEVICE_CPU, -1, host), 'ArrowDeviceArray');
      let result: Imported<T>;
      try {
        result = importArray(core, schema, host, 'ArrowDeviceArray', { ...options, validate: options.validate ?? 'full' }, read);
      } catch (e) {
        core.space.release('ArrowArray', host);
        throw e;
      }
      // The source is ours now: release it (its device memory and event).
      core.space.release('ArrowArray', ptr);
      // The batch's schema was read into JS objects; the C one can go.
      if (ownsSchema) schema.release();
      return result;
    } finally {
      core.free(host);
    }
  });
}

/** Moves a validated device array (any device) and its schema into a DeviceResident. */
function keepOnDevice(core: Core, schemaArg: number | ImportedSchema, ptr: number): DeviceResident {
  const s = core.structs;
  return withSchema(core, schemaArg, (schema, ownsSchema) => {
    let own = 0;
    let schemaCopy = 0;
    try {
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
      const host = { core, importDeviceBatch: (sp: number, dp: number, o: ImportOptions) => importDeviceBatch(core, sp, dp, { ...o, device: 'copy' }) };
      return new DeviceResident(host, own, schemaCopy, schema.field, device);
    } catch (e) {
      if (own !== 0) core.free(own);
      if (schemaCopy !== 0) core.free(schemaCopy);
      throw e;
    }
  });
}
