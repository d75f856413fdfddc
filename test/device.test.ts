// The simulated devices: device arrays exported onto every device type, their
// memory (not host memory, accounted per device), sync events and read-before-
// wait detection, the import policies (copy, keep, reject), moves between
// devices, validation, the CLI's --device, and every gold file through cuda:1
// and webgpu in both modes. Every test checks values, that the core's live
// bytes and every device's accounting return to their start, and ownership.
// Longer than 400 lines because every device test shares the per-device
// accounting checks and fixtures set up once at the top.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice, ExportedArray } from '../ts/api.js';
import { roundtripTable } from '../ts/roundtrip/roundtrip.js';
import { compareBatches } from '../ts/arrow-js/compare.js';
import { DeviceResident } from '../ts/device/resident.js';
import { DEVICE_TYPES, deviceName, eventTypeOf, isHostAccessible, parseDevice, type DeviceTypeName } from '../ts/device/device.js';
import { ArrowCDeviceError, EBUSY, EINVAL, ENODEV } from '../ts/abi/errors.js';
import { constants } from '../ts/abi/generated/layout.js';
import { core, GOLD, goldFiles, goldLevel, MODES, values } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await core(); });

const sample = () => new arrow.Table({
  a: arrow.vectorFromArray([1, null, 3, 4, -5], new arrow.Int32()),
  s: arrow.vectorFromArray(['x', 'yy', null, 'zzz', ''], new arrow.Utf8()),
  l: arrow.vectorFromArray([[1], [], null, [2, 3], [4]], new arrow.List(new arrow.Field('item', new arrow.Int8(), true))),
  d: arrow.vectorFromArray(['lyon', 'oslo', null, 'lyon', 'lima'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int8())),
  b: arrow.vectorFromArray([true, false, null, true, true], new arrow.Bool()),
}).batches[0];

// ---- bookkeeping ---------------------------------------------------------------

/** The core's live bytes and every device's, to compare with at the end of a test. */
function snapshot(): { bytes: number; devices: Map<string, number> } {
  return { bytes: acd.bytesAllocated(), devices: new Map(acd.deviceStats().devices.map((d) => [d.name, d.bytesAllocated])) };
}

function expectBackTo(start: ReturnType<typeof snapshot>): void {
  expect(acd.bytesAllocated()).toBe(start.bytes);
  for (const d of acd.deviceStats().devices) {
    expect({ device: d.name, bytes: d.bytesAllocated, pending: d.opsPending })
      .toEqual({ device: d.name, bytes: start.devices.get(d.name) ?? 0, pending: 0 });
  }
}

const s = () => acd.core.structs;
const released = (ptr: number) => s().ptr('ArrowArray', ptr, 'release') === 0;
const schemaReleased = (ptr: number) => s().ptr('ArrowSchema', ptr, 'release') === 0;

/** Every non-NULL buffer address of an array tree, children and dictionaries included. */
function buffersOf(array: number): number[] {
  const st = s();
  const out: number[] = [];
  const buffers = st.ptr('ArrowArray', array, 'buffers');
  for (let i = 0; i < st.i64('ArrowArray', array, 'n_buffers'); i++) {
    const b = st.ptrAt(buffers + i * st.layout.pointerSize);
    if (b !== 0) out.push(b);
  }
  const children = st.ptr('ArrowArray', array, 'children');
  for (let i = 0; i < st.i64('ArrowArray', array, 'n_children'); i++) out.push(...buffersOf(st.ptrAt(children + i * st.layout.pointerSize)));
  const dictionary = st.ptr('ArrowArray', array, 'dictionary');
  if (dictionary !== 0) out.push(...buffersOf(dictionary));
  return out;
}

/** Buffer i of child c of the device array at ptr. */
function childBuffer(ptr: number, c: number, i: number): number {
  const st = s();
  const child = st.ptrAt(st.ptr('ArrowArray', ptr, 'children') + c * st.layout.pointerSize);
  return st.ptrAt(st.ptr('ArrowArray', child, 'buffers') + i * st.layout.pointerSize);
}

