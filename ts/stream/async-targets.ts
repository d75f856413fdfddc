// Where the TypeScript async producer (async.ts) puts its structs and how it
// calls the consumer's handler: in the core's memory (the stream runtime's
// shared callbacks, the C core's checked calls), or in another module's
// ({ into }): the schema, the ArrowAsyncProducer, each ArrowAsyncTask and the
// batch it holds are allocated there by its allocator (the batch written by
// ts/exchange/into.ts, released by our callbacks in its table), request /
// cancel / extract_data are our JS functions installed in its table
// (ts/foreign/callbacks.ts), and the handler's callbacks, written by its own
// code, are called through its table (checked at the trampoline).

import type { CoreRef } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../abi/errors.js';
import { constants } from '../abi/generated/layout.js';
import type { StructReader } from '../abi/structs.js';
import { writeArrayInto, writeSchemaInto } from '../exchange/into.js';
import type { InstalledCallback } from '../foreign/callbacks.js';
import type { ForeignModule } from '../foreign/module.js';
import { encodeMetadata } from '../model/metadata.js';
import { writeSchema } from '../model/schema.js';
import type { Field, Metadata } from '../model/types.js';
import { freeProducer, makeProducer, makeTask } from './async-structs.js';
import { writeDeviceItem, type Device, type StreamItem } from './batches.js';
import { failure, streamRuntime, type ProducerCallbacks } from './runtime.js';

/** A producer's side of one async stream: its structs and its calls on the handler. */
export interface AsyncTarget {
  /** Where the handler is and the producer's structs go. */
  readonly structs: StructReader;
  alloc(size: number): number;
  free(ptr: number): void;
  /** An ArrowAsyncProducer over callbacks (freed with freeProducer, after the handler's release). */
  makeProducer(deviceType: number, additionalMetadata: Metadata | null, callbacks: ProducerCallbacks): number;
  freeProducer(producer: number): void;
  writeSchema(ptr: number, field: Field): void;
  /** Releases what the consumer left of a schema (a NOP once moved out). */
  releaseSchema(ptr: number): void;
  /**
   * A task owning a batch (a raw array), written as an ArrowDeviceArray on the stream's
   * device: extract_data moves it out (or releases it for NULL), exactly
   * once, and calls onExtract. Valid until freeTask; the data outlives it.
   */
  makeTask(item: StreamItem, field: Field, onExtract: (wanted: boolean) => void): number;
  /** Extracts with NULL a task the consumer did not take (its on_next_task threw); a NOP once extracted. */
  dropTask(task: number): void;
  /** A copy of metadata for a call (0 for none), freed by the caller. */
  metadata(metadata: Metadata | null): number;
  /** A NUL-terminated copy of text, freed by the caller. */
  cString(text: string): number;
  // The handler's callbacks: what they throw (trap, refusal) comes out as it is.
  onSchema(handler: number, schema: number): number;
  onNextTask(handler: number, task: number, metadata: number): number;
  onError(handler: number, code: number, message: number): void;
  release(handler: number): void;
  /** Runs f, restoring the stack of the memory's module when it throws. */
  unwinding<T>(f: () => T): T;
}

