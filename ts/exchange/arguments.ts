// The facade's argument checks: a value of the wrong kind (a BigInt or a
// negative address, a Table where a batch belongs) is a TypeError that names
// the method, the argument and what to pass, before anything is read.

import * as arrow from 'apache-arrow';
import { ImportedSchema } from './handles.js';

function described(value: unknown): string {
  if (typeof value === 'bigint') return `the bigint ${value}n (pass Number(${value}n): addresses are numbers)`;
  if (typeof value === 'number') return String(value);
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return `an object (${(value as object).constructor?.name ?? 'no class'})`;
  return `a ${typeof value}`;
}

/** An address in wasm memory: a non-negative safe integer. */
export function checkAddress(method: string, name: string, value: unknown): void {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return;
  // A wasm export's i32 result is signed: an address of 2 GiB or more comes back negative.
  const signed = typeof value === 'number' && Number.isInteger(value) && value < 0 && value >= -(2 ** 31)
    ? ` (a wasm export's i32 result for an address of 2 GiB or more is negative: pass ${value} >>> 0, that is ${value >>> 0})` : '';
  throw new TypeError(`${method}: ${name}: expected an address in wasm memory (a non-negative integer), found ${described(value)}${signed}`);
}

/** A schema argument: an address or an ImportedSchema. */
export function checkSchemaArgument(method: string, value: unknown): void {
  if (value instanceof ImportedSchema) return;
  if (typeof value === 'object' && value !== null) {
    throw new TypeError(`${method}: schema: expected an address in wasm memory or an ImportedSchema (from importSchema), found ${described(value)}`);
  }
  checkAddress(method, 'schema', value);
}

/** An apache-arrow RecordBatch (a Table gets the hint to pass its batches). */
export function checkBatchArgument(method: string, value: unknown): void {
  if (value instanceof arrow.RecordBatch) return;
  if (value instanceof arrow.Table) {
    throw new TypeError(`${method}: batch: expected an apache-arrow RecordBatch, found a Table: pass one of table.batches, or use exportTable for all of them`);
  }
  throw new TypeError(`${method}: batch: expected an apache-arrow RecordBatch, found ${described(value)}`);
}

/** The (schema, array) pair of an import by addresses. */
export function checkPointers(method: string, schema: unknown, array: unknown, arrayName = 'array'): void {
  checkSchemaArgument(method, schema);
  checkAddress(method, arrayName, array);
}
