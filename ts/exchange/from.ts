// Importing structs that another wasm module produced in its own memory
// (options.from), copy mode (view mode: view-from.ts). The schema is copied
// into the core in one pass (foreign-schema.ts) and validated there. The array
// is validated through the foreign window as in view mode, then its buffers
// are copied straight out of the other memory by the raw reader (one
// allocation per batch), and the producer's structs are released through its
// table. A shared memory (another agent may write it after the check) or one
// larger than the window is copied into the core first instead, and the copy
// validated and imported like any struct of the core's own. On failure
// nothing is released: the caller still owns what it passed.

import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, withContext } from '../abi/errors.js';
import { readRaw, writeRaw } from '../model/raw.js';
import type { Field, Schema } from '../model/types.js';
import { copySchemaTree, lastCopyOf, rememberCopy } from './foreign-schema.js';
import { validateThroughWindow } from './foreign-shadow.js';
import { WINDOW_SIZE } from './foreign-walk.js';
import { Imported, ImportedSchema, recordSchema, type ReadSchema, type Reader } from './handles.js';
import { importedSchemaField, readSchemaField } from './schema-cache.js';
import { checkCpuDeviceArray, LEVELS, levelOf, modeOf, type ForeignSource, type ImportOptions } from './options.js';

/**
 * Copies the foreign ArrowSchema at ptr into the core and validates the
 * copy; the foreign struct is left as it was (the caller releases it).
 */
export function copySchemaFrom(core: Core, from: ForeignSource, ptr: number): ImportedSchema {
  let own: number;
  let metadata: boolean;
  try {
    ({ root: own, metadata } = copySchemaTree(core, from, ptr));
  } catch (e) {
    throw named(from, e);
  }
  try {
    return new ImportedSchema(core, own, checkedField(core, own, metadata));
  } catch (e) {
    core.space.release('ArrowSchema', own);
    core.free(own);
    throw named(from, e);
  }
}

/** The schema of one import from another module, given as an address (schemaForImport). */
export interface ImportSchema extends ReadSchema {
  /** Its copy in the core, which the C validator checks the array against. */
  readonly ptr: number;
  /** The bytes of the core's scratch area the copy takes (0: allocated, an ImportedSchema). */
  readonly taken: number;
  release(): void;
}

/**
 * The schema of one import from another module, given as an address: copied
 * into the core's scratch area when it fits (nothing is allocated, nothing
 * to release; valid until the next import), else into an ImportedSchema. A
 * copy whose key is in the schema cache is a schema validated before
 * (equal keys, equal trees) and is not validated again, unless it has
 * metadata (whose key is its size in bytes as the C reader finds it). A
 * tree of the same bytes as the scratch area's last validated copy is not
 * copied: that copy serves (lastCopyOf).
 */
export function schemaForImport(core: Core, from: ForeignSource, ptr: number): ImportSchema {
  const last = lastCopyOf(core, from, ptr);
  if (last !== null) return new CopiedSchema(last.field, last.root, last.taken, null);
  let copy;
  try {
    copy = copySchemaTree(core, from, ptr, core.shadowScratch);
  } catch (e) {
    throw named(from, e);
  }
  if (copy.taken === 0) {
    let schema: ImportedSchema;
    try {
      schema = new ImportedSchema(core, copy.root, checkedField(core, copy.root, copy.metadata));
    } catch (e) {
      core.space.release('ArrowSchema', copy.root);
      core.free(copy.root);
      throw named(from, e);
    }
    return new CopiedSchema(schema.field, schema.ptr, 0, schema);
  }
  let field: Field;
  try {
    field = checkedField(core, copy.root, copy.metadata);
  } catch (e) {
    throw named(from, e);
  }
  rememberCopy(core, copy, field);
  return new CopiedSchema(field, copy.root, copy.taken, null);
}

/**
 * The field of a schema copied from another module, validated: unless its
 * key is that of a schema validated before (then its field is found by the
 * key's id), or it has metadata (whose key is its size in bytes as the C
 * reader finds it: always validated).
 */
function checkedField(core: Core, copy: number, metadata: boolean): Field {
  if (metadata) {
    core.schemaValidate(copy);
    return readSchemaField(core, copy);
  }
  core.schemaCheck(copy);
  return importedSchemaField(core, copy);
}

/** An ImportSchema (a class: an object literal with a getter costs microseconds to make). */
class CopiedSchema implements ImportSchema {
  constructor(readonly field: Field, readonly ptr: number, readonly taken: number, private readonly owner: ImportedSchema | null) {}

  get schema(): Schema {
    return recordSchema(this.field);
  }

  release(): void {
    this.owner?.release();
  }
}

/**
 * Copies the foreign ArrowArray (or the array of an ArrowDeviceArray on the
 * CPU) at ptr, of the imported schema's type, into a new core ArrowArray,
 * whose address is returned; the foreign struct is left as it was.
 */
