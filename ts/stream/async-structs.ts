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
 * A handler struct whose callbacks are `callbacks`, in memory allocated here.
 * Ready for callbacks at once. When a producer calls its release, the struct
 * is freed after callbacks.release(); disposeHandler frees one that was never
 * given to a producer.
 */
export function makeHandler(core: Core, callbacks: HandlerCallbacks): number {
  const ptr = core.alloc(core.structs.size('ArrowAsyncDeviceStreamHandler'));
  streamRuntime(core).register('handler', ptr, callbacks);
  return ptr;
}

/** Frees a handler made by makeHandler that no producer will ever release. */
export function disposeHandler(core: Core, handler: number): void {
  const rt = streamRuntime(core);
  const found = rt.lookup<HandlerCallbacks>('handler', handler);
  if (found === undefined) return;
  rt.clearStruct('handler', handler);
  rt.unregister('handler', found.key);
  core.free(handler);
}

/** A producer struct (device type, callbacks, additional_metadata copied); free it with freeProducer. */
export function makeProducer(core: Core, deviceType: number, additionalMetadata: Metadata | null, callbacks: ProducerCallbacks): number {
  const rt = streamRuntime(core);
  const s = core.structs;
  const ptr = core.alloc(s.size('ArrowAsyncProducer'));
  core.view.setInt32(ptr + s.offsetOf('ArrowAsyncProducer', 'device_type'), deviceType, true);
  s.setPtr('ArrowAsyncProducer', ptr, 'additional_metadata', rt.bytesCopy(encodeMetadata(additionalMetadata)));
  rt.register('producer', ptr, callbacks);
  return ptr;
}

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
 * A task holding `data` (an ArrowDeviceArray allocated with core.alloc, owned
 * by the task): extract_data moves it into out, or releases it when out is
 * NULL, and frees it. Returns the task struct, which the caller frees after
 * on_next_task returned (a consumer that keeps a task copies the struct).
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
