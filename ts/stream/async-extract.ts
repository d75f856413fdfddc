// Taking one task of the async device stream out of the producer's hands, for
// the TypeScript consumer (async-consumer.ts): extract_data into a fresh
// ArrowDeviceArray (in the memory the stream lives in), checked (its code, a
// live array, the producer's device type) and imported ({ from } the other
// module when the stream is in its memory).

import type * as arrow from 'apache-arrow';
import type { CoreRef } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, errnoName } from '../abi/errors.js';
import { importDeviceBatch } from '../device/exchange.js';
import type { Imported, ImportedSchema } from '../exchange/handles.js';
import type { AsyncCalls } from './async-calls.js';
import type { StreamImportOptions } from './pull.js';

/**
 * Extracts and imports one queued task: `task` is the consumer's copy of the
 * task struct (in calls.space), freed here whatever happens; the producer's
 * device type and the stream's schema are asked for after the extraction.
 * On success the batch is the caller's (in view mode, release the handle);
 * on failure nothing extracted is left unreleased, and the
 * ArrowCDeviceError says why.
 */
export function extractTask(
  acd: CoreRef, calls: AsyncCalls, task: number, deviceType: () => number, schema: () => ImportedSchema, options: StreamImportOptions,
): Imported<arrow.RecordBatch> {
  const s = calls.space.structs;
  const out = calls.alloc(s.size('ArrowDeviceArray'));
  try {
    let code: number;
    try {
      code = calls.extract(task, out);
    } finally {
      calls.free(task);
    }
    if (code !== 0) {
      const refused = calls.refusal();
      const why = refused === '' ? '' : `: ${refused}`;
      const where = calls.from === undefined ? '' : `${calls.from.name}: `;
      throw new ArrowCDeviceError(`${where}extract_data returned ${code} (${errnoName(code)})${why}`, code);
    }
    const arrayAt = out + s.offsetOf('ArrowDeviceArray', 'array');
    if (s.ptr('ArrowArray', arrayAt, 'release') === 0) {
      throw new ArrowCDeviceError('extract_data returned 0 and a released array', EINVAL);
    }
    const type = s.i32('ArrowDeviceArray', out, 'device_type');
    const expected = deviceType();
    if (type !== expected) {
      calls.releaseArray(arrayAt);
      throw new ArrowCDeviceError(`device_type: expected ${expected} (the producer's), found ${type}`, EINVAL);
    }
    try {
      // From another module: copied out (its release called at once) or, in
      // view mode, moved within its memory; either way `out` is left released.
      return importDeviceBatch(acd.core, schema(), out, { ...options, from: calls.from });
    } catch (e) {
      calls.releaseArray(arrayAt); // the import moved nothing: still ours
      throw e;
    }
  } finally {
    calls.free(out);
  }
}
