// Taking one task of the async device stream out of the producer's hands, for
// the TypeScript consumer (async-consumer.ts): extract_data into a fresh
// ArrowDeviceArray, checked (its code, a live array, the producer's device
// type) and imported. Also the guard around every call into the producer's
// side.

import type * as arrow from 'apache-arrow';
import type { Core, CoreRef } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, EIO, errnoName } from '../abi/errors.js';
import { importDeviceBatch } from '../device/exchange.js';
import type { Imported, ImportedSchema } from '../exchange/handles.js';
import type { StreamImportOptions } from './pull.js';
import { streamRuntime } from './runtime.js';

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

/**
 * Extracts and imports one queued task: `task` is the consumer's copy of the
 * task struct, freed here whatever happens; the producer's device type and
 * the stream's schema are asked for after the extraction. On success the
 * batch is the caller's (in view mode, release the handle); on failure
 * nothing extracted is left unreleased, and the ArrowCDeviceError says why.
 */
export function extractTask(
  acd: CoreRef, core: Core, task: number, deviceType: () => number, schema: () => ImportedSchema, options: StreamImportOptions,
): Imported<arrow.RecordBatch> {
  const out = core.alloc(core.structs.size('ArrowDeviceArray'));
  try {
    const rt = streamRuntime(core);
    rt.lastRefusal = '';
    let code: number;
    try {
      code = callForeign(core, 'extract_data', () => core.stream.asyncTaskCallExtractData(task, out));
    } finally {
      core.free(task);
    }
    if (code !== 0) {
      // A task made here says why it refused (a stale copy); a foreign one
      // cannot; the trampoline says why it did not call extract_data at all.
      const refused = rt.lastRefusal !== '' ? rt.lastRefusal : core.stream.streamLastError();
      const why = refused === '' ? '' : `: ${refused}`;
      throw new ArrowCDeviceError(`extract_data returned ${code} (${errnoName(code)})${why}`, code);
    }
    const arrayAt = out + core.structs.offsetOf('ArrowDeviceArray', 'array');
    if (core.structs.ptr('ArrowArray', arrayAt, 'release') === 0) {
      throw new ArrowCDeviceError('extract_data returned 0 and a released array', EINVAL);
    }
    const type = core.structs.i32('ArrowDeviceArray', out, 'device_type');
    const expected = deviceType();
    if (type !== expected) {
      core.arrayRelease(arrayAt);
      throw new ArrowCDeviceError(`device_type: expected ${expected} (the producer's), found ${type}`, EINVAL);
    }
    try {
      return importDeviceBatch(acd.core, schema(), out, options);
    } catch (e) {
      core.arrayRelease(arrayAt); // the import moved nothing: still ours
      throw e;
    }
  } finally {
    core.free(out);
  }
}