/** The core's memory. */
export function coreTarget(acd: CoreRef, device: Device): AsyncTarget {
  const core = acd.core;
  const rt = streamRuntime(core);
  const s = core.stream;
  return {
    structs: core.structs,
    alloc: (size) => core.alloc(size),
    free: (ptr) => core.free(ptr),
    makeProducer: (deviceType, additionalMetadata, callbacks) => makeProducer(core, deviceType, additionalMetadata, callbacks),
    freeProducer: (producer) => freeProducer(core, producer),
    writeSchema: (ptr, field) => writeSchema(core, ptr, field),
    releaseSchema: (ptr) => { core.schemaRelease(ptr); },
    makeTask: (item, field, onExtract) => {
      const data = core.alloc(core.structs.size('ArrowDeviceArray'));
      try {
        writeDeviceItem(acd, data, item, field, device);
      } catch (e) {
        core.free(data);
        throw e;
      }
      return makeTask(core, data, onExtract);
    },
    // A copy the consumer kept now gives EINVAL.
    dropTask: (task) => { if (rt.owns('task', task)) s.asyncTaskCallExtractData(task, 0); },
    metadata: (metadata) => rt.bytesCopy(encodeMetadata(metadata)),
    cString: (text) => rt.cString(text),
    onSchema: (handler, schema) => s.asyncHandlerCallOnSchema(handler, schema),
    onNextTask: (handler, task, metadata) => s.asyncHandlerCallOnNextTask(handler, task, metadata),
    onError: (handler, code, message) => { s.asyncHandlerCallOnError(handler, code, message, 0); },
    release: (handler) => { s.asyncHandlerCallRelease(handler); },
    unwinding: (f) => core.unwinding(f),
  };
}

/** A task handed to another module: the device array it owns until extracted. */
interface IntoTask {
  readonly data: number;
  readonly onExtract: (wanted: boolean) => void;
}

/**
 * Another module's memory, for one producer. Our request and cancel take
 * two slots of its table until the producer struct is freed; extract_data
 * one more, until that and the last task extracted (a consumer may extract
 * after the handler's release).
 */
