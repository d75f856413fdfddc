// Producing from apache-arrow: schemas, fields, vectors, record batches and
// tables written into ArrowSchema / ArrowArray structs in the core's memory
// (through the raw model: apache-arrow Data → RawArray → C). The C core
// allocates and owns everything (release frees it).

import * as arrow from 'apache-arrow';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { exportField, exportFieldInto, exportInto, exportWith } from '../exchange/export.js';
import type { ForeignModule } from '../foreign/module.js';
import type { ExportedArray, ExportedSchema } from '../exchange/handles.js';
import { writeRaw } from '../model/raw.js';
import { recordBatchField, type DataType, type Field, type Schema } from '../model/types.js';
import { fromArrowData } from './arrow-data.js';
import { arrowWriter } from './arrow-describe.js';
import { fromArrowBatch, fromArrowField, fromArrowSchema } from './arrow-types.js';
import { batchSchemaPart } from './schema-parts.js';

/**
 * Initializes the ArrowArray at `ptr` (its old content is ignored) with a copy
 * of apache-arrow data of the given type. On success the struct owns every
 * buffer and child; on failure nothing stays allocated and the struct is released.
 */
export function writeArray(core: Core, ptr: number, data: arrow.Data, type: DataType): void {
  writeRaw(core, ptr, fromArrowData(data, type));
}

/** Exports a schema, field or type (apache-arrow or the model) as an ArrowSchema (`into` another module's memory). */
export function exportSchema(core: Core, x: arrow.Schema | arrow.Field | Schema | Field, into?: ForeignModule): ExportedSchema {
  return into !== undefined ? exportFieldInto(into, toModelField(x)) : exportField(core, toModelField(x));
}

/** The struct field of a record batch (its columns as children). */
export function batchField(batch: arrow.RecordBatch): Field {
  return recordBatchField(fromArrowBatch(batch));
}

/**
 * Exports apache-arrow data of field's type as an ArrowArray or (CPU)
 * ArrowDeviceArray with its ArrowSchema; `onto`: see exportWith.
 */
export function exportData(core: Core, data: arrow.Data, field: Field, struct: 'ArrowArray' | 'ArrowDeviceArray',
  onto?: (schema: number, array: number) => void): ExportedArray {
  return exportWith(core, field, struct, arrowWriter(data, field.type), onto);
}

/**
 * Exports a record batch as a struct ArrowArray with its ArrowSchema (`into`
 * another module's memory); its schema is described once per apache-arrow
 * Schema (schema-parts.ts).
 */
export function exportBatch(core: Core, batch: arrow.RecordBatch, into?: ForeignModule): ExportedArray {
  const part = batchSchemaPart(batch);
  const field = part.field;
  if (into !== undefined) return exportInto(into, field, fromArrowData(batch.data, field.type), 'ArrowArray');
  return exportWith(core, part, 'ArrowArray', arrowWriter(batch.data, field.type));
}

/** Exports a single-chunk vector (or Data) as an ArrowArray with its ArrowSchema. */
export function exportVector(core: Core, vector: arrow.Vector | arrow.Data, name = '', into?: ForeignModule): ExportedArray {
  const data = vector instanceof arrow.Data ? vector : onlyChunk(vector);
  const field: Field = { ...fromArrowField(new arrow.Field(name, data.type, true)), name };
  if (into !== undefined) return exportInto(into, field, fromArrowData(data, field.type), 'ArrowArray');
  return exportData(core, data, field, 'ArrowArray');
}

/** Exports every batch of a table (one ExportedArray each); on failure none stays. */
export function exportTable(core: Core, table: arrow.Table, into?: ForeignModule): ExportedArray[] {
  const out: ExportedArray[] = [];
  try {
    for (const batch of table.batches) out.push(exportBatch(core, batch, into));
  } catch (e) {
    out.forEach((h) => h.release());
    throw e;
  }
  return out;
}

function toModelField(x: arrow.Schema | arrow.Field | Schema | Field): Field {
  if (x instanceof arrow.Schema) return recordBatchField(fromArrowSchema(x));
  if (x instanceof arrow.Field) return fromArrowField(x);
  if ('fields' in x) return recordBatchField(x);
  return x;
}

function onlyChunk(vector: arrow.Vector): arrow.Data {
  if (vector.data.length !== 1) {
    throw new ArrowCDeviceError(`vector: expected one chunk, found ${vector.data.length}; export its chunks (vector.data) one by one`, EINVAL);
  }
  return vector.data[0];
}
