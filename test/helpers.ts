// Shared test helpers: one loaded core per test file, and round trips that
// check values, ownership and the live byte count.
import { afterEach, expect } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { ArrowCDeviceError } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import { compareBatches, normalize } from '../ts/arrow-js/compare.js';
import type { ForeignModule } from '../ts/foreign/module.js';

/**
 * Registers an afterEach that expects the live bytes of acd() back where the
 * test's last mark() found them; returns mark. (A test that never marks
 * checks against the last mark before it.) mark() returns the count.
 */
export function bytesMark(acd: () => ArrowCDevice): () => number {
  let start = 0;
  afterEach(() => {
    expect(acd().bytesAllocated()).toBe(start);
  });
  return () => (start = acd().bytesAllocated());
}

export type Mode = 'copy' | 'view';
export const MODES: Mode[] = ['copy', 'view'];

let shared: Promise<ArrowCDevice> | undefined;
export function core(): Promise<ArrowCDevice> {
  shared ??= ArrowCDevice.load();
  return shared;
}

/** The plain values of a vector, for toEqual. */
export function values(v: arrow.Vector): unknown[] {
  return Array.from({ length: v.length }, (_, i) => normalize(v.get(i)));
}

/** Exports a vector, imports it back in `mode`, checks values and that nothing leaked. */
export function roundtripVector(acd: ArrowCDevice, v: arrow.Vector, mode: Mode): arrow.Vector {
  const start = acd.bytesAllocated();
  const exported = acd.exportVector(v, 'column');
  const imported = acd.importVector(exported.schema, exported.array, { mode });
  // The import moved the array out of the exported struct.
  expect(acd.core.structs.ptr('ArrowArray', exported.array, 'release')).toBe(0);
  const back = imported.value;
  expect(back.type.toString()).toBe(v.type.toString());
  expect(values(back)).toEqual(values(v));
  // arrow-js leaves a sliced Null vector's count at -1 (no bitmap to count); it is its length.
  expect(back.nullCount).toBe(arrow.DataType.isNull(v.type) ? v.length : v.nullCount);
  // A view-mode vector reads wasm memory that release() frees: hand back a copy.
  const kept = mode === 'view' ? new arrow.Vector(back.data.map(copyData)) : back;
  imported.release();
  exported.release();
  expect(acd.bytesAllocated()).toBe(start);
  return kept;
}

/** Data with every buffer copied out of whatever memory it views. */
function copyData(d: arrow.Data): arrow.Data {
  const copy = <T extends { slice(): T } | undefined>(b: T): T => b?.slice() as T;
  const dictionary = d.dictionary === undefined ? undefined : new arrow.Vector(d.dictionary.data.map(copyData));
  return new arrow.Data(d.type, d.offset, d.length, d.nullCount,
    { 0: copy(d.valueOffsets), 1: copy(d.values), 2: copy(d.nullBitmap), 3: copy(d.typeIds) } as never,
    d.children.map(copyData), dictionary, d.variadicBuffers.map((b) => b.slice()));
}

/** Exports a batch as a device array, imports it back, compares cell by cell. */
export function roundtripBatch(acd: ArrowCDevice, batch: arrow.RecordBatch, mode: Mode): void {
  const start = acd.bytesAllocated();
  const exported = acd.exportDeviceBatch(batch);
  const imported = acd.importDeviceBatch(exported.schema, exported.array, { mode });
  expect(compareBatches(batch, imported.value, 0)).toEqual([]);
  expect(imported.value.schema.metadata).toEqual(batch.schema.metadata);
  imported.release();
  exported.release();
  expect(acd.bytesAllocated()).toBe(start);
}

export const GOLD = join(__dirname, '..', '..', 'shared', 'testdata', 'arrow-testing');

/**
 * Gold files written before Arrow checked these values: date64 values that are
 * not whole days, decimals wider than their precision. Arrow C++'s ValidateFull
 * rejects them, and so does 'full' here (issue 9, item 7): tests that validate
 * every gold file fully read these at 'default'. test/issue9-lifetime.test.ts
 * checks that 'full' refuses each of them for that reason.
 */
export const INVALID_AT_FULL = /^(0\.14\.1|1\.0\.0-littleendian)\/generated_(datetime|decimal|decimal256)(\.|$)/;
/** The content errors of those files at 'full'. */
export const FULL_CONTENT_ERROR = /(date64 value \d+ is -?\d+ ms, not a whole number of days|decimal(128|256)\(\d+, \d+\) value \d+ has more than \d+ digits)/;
/** 'full', or 'default' for the gold files that 'full' rightly refuses. */
export const goldLevel = (name: string): 'default' | 'full' => (INVALID_AT_FULL.test(name) ? 'default' : 'full');

/** Every IPC gold file: [folder/name, path]. */
export function goldFiles(): [string, string][] {
  const out: [string, string][] = [];
  for (const folder of readdirSync(GOLD, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    for (const name of readdirSync(join(GOLD, folder)).sort()) {
      if (name.endsWith('.arrow_file') || name.endsWith('.stream')) out.push([`${folder}/${name}`, join(GOLD, folder, name)]);
    }
  }
  return out;
}

/** The ArrowCDeviceError f throws (anything else, or nothing, fails the test). */
export function libraryError(f: () => unknown): ArrowCDeviceError {
  try {
    f();
  } catch (e) {
    if (e instanceof ArrowCDeviceError) return e;
    throw e;
  }
  throw new Error('expected an ArrowCDeviceError');
}

/** `other` (a second core) seen by `acd` as another module: its memory, table and allocator, named 'other'. */
export function coreAsModule(acd: ArrowCDevice, other: ArrowCDevice): ForeignModule {
  return acd.foreign({ memory: other.memory, table: other.core.table, malloc: (n) => other.core.alloc(n), free: (p) => other.core.free(p) }, 'other');
}

/** Two cores, the second seen by the first as another module (coreAsModule). */
export async function twoCores(): Promise<{ acd: ArrowCDevice; other: ArrowCDevice; from: ForeignModule }> {
  const acd = await ArrowCDevice.load();
  const other = await ArrowCDevice.load();
  return { acd, other, from: coreAsModule(acd, other) };
}
