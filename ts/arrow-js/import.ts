// Consuming into apache-arrow: ArrowArray structs in the core's memory, after
// the C validator has checked them, read into apache-arrow Data, Vectors and
// RecordBatches (through the raw model: C → RawArray → apache-arrow).

import * as arrow from 'apache-arrow';
import type { Core } from '../abi/core.js';
import type { ReadSpace } from '../exchange/import.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import type { Imported, ImportedSchema, ReadSchema } from '../exchange/handles.js';
import { importArray, type Reader } from '../exchange/import.js';
import type { ImportOptions } from '../exchange/options.js';
import { isShared } from '../abi/address-space.js';
import type { SlotScan } from '../abi/slot-scan.js';
import { copyRaw, readRaw, type ImportMode } from '../model/raw.js';
import type { DataType, Field } from '../model/types.js';
import { checkForArrow, convertedType, toArrowData, toRecordBatch, type Conversion } from './arrow-data.js';
import { toArrowSchema, toArrowType } from './arrow-types.js';
import { viewData } from './arrow-view.js';

export type { ImportMode } from '../model/raw.js';

/**
 * Reads a (validated) ArrowArray tree into apache-arrow Data: views of wasm
 * memory in view mode, copies in copy mode. Types apache-arrow lacks throw
 * unless `convert` names them. validatedFully: the tree was validated at
 * 'full' (the slot-by-slot reference checks are then not repeated). slots:
 * the core's scans, which make those checks (null: TypeScript's loops).
 */
export function readData(space: ReadSpace, ptr: number, type: DataType, mode: ImportMode, convert: readonly Conversion[] = [],
  validatedFully = false, arrowType?: arrow.DataType, slots: SlotScan | null = null): arrow.Data {
  // The common kinds straight from the structs (arrow-view.ts); any other tree, or any fault, the general way.
  const direct = arrowType !== undefined ? buildArrow('array', () => viewData(space, ptr, type, arrowType, mode === 'copy', slots, !validatedFully)) : null;
  if (direct !== null) return direct;
  if (mode === 'copy' && slots !== null && !isShared(space.structs.view.buffer)) {
    // Checked where the buffers are, by the core's scans (no copy of their
    // own to scan), then copied: the copies are the same bytes (nothing runs
    // in between). Not in a shared memory, which another agent may write
    // after the check.
    const views = readRaw(space, ptr, type, 'view');
    buildArrow('array', () => checkForArrow(views, convert, 'array', validatedFully, slots));
    const raw = copyRaw(views);
    // Its slots checked: the per-node checks run again over the copy, not the passes over every slot.
    return buildArrow('array', () => toArrowData(raw, convert, 'array', true, arrowType));
  }
  const raw = readRaw(space, ptr, type, mode);
  return buildArrow('array', () => toArrowData(raw, convert, 'array', validatedFully, arrowType, slots));
}

/**
 * The apache-arrow types of an imported schema, with the conversions applied:
 * built once per schema field (a cached, frozen one is shared by every import
 * of the same schema, ts/exchange/schema-cache.ts) and conversion list, so
 * that the batches of a stream share one Schema, as an IPC reader's do.
 */
interface ArrowTypes {
  type: arrow.DataType;
  /** For a struct: the record batch schema, whose fields the struct type shares. */
  schema: arrow.Schema | null;
}
const built = new WeakMap<Field, Map<string, ArrowTypes>>();
/** The types the last import without conversions used, checked before the maps (as schema-cache.ts's last entry). */
let lastField: Field | null = null;
let lastTypes: ArrowTypes | null = null;

function arrowTypesOf(field: Field, convert: readonly Conversion[] = []): ArrowTypes {
  if (field === lastField && convert.length === 0) return lastTypes!;
  const key = convert.length === 0 ? '' : convert.join(',');
  let byConvert = built.get(field);
  const hit = byConvert?.get(key);
  if (hit !== undefined) return key === '' ? rememberTypes(field, hit) : hit;
  let out: ArrowTypes;
  if (field.type.kind === 'struct') {
    const schema = toArrowSchema({ fields: field.type.children.map((f) => ({ ...f, type: convertedType(f.type, convert) })), metadata: field.metadata });
    out = { type: new arrow.Struct(schema.fields), schema };
  } else {
    out = { type: toArrowType(convertedType(field.type, convert)), schema: null };
  }
  // Only a frozen field cannot change after this: others are built every time.
  if (Object.isFrozen(field)) {
    if (byConvert === undefined) built.set(field, byConvert = new Map());
    byConvert.set(key, out);
    if (key === '') rememberTypes(field, out);
  }
  return out;
}

/** Makes a frozen field's types (no conversions) the last ones used. */
function rememberTypes(field: Field, types: ArrowTypes): ArrowTypes {
  lastField = field;
  lastTypes = types;
  return types;
}

/**
 * arrowTypesOf, or null for a type without an apache-arrow counterpart:
 * toArrowData then refuses it with its path and the way out.
 */
function arrowTypesOrNull(field: Field, convert?: readonly Conversion[]): ArrowTypes | null {
  try {
    return arrowTypesOf(field, convert);
  } catch (e) {
    if (e instanceof ArrowCDeviceError) return null;
    throw e;
  }
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

/** Reads a moved struct array as a record batch, with the options' conversions (checked by the core's scans, `slots`). */
export function batchReader(options: ImportOptions, slots: SlotScan | null): Reader<arrow.RecordBatch> {
  return (s, ptr, mode, space) => {
    const types = arrowTypesOrNull(s.field, options.convert);
    const data = readData(space, ptr, s.field.type, mode, options.convert, options.validate === 'full', types?.type, slots);
    // types is null only when toArrowData would have refused the type: built again here, it throws the same.
    return buildArrow('array', () => toBatch(s, data, (types ?? arrowTypesOf(s.field, options.convert)).schema));
  };
}

/**
 * Takes ownership of the struct ArrowArray at `array` (and of the schema when
 * given as an address) and imports it as a record batch. On failure nothing
 * is moved or released.
 */
export function importBatch(core: Core, schema: number | ImportedSchema, array: number, options: ImportOptions = {}): Imported<arrow.RecordBatch> {
  return importArray(core, schema, array, 'ArrowArray', options, batchReader(options, core.slotScan));
}

/** Takes ownership of an ArrowArray of any type and imports it as a Vector. */
export function importVector(core: Core, schema: number | ImportedSchema, array: number, options: ImportOptions = {}): Imported<arrow.Vector> {
  return importArray(core, schema, array, 'ArrowArray', options,
    (s, ptr, mode, space) => {
      const types = arrowTypesOrNull(s.field, options.convert);
      const data = readData(space, ptr, s.field.type, mode, options.convert, options.validate === 'full', types?.type, core.slotScan);
      return buildArrow('array', () => new arrow.Vector([data]));
    });
}

/** apache-arrow's record batch for an imported struct array and its schema. */
function toBatch(s: ReadSchema, data: arrow.Data, schema: arrow.Schema | null): arrow.RecordBatch {
  if (data.nullCount > 0) throw new ArrowCDeviceError('array: a record batch cannot have top-level nulls', EINVAL);
  // The getter throws unless the schema is a struct (a record batch's), whose apache-arrow Schema `schema` then is.
  if (s.field.type.kind !== 'struct') s.schema;
  return toRecordBatch(schema!, data as arrow.Data<arrow.Struct>);
}
