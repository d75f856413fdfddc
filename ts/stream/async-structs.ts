// The async device stream's structs made in TypeScript, at the lowest level:
// a handler, a producer and a task whose callbacks are JS functions (through
// the stream runtime's shared table slots). The producer (async-stream.ts),
// the consumer (stream-async-consumer.ts) and the rule tests' spies build on
// these.

import type { Core } from '../abi/core.js';
import { encodeMetadata } from '../model/metadata.js';
import { streamRuntime, type HandlerCallbacks, type ProducerCallbacks } from './runtime.js';
import type { Metadata } from '../model/types.js';

/**
 * A handler struct (ArrowAsyncDeviceStreamHandler) whose callbacks are `callbacks`, in memory allocated here, ready for callbacks at once. The lowest level of the async stream, for tests and tools; `asyncConsumer` is the consumer most code wants.
 *
 * Ownership: the caller owns the handler until it gives it to a producer; when a producer calls its release, the struct is freed after `callbacks.release()`. One never given to a producer must be freed with `disposeHandler`.
 * @param core - the core (`acd.core`).
 * @param callbacks - on_schema, on_next_task, on_error and release, as JS functions.
 * @returns the handler's address.
 */
export function makeHandler(core: Core, callbacks: HandlerCallbacks): number {
  const ptr = core.alloc(core.structs.size('ArrowAsyncDeviceStreamHandler'));
  streamRuntime(core).register('handler', ptr, callbacks);
  return ptr;
}

/**
 * Frees a handler made by `makeHandler` that no producer will ever release.
 *
 * Ownership: ends the caller's ownership of the handler.
 * @param core - the core (`acd.core`).
 * @param handler - the handler's address.
 */
export function disposeHandler(core: Core, handler: number): void {
  const rt = streamRuntime(core);
  const found = rt.lookup<HandlerCallbacks>('handler', handler);
  if (found === undefined) return;
  rt.clearStruct('handler', handler);
  rt.unregister('handler', found.key);
  core.free(handler);
}

/**
 * A producer struct (ArrowAsyncProducer: device type, callbacks, additional_metadata copied). The lowest level of the async stream, for tests and tools; `produceAsync` is the producer most code wants.
 *
 * Ownership: the caller owns the struct and must free it with `freeProducer` (after the handler's release).
 * @param core - the core (`acd.core`).
 * @param deviceType - the ArrowDeviceType of its batches.
 * @param additionalMetadata - copied into the core's memory, or null.
 * @param callbacks - request and cancel, as JS functions.
 * @returns the producer's address.
 */
export function makeProducer(core: Core, deviceType: number, additionalMetadata: Metadata | null, callbacks: ProducerCallbacks): number {
  const rt = streamRuntime(core);
  const s = core.structs;
  const ptr = core.alloc(s.size('ArrowAsyncProducer'));
  core.view.setInt32(ptr + s.offsetOf('ArrowAsyncProducer', 'device_type'), deviceType, true);
  s.setPtr('ArrowAsyncProducer', ptr, 'additional_metadata', rt.bytesCopy(encodeMetadata(additionalMetadata)));
  rt.register('producer', ptr, callbacks);
  return ptr;
}

/**
 * Frees a producer made by `makeProducer`, with its copied metadata and its callbacks' registration.
 *
 * Ownership: ends the caller's ownership of the producer.
 * @param core - the core (`acd.core`).
 * @param producer - the producer's address.
 */
export function freeProducer(core: Core, producer: number): void {
  const rt = streamRuntime(core);
  const found = rt.lookup<ProducerCallbacks>('producer', producer);
  const metadata = core.structs.ptr('ArrowAsyncProducer', producer, 'additional_metadata');
  if (metadata !== 0) core.free(metadata);
  rt.clearStruct('producer', producer);
  if (found !== undefined) rt.unregister('producer', found.key);
  core.free(producer);
}

/**
 * A task (ArrowAsyncTask) holding `data`: its extract_data moves `data` into its out parameter, or releases it when out is NULL, and frees it.
 *
 * Ownership: takes ownership of `data` (an ArrowDeviceArray allocated with `core.alloc`). The caller owns the returned task struct and frees it after on_next_task returned (a consumer that keeps a task copies the struct).
 * @param core - the core (`acd.core`).
 * @param data - the ArrowDeviceArray's address.
 * @param onExtract - called with whether the data was wanted.
 * @returns the task's address.
 */
export function makeTask(core: Core, data: number, onExtract?: (wanted: boolean) => void): number {
  const ptr = core.alloc(core.structs.size('ArrowAsyncTask'));
  streamRuntime(core).register('task', ptr, {
    extract(out: number): number {
      if (out !== 0) core.deviceArrayMove(data, out);
      else core.arrayRelease(data + core.structs.offsetOf('ArrowDeviceArray', 'array'));
      core.free(data);
      onExtract?.(out !== 0);
      return 0;
    },
  });
  return ptr;
}
