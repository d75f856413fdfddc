// The calls the TypeScript async consumer (async-consumer.ts) makes on the
// producer's side, wherever the stream lives: in the core's memory (the
// handler's callbacks in the stream runtime's shared slots, the producer's
// and tasks' callbacks called by the C core's checked calls), or in another
// module's ({ from }): the handler allocated there by its allocator, its four
// callbacks our JS functions installed in its table (ts/foreign/callbacks.ts)
// so that its own code calls them, and the producer's request / cancel and
// each task's extract_data called through its table (checked by the engine
// at the trampoline, ts/foreign/trampoline.ts).

import type { MemorySpace } from '../abi/address-space.js';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, EIO } from '../abi/errors.js';
import type { ImportedSchema } from '../exchange/handles.js';
import { importSchema } from '../exchange/import.js';
import type { InstalledCallback } from '../foreign/callbacks.js';
import type { ForeignModule } from '../foreign/module.js';
import { disposeHandler, makeHandler } from './async-structs.js';
import { failure, streamRuntime, type HandlerCallbacks } from './runtime.js';

/** A consumer's calls on one async stream; the structs are in `space`. */
export interface AsyncCalls {
  /** Where the handler, the producer, the tasks and the out structs live. */
  readonly space: MemorySpace;
  /** The module whose memory that is (import options' `from`), or undefined for the core's. */
  readonly from: ForeignModule | undefined;
  /** A handler whose callbacks are `callbacks`; the producer's release of it frees it. */
  makeHandler(callbacks: HandlerCallbacks): number;
  /** Frees a handler that no producer will ever release. */
  disposeHandler(handler: number): void;
  alloc(size: number): number;
  free(ptr: number): void;
  /** Takes the schema of on_schema: copied or moved into the core, the producer's released. */
  importSchema(schema: number): ImportedSchema;
  /** Releases a schema the consumer refuses (it is the consumer's even then). */
  releaseSchema(schema: number): void;
  /** These throw an ArrowCDeviceError naming the callback when it cannot be called or fails. */
  request(producer: number, n: bigint): void;
  cancel(producer: number): void;
  /** extract_data's code; why it refused, when a code is not enough, is refusal(). */
  extract(task: number, out: number): number;
  refusal(): string;
  releaseArray(array: number): void;
}

/**
 * Calls the producer's side; what it throws (a trap, a foreign exception)
 * becomes an ArrowCDeviceError naming the callback.
 */
export function callForeign<T>(core: Core, what: string, f: () => T): T {
  try {
    return core.unwinding(f);
  } catch (e) {
    if (e instanceof ArrowCDeviceError) throw e;
    throw new ArrowCDeviceError(`${what}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`, EIO);
  }
}

/** The core's memory: the stream runtime's structs and the C core's checked calls. */
export function coreAsyncCalls(core: Core): AsyncCalls {
  const rt = streamRuntime(core);
  const s = core.stream;
  return {
    space: core.space,
    from: undefined,
    makeHandler: (callbacks) => makeHandler(core, callbacks),
    disposeHandler: (handler) => disposeHandler(core, handler),
    alloc: (size) => core.alloc(size),
    free: (ptr) => core.free(ptr),
    importSchema: (schema) => importSchema(core, schema),
    releaseSchema: (schema) => { core.schemaRelease(schema); },
    request: (producer, n) => { callForeign(core, 'request', () => s.asyncProducerCallRequest(producer, Number(n))); },
    cancel: (producer) => { callForeign(core, 'cancel', () => s.asyncProducerCallCancel(producer)); },
    extract: (task, out) => {
      rt.lastRefusal = '';
      return callForeign(core, 'extract_data', () => s.asyncTaskCallExtractData(task, out));
    },
    // A task made here says why it refused (a stale copy); a foreign one cannot;
    // the checked call says why it did not call extract_data at all.
    refusal: () => (rt.lastRefusal !== '' ? rt.lastRefusal : s.streamLastError()),
    releaseArray: (array) => { core.arrayRelease(array); },
  };
}