export function intoTarget(acd: CoreRef, into: ForeignModule, device: Device): AsyncTarget {
  if (device.type !== constants.ARROW_DEVICE_CPU) {
    throw new ArrowCDeviceError(`device: ${device.name}: an async stream into ${into.name} carries CPU arrays in its memory; the simulated devices are the core's`, ENOSYS);
  }
  const space = into.space;
  const s = space.structs;
  const table = space.table;
  const allocator = space.allocator;
  if (table === null || allocator === null || into.table === null) {
    throw new ArrowCDeviceError(`into: ${into.name} needs a function table and an allocator (malloc and free) for an async stream to go into it: ` +
      'the producer and its tasks are allocated in its memory and their callbacks installed in its table', EINVAL);
  }
  const rt = streamRuntime(acd.core);
  const deviceArraySize = s.size('ArrowDeviceArray');
  const arrayOffset = s.offsetOf('ArrowDeviceArray', 'array');
  const tasks = new Map<number, IntoTask>();
  let nextKey = 1;
  let producerSlots: InstalledCallback[] = [];
  let producerLive = false;
  let extractSlot: InstalledCallback | null = null;
  const releaseExtractSlot = () => {
    if (producerLive || tasks.size > 0 || extractSlot === null) return;
    extractSlot.uninstall();
    extractSlot = null;
  };
  // Our callbacks run inside the module's code: they never throw.
  const guarded = (body: () => number): number => {
    try {
      return body();
    } catch (e) {
      rt.noteUncaught(e);
      return failure(e).errno;
    }
  };
  /** Hands the task's data to out (or releases it for 0); the task is spent. */
  const extract = (key: number, out: number): number => {
    const task = tasks.get(key);
    if (task === undefined) return EINVAL; // extracted already, a stale copy, or not ours
    if (out !== 0) s.checkRange(out, deviceArraySize, 'extract_data: out'); // the task stays unspent
    tasks.delete(key);
    try {
      if (out !== 0) {
        space.bytes.copyWithin(out, task.data, task.data + deviceArraySize);
        s.setPtr('ArrowArray', task.data + arrayOffset, 'release', 0); // moved
      } else {
        space.release('ArrowDeviceArray', task.data);
      }
    } finally {
      allocator.free(task.data);
      releaseExtractSlot();
    }
    task.onExtract(out !== 0);
    return 0;
  };
  const call = (handler: number, field: string, signature: string, args: number[]) =>
    table.call(s.ptr('ArrowAsyncDeviceStreamHandler', handler, field), signature, [handler, ...args], `${into.name}: handler.${field}`);
  const copy = (bytes: Uint8Array | null): number => {
    if (bytes === null) return 0;
    const at = allocator.alloc(Math.max(bytes.length, 1));
    space.bytes.set(bytes, at);
    return at;
  };
  return {
    structs: s,
    alloc: (size) => allocator.alloc(size),
    free: (ptr) => allocator.free(ptr),
    makeProducer: (deviceType, additionalMetadata, callbacks) => {
      const ptr = allocator.alloc(s.size('ArrowAsyncProducer'));
      const mine = (self: number) => self >>> 0 === ptr && producerLive;
      try {
        space.view.setInt32(ptr + s.offsetOf('ArrowAsyncProducer', 'device_type'), deviceType, true);
        const request = into.install((self: number, n: bigint) => { if (mine(self)) guarded(() => { callbacks.request(BigInt(n)); return 0; }); }, 'vij');
        producerSlots.push(request);
        const cancel = into.install((self: number) => { if (mine(self)) guarded(() => { callbacks.cancel(); return 0; }); }, 'vi');
        producerSlots.push(cancel);
        s.setPtr('ArrowAsyncProducer', ptr, 'request', request.index);
        s.setPtr('ArrowAsyncProducer', ptr, 'cancel', cancel.index);
        s.setPtr('ArrowAsyncProducer', ptr, 'additional_metadata', copy(encodeMetadata(additionalMetadata)));
      } catch (e) {
        for (const c of producerSlots) c.uninstall();
        producerSlots = [];
        allocator.free(ptr);
        throw e;
      }
      producerLive = true;
      return ptr;
    },
    freeProducer: (producer) => {
      const metadata = s.ptr('ArrowAsyncProducer', producer, 'additional_metadata');
      if (metadata !== 0) allocator.free(metadata);
      for (const c of producerSlots) c.uninstall();
      producerSlots = [];
      allocator.free(producer);
      producerLive = false;
      releaseExtractSlot();
    },
    writeSchema: (ptr, field) => writeSchemaInto(into, ptr, field),
    releaseSchema: (ptr) => { space.release('ArrowSchema', ptr); },
    makeTask: (item, _field, onExtract) => {
      const data = allocator.alloc(deviceArraySize);
      try {
        writeArrayInto(into, data + arrayOffset, item.raw());
      } catch (e) {
        allocator.free(data);
        throw e;
      }
      s.setI64('ArrowDeviceArray', data, 'device_id', -1);
      space.view.setInt32(data + s.offsetOf('ArrowDeviceArray', 'device_type'), constants.ARROW_DEVICE_CPU, true);
      let task: number;
      let slot: InstalledCallback;
      try {
        slot = extractSlot ??= into.install((self: number, out: number) =>
          guarded(() => extract(s.ptr('ArrowAsyncTask', self >>> 0, 'private_data'), out >>> 0)), 'iii');
        task = allocator.alloc(s.size('ArrowAsyncTask'));
      } catch (e) {
        space.release('ArrowDeviceArray', data);
        allocator.free(data);
        releaseExtractSlot();
        throw e;
      }
      const key = nextKey++;
      tasks.set(key, { data, onExtract });
      s.setPtr('ArrowAsyncTask', task, 'extract_data', slot.index);
      s.setPtr('ArrowAsyncTask', task, 'private_data', key);
      return task;
    },
    dropTask: (task) => { extract(s.ptr('ArrowAsyncTask', task, 'private_data'), 0); },
    metadata: (metadata) => copy(encodeMetadata(metadata)),
    cString: (text) => copy(new TextEncoder().encode(`${text}\0`)),
    onSchema: (handler, schema) => call(handler, 'on_schema', 'iii', [schema]) as number,
    onNextTask: (handler, task, metadata) => call(handler, 'on_next_task', 'iiii', [task, metadata]) as number,
    onError: (handler, code, message) => { call(handler, 'on_error', 'viiii', [code, message, 0]); },
    release: (handler) => { call(handler, 'release', 'vi', []); },
    unwinding: (f) => f(),
  };
}
