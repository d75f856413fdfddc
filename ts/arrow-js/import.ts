// Consuming into apache-arrow: ArrowArray structs in the core's memory, after
// the C validator has checked them, read into apache-arrow Data, Vectors and
// RecordBatches (through the raw model: C → RawArray → apache-arrow).

import * as arrow from 'apache-arrow';
import type { Core } from '../abi/core.js';
import type { ReadSpace } from '../exchange/import.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import type { Imported, ImportedSchema } from '../exchange/handles.js';
import { importArray, type Reader } from '../exchange/import.js';
import type { ImportOptions } from '../exchange/options.js';
import { readRaw, type ImportMode } from '../model/raw.js';
import type { DataType } from '../model/types.js';
import { convertedType, toArrowData, toRecordBatch, type Conversion } from './arrow-data.js';
import { toArrowSchema } from './arrow-types.js';

export type { ImportMode } from '../model/raw.js';

/**
 * Reads a (validated) ArrowArray tree into apache-arrow Data: views of wasm
 * memory in view mode, copies in copy mode. Types apache-arrow lacks throw
 * unless `convert` names them. validatedFully: the tree was validated at
 * 'full' (the slot-by-slot reference checks are then not repeated).
 */
export function readData(space: ReadSpace, ptr: number, type: DataType, mode: ImportMode, convert: readonly Conversion[] = [],
  validatedFully = false): arrow.Data {
  const raw = readRaw(space, ptr, type, mode);
  return buildArrow('array', () => toArrowData(raw, convert, 'array', validatedFully));
}

/**
 * Runs an apache-arrow construction step over data this library has read
 * within bounds. Below 'full' the data may still break apache-arrow's own
 * assumptions (a child shorter than its parent, offsets out of order), and it
 * throws a RangeError or TypeError: that becomes an ArrowCDeviceError whose
 * `cause` is the original, so that a fuzzer can still tell it apart. Other
 * exceptions (ours, or a ReferenceError of a genuine bug) pass unchanged.
 */
export function buildArrow<T>(what: string, build: () => T): T {
  try {
    return build();
  } catch (e) {
    if (!(e instanceof RangeError || e instanceof TypeError)) throw e;
    const error = new ArrowCDeviceError(`${what}: apache-arrow cannot build it (${e.name}: ${e.message})`, EINVAL);
    Object.defineProperty(error, 'cause', { value: e, enumerable: false });
    throw error;
  }
}

/** Reads a moved struct array as a record batch, with the options' conversions. */
export function batchReader(options: ImportOptions): Reader<arrow.RecordBatch> {
  return (s, ptr, mode, space) => {
    const data = readData(space, ptr, s.field.type, mode, options.convert, options.validate === 'full');
    return buildArrow('array', () => toBatch(s, data, options.convert));
  };
}

/**
 * Takes ownership of the struct ArrowArray at `array` (and of the schema when
 * given as an address) and imports it as a record batch. On failure nothing
 * is moved or released.
 */
export function importBatch(core: Core, schema: number | ImportedSchema, array: number, options: ImportOptions = {}): Imported<arrow.RecordBatch> {
  return importArray(core, schema, array, 'ArrowArray', options, batchReader(options));
}

/** Takes ownership of an ArrowArray of any type and imports it as a Vector. */
export function importVector(core: Core, schema: number | ImportedSchema, array: number, options: ImportOptions = {}): Imported<arrow.Vector> {
  return importArray(core, schema, array, 'ArrowArray', options,
    (s, ptr, mode, space) => {
      const data = readData(space, ptr, s.field.type, mode, options.convert, options.validate === 'full');
      return buildArrow('array', () => new arrow.Vector([data]));
    });
}

/** apache-arrow's record batch for an imported struct array and its schema. */
function toBatch(s: ImportedSchema, data: arrow.Data, convert: readonly Conversion[] = []): arrow.RecordBatch {
  if (data.nullCount > 0) throw new ArrowCDeviceError('array: a record batch cannot have top-level nulls', EINVAL);
  const { fields, metadata } = s.schema;
  const schema = toArrowSchema({ fields: fields.map((f) => ({ ...f, type: convertedType(f.type, convert) })), metadata });
  return toRecordBatch(schema, data as arrow.Data<arrow.Struct>);
}