/**
 * Another module's memory: the handler and every struct the consumer
 * allocates are in it (its allocator), the producer's callbacks are called
 * through its table. The handler's callbacks run inside its code, so they
 * never throw: what they catch is noted in the stream runtime's `uncaught`
 * and becomes their errno code.
 */
export function foreignAsyncCalls(core: Core, from: ForeignModule): AsyncCalls {
  const space = from.space;
  const s = space.structs;
  const table = space.table;
  const allocator = space.allocator;
  if (table === null || allocator === null || from.table === null) {
    throw new ArrowCDeviceError(`from: ${from.name} needs a function table and an allocator (malloc and free) for an async stream to come from it: ` +
      'the handler is allocated in its memory and its callbacks are installed in its table', EINVAL);
  }
  const rt = streamRuntime(core);
  const installedOf = new Map<number, InstalledCallback[]>();
  const guarded = (body: () => number): number => {
    try {
      return body();
    } catch (e) {
      rt.noteUncaught(e);
      return failure(e).errno;
    }
  };
  const u = (p: number) => p >>> 0;
  const dispose = (handler: number) => {
    for (const c of installedOf.get(handler) ?? []) c.uninstall();
    installedOf.delete(handler);
    allocator.free(handler);
  };
  return {
    space,
    from,
    makeHandler: (callbacks) => {
      const handler = allocator.alloc(s.size('ArrowAsyncDeviceStreamHandler'));
      const installed: InstalledCallback[] = [];
      installedOf.set(handler, installed);
      // Per handler: a call with another handler (a stale or forged pointer) is refused, never served.
      const mine = (self: number) => u(self) === handler && installedOf.has(handler);
      try {
        const install = (field: string, fn: (...args: never[]) => unknown, signature: string) => {
          const c = from.install(fn, signature);
          installed.push(c);
          s.setPtr('ArrowAsyncDeviceStreamHandler', handler, field, c.index);
        };
        install('on_schema', (self: number, schema: number) => (mine(self) ? guarded(() => callbacks.onSchema(u(schema))) : EINVAL), 'iii');
        install('on_next_task', (self: number, task: number, metadata: number) =>
          (mine(self) ? guarded(() => callbacks.onNextTask(u(task), u(metadata))) : EINVAL), 'iiii');
        install('on_error', (self: number, code: number, message: number, metadata: number) => {
          if (mine(self)) guarded(() => { callbacks.onError(code, u(message), u(metadata)); return 0; });
        }, 'viiii');
        // The consumer allocated the handler: its release frees it, and our slots with it.
        install('release', (self: number) => {
          if (!mine(self)) return;
          guarded(() => { callbacks.release(); return 0; });
          dispose(handler);
        }, 'vi');
      } catch (e) {
        dispose(handler);
        throw e;
      }
      return handler;
    },
    disposeHandler: (handler) => { if (installedOf.has(handler)) dispose(handler); },
    alloc: (size) => allocator.alloc(size),
    free: (ptr) => allocator.free(ptr),
    importSchema: (schema) => importSchema(core, schema, from),
    releaseSchema: (schema) => { space.release('ArrowSchema', schema); },
    request: (producer, n) => {
      table.call(s.ptr('ArrowAsyncProducer', producer, 'request'), 'vij', [producer, n], `${from.name}: producer.request`);
    },
    cancel: (producer) => {
      table.call(s.ptr('ArrowAsyncProducer', producer, 'cancel'), 'vi', [producer], `${from.name}: producer.cancel`);
    },
    extract: (task, out) => table.call(s.ptr('ArrowAsyncTask', task, 'extract_data'), 'iii', [task, out], `${from.name}: task.extract_data`) as number,
    refusal: () => '',
    releaseArray: (array) => { space.release('ArrowArray', array); },
  };
}
