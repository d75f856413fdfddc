// Devices by name: 'cuda:1' ↔ { type: ARROW_DEVICE_CUDA, id: 1 }, and what
// the spec says of each device type (host-accessible memory, event type).
// The type values come from the generated constants (the header's macros).

import { ArrowCDeviceError, ENODEV } from '../abi/errors.js';
import { constants } from '../abi/generated/layout.js';

/** Every device type of the header, by the name this library gives it. */
export const DEVICE_TYPES = {
  cpu: constants.ARROW_DEVICE_CPU,
  cuda: constants.ARROW_DEVICE_CUDA,
  cuda_host: constants.ARROW_DEVICE_CUDA_HOST,
  opencl: constants.ARROW_DEVICE_OPENCL,
  vulkan: constants.ARROW_DEVICE_VULKAN,
  metal: constants.ARROW_DEVICE_METAL,
  vpi: constants.ARROW_DEVICE_VPI,
  rocm: constants.ARROW_DEVICE_ROCM,
  rocm_host: constants.ARROW_DEVICE_ROCM_HOST,
  ext_dev: constants.ARROW_DEVICE_EXT_DEV,
  cuda_managed: constants.ARROW_DEVICE_CUDA_MANAGED,
  oneapi: constants.ARROW_DEVICE_ONEAPI,
  webgpu: constants.ARROW_DEVICE_WEBGPU,
  hexagon: constants.ARROW_DEVICE_HEXAGON,
} as const;

/** The name of a device type of the header (`'cpu'`, `'cuda'`, `'rocm'`, ...). */
export type DeviceTypeName = keyof typeof DEVICE_TYPES;

/** A device: its ArrowDeviceType, its id (-1 for the CPU) and its name ('cuda:1', 'cpu'). */
export interface Device {
  /** Its ArrowDeviceType. */
  readonly type: number;
  /** Its id (-1 for the CPU). */
  readonly id: number;
  /** Its name (`'cuda:1'`, `'cpu'`). */
  readonly name: string;
}

/**
 * A device as a user names it: `'cuda'`, `'cuda:1'`, `{ type: 'rocm', id: 2 }`, `{ type: constants.ARROW_DEVICE_METAL }`, or a Device.
 */
export type DeviceSpec = string | { readonly type: number | DeviceTypeName; readonly id?: number };

/** The spec's synchronization event table: what sync_event points at, or null (always NULL). */
const EVENT_TYPES: Readonly<Record<DeviceTypeName, string | null>> = {
  cpu: null,
  cuda: 'cudaEvent_t*',
  cuda_host: 'cudaEvent_t*',
  opencl: 'cl_event*',
  vulkan: 'VkEvent*',
  metal: 'MTLEvent*',
  vpi: null,
  rocm: 'hipEvent_t*',
  rocm_host: 'hipEvent_t*',
  // The spec leaves it to the producer; this simulation has its own kind.
  ext_dev: 'AcdEvent* (ext_dev)',
  cuda_managed: 'cudaEvent_t*',
  oneapi: 'sycl::event*',
  webgpu: null,
  hexagon: null,
};

/**
 * The simulation's event kinds (csrc/device/device.h, ACD_EVENT_*): the first
 * member of every simulated event, 0xACDE0000 plus the device type whose
 * runtime defines the event type (CUDA's for cuda_host, ...).
 */
const EVENT_KINDS: Readonly<Record<DeviceTypeName, number | null>> = {
  cpu: null, cuda: 0xacde0002, cuda_host: 0xacde0002, opencl: 0xacde0004, vulkan: 0xacde0007, metal: 0xacde0008,
  vpi: null, rocm: 0xacde000a, rocm_host: 0xacde000a, ext_dev: 0xacde000c, cuda_managed: 0xacde0002, oneapi: 0xacde000e,
  webgpu: null, hexagon: null,
};

