// The round trip of raw arrays through the C Device Data Interface, without
// apache-arrow: what `arrow-c-device roundtrip` does for integration JSON and
// for IPC that apache-arrow cannot read (run-end encoded, list views, ...).
// Each batch is exported as an ArrowSchema + ArrowDeviceArray (CPU), checked
// by the C validator, moved into a fresh ArrowArray, imported back and
// compared value by value with what was exported.

import type { ArrowCDevice } from './api.js';
import type { Mismatch } from './compare.js';
import { writeSchema } from './export.js';
import { constants } from './generated/layout.js';
import { readField } from './import.js';
import { batchField } from './integration.js';
import type { IntegrationFile } from './json/read.js';
import { readRaw, writeRaw, type RawArray } from './raw.js';
import { rawValues } from './raw-values.js';
import { fieldsEqual, metadataEqual, typeToString, typesEqual, type Field } from './types.js';

export interface RawRoundtripSummary {
  ok: boolean;
  file: string;
  mode: 'copy' | 'view';
  batches: number;
  rows: number;
  columns: number;
  bytesLeaked: number;
  mismatches: Mismatch[];
  errors: string[];
}

/** Mismatches reported per batch at most. */
const LIMIT = 10;

/** JSON text of a plain value that tells -0 from 0. */
function show(v: unknown): string {
  return JSON.stringify(v, (_, x: unknown) => (typeof x === 'number' && Object.is(x, -0) ? '-0' : x)) ?? 'undefined';
}

const describeField = (f: Field) => `${f.name}: ${typeToString(f.type)}${f.nullable ? '' : ' not null'}`;

/** The differences between the exported and the imported schema, as mismatches of column '(schema)'. */
function schemaMismatches(expected: Field, found: Field, batch: number): Mismatch[] {
  const out: Mismatch[] = [];
  const mismatch = (what: string, e: string, f: string) => out.push({ batch, column: '(schema)', row: -1, expected: `${what}${e}`, found: f });
  if (!metadataEqual(expected.metadata, found.metadata)) mismatch('schema metadata ', show([...(expected.metadata ?? [])]), show([...(found.metadata ?? [])]));
  const a = expected.type.kind === 'struct' ? expected.type.children : [];
  const b = found.type.kind === 'struct' ? found.type.children : [];
  if (a.length !== b.length) mismatch('', `${a.length} columns`, `${b.length} columns`);
  a.forEach((f, i) => {
    const g = b[i];
    if (g !== undefined && !fieldsEqual(f, g)) mismatch(`column ${i} `, describeField(f), `${describeField(g)} (or their metadata differ)`);
  });
  return out;
}

/** Column-by-column differences of two batches (struct raw arrays of the same schema). */
function batchMismatches(expected: RawArray, found: RawArray, fields: readonly Field[], batch: number): Mismatch[] {
  const out: Mismatch[] = [];
  if (expected.length !== found.length) {
    return [{ batch, column: '*', row: -1, expected: `${expected.length} rows`, found: `${found.length} rows` }];
  }
  fields.forEach((f, k) => {
    const a = expected.children[k];
    const b = found.children[k];
    if (out.length >= LIMIT) return;
    if (a === undefined || b === undefined) {
      out.push({ batch, column: f.name, row: -1, expected: 'a column', found: 'none' });
      return;
    }
    if (!typesEqual(a.type, b.type) || a.length !== b.length) {
      out.push({ batch, column: f.name, row: -1, expected: `${typeToString(a.type)} of length ${a.length}`, found: `${typeToString(b.type)} of length ${b.length}` });
      return;
    }
    if (a.nullCount >= 0 && b.nullCount >= 0 && a.nullCount !== b.nullCount) {
      out.push({ batch, column: f.name, row: -1, expected: `null count ${a.nullCount}`, found: `null count ${b.nullCount}` });
    }
    const x = rawValues(a, `column '${f.name}'`);
    const y = rawValues(b, `column '${f.name}'`);
    for (let i = 0; i < x.length && out.length < LIMIT; i++) {
      const e = show(x[i]);
      const g = show(y[i]);
      if (e !== g) out.push({ batch, column: f.name, row: i, expected: e, found: g });
    }
  });
  return out;
}

/**
 * Sends every batch of `file` through the C Device Data Interface and back:
 * writeSchema + writeRaw into an ArrowSchema and a CPU ArrowDeviceArray,
 * arrayValidate at `validate` (0 none ... 3 full, contents included),
 * arrayMove into a fresh ArrowArray, readRaw in `mode`, then a comparison of
 * schema and values with the batch. Everything allocated is released, also
 * after a failure; bytesLeaked is what the core still holds at the end
 * (0 when all is well). Never throws for a bad batch: errors are collected.
 */
export function roundtripRaw(acd: ArrowCDevice, file: IntegrationFile, name: string, mode: 'copy' | 'view',
  validate: 0 | 1 | 2 | 3): RawRoundtripSummary {
  const core = acd.core;
  const s = core.structs;
  const start = acd.bytesAllocated();
  const mismatches: Mismatch[] = [];
  const errors: string[] = [];
  const field = batchField(file.schema);
  const released = (struct: 'ArrowSchema' | 'ArrowArray', ptr: number) => s.ptr(struct, ptr, 'release') === 0;

  file.batches.forEach((batch, b) => {
    let schema = 0;
    let device = 0;
    let moved = 0;
    let array = 0;
    try {
      schema = core.alloc(s.size('ArrowSchema'));
      device = core.alloc(s.size('ArrowDeviceArray'));
      moved = core.alloc(s.size('ArrowArray'));
      array = device + s.offsetOf('ArrowDeviceArray', 'array');
      writeSchema(core, schema, field);
      writeRaw(core, array, batch);
      core.deviceArrayInitDevice(device, constants.ARROW_DEVICE_CPU, -1);
      core.arrayValidate(schema, array, validate);
      core.arrayMove(array, moved);
      if (!released('ArrowArray', array)) throw new Error('arrayMove left the source array unreleased');
      mismatches.push(...schemaMismatches(field, readField(s, schema), b));
      // In view mode the buffers are views of the moved array: compare before releasing it.
      const found = readRaw(core, moved, batch.type, mode, `batch ${b}`);
      mismatches.push(...batchMismatches(batch, found, file.schema.fields, b));
    } catch (e) {
      errors.push(`batch ${b}: ${(e as Error).message}`);
    } finally {
      if (moved !== 0 && !released('ArrowArray', moved)) core.arrayRelease(moved);
      if (array !== 0 && !released('ArrowArray', array)) core.arrayRelease(array);
      if (schema !== 0 && !released('ArrowSchema', schema)) core.schemaRelease(schema);
      for (const ptr of [moved, device, schema]) if (ptr !== 0) core.free(ptr);
    }
  });
  const bytesLeaked = acd.bytesAllocated() - start;
  return {
    ok: mismatches.length === 0 && errors.length === 0 && bytesLeaked === 0,
    file: name, mode,
    batches: file.batches.length,
    rows: file.batches.reduce((n, batch) => n + batch.length, 0),
    columns: file.schema.fields.length,
    bytesLeaked, mismatches, errors,
  };
}
