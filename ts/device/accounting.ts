// What the simulated devices hold: their accounting, which device owns an
// address, reading device memory as a debugger would, and waiting on an
// array's sync event.

import type { Core } from '../abi/core.js';
import type { DeviceTotals } from '../abi/device-exports.js';
import { parseDevice, type Device, type DeviceSpec } from './device.js';

/** Every simulated device used so far, with its accounting, and the events over all of them. */
export function deviceStats(core: Core): DeviceTotals {
  return JSON.parse(core.device.deviceStats()) as DeviceTotals;
}

/** Live bytes of one device's memory, or of every device's (the CPU's included) without one. */
export function deviceBytesAllocated(core: Core, spec?: DeviceSpec | Device): number {
  const devices = deviceStats(core).devices;
  if (spec === undefined) return devices.reduce((sum, d) => sum + d.bytesAllocated, 0);
  const { type, id } = parseDevice(spec);
  return devices.find((d) => d.type === type && d.id === id)?.bytesAllocated ?? 0;
}

/** The device whose memory an address is; null for host memory that no device allocated. */
export function deviceOwnerOf(core: Core, address: number): Device | null {
  const owner = core.device.deviceOwnerOf(address);
  if (owner === '') return null;
  const { type, id } = JSON.parse(owner) as { type: number; id: number };
  return parseDevice({ type, id });
}

/**
 * Reads size bytes at an address of any device's memory through the
 * simulation. Throws EBUSY while an operation that writes them is pending
 * (before the sync event was waited on).
 */
export function readDeviceMemory(core: Core, address: number, size: number): Uint8Array {
  const tmp = core.alloc(Math.max(size, 1));
  try {
    core.checkDevice(core.device.deviceRead(address, size, tmp), 'readDeviceMemory');
    return core.bytes.slice(tmp, tmp + size);
  } finally {
    core.free(tmp);
  }
}

/** Waits on the sync_event of the ArrowDeviceArray at ptr (as cudaEventSynchronize); it stays the caller's. */
export function syncDeviceArray(core: Core, ptr: number): void {
  core.checkDevice(core.device.deviceArraySync(ptr), 'sync_event');
}