const HOST_ACCESSIBLE: ReadonlySet<DeviceTypeName> = new Set(['cpu', 'cuda_host', 'rocm_host', 'cuda_managed']);

const NAMES = new Map<number, DeviceTypeName>(
  Object.entries(DEVICE_TYPES).map(([name, type]) => [type, name as DeviceTypeName]));

/**
 * The name of a device type ('cuda'), or undefined when it is not one of the header's.
 *
 * Ownership: pure; nothing to release.
 * @param type - the ArrowDeviceType.
 */
export function deviceTypeName(type: number): DeviceTypeName | undefined {
  return NAMES.get(type);
}

/**
 * 'cuda:1'; 'cpu' for the CPU; 'device type 5' for a type the header lacks.
 *
 * Ownership: pure; nothing to release.
 * @param type - the ArrowDeviceType.
 * @param id - the device id.
 */
export function deviceName(type: number, id: number | bigint): string {
  const name = NAMES.get(type);
  if (name === undefined) return `device type ${type}:${id}`;
  return name === 'cpu' ? 'cpu' : `${name}:${id}`;
}

/**
 * Whether the host reads this type's memory directly (CPU, CUDA_HOST, ROCM_HOST, CUDA_MANAGED).
 *
 * Ownership: pure; nothing to release.
 * @param type - the ArrowDeviceType.
 */
export function isHostAccessible(type: number): boolean {
  const name = NAMES.get(type);
  return name !== undefined && HOST_ACCESSIBLE.has(name);
}

/**
 * What sync_event points at for this type ('cudaEvent_t*'), or null when it is always NULL.
 *
 * Ownership: pure; nothing to release.
 * @param type - the ArrowDeviceType.
 */
export function eventTypeOf(type: number): string | null {
  const name = NAMES.get(type);
  return name === undefined ? null : EVENT_TYPES[name];
}

/** The simulation's event kind for this type's sync events (0xACDE0002 for cuda), or null when it has none. */
export function eventKindOf(type: number): number | null {
  const name = NAMES.get(type);
  return name === undefined ? null : EVENT_KINDS[name];
}

const usage = `expected TYPE or TYPE:ID, TYPE one of ${Object.keys(DEVICE_TYPES).join(', ')}`;

/**
 * Parses a device spec; the id defaults to 0 (-1, the only one, for the CPU).
 *
 * Ownership: pure; nothing to release.
 * @throws `ArrowCDeviceError` (EINVAL) for a spec that names no device of the header.
 * @param spec - the device.
 */
export function parseDevice(spec: DeviceSpec | Device): Device {
  let type: number | undefined;
  let id: number | undefined;
  if (typeof spec === 'string') {
    const m = /^([a-z_]+)(?::(-?\d+))?$/.exec(spec.trim().toLowerCase());
    type = m ? DEVICE_TYPES[m[1] as DeviceTypeName] : undefined;
    if (m === null || type === undefined) throw new ArrowCDeviceError(`device: ${usage}, found '${spec}'`, ENODEV);
    id = m[2] === undefined ? undefined : Number(m[2]);
  } else {
    type = typeof spec.type === 'string' ? DEVICE_TYPES[spec.type] : spec.type;
    if (type === undefined || !NAMES.has(type)) {
      throw new ArrowCDeviceError(`device: ${usage}, found type ${String(spec.type)}`, ENODEV);
    }
    id = spec.id;
  }
  const cpu = type === constants.ARROW_DEVICE_CPU;
  id ??= cpu ? -1 : 0;
  if (cpu ? id !== -1 : !Number.isSafeInteger(id) || id < 0 || id > 0x7fffffff) {
    throw new ArrowCDeviceError(`device: ${cpu ? 'the CPU has no ids (only -1)' : 'expected an id from 0 to 2147483647'}, ` +
      `found ${NAMES.get(type)}:${id}`, ENODEV);
  }
  return { type, id, name: deviceName(type, id) };
}
