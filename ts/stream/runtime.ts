// The machinery under every stream struct implemented in TypeScript: the
// callbacks in the wasm function table, the objects behind them, and the pump
// of the C async objects. One per Core.
//
// Table slots. A struct's callbacks are C function pointers: on wasm, indices
// into the function table. Every struct of one kind (ArrowArrayStream,
// ArrowDeviceArrayStream, ArrowAsyncDeviceStreamHandler, ArrowAsyncProducer,
// ArrowAsyncTask) shares one set of JS functions in the table, which find the
// object they serve by the struct's private_data: a key from a counter, never
// reused while it does not wrap (2^32 objects), so a stale copy of a struct
// (a task extracted already) finds nothing rather than a newer object. The
// set is added when the first object of the kind is made and removed when the
// last one is gone, so a finished program holds no slot.
//
// Callbacks run inside a wasm call: they never throw (a JS exception would
// unwind through C frames); failures become errno codes.
//
// The pump. The C async producer and consumer do their work in AcdAsyncPump;
// the C side calls the scheduler (one permanent slot, taken when the runtime
// is made) when it queues work, and the runtime runs the pump from a
// microtask, never inside the call that queued it. Nothing thrown in the pump
// (a trap, or a foreign callback's exception) leaves that microtask: the C
// object whose step was cut short reports it to its other side (on_error, or
// the consumer's error), and the pump goes on.

import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, EIO, type ErrorDetails } from '../abi/errors.js';
import type { StructName } from '../abi/layout-types.js';

export type Kind = 'arrayStream' | 'deviceArrayStream' | 'handler' | 'producer' | 'task';

/** What an ArrowArrayStream or ArrowDeviceArrayStream made in TypeScript does. */
export interface PullCallbacks {
  getSchema(out: number): number;
  getNext(out: number): number;
  /** A C string (valid until the next call) or 0. */
  getLastError(): number;
  release(): void;
}

/** What an ArrowAsyncDeviceStreamHandler made in TypeScript does. */
export interface HandlerCallbacks {
  onSchema(schema: number): number;
  onNextTask(task: number, metadata: number): number;
  onError(code: number, message: number, metadata: number): void;
  release(): void;
}

/** What an ArrowAsyncProducer made in TypeScript does. */
export interface ProducerCallbacks {
  request(n: bigint): void;
  cancel(): void;
}

/** What an ArrowAsyncTask made in TypeScript does: called at most once. */
export interface TaskCallbacks {
  extract(out: number): number;
}

type Callbacks = PullCallbacks | HandlerCallbacks | ProducerCallbacks | TaskCallbacks;

interface KindSpec {
  readonly struct: StructName;
  readonly fields: readonly { readonly field: string; readonly signature: string; readonly make: (rt: StreamRuntime) => (...args: never[]) => unknown }[];
}

/**
 * The errno and message of anything thrown, for a callback's return value,
 * and its details (path, level, layout) for an error made from it.
 */
export function failure(e: unknown): { errno: number; message: string; details: ErrorDetails } {
  if (e instanceof ArrowCDeviceError) return { errno: e.errno, message: e.message, details: e };
  return { errno: EIO, message: e instanceof Error ? e.message : String(e), details: {} };
}

const runtimes = new WeakMap<Core, StreamRuntime>();

/**
 * The stream runtime of a core (made on first use; it takes one table slot).
 *
 * Ownership: the runtime lives as long as the core; nothing to release.
 * @param core - the core (`acd.core`).
 */
export function streamRuntime(core: Core): StreamRuntime {
  let rt = runtimes.get(core);
  if (rt === undefined) {
    rt = new StreamRuntime(core);
    runtimes.set(core, rt);
  }
  return rt;
}