export function copyArrayFrom(core: Core, from: ForeignSource, schema: ImportedSchema, ptr: number,
  struct: 'ArrowArray' | 'ArrowDeviceArray'): number {
  const s = from.space.structs;
  s.checkRange(ptr, s.size(struct), struct);
  let at = ptr;
  if (struct === 'ArrowDeviceArray') {
    try {
      checkCpuDeviceArray(s, ptr, ': only CPU arrays can be read from another module');
    } catch (e) {
      throw named(from, e);
    }
    at = ptr + s.offsetOf('ArrowDeviceArray', 'array');
  }
  if (s.ptr('ArrowArray', at, 'release') === 0) throw named(from, new ArrowCDeviceError('array: expected a live array, found a released one', EINVAL));
  let raw;
  try {
    raw = readRaw(from.space, at, schema.field.type, 'copy');
  } catch (e) {
    throw named(from, e);
  }
  const own = core.alloc(core.structs.size('ArrowArray'));
  try {
    writeRaw(core, own, raw);
  } catch (e) {
    core.free(own);
    throw e;
  }
  return own;
}

/**
 * Whether arrays of `from` are validated through the foreign window: not
 * when its memory is shared (another agent could change what was checked
 * before it is copied) or larger than the window.
 */
export function throughWindow(from: ForeignSource): boolean {
  return !from.space.shared && from.space.memory.buffer.byteLength < WINDOW_SIZE;
}

/**
 * importArray from another module's memory in copy mode, for a module whose
 * arrays are validated through the window (throughWindow): the array is
 * checked there, its buffers copied out of the other memory by the reader,
 * then the producer's structs are released through its table.
 */
export function importArrayCopyFrom<T>(core: Core, from: ForeignSource, schemaArg: number | ImportedSchema, ptr: number,
  struct: 'ArrowArray' | 'ArrowDeviceArray', options: ImportOptions, read: Reader<T>): Imported<T> {
  const mode = modeOf(options);
  const level = levelOf(options);
  const ownsSchema = typeof schemaArg === 'number';
  if (!ownsSchema && schemaArg.released) throw new ArrowCDeviceError('schema: used after release()', EINVAL);
  const schema = ownsSchema ? schemaForImport(core, from, schemaArg) : schemaArg;
  try {
    const s = from.space.structs;
    let value: T;
    try {
      s.checkRange(ptr, s.size(struct), struct);
      if (struct === 'ArrowDeviceArray') checkCpuDeviceArray(s, ptr, ': only CPU arrays can be read from another module');
      const at = struct === 'ArrowDeviceArray' ? ptr + s.offsetOf('ArrowDeviceArray', 'array') : ptr;
      if (s.ptr('ArrowArray', at, 'release') === 0) throw new ArrowCDeviceError('array: expected a live array, found a released one', EINVAL);
      if (level > LEVELS.none) validateThroughWindow(core, from, schema.ptr, schema.field.type, at, level, ownsSchema ? (schema as ImportSchema).taken : 0);
      value = read(schema, at, mode, from.space);
    } catch (e) {
      throw named(from, e);
    }
    // Only JS memory is kept: the handle has nothing to release.
    return releaseProducer(from, new Imported(core.space, value, null, () => {}), struct, ptr, ownsSchema ? schemaArg : null);
  } finally {
    // The copy of the schema was read into the result; the core's copy can go.
    if (ownsSchema) (schema as ImportSchema).release();
  }
}

/**
 * Releases the producer's structs (the array, and the schema when the import
 * took it) through its table once their content is the result's; when that
 * fails, the result is released too, and the error thrown.
 */
export function releaseProducer<T>(from: ForeignSource, result: Imported<T>, struct: 'ArrowArray' | 'ArrowDeviceArray', ptr: number,
  schemaPtr: number | null): Imported<T> {
  try {
    releaseForeign(from, struct, ptr);
    if (schemaPtr !== null) releaseForeign(from, 'ArrowSchema', schemaPtr);
  } catch (e) {
    result.release();
    throw e;
  }
  return result;
}

/** Prefixes the module's name to the library's errors about its structs. */
export function named(from: ForeignSource, e: unknown): unknown {
  return e instanceof ArrowCDeviceError ? withContext(e, from.name) : e;
}

/**
 * Releases a foreign struct through its table once its content was copied.
 * A release that cannot be called (not a function of the right kind) is an
 * error: the copy is dropped by the caller, and the struct is marked released.
 */
export function releaseForeign(from: ForeignSource, struct: 'ArrowSchema' | 'ArrowArray' | 'ArrowDeviceArray', ptr: number): void {
  const code = from.space.release(struct, ptr);
  if (code !== 0) {
    throw new ArrowCDeviceError(`${from.name}: ${struct === 'ArrowSchema' ? 'schema' : 'array'}.release: not a function that can be called as void(struct*); the struct was marked released`, code);
  }
}
