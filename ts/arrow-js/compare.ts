// Value-by-value comparison of apache-arrow batches: the check behind the
// CLI's round trips and the tests. Values are normalized to plain JSON-like
// data (bigint, NaN and bytes kept distinct) and compared per cell.

import * as arrow from 'apache-arrow';
import { fromArrowBatch } from './arrow-types.js';
import { fieldsEqual, metadataEqual, typeToString, type Field } from '../model/types.js';

/** A cell whose value differs between two batches. */
export interface Mismatch {
  /** The batch's index. */
  readonly batch: number;
  /** The column's name. */
  readonly column: string;
  /** The row. */
  readonly row: number;
  /** The expected value, as text. */
  readonly expected: string;
  /** The value found, as text. */
  readonly found: string;
}

/**
 * A plain value for a cell of any type (nested values included).
 *
 * Ownership: pure; nothing to release.
 * @param v - a cell's value as apache-arrow gives it.
 */
export function normalize(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return { bigint: v.toString() };
  if (typeof v === 'number') return Number.isNaN(v) ? { number: 'NaN' } : Object.is(v, -0) ? { number: '-0' } : v;
  if (typeof v !== 'object') return v;
  if (v instanceof Date) return { date: v.getTime() };
  if (ArrayBuffer.isView(v)) return { bytes: Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) };
  if (v instanceof arrow.Vector) return Array.from({ length: v.length }, (_, i) => normalize(v.get(i)));
  if (v instanceof Map) return { map: [...v.entries()].map(([k, x]) => [normalize(k), normalize(x)]) };
  const row = v as { toJSON?: () => unknown; [Symbol.iterator]?: unknown };
  if (typeof row.toJSON === 'function' && isMapRow(v)) {
    return { map: [...(v as Iterable<[unknown, unknown]>)].map(([k, x]) => [normalize(k), normalize(x)]) };
  }
  if (typeof row.toJSON === 'function') {
    const json = row.toJSON() as Record<string, unknown>;
    return Object.fromEntries(Object.entries(json).map(([k, x]) => [k, normalize(x)]));
  }
  return v;
}

function isMapRow(v: object): boolean {
  return v.constructor?.name === 'MapRow';
}

const show = (v: unknown) => JSON.stringify(v) ?? 'undefined';

/**
 * The columns of two batches whose fields differ (names, types, nullability, metadata).
 *
 * Ownership: pure; nothing to release.
 * @param expected - the expected batch.
 * @param found - the batch found.
 */
export function schemaDifferences(expected: arrow.RecordBatch, found: arrow.RecordBatch): string[] {
  const a = fromArrowBatch(expected);
  const b = fromArrowBatch(found);
  const out: string[] = [];
  if (a.fields.length !== b.fields.length) out.push(`expected ${a.fields.length} columns, found ${b.fields.length}`);
  a.fields.forEach((f: Field, i) => {
    const g = b.fields[i];
    if (g !== undefined && !fieldsEqual(f, g)) out.push(`column ${i} '${f.name}': expected ${describe(f)}, found ${describe(g)}`);
  });
  if (!metadataEqual(a.metadata, b.metadata)) out.push('the schema metadata differs');
  return out;
}

function describe(f: Field): string {
  return `${f.name}: ${typeToString(f.type)}${f.nullable ? '' : ' not null'}`;
}

/**
 * Compares two batches cell by cell; returns at most `limit` mismatches.
 *
 * Ownership: pure; nothing to release.
 * @param expected - the expected batch.
 * @param found - the batch found.
 * @param batch - the batch's index, for the mismatches.
 * @param limit - how many differences at most.
 */
export function compareBatches(expected: arrow.RecordBatch, found: arrow.RecordBatch, batch: number, limit = 10): Mismatch[] {
  const out: Mismatch[] = [];
  if (expected.numRows !== found.numRows) {
    out.push({ batch, column: '*', row: -1, expected: `${expected.numRows} rows`, found: `${found.numRows} rows` });
    return out;
  }
  for (const [c, f] of expected.schema.fields.entries()) {
    const a = expected.getChildAt(c);
    const b = found.getChildAt(c);
    if (a === null || b === null) {
      out.push({ batch, column: f.name, row: -1, expected: 'a column', found: 'none' });
      continue;
    }
    for (let i = 0; i < a.length && out.length < limit; i++) {
      const x = show(normalize(a.get(i)));
      const y = show(normalize(b.get(i)));
      if (x !== y) out.push({ batch, column: f.name, row: i, expected: x, found: y });
    }
  }
  return out;
}
