// The import routes the fuzzer drives: each takes the run's (mutated) input,
// imports it, reads every value of the result and releases everything. A
// route throws what the library threw; the runner classifies it.

import * as arrow from 'apache-arrow';
import type { ArrowCDevice, DevicePolicy, ValidationLevel } from '../api.js';
import type { ImportMode } from '../arrow-js/import.js';
import { rawValues } from '../model/raw-values.js';
import type { ForeignModule } from '../foreign/module.js';
import type { Arena } from './arena.js';
import type { Producers } from './producers.js';

export const ROUTES = ['batch', 'vector', 'raw', 'device', 'arrayStream', 'deviceStream', 'async', 'foreign'] as const;
export type Route = (typeof ROUTES)[number];

export interface RouteInput {
  acd: ArrowCDevice;
  producers: Producers;
  level: ValidationLevel;
  mode: ImportMode;
  arena: Arena;
  /** device: the policy; streams: the number of batches and where get_next fails. */
  policy: DevicePolicy;
  /** Streams and async: the struct the consumer takes (made and mutated by the runner). */
  stream: number;
  producer: number;
  task: number;
  batches: number;
  failAt: number;
  /** The async route's time bound (ms): past it the run is a hang. */
  timeoutMs: number;
  /** The foreign route: the core's own memory, table and allocator seen as another module's. */
  foreign: ForeignModule;
}

/** Reads every value of a batch (apache-arrow's getters), as a user would. */
export function readBatch(batch: arrow.RecordBatch): number {
  let n = 0;
  for (let c = 0; c < batch.numCols; c++) n += readVector(batch.getChildAt(c)!);
  return n;
}

export function readVector(v: arrow.Vector): number {
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v.get(i);
    // Binary values are byte arrays: their length is read, not every byte.
    if (ArrayBuffer.isView(x)) n += (x as Uint8Array).length;
    else if (x !== null && typeof x === 'object' && Symbol.iterator in (x as object)) for (const _ of x as Iterable<unknown>) n++;
    n++;
  }
  return n;
}

export function runSync(route: Route, r: RouteInput): void {
  const { acd, level: validate, mode } = r;
  const a = r.arena;
  switch (route) {
    case 'batch': {
      const h = acd.importBatch(a.schemaRoot, a.arrayRoot, { mode, validate });
      try { readBatch(h.value); } finally { h.release(); }
      return;
    }
    case 'vector': {
      const h = acd.importVector(a.schemaRoot, a.arrayRoot, { mode, validate });
      try { readVector(h.value); } finally { h.release(); }
      return;
    }
    case 'raw': {
      const h = acd.importRaw(a.schemaRoot, a.arrayRoot, { mode, validate });
      try { rawValues(h.value.array); } finally { h.release(); }
      return;
    }
    case 'device': {
      if (r.policy === 'keep') {
        const resident = acd.importDeviceBatch(a.schemaRoot, a.arrayRoot, { mode, validate, device: 'keep' });
        try {
          const h = resident.toHost({ mode, validate });
          try { readBatch(h.value); } finally { h.release(); }
        } finally {
          resident.release();
        }
        return;
      }
      const h = acd.importDeviceBatch(a.schemaRoot, a.arrayRoot, { mode, validate, device: r.policy });
      try { readBatch(h.value); } finally { h.release(); }
      return;
    }
    case 'foreign': {
      // Through the path of another module's memory ({ from }): copy mode, or view mode with the
      // validator reading that memory through the foreign window (csrc/abi/window.c).
      const h = acd.importBatch(a.schemaRoot, a.arrayRoot, { mode, validate, from: r.foreign });
      try { readBatch(h.value); } finally { h.release(); }
      return;
    }
    case 'arrayStream': case 'deviceStream': {
      const reader = route === 'arrayStream'
        ? acd.importArrayStream(r.stream, { mode, validate })
        : acd.importDeviceArrayStream(r.stream, { mode, validate, device: r.policy === 'reject' ? 'reject' : 'copy' });
      try {
        for (const batch of reader) readBatch(batch);
      } finally {
        reader.release();
      }
      return;
    }
    default:
      throw new Error(`route ${route} is asynchronous`);
  }
}

/**
 * The async route: the library's consumer (asyncConsumer) fed by the
 * fuzzer's producer, which calls the handler as the spec says (on_schema,
 * on_next_task within the credit, the end, release).
 */
export async function runAsync(r: RouteInput): Promise<void> {
  const { acd, producers } = r;
  const core = acd.core;
  const s = core.stream;
  const sc = producers.script!;
  const consumer = acd.asyncConsumer({ mode: r.mode, validate: r.level, window: 2 });
  const handler = consumer.handler;
  core.structs.setPtr('ArrowAsyncDeviceStreamHandler', handler, 'producer', r.producer);
  const drive = (async () => {
    await Promise.resolve();
    const schema = core.alloc(core.structs.size('ArrowSchema'));
    let code: number;
    try {
      core.bytes.copyWithin(schema, sc.schema.schemaRoot, sc.schema.schemaRoot + core.structs.size('ArrowSchema'));
      core.structs.setPtr('ArrowSchema', schema, 'private_data', producers.runTag('on_schema schema'));
      code = s.asyncHandlerCallOnSchema(handler, schema);
    } finally {
      core.free(schema); // moved out by the consumer, or refused (still ours: its release is a count)
    }
    for (let i = 0; code === 0 && i < sc.batches && !sc.cancelled; i++) {
      // A consumer whose request never arrives (a corrupted producer struct
      // sends it elsewhere): after a few turns of the event loop, give up.
      for (let turn = 0; sc.credit <= 0n && !sc.cancelled && turn < 3; turn++) {
        await new Promise<void>((w) => { sc.wake = w; setTimeout(w, 0); });
      }
      if (sc.cancelled) break;
      if (sc.credit <= 0n) {
        s.asyncHandlerCallOnError(handler, 5, 0, 0);
        code = 5;
        break;
      }
      sc.credit--;
      code = s.asyncHandlerCallOnNextTask(handler, r.task, 0);
      await Promise.resolve();
    }
    if (code === 0 && !sc.cancelled) s.asyncHandlerCallOnNextTask(handler, 0, 0);
    s.asyncHandlerCallRelease(handler);
  })();
  // A trap in the producer's calls ends the consumer's loop (it would wait forever).
  let driveError: unknown = null;
  const driven = drive.catch((e: unknown) => { driveError = e; consumer.cancel(); });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(driveError ?? new HangError(`the async stream did not finish within ${r.timeoutMs} ms`)), r.timeoutMs);
  });
  const body = async () => {
    let error: unknown = null;
    try {
      for await (const batch of consumer) readBatch(batch);
    } catch (e) {
      error = e;
    } finally {
      consumer.release();
      sc.cancelled = true;
      sc.wake?.();
    }
    await driven;
    if (driveError !== null) throw driveError;
    await consumer.done;
    if (error !== null) throw error;
  };
  try {
    await Promise.race([body(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class HangError extends Error {
  override readonly name = 'HangError';
}