// The simulation's event kind tags (acd.h): 0xACDE0000 | the device type whose API it stands for.
const EVENT_TAG: Partial<Record<DeviceTypeName, number>> = {
  cuda: 0xACDE0002, cuda_host: 0xACDE0002, cuda_managed: 0xACDE0002, opencl: 0xACDE0004, vulkan: 0xACDE0007,
  metal: 0xACDE0008, rocm: 0xACDE000A, rocm_host: 0xACDE000A, ext_dev: 0xACDE000C, oneapi: 0xACDE000E,
};

// ---- device names ------------------------------------------------------------------

describe('device names', () => {
  test('every device type of the header, from the generated constants', () => {
    expect(Object.values(DEVICE_TYPES).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    for (const [name, type] of Object.entries(DEVICE_TYPES)) {
      expect(acd.core.device.deviceTypeName(type)).toBe(name);
      expect(constants[`ARROW_DEVICE_${name.toUpperCase()}` as keyof typeof constants]).toBe(type);
    }
    expect([...Object.keys(DEVICE_TYPES)].filter((n) => isHostAccessible(DEVICE_TYPES[n as DeviceTypeName])))
      .toEqual(['cpu', 'cuda_host', 'rocm_host', 'cuda_managed']);
    expect([...Object.keys(DEVICE_TYPES)].filter((n) => eventTypeOf(DEVICE_TYPES[n as DeviceTypeName]) === null))
      .toEqual(['cpu', 'vpi', 'webgpu', 'hexagon']);
    expect(eventTypeOf(constants.ARROW_DEVICE_ROCM)).toBe('hipEvent_t*');
  });

  test.each([
    ['cuda', { type: 2, id: 0, name: 'cuda:0' }],
    ['cuda:1', { type: 2, id: 1, name: 'cuda:1' }],
    ['WebGPU', { type: 15, id: 0, name: 'webgpu:0' }],
    ['cpu', { type: 1, id: -1, name: 'cpu' }],
    ['cpu:-1', { type: 1, id: -1, name: 'cpu' }],
    [{ type: 'rocm', id: 3 }, { type: 10, id: 3, name: 'rocm:3' }],
    [{ type: constants.ARROW_DEVICE_METAL }, { type: 8, id: 0, name: 'metal:0' }],
  ] as const)('parseDevice(%j)', (spec, device) => {
    expect(parseDevice(spec)).toEqual(device);
  });

  test.each([['tpu', /TYPE one of cpu, cuda, cuda_host/], ['cuda:x', /found 'cuda:x'/], ['cpu:0', /the CPU has no ids/],
    ['cuda:-2', /expected an id from 0 to 2147483647/], [{ type: 5 }, /found type 5/]] as const)('parseDevice(%j) throws', (spec, message) => {
    expect(() => parseDevice(spec)).toThrow(message);
    try { parseDevice(spec); } catch (e) { expect((e as ArrowCDeviceError).errno).toBe(ENODEV); }
  });

  test('deviceName for a type the header lacks', () => {
    expect(deviceName(5, 0)).toBe('device type 5:0');
  });
});

// ---- exports onto every device ------------------------------------------------------------

describe.each(Object.keys(DEVICE_TYPES) as DeviceTypeName[])('exported onto %s', (name) => {
  const type = DEVICE_TYPES[name];
  const spec = name === 'cpu' ? 'cpu' : `${name}:3`;

  test('the ArrowDeviceArray is set as the spec says, every buffer on that device, and it imports back', () => {
    const start = snapshot();
    const batch = sample();
    const exported = acd.exportDeviceBatch(batch, { device: spec });
    const st = s();
    expect(st.i32('ArrowDeviceArray', exported.array, 'device_type')).toBe(type);
    expect(st.i64('ArrowDeviceArray', exported.array, 'device_id')).toBe(name === 'cpu' ? -1 : 3);
    const reserved = exported.array + st.offsetOf('ArrowDeviceArray', 'reserved');
    expect([...acd.core.bytes.subarray(reserved, reserved + 24)]).toEqual(new Array(24).fill(0));
    // sync_event: NULL where the spec's table has no event type, else the simulated event of that kind.
    const event = st.ptr('ArrowDeviceArray', exported.array, 'sync_event');
    if (eventTypeOf(type) === null) {
      expect(event).toBe(0);
    } else {
      expect(acd.core.view.getUint32(event, true)).toBe(EVENT_TAG[name]);
    }
    // Every buffer of every child lies on that one device; non-host memory is above every host address.
    const buffers = buffersOf(exported.array);
    expect(buffers.length).toBe(14);
    for (const b of buffers) {
      if (name !== 'cpu') expect(acd.deviceOwnerOf(b)).toEqual(parseDevice(spec));
      if (isHostAccessible(type)) expect(b).toBeLessThan(acd.memory.buffer.byteLength);
      else expect(b).toBeGreaterThanOrEqual(2 ** 31);
    }
    if (name !== 'cpu') expect(acd.deviceBytesAllocated(spec)).toBeGreaterThan(start.devices.get(parseDevice(spec).name) ?? 0);

    const imported = acd.importDeviceBatch(exported.schema, exported.array, { mode: 'view' });
    expect(released(exported.array)).toBe(true);
    expect(schemaReleased(exported.schema)).toBe(true);
    // Copied to the host: the device's memory is freed already.
    expect(acd.deviceBytesAllocated(spec)).toBe(start.devices.get(parseDevice(spec).name) ?? 0);
    expect(compareBatches(batch, imported.value, 0)).toEqual([]);
    expect(values(imported.value.getChild('d')!)).toEqual(['lyon', 'oslo', null, 'lyon', 'lima']);
    imported.release();
    exported.release();
    expectBackTo(start);
  });
});

// ---- device memory and sync events --------------------------------------------------------

describe('device memory', () => {
  test('a host consumer that reads the buffers directly gets an error naming the device, and loses nothing', () => {
    const start = snapshot();
    const exported = acd.exportDeviceBatch(sample(), { device: 'cuda:1' });
    const array = exported.array + s().offsetOf('ArrowDeviceArray', 'array');
    // Read as a plain ArrowArray: the validator finds device memory where host memory should be.
    expect(() => acd.importBatch(exported.schema, array)).toThrow(
      /root\.children\[0\]\.buffers\[0\]: expected 5 validity bits \(1 bytes\), found 0x8[0-9a-f]{7}, which is memory of device cuda:1, not host memory: copy it to the host first \(import policy 'copy'\) or keep it on the device/);
    expect(() => acd.importBatch(exported.schema, array, { validate: 'minimal' })).toThrow(
      /array: root\.children\[0\]\.buffers\[0\]: 0x8[0-9a-f]{7} is memory of device cuda:1, not host memory as cpu's must be/);
    expect(released(exported.array)).toBe(false);
    expect(schemaReleased(exported.schema)).toBe(false);
    // Still whole: it imports with the copy policy.
    const imported = acd.importDeviceBatch(exported.schema, exported.array);
    expect(values(imported.value.getChild('a')!)).toEqual([1, null, 3, 4, -5]);
    exported.release();
    expectBackTo(start);
  });

  test('each device id has its own memory and accounting; freed by the array release', () => {
    const start = snapshot();
    const allocations = (name: string) => acd.deviceStats().devices.find((d) => d.name === name)?.allocations ?? 0;
    const cuda1Allocations = allocations('cuda:1');
    const a = acd.exportDeviceBatch(sample(), { device: 'cuda:0' });
    const b = acd.exportDeviceBatch(sample(), { device: 'cuda:1' });
    const c = acd.exportDeviceBatch(sample(), { device: 'cuda_managed:1' });
    const used = (name: string) => acd.deviceBytesAllocated(name) - (start.devices.get(name) ?? 0);
    expect(used('cuda:0')).toBeGreaterThan(0);
    expect(used('cuda:1')).toBe(used('cuda:0'));
    expect(used('cuda_managed:1')).toBeGreaterThan(0);
    expect(allocations('cuda:1') - cuda1Allocations).toBe(buffersOf(b.array).length);
    const a0 = buffersOf(a.array);
    const b0 = buffersOf(b.array);
    expect(new Set([...a0, ...b0]).size).toBe(a0.length + b0.length);
    for (const p of a0) expect(acd.deviceOwnerOf(p)?.name).toBe('cuda:0');
    for (const p of b0) expect(acd.deviceOwnerOf(p)?.name).toBe('cuda:1');
    b.release();
    expect(used('cuda:1')).toBe(0);
    expect(used('cuda:0')).toBeGreaterThan(0);
    a.release();
    c.release();
    expectBackTo(start);
  });

  test('reading before waiting on the sync event: the bytes are not there yet, and the simulation says so', () => {
    const start = snapshot();
    const exported = acd.exportDeviceBatch(sample(), { device: 'cuda:1' });
    const values32 = childBuffer(exported.array, 0, 1);
    let error: unknown;
    try {
      acd.readDeviceMemory(values32, 20);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArrowCDeviceError);
    expect((error as ArrowCDeviceError).errno).toBe(EBUSY);
    expect((error as Error).message).toMatch(/^readDeviceMemory: reading cuda:1 memory at 0x8[0-9a-f]{7} before waiting on its sync event: 20 bytes are not there yet$/);
    // A consumer waits on the event first: then the values are there.
    acd.syncDeviceArray(exported.array);
    expect([...new Int32Array(acd.readDeviceMemory(values32, 20).buffer)]).toEqual([1, 0, 3, 4, -5]);
    exported.release();
    expectBackTo(start);
  });

  test('host-accessible memory (cuda_host): readable by the host directly, but only after the wait', () => {
    const start = snapshot();
    const batch = sample();
    const exported = acd.exportDeviceBatch(batch, { device: 'cuda_host' });
    const array = exported.array + s().offsetOf('ArrowDeviceArray', 'array');
    expect(() => acd.importBatch(exported.schema, array)).toThrow(
      /found 0x[0-9a-f]+: reading cuda_host:0 memory before waiting on its sync event: 1 bytes are not there yet/);
    expect(released(array)).toBe(false);
    acd.syncDeviceArray(exported.array);
    // Pinned memory is host memory: a plain ArrowArray consumer may read it in place.
    const imported = acd.importBatch(exported.schema, array, { mode: 'view', validate: 'full' });
    expect(released(array)).toBe(true);
    expect(compareBatches(batch, imported.value, 0)).toEqual([]);
    expect(acd.deviceOwnerOf(imported.value.getChild('a')!.data[0].values.byteOffset)?.name).toBe('cuda_host:0');
    imported.release();
    exported.release();
    expectBackTo(start);
  });

  test('device types without an event type carry NULL and are ready when handed over', () => {
    const start = snapshot();
    for (const spec of ['vpi:2', 'webgpu', 'hexagon:1']) {
      const exported = acd.exportDeviceBatch(sample(), { device: spec });
      expect(s().ptr('ArrowDeviceArray', exported.array, 'sync_event')).toBe(0);
      expect([...new Int32Array(acd.readDeviceMemory(childBuffer(exported.array, 0, 1), 20).buffer)]).toEqual([1, 0, 3, 4, -5]);
      exported.release();
    }
    expectBackTo(start);
  });

  test('events recorded by exports, waited on by imports', () => {
    const start = snapshot();
    const before = acd.deviceStats();
    const exported = acd.exportDeviceBatch(sample(), { device: 'metal:1' });
    const mid = acd.deviceStats();
    expect(mid.eventsRecorded - before.eventsRecorded).toBe(1);
    expect(mid.devices.find((d) => d.name === 'metal:1')!.opsPending).toBeGreaterThan(0);
    acd.importDeviceBatch(exported.schema, exported.array);
    const after = acd.deviceStats();
    expect(after.eventsWaited - mid.eventsWaited).toBe(1);
    expect(after.devices.find((d) => d.name === 'metal:1')!.opsPending).toBe(0);
    exported.release();
    expectBackTo(start);
  });
});

// ---- import policies ----------------------------------------------------------------

describe('import policies', () => {
  test.each(MODES)("'copy' (the default) in %s mode: waits, copies to the host, frees the device memory", (mode) => {
    const start = snapshot();
    const batch = sample().slice(1, 4);
    const exported = acd.exportDeviceBatch(batch, { device: 'rocm:2' });
    const imported = acd.importDeviceBatch(exported.schema, exported.array, { mode, device: 'copy' });
    expect(released(exported.array)).toBe(true);
    expect(acd.deviceBytesAllocated('rocm:2')).toBe(start.devices.get('rocm:2') ?? 0);
    expect(compareBatches(batch, imported.value, 0)).toEqual([]);
    expect(values(imported.value.getChild('l')!)).toEqual([[], null, [2, 3]]);
    imported.release();
    exported.release();
    expectBackTo(start);
  });

  test("'reject' throws an error naming the device and leaves the array with the caller", () => {
    const start = snapshot();
    const exported = acd.exportDeviceBatch(sample(), { device: 'vulkan:2' });
    let error: unknown;
    try {
      acd.importDeviceBatch(exported.schema, exported.array, { device: 'reject' });
    } catch (e) {
      error = e;
    }
    expect((error as ArrowCDeviceError).errno).toBe(ENODEV);
    expect((error as Error).message).toMatch(/the array is on vulkan:2, not the CPU, and the import policy is 'reject'/);
    expect(released(exported.array)).toBe(false);
    expect(schemaReleased(exported.schema)).toBe(false);
    // A CPU array is not refused.
    const cpu = acd.exportDeviceBatch(sample());
    const imported = acd.importDeviceBatch(cpu.schema, cpu.array, { device: 'reject' });
    expect(values(imported.value.getChild('s')!)).toEqual(['x', 'yy', null, 'zzz', '']);
    cpu.release();
    exported.release();
    expectBackTo(start);
    expect(() => acd.importDeviceBatch(0, 0, { device: 'steal' as never })).toThrow(/device: expected 'copy', 'keep' or 'reject', found 'steal'/);
  });

  test("'keep' returns a handle on the device; moves between ids and types, then to the host", () => {
    const start = snapshot();
    const batch = sample();
    const exported = acd.exportDeviceBatch(batch, { device: 'cuda:1' });
    const kept = acd.importDeviceBatch(exported.schema, exported.array, { device: 'keep' });
    expect(kept).toBeInstanceOf(DeviceResident);
    expect(released(exported.array)).toBe(true);
    expect(schemaReleased(exported.schema)).toBe(true);
    exported.release();
    expect(kept.device).toEqual({ type: constants.ARROW_DEVICE_CUDA, id: 1, name: 'cuda:1' });
    expect(kept.numRows).toBe(5);
    expect(kept.schema.fields.map((f) => f.name)).toEqual(['a', 's', 'l', 'd', 'b']);
    expect(kept.ready).toBe(false);
    const cudaBytes = acd.deviceBytesAllocated('cuda:1');
    expect(cudaBytes).toBeGreaterThan(start.devices.get('cuda:1') ?? 0);

    // cuda:1 → cuda:0 (another id) → oneapi:0 (another type) → cuda_managed:2 → webgpu:0
    let handle = kept;
    for (const [spec, tag] of [['cuda:0', 0xACDE0002], ['oneapi', 0xACDE000E], ['cuda_managed:2', 0xACDE0002], ['webgpu', 0]] as const) {
      const previous = handle;
      const previousPtr = handle.ptr;
      handle = handle.moveTo(spec);
      expect(previous.released).toBe(true);
      expect(() => previous.numRows).toThrow(/used after release\(\) or a move/);
      expect(handle.device).toEqual(parseDevice(spec));
      expect(handle.ptr).not.toBe(previousPtr);
      expect(released(handle.ptr)).toBe(false);
      const event = handle.syncEvent;
      if (tag === 0) expect(event).toBe(0);
      else expect(acd.core.view.getUint32(event, true)).toBe(tag);
      for (const b of buffersOf(handle.ptr)) expect(acd.deviceOwnerOf(b)?.name).toBe(parseDevice(spec).name);
      // The old device's memory is freed by the move.
      expect(acd.deviceBytesAllocated(previous.device)).toBe(start.devices.get(previous.device.name) ?? 0);
    }
    expect(handle.ready).toBe(true);  // webgpu has no event: ready when handed over
    const imported = handle.toHost({ mode: 'view' });
    expect(handle.released).toBe(true);
    expect(compareBatches(batch, imported.value, 0)).toEqual([]);
    imported.release();
    expectBackTo(start);
  });

  test("'keep' of a CPU array, then onto a device and back", () => {
    const start = snapshot();
    const exported = acd.exportDeviceBatch(sample());
    const kept = acd.importDeviceBatch(exported.schema, exported.array, { device: 'keep' });
    exported.release();
    expect(kept.device.name).toBe('cpu');
    expect(kept.ready).toBe(true);
    const onDevice = kept.moveTo({ type: 'ext_dev', id: 7 });
    expect(acd.core.view.getUint32(onDevice.syncEvent, true)).toBe(0xACDE000C);
    onDevice.synchronize();
    expect(onDevice.ready).toBe(true);
    const back = onDevice.moveTo('cpu');
    expect(back.syncEvent).toBe(0);
    const imported = back.toHost();
    expect(values(imported.value.getChild('b')!)).toEqual([true, false, null, true, true]);
    expectBackTo(start);
  });

  test("'keep' with an ImportedSchema the caller keeps: the handle has a schema of its own", () => {
    const start = snapshot();
    const exported = acd.exportDeviceBatch(sample(), { device: 'opencl:1' });
    const schema = acd.importSchema(exported.schema);
    const kept = acd.importDeviceBatch(schema, exported.array, { device: 'keep' });
    schema.release();
    const imported = kept.toHost({ mode: 'copy' });
    expect(values(imported.value.getChild('a')!)).toEqual([1, null, 3, 4, -5]);
    exported.release();
    expectBackTo(start);
  });

  test('release() frees a kept handle, is idempotent, and a released handle refuses to move', () => {
    const start = snapshot();
    const exported = acd.exportDeviceBatch(sample(), { device: 'hexagon' });
    const kept = acd.importDeviceBatch(exported.schema, exported.array, { device: 'keep' });
    exported.release();
    kept.release();
    kept.release();
    expect(() => kept.moveTo('cpu')).toThrow(/used after release/);
    expectBackTo(start);
  });
});

// ---- validation of device arrays -----------------------------------------------------------

describe('validation', () => {
  /** Exports onto device, lets `spoil` damage it, expects the import to throw `message` and lose nothing. */
  function refused(device: string, spoil: (e: ExportedArray) => void, message: RegExp, policy: 'copy' | 'keep' = 'copy'): void {
    const start = snapshot();
    const exported = acd.exportDeviceBatch(sample(), { device });
    spoil(exported);
    expect(() => acd.importDeviceBatch(exported.schema, exported.array, { device: policy })).toThrow(message);
    expect(released(exported.array)).toBe(false);
    expect(schemaReleased(exported.schema)).toBe(false);
    exported.release();
    expectBackTo(start);
  }
  const setPtr = (e: ExportedArray, field: string, value: number) => s().setPtr('ArrowDeviceArray', e.array, field, value);
  const setI64 = (e: ExportedArray, field: string, value: number) => s().setI64('ArrowDeviceArray', e.array, field, value);

  test.each(['copy', 'keep'] as const)('%s: a sync_event that is not a live event of the device kind', (policy) => {
    refused('cuda:1', (e) => setPtr(e, 'sync_event', e.schema), /sync_event: expected a cudaEvent_t\* for ARROW_DEVICE_CUDA, found 0x[0-9a-f]+, whose first member/, policy);
    refused('rocm', (e) => acd.core.view.setUint32(s().ptr('ArrowDeviceArray', e.array, 'sync_event'), 0xACDE0002, true),
      /sync_event: expected a hipEvent_t\* for ARROW_DEVICE_ROCM, found a cudaEvent_t\*/, policy);
    refused('webgpu', (e) => setPtr(e, 'sync_event', e.schema), /sync_event: expected NULL for ARROW_DEVICE_WEBGPU, which has no event type/, policy);
  });

  test('a device id that is not the one of its buffers and event', () => {
    refused('cuda:1', (e) => setI64(e, 'device_id', 2), /sync_event: the event was created on cuda:1, the array is on cuda:2/);
    refused('webgpu:1', (e) => setI64(e, 'device_id', 2), /root\.children\[0\]\.buffers\[0\]: 0x8[0-9a-f]{7} is memory of webgpu:1, not of webgpu:2 \(the array's device\)/);
    refused('vpi', (e) => s().view.setInt32(e.array + s().offsetOf('ArrowDeviceArray', 'device_type'), constants.ARROW_DEVICE_CPU, true),
      /found 0x8[0-9a-f]{7}, which is memory of device vpi:0, not host memory: copy it to the host first/);
  });

  test('reserved bytes that are not zeroed, a type the header lacks', () => {
    refused('metal', (e) => s().view.setBigInt64(e.array + s().offsetOf('ArrowDeviceArray', 'reserved') + 8, 5n, true),
      /reserved\[1\]: expected 0 \(the producer must zero the reserved bytes\), found 5/);
    refused('metal', (e) => s().view.setInt32(e.array + s().offsetOf('ArrowDeviceArray', 'device_type'), 6, true),
      /device_type: expected a device type of the header .*found 6/);
  });

  test('the struct tree is checked without reading device buffers; the host copy is checked in full', () => {
    // A child shorter than its parent: found at MINIMAL, before any copy.
    refused('cuda', (e) => {
      const child = s().ptrAt(s().ptr('ArrowArray', e.array, 'children') + s().layout.pointerSize);
      s().setI64('ArrowArray', child, 'length', 2);
    }, /root\.children\[1\]\.length: expected >= 5/);
    // Invalid UTF-8 written into pinned memory (host-accessible): found once the copy is on the host.
    refused('cuda_host', (e) => {
      acd.syncDeviceArray(e.array);
      acd.core.bytes[childBuffer(e.array, 1, 2) + 1] = 0xff;
    }, /^root\.children\[1\]\.buffers\[2\]: expected UTF-8 in slot 1 \(bytes 1\.\.3\), found an invalid sequence at byte 1$/);
  });
});

// ---- the command line and the gold files --------------------------------------------------------

const BIN = join(__dirname, '..', 'bin', 'arrow-c-device.mjs');
const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
const primitive = join(GOLD, '1.0.0-littleendian', 'generated_primitive.arrow_file');

describe('roundtrip --device', () => {
  test.each([['cuda:1', 2, 2], ['webgpu', 0, 0], ['cuda_host', 2, 2]] as const)('--device %s --json: device and events in the summary', (device, recorded, waited) => {
    const r = run('roundtrip', primitive, '--device', device, '--json');
    expect(r.status).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ ok: true, device: parseDevice(device).name, events: { recorded, waited }, batches: 2, rows: 37,
      bytesLeaked: 0, deviceBytesLeaked: 0, mismatches: [], errors: [] });
  });

  test('text output names the device', () => {
    const r = run('roundtrip', primitive, '--device=rocm:1', '--mode', 'view');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ok: .*generated_primitive\.arrow_file \(view mode, through rocm:1 \(2 sync events recorded, 2 waited on, 0 device bytes leaked\)\): 2 batches/);
  });

  test.each([[['--device', 'tpu'], /--device: expected TYPE or TYPE:ID/], [['--device'], /--device: expected TYPE or TYPE:ID/],
    [['--device', 'cpu:3'], /--device: the CPU has no ids/]])('bad %j: exit 2', (args, message) => {
    const r = run('roundtrip', primitive, ...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

// The testdata README: arrow-js loads these unions corrupted (see gold.test.ts).
const ARROW_JS_MISREADS = /^0\.17\.1\/generated_union\./;

describe.each(['cuda:1', 'webgpu'])('gold files through %s', (device) => {
  describe.each(MODES)('%s mode', (mode) => {
    test.each(goldFiles().filter(([name]) => !ARROW_JS_MISREADS.test(name)))('%s', (name, path) => {
      const start = snapshot();
      const table = arrow.tableFromIPC(readFileSync(path));
      const summary = roundtripTable(acd, table, name, mode, device, goldLevel(name));
      expect(summary.errors).toEqual([]);
      expect(summary.mismatches).toEqual([]);
      expect(summary.bytesLeaked).toBe(0);
      expect(summary.deviceBytesLeaked).toBe(0);
      expect(summary.ok).toBe(true);
      expect(summary.device).toBe(parseDevice(device).name);
      const events = device === 'webgpu' ? 0 : table.batches.length;
      expect(summary.events).toEqual({ recorded: events, waited: events });
      expectBackTo(start);
    });
  });
});

test('an ArrowDeviceArray address in device memory is refused (EINVAL), never read', () => {
  const start = snapshot();
  const exported = acd.exportDeviceBatch(sample(), { device: 'cuda' });
  const inDevice = childBuffer(exported.array, 0, 1);
  let error: unknown;
  try {
    acd.syncDeviceArray(inDevice);
  } catch (e) {
    error = e;
  }
  expect((error as ArrowCDeviceError).errno).toBe(EINVAL);
  expect((error as Error).message).toMatch(/expected a struct ArrowDeviceArray in readable memory, found 0x8[0-9a-f]{7}/);
  expect(() => acd.importDeviceBatch(exported.schema, inDevice)).toThrow(/ArrowDeviceArray: address \d+ \(\+104 bytes\) is outside the memory/);
  exported.release();
  expectBackTo(start);
});
