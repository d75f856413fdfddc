// The schema part of a record batch's export (ts/model/flat.ts SchemaPart:
// the model field and its descriptor words and strings), described once per
// apache-arrow Schema and reused by every batch that has it, as the batches
// of a table or a stream do. An entry is used only while what it was built
// from is unchanged: the same Field objects, the same column types (taken
// from the batch's Data: fromArrowBatch), and the same metadata (apache-arrow
// keeps it in Maps, which a program may change).

import * as arrow from 'apache-arrow';
import { schemaPart, type SchemaPart } from '../model/flat.js';
import { recordBatchField } from '../model/types.js';
import { fromArrowBatch } from './arrow-types.js';

interface Entry {
  readonly part: SchemaPart;
  readonly fields: readonly arrow.Field[];
  readonly types: readonly arrow.DataType[];
  /** Every metadata Map the field was read from, with its entries then (null: it was empty). */
  readonly maps: readonly (ReadonlyMap<string, string> | null | undefined)[];
  readonly entries: readonly (string[] | null)[];
}

const parts = new WeakMap<arrow.Schema, Entry>();

/** The schema part of a batch's export: its schema's, described before when nothing it was built from changed. */
export function batchSchemaPart(batch: arrow.RecordBatch): SchemaPart {
  const schema = batch.schema;
  const columns = batch.data.children;
  const entry = parts.get(schema);
  if (entry !== undefined && unchanged(entry, schema, columns)) return entry.part;
  const part = schemaPart(recordBatchField(fromArrowBatch(batch)));
  const types = schema.fields.map((f, i) => columns[i]?.type ?? f.type);
  const maps: (ReadonlyMap<string, string> | null | undefined)[] = [schema.metadata];
  schema.fields.forEach((f, i) => {
    maps.push(f.metadata);
    nestedMaps(types[i], maps);
  });
  parts.set(schema, { part, fields: [...schema.fields], types, maps, entries: maps.map(snapshot) });
  return part;
}

function unchanged(e: Entry, schema: arrow.Schema, columns: readonly arrow.Data[]): boolean {
  const { fields, types, maps, entries } = e;
  const now = schema.fields;
  if (now.length !== fields.length || schema.metadata !== maps[0]) return false;
  for (let i = 0; i < fields.length; i++) {
    if (now[i] !== fields[i] || (columns[i]?.type ?? now[i].type) !== types[i]) return false;
  }
  for (let i = 0; i < maps.length; i++) {
    const m = maps[i];
    const was = entries[i];
    if ((m?.size ?? 0) !== (was === null ? 0 : was.length / 2)) return false;
    if (was !== null && !sameEntries(m!, was)) return false;
  }
  return true;
}

/** The metadata Maps of the fields inside a type (children, and a dictionary's value type). */
function nestedMaps(type: arrow.DataType, out: (ReadonlyMap<string, string> | null | undefined)[]): void {
  if (arrow.DataType.isDictionary(type)) {
    nestedMaps(type.dictionary, out);
    return;
  }
  for (const child of (type.children ?? []) as arrow.Field[]) {
    out.push(child.metadata);
    nestedMaps(child.type, out);
  }
}

function snapshot(m: ReadonlyMap<string, string> | null | undefined): string[] | null {
  if (m == null || m.size === 0) return null;
  const out: string[] = [];
  for (const [k, v] of m) out.push(k, v);
  return out;
}

function sameEntries(m: ReadonlyMap<string, string>, was: readonly string[]): boolean {
  let i = 0;
  for (const [k, v] of m) {
    if (k !== was[i] || v !== was[i + 1]) return false;
    i += 2;
  }
  return true;
}