export class StreamRuntime {
  private readonly objects = new Map<Kind, Map<number, Callbacks>>();
  private readonly slots = new Map<Kind, Record<string, number>>();
  private pumpQueued = false;
  private lastKey = 0;
  /** Errors thrown by JS callbacks that had no way to report them (the last 100; tests read them). */
  readonly uncaught: unknown[] = [];
  /** Why a shared callback last refused a struct (returning EINVAL): it is not live. */
  lastRefusal = '';

  constructor(readonly core: Core) {
    for (const kind of Object.keys(KINDS) as Kind[]) this.objects.set(kind, new Map());
    const schedule = core.addFunction(() => this.pumpSoon(), 'vi');
    core.stream.asyncSetScheduler(schedule);
  }

  /** Objects made here and not yet released (streams, handlers, producers, tasks). */
  liveObjects(): number {
    let n = 0;
    for (const m of this.objects.values()) n += m.size;
    return n;
  }

  noteUncaught(e: unknown): void {
    if (this.uncaught.length >= 100) this.uncaught.shift();
    this.uncaught.push(e);
  }

  liveOf(kind: Kind): number {
    return this.objects.get(kind)!.size;
  }

  // ---- structs ----------------------------------------------------------------

  /**
   * Fills the struct of `kind` at ptr with the kind's callbacks and a fresh
   * private_data, and registers `callbacks` under it. Returns the key.
   */
  register(kind: Kind, ptr: number, callbacks: Callbacks): number {
    const spec = KINDS[kind];
    const s = this.core.structs;
    const key = this.newKey();
    const registry = this.objects.get(kind)!;
    if (registry.size === 0) this.acquireSlots(kind);
    registry.set(key, callbacks);
    const slots = this.slots.get(kind)!;
    for (const { field } of spec.fields) s.setPtr(spec.struct, ptr, field, slots[field]);
    s.setPtr(spec.struct, ptr, 'private_data', key);
    return key;
  }

  /** Forgets the object of `key`; the last object of a kind frees its slots. */
  unregister(kind: Kind, key: number): void {
    const registry = this.objects.get(kind)!;
    if (!registry.delete(key)) return;
    if (registry.size === 0) this.releaseSlots(kind);
  }

  /** A key no live object has (0 is NULL, never a key). */
  private newKey(): number {
    for (;;) {
      this.lastKey = (this.lastKey + 1) >>> 0;
      if (this.lastKey !== 0 && ![...this.objects.values()].some((m) => m.has(this.lastKey))) return this.lastKey;
    }
  }

  /** Records why a callback refused a struct; returns EINVAL. */
  refuse(field: string, what: string): number {
    this.lastRefusal = `${field}: the ${what} is not live (${what === 'task' ? 'extracted already' : 'released already'}, or a stale copy)`;
    return EINVAL;
  }

  /** The object behind a struct of `kind`, or undefined (released, or not ours). */
  lookup<T extends Callbacks>(kind: Kind, ptr: number): { key: number; callbacks: T } | undefined {
    const key = this.core.structs.ptr(KINDS[kind].struct, ptr, 'private_data');
    const callbacks = this.objects.get(kind)!.get(key) as T | undefined;
    return callbacks === undefined ? undefined : { key, callbacks };
  }

  /** Whether a struct of `kind` at ptr is one of ours (its private_data is registered). */
  owns(kind: Kind, ptr: number): boolean {
    return this.lookup(kind, ptr) !== undefined;
  }

  /** Marks a struct released the way the spec does: release = NULL (and no stale callbacks). */
  clearStruct(kind: Kind, ptr: number): void {
    const spec = KINDS[kind];
    const s = this.core.structs;
    for (const { field } of spec.fields) s.setPtr(spec.struct, ptr, field, 0);
    s.setPtr(spec.struct, ptr, 'private_data', 0);
  }

  private acquireSlots(kind: Kind): void {
    const slots: Record<string, number> = {};
    for (const { field, signature, make } of KINDS[kind].fields) slots[field] = this.core.addFunction(make(this), signature);
    this.slots.set(kind, slots);
  }

