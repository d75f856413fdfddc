// Taking ownership of structs a producer wrote into the core's memory: check
// the address, validate in C at the asked level, move the struct into this
// library's own memory (the source is marked released), read it, and hand
// out a handle. On failure nothing is moved or released: the caller still
// owns what it passed. The readers (raw here, apache-arrow in ts/arrow-js/)
// plug in as a Reader.

import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { readRaw, type ImportMode } from '../model/raw.js';
import type { Field, Schema } from '../model/types.js';
import { copyArrayFrom, copySchemaFrom, importArrayCopyFrom, named, releaseForeign, releaseProducer, throughWindow } from './from.js';
import { Imported, ImportedSchema, recordSchema, type ReadSchema, type Reader } from './handles.js';
import { importedSchemaField } from './schema-cache.js';
import { checkCpuDeviceArray, LEVELS, levelOf, modeOf, type ForeignSource, type ImportOptions, type RawImport } from './options.js';
import { importArrayViewFrom } from './view-from.js';

export type { ReadSpace, Reader } from './handles.js';

/** The raw reader: any type of the spec, as its C buffers and children. */
export const rawReader: Reader<RawImport> = (s, ptr, mode, space) => ({ field: s.field, array: readRaw(space, ptr, s.field.type, mode) });

/**
 * Takes ownership of the ArrowSchema at ptr: validates it, moves it into
 * this library's memory (the source is marked released) and reads it. On
 * failure nothing is moved or released: the caller still owns the struct.
 */
export function importSchema(core: Core, ptr: number, from?: ForeignSource): ImportedSchema {
  if (from !== undefined) {
    const schema = copySchemaFrom(core, from, ptr);
    try {
      releaseForeign(from, 'ArrowSchema', ptr);
    } catch (e) {
      schema.release();
      throw e;
    }
    return schema;
  }
  core.structs.checkRange(ptr, core.structs.size('ArrowSchema'), 'schema');
  return schemaHandle(core, ptr, core.schemaImport(ptr));
}

/**
 * The handle of a schema the core just moved from ptr into own (its key
 * still where the import left it). When reading it fails, the struct is
 * moved back: the caller still owns what it passed.
 */
function schemaHandle(core: Core, ptr: number, own: number): ImportedSchema {
  try {
    return new ImportedSchema(core, own, importedSchemaField(core, own));
  } catch (e) {
    core.schemaMove(own, ptr);
    core.free(own);
    throw e;
  }
}

/**
 * Imports the ArrowArray (or CPU ArrowDeviceArray) at ptr with read; the
 * schema is an ImportedSchema, or an address whose struct is imported too
 * (and owned by the result).
 */
export function importArray<T>(core: Core, schemaArg: number | ImportedSchema, ptr: number, struct: 'ArrowArray' | 'ArrowDeviceArray',
  options: ImportOptions, read: Reader<T>): Imported<T> {
  if (options.from !== undefined) {
    if (modeOf(options) === 'view') return importArrayViewFrom(core, options.from, schemaArg, ptr, struct, options, read);
    return throughWindow(options.from)
      ? importArrayCopyFrom(core, options.from, schemaArg, ptr, struct, options, read)
      : importArrayFrom(core, options.from, schemaArg, ptr, struct, options, read);
  }
  const mode = modeOf(options);
  const level = levelOf(options);
  core.structs.checkRange(ptr, core.structs.size(struct), struct);
  const arrayPtr = struct === 'ArrowDeviceArray' ? ptr + core.structs.offsetOf('ArrowDeviceArray', 'array') : ptr;
  if (struct === 'ArrowDeviceArray') checkCpuDeviceArray(core.structs, ptr, '; a device array not on the CPU goes through importDeviceBatch or importDeviceRaw');

  // A schema given by its address is validated and moved with the array, in
  // one call (neither moves unless both are valid); at MINIMAL the array is
  // checked for device memory first, so the two go apart.
  if (typeof schemaArg === 'number' && level !== LEVELS.minimal) {
    core.structs.checkRange(schemaArg, core.structs.size('ArrowSchema'), 'schema');
    const [ownSchema, ownArray] = core.batchImport(schemaArg, arrayPtr, level);
    const undo = () => {
      core.arrayMove(ownArray, arrayPtr);
      core.free(ownArray);
      core.schemaMove(ownSchema, schemaArg);
      core.free(ownSchema);
    };
    let schema: ReadSchema;
    try {
      schema = new BatchSchema(importedSchemaField(core, ownSchema));
    } catch (e) {
      undo();
      throw e;
    }
    // The schema is the result's, freed with the array: no handle (nor finalizer entry) of its own.
    return handOut(core, schema, ownArray, mode, read, () => {
      core.space.release('ArrowSchema', ownSchema);
      core.free(ownSchema);
    }, undo);
  }

  return withSchema(core, schemaArg, (schema, ownsSchema) => {
    // The ImportedSchema was validated on import and is owned here: no second schema walk.
    // From DEFAULT on the validator names device memory where it finds it;
    // at MINIMAL, check that no buffer is device memory before reading one.
    if (level === LEVELS.minimal) {
      core.arrayValidate(schema.ptr, arrayPtr, level, true);
      core.checkDevice(core.device.arrayCheckHost(schema.ptr, arrayPtr), 'array');
    }
    // Validated (again at NONE after MINIMAL: only that it is live), allocated and moved in one call.
    const own = core.arrayImport(schema.ptr, arrayPtr, level === LEVELS.minimal ? LEVELS.none : level, true);
    return handOut(core, schema, own, mode, read, ownsSchema ? () => schema.release() : null, () => {
      core.arrayMove(own, arrayPtr);
      core.free(own);
    });
  });
}

