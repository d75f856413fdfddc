// The exports of csrc/device/bindings.cpp, which core.ts hands out (the only
// module that touches the Emscripten module), and the accounting they report.

/** Pointers are wasm32 addresses (device addresses are 2^31 or more); ids and sizes numbers. */
export interface DeviceExports {
  deviceLastError(): string;
  /** Where the last failure is in a struct tree, '' when nowhere. */
  deviceLastErrorPath(): string;
  /** 0 when (type, id) names a device, else ENODEV. */
  deviceCheck(type: number, id: number): number;
  deviceTypeName(type: number): string;
  /** AcdDeviceArrayMoveToDevice: src is released (or moved) on success. */
  deviceArrayMoveToDevice(schema: number, src: number, type: number, id: number, out: number): number;
  /** AcdDeviceArrayCopy: src stays the caller's. */
  deviceArrayCopy(schema: number, src: number, type: number, id: number, out: number): number;
  deviceArrayValidate(schema: number, deviceArray: number): number;
  /** AcdDeviceArrayValidate of a plain ArrowArray seen as a CPU device array: no buffer on a device. */
  arrayCheckHost(schema: number, array: number): number;
  deviceArraySync(deviceArray: number): number;
  /** 0 when the array's event has completed (or it has none), EBUSY while its work is pending. */
  deviceArrayEventQuery(deviceArray: number): number;
  /** '' for host memory no device allocated, else '{"type":2,"id":1}'. */
  deviceOwnerOf(address: number): string;
  deviceDescribeAddress(address: number, size: number): string;
  deviceRead(address: number, size: number, dst: number): number;
  deviceSynchronize(type: number, id: number): number;
  /** JSON: DeviceTotals. */
  deviceStats(): string;
}

export const DEVICE_EXPORTS: readonly (keyof DeviceExports)[] = [
  'deviceLastError', 'deviceLastErrorPath', 'deviceCheck', 'deviceTypeName', 'deviceArrayMoveToDevice', 'deviceArrayCopy',
  'deviceArrayValidate', 'arrayCheckHost', 'deviceArraySync', 'deviceArrayEventQuery', 'deviceOwnerOf',
  'deviceDescribeAddress', 'deviceRead', 'deviceSynchronize', 'deviceStats',
];

/** One simulated device's accounting. */
export interface DeviceStats {
  /** 'cuda:1' ('cpu' for the CPU). */
  name: string;
  /** Its ArrowDeviceType. */
  type: number;
  /** Its id. */
  id: number;
  /** Live bytes of its memory (as reserved: padding included) and live allocations. */
  bytesAllocated: number;
  /** Its live allocations. */
  allocations: number;
  /** Operations of its stream: enqueued, executed, still pending. */
  opsEnqueued: number;
  /** Operations of its stream done. */
  opsExecuted: number;
  /** Operations of its stream not done yet (waiting for a sync event to be waited on). */
  opsPending: number;
  /** Sync events recorded on it. */
  eventsRecorded: number;
  /** Its sync events waited on. */
  eventsWaited: number;
}

/** Every device used so far, and the events recorded and waited on over all of them. */
export interface DeviceTotals {
  /** Sync events recorded, over every device. */
  eventsRecorded: number;
  /** Sync events waited on, over every device. */
  eventsWaited: number;
  /** Each device used so far. */
  devices: DeviceStats[];
}