  private releaseSlots(kind: Kind): void {
    const slots = this.slots.get(kind);
    if (slots === undefined) return;
    for (const index of Object.values(slots)) this.core.removeFunction(index);
    this.slots.delete(kind);
  }

  // ---- helpers ------------------------------------------------------------------

  /** A NUL-terminated UTF-8 copy of text in wasm memory (the caller frees it). */
  cString(text: string): number {
    const bytes = new TextEncoder().encode(text);
    const ptr = this.core.alloc(bytes.length + 1);
    this.core.bytes.set(bytes, ptr);
    this.core.bytes[ptr + bytes.length] = 0;
    return ptr;
  }

  /** A copy of bytes in wasm memory (the caller frees it), or 0 for null. */
  bytesCopy(bytes: Uint8Array | null): number {
    if (bytes === null) return 0;
    const ptr = this.core.alloc(Math.max(bytes.length, 1));
    this.core.bytes.set(bytes, ptr);
    return ptr;
  }

  /** Runs the C async pump from a microtask (several calls, one run). */
  pumpSoon(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => this.pump());
  }

  private pump(): void {
    this.pumpQueued = false;
    const s = this.core.stream;
    try {
      this.core.unwinding(() => s.asyncPump(256));
    } catch (e) {
      // Reported by the object cut short; only a failure of that report is uncaught.
      try {
        s.asyncPumpAbort(EIO, describe(e));
      } catch (again) {
        this.noteUncaught(again);
      }
    }
    // Long queues continue after other tasks had their turn.
    if (s.asyncPending() > 0 && !this.pumpQueued) {
      this.pumpQueued = true;
      setTimeout(() => this.pump(), 0);
    }
  }

  /** The counters of the C async objects (csrc: AcdAsyncStats). */
  cAsyncStats(): { producersLive: number; consumersLive: number; tasksLive: number; tasksCreated: number; tasksExtracted: number; tasksDiscarded: number } {
    const out = this.core.alloc(48);
    try {
      this.core.stream.asyncStats(out);
      const v = this.core.view;
      const at = (i: number) => Number(v.getBigInt64(out + i * 8, true));
      return { producersLive: at(0), consumersLive: at(1), tasksLive: at(2), tasksCreated: at(3), tasksExtracted: at(4), tasksDiscarded: at(5) };
    } finally {
      this.core.free(out);
    }
  }
}

// ---- the shared callbacks ---------------------------------------------------------

const u = (p: number) => p >>> 0;

/** What was thrown, as one line ("RuntimeError: ..."). */
function describe(e: unknown): string {
  try {
    return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  } catch {
    return 'an exception that cannot be printed';
  }
}

/** Runs a callback's body: what it throws is noted and becomes its errno code (a callback never throws). */
function guarded(rt: StreamRuntime, body: () => number): number {
  try {
    return body();
  } catch (e) {
    rt.noteUncaught(e);
    return failure(e).errno;
  }
}

/** The same for a callback that returns nothing. */
function guardedVoid(rt: StreamRuntime, body: () => void): void {
  try {
    body();
  } catch (e) {
    rt.noteUncaught(e);
  }
}

/**
 * The release member of a stream or handler: the object's release, then the
 * struct marked released and forgotten (and freed when `free`).
 */
function releaseField(kind: 'arrayStream' | 'deviceArrayStream' | 'handler', free: boolean): KindSpec['fields'][number] {
  return {
    field: 'release', signature: 'vi', make: (rt) => (self: number) => {
      const found = rt.lookup<PullCallbacks | HandlerCallbacks>(kind, u(self));
      if (found === undefined) return;
      guardedVoid(rt, () => found.callbacks.release());
      rt.clearStruct(kind, u(self));
      rt.unregister(kind, found.key);
      if (free) rt.core.free(u(self));
    },
  };
}