/** The schema of a batch imported with its array: read, and owned by the result (no handle of its own). */
class BatchSchema implements ReadSchema {
  constructor(readonly field: Field) {}

  get schema(): Schema {
    return recordSchema(this.field);
  }
}

/**
 * Reads the library's array `own` and hands it out with what else the result
 * owns (releaseSchema frees the schema, when it does). When reading fails,
 * undo moves back what the import moved, and nothing is released. Built
 * before any handle exists: on failure the caller is the only owner.
 */
function handOut<T>(core: Core, schema: ReadSchema, own: number, mode: ImportMode, read: Reader<T>,
  releaseSchema: (() => void) | null, undo: () => void): Imported<T> {
  const build = () => read(schema, own, mode, core);
  let value: T;
  try {
    value = build();
  } catch (e) {
    undo();
    throw e;
  }
  const free = () => {
    core.space.release('ArrowArray', own);
    core.free(own);
    releaseSchema?.();
  };
  if (mode === 'copy') {
    free();
    return new Imported(core.space, value, null, () => {});
  }
  return new Imported(core.space, value, build, free);
}

/**
 * importArray from another module's memory in copy mode, when its arrays
 * cannot be validated through the window (from.ts throughWindow): the schema (unless
 * an ImportedSchema is given) and the array are copied into the core, the
 * copy is imported as usual, then the producer's structs are released
 * through its table. On failure the producer's structs are untouched.
 */
function importArrayFrom<T>(core: Core, from: ForeignSource, schemaArg: number | ImportedSchema, ptr: number,
  struct: 'ArrowArray' | 'ArrowDeviceArray', options: ImportOptions, read: Reader<T>): Imported<T> {
  modeOf(options);
  levelOf(options);
  const ownsSchema = typeof schemaArg === 'number';
  const schema = ownsSchema ? copySchemaFrom(core, from, schemaArg) : schemaArg;
  try {
    if (schema.released) throw new ArrowCDeviceError('schema: used after release()', EINVAL);
    const own = copyArrayFrom(core, from, schema, ptr, struct);
    let result: Imported<T>;
    try {
      result = importArray(core, schema, own, 'ArrowArray', { ...options, from: undefined }, read);
    } catch (e) {
      core.space.release('ArrowArray', own);
      throw named(from, e); // as view mode and the copy's own errors are: the module's name first
    } finally {
      core.free(own);
    }
    return releaseProducer(from, result, struct, ptr, ownsSchema ? schemaArg : null);
  } finally {
    // The copy of the schema was read into the result; the core's copy can go.
    if (ownsSchema) schema.release();
  }
}

/**
 * Runs body with the schema of an import: an ImportedSchema as it is, or an
 * address whose struct is imported first (ownsSchema: body's result owns it,
 * or body releases it). When body throws, a schema imported here is moved
 * back into the caller's struct: the caller still owns what it passed.
 */
export function withSchema<T>(core: Core, schemaArg: number | ImportedSchema,
  body: (schema: ImportedSchema, ownsSchema: boolean) => T): T {
  const ownsSchema = typeof schemaArg === 'number';
  const schema = ownsSchema ? importSchema(core, schemaArg) : schemaArg;
  try {
    if (schema.released) throw new ArrowCDeviceError('schema: used after release()', EINVAL);
    return body(schema, ownsSchema);
  } catch (e) {
    if (ownsSchema) {
      core.schemaMove(schema.ptr, schemaArg);
      schema.release();
    }
    throw e;
  }
}

/**
 * Takes ownership of an ArrowArray of any type of the spec and imports it
 * as a raw array (its C buffers and children, as views or copies by mode):
 * the lossless path, for types apache-arrow lacks too.
 */
export function importRaw(core: Core, schema: number | ImportedSchema, array: number, options: ImportOptions = {}): Imported<RawImport> {
  return importArray(core, schema, array, 'ArrowArray', options, rawReader);
}
