// A device array kept where it is (import policy 'keep'): the handle owns an
// ArrowDeviceArray and its ArrowSchema in this library's memory, whose
// buffers stay on their device until the caller moves them elsewhere or to
// the host. Moving consumes the handle, as a move of the struct does.

import type * as arrow from 'apache-arrow';
import type { Imported } from '../exchange/handles.js';
import type { ImportOptions } from '../exchange/options.js';
import type { Core } from '../abi/core.js';
import { parseDevice, type Device, type DeviceSpec } from './device.js';
import { ArrowCDeviceError, EBUSY, EINVAL } from '../abi/errors.js';
import { Handle } from '../abi/handles.js';
import type { Field, Schema } from '../model/types.js';

/** What a DeviceResident needs of the library: its core and its device-array import. */
export interface DeviceResidentHost {
  readonly core: Core;
  importDeviceBatch(schema: number, deviceArray: number, options: ImportOptions & { device: 'copy' }): Imported<arrow.RecordBatch>;
}

/**
 * A record batch left on its device by an import with `{ device: 'keep' }`: the ArrowDeviceArray and its ArrowSchema, moved into this library's memory, the data still in the device's memory.
 *
 * Ownership: the holder must `release()` it (which frees the device memory too) or consume it with `moveTo` or `toHost`, each of which returns a new owner and leaves this handle released.
 */
export class DeviceResident extends Handle {
  /** The schema of the batch (a struct whose children are the columns). */
  readonly field: Field;
  readonly #host: DeviceResidentHost;

  /** The ArrowDeviceArray's address, in the core's memory. */
  readonly ptr: number;
  /** The ArrowSchema's address, in the core's memory. */
  readonly schemaPtr: number;
  /** The device the data is on. */
  readonly device: Device;

  /**
   * Made by `ArrowCDevice.importDeviceBatch` with `{ device: 'keep' }`; not meant to be called directly.
   *
   * Ownership: takes ownership of the ArrowDeviceArray at `ptr` and the ArrowSchema at `schemaPtr`, both allocated by this library's core and validated.
   * @param host - the facade that imported it.
   * @param ptr - the ArrowDeviceArray's address.
   * @param schemaPtr - the ArrowSchema's address.
   * @param field - the schema, read.
   * @param device - the device the data is on.
   */
  constructor(host: DeviceResidentHost, ptr: number,
    schemaPtr: number, field: Field,
    device: Device) {
    const core = host.core;
    super(() => {
      core.space.release('ArrowArray', ptr);
      core.space.release('ArrowSchema', schemaPtr);
      core.free(ptr);
      core.free(schemaPtr);
    });
    this.ptr = ptr;
    this.schemaPtr = schemaPtr;
    this.device = device;
    this.#host = host;
    this.field = field;
  }

  /** The columns and metadata. */
  get schema(): Schema {
    if (this.field.type.kind !== 'struct') throw new ArrowCDeviceError('schema: expected a struct', EINVAL);
    return { fields: this.field.type.children, metadata: this.field.metadata };
  }

  /** The number of rows (the array's `length`). */
  get numRows(): number {
    return this.#core().structs.i64('ArrowArray', this.ptr, 'length');
  }

  /** The address of the sync event (0 when there is none). */
  get syncEvent(): number {
    return this.#core().structs.ptr('ArrowDeviceArray', this.ptr, 'sync_event');
  }

  /** Whether the producer's work is done: its event has completed, or it has none. */
  get ready(): boolean {
    const core = this.#core();
    const code = core.device.deviceArrayEventQuery(this.ptr);
    if (code === EBUSY) return false;
    core.checkDevice(code, 'sync_event');
    return true;
  }

  /**
   * Waits on the sync event (as cudaEventSynchronize); the data stays on the device.
   *
   * Ownership: borrows; the data stays this handle's.
   * @throws `ArrowCDeviceError` after `release()` or a move.
   */
  synchronize(): void {
    const core = this.#core();
    core.checkDevice(core.device.deviceArraySync(this.ptr), 'sync_event');
  }

  /**
   * Moves the data onto another device (another id or type, or the CPU): waits
   * on the event, copies every buffer of every child there, records a new
   * event, and frees the old device's memory. Consumes this handle; on
   * failure this handle still owns everything.
   *
   * Ownership: consumes this handle (released on success) and returns the new owner, which the caller must release or consume.
   * @param spec - the target device (`'metal:0'`, `{ type: 'cuda', id: 2 }`, `'cpu'`).
   * @returns the data on its new device.
   * @throws `ArrowCDeviceError` after `release()` or a move, or when the copy fails.
   */
  moveTo(spec: DeviceSpec | Device): DeviceResident {
    const core = this.#core();
    const device = parseDevice(spec);
    const s = core.structs;
    const out = core.alloc(s.size('ArrowDeviceArray'));
    const schema = core.alloc(s.size('ArrowSchema'));
    try {
      core.checkDevice(core.device.deviceArrayMoveToDevice(this.schemaPtr, this.ptr, device.type, device.id, out),
        `moving ${this.device.name} to ${device.name}`);
    } catch (e) {
      core.free(out);
      core.free(schema);
      throw e;
    }
    core.schemaMove(this.schemaPtr, schema);
    this.release();  // frees the moved-from structs
    return new DeviceResident(this.#host, out, schema, this.field, device);
  }

  /**
   * Copies the data to the host and imports it (import policy 'copy'):
   * validated at options.validate (default 'full') once on the host.
   * Consumes this handle; on failure this handle still owns everything.
   *
   * Ownership: consumes this handle (released on success); the caller owns the returned import and must release it.
   * @param options - `mode`, `validate`.
   * @returns the batch on the host.
   * @throws `ArrowCDeviceError` after `release()` or a move, or naming the path at fault.
   */
  toHost(options: ImportOptions = {}): Imported<arrow.RecordBatch> {
    this.#core();
    const imported = this.#host.importDeviceBatch(this.schemaPtr, this.ptr, { ...options, device: 'copy' });
    this.release();  // the import moved both structs out
    return imported;
  }

  #core(): Core {
    if (this.released) throw new ArrowCDeviceError(`device array on ${this.device.name} used after release() or a move`, EINVAL);
    return this.#host.core;
  }
}