function pull(kind: 'arrayStream' | 'deviceArrayStream'): KindSpec {
  const struct: StructName = kind === 'arrayStream' ? 'ArrowArrayStream' : 'ArrowDeviceArrayStream';
  const call = (rt: StreamRuntime, self: number, f: (c: PullCallbacks) => number): number => {
    const found = rt.lookup<PullCallbacks>(kind, u(self));
    if (found === undefined) return EINVAL; // released, or not one of ours
    return guarded(rt, () => f(found.callbacks));
  };
  return {
    struct,
    fields: [
      { field: 'get_schema', signature: 'iii', make: (rt) => (self: number, out: number) => call(rt, self, (c) => c.getSchema(u(out))) },
      { field: 'get_next', signature: 'iii', make: (rt) => (self: number, out: number) => call(rt, self, (c) => c.getNext(u(out))) },
      { field: 'get_last_error', signature: 'ii', make: (rt) => (self: number) => call(rt, self, (c) => c.getLastError()) },
      releaseField(kind, false),
    ],
  };
}

/** A handler callback returning a code; a struct that is not live is refused (EINVAL, the refusal recorded). */
function handlerCall(rt: StreamRuntime, self: number, field: string, f: (c: HandlerCallbacks) => number): number {
  const found = rt.lookup<HandlerCallbacks>('handler', u(self));
  if (found === undefined) return rt.refuse(field, 'handler');
  return guarded(rt, () => f(found.callbacks));
}

/** A producer callback (it returns nothing; a struct that is not live is ignored). */
function producerCall(rt: StreamRuntime, self: number, f: (c: ProducerCallbacks) => void): void {
  const found = rt.lookup<ProducerCallbacks>('producer', u(self));
  if (found === undefined) return;
  guardedVoid(rt, () => f(found.callbacks));
}

const KINDS: Record<Kind, KindSpec> = {
  arrayStream: pull('arrayStream'),
  deviceArrayStream: pull('deviceArrayStream'),
  handler: {
    struct: 'ArrowAsyncDeviceStreamHandler',
    fields: [
      {
        field: 'on_schema', signature: 'iii',
        make: (rt) => (self: number, schema: number) => handlerCall(rt, self, 'on_schema', (c) => c.onSchema(u(schema))),
      },
      {
        field: 'on_next_task', signature: 'iiii',
        make: (rt) => (self: number, task: number, metadata: number) => handlerCall(rt, self, 'on_next_task', (c) => c.onNextTask(u(task), u(metadata))),
      },
      {
        field: 'on_error', signature: 'viiii', make: (rt) => (self: number, code: number, message: number, metadata: number) => {
          const found = rt.lookup<HandlerCallbacks>('handler', u(self));
          if (found === undefined) return;
          guardedVoid(rt, () => found.callbacks.onError(code, u(message), u(metadata)));
        },
      },
      // The consumer allocated the handler: after its release it frees it.
      releaseField('handler', true),
    ],
  },
  producer: {
    struct: 'ArrowAsyncProducer',
    fields: [
      { field: 'request', signature: 'vij', make: (rt) => (self: number, n: bigint) => producerCall(rt, self, (c) => c.request(BigInt(n))) },
      { field: 'cancel', signature: 'vi', make: (rt) => (self: number) => producerCall(rt, self, (c) => c.cancel()) },
    ],
  },
  task: {
    struct: 'ArrowAsyncTask',
    fields: [
      {
        // Exactly once: the task is forgotten before its data is handed out, so
        // a second call (on this struct or any copy) gives EINVAL.
        field: 'extract_data', signature: 'iii', make: (rt) => (self: number, out: number) => {
          const found = rt.lookup<TaskCallbacks>('task', u(self));
          if (found === undefined) return rt.refuse('extract_data', 'task');
          rt.core.structs.setPtr('ArrowAsyncTask', u(self), 'private_data', 0);
          rt.unregister('task', found.key);
          return guarded(rt, () => found.callbacks.extract(u(out)));
        },
      },
    ],
  },
};
