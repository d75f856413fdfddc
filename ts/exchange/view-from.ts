// Importing structs that another wasm module produced in its own memory
// (options.from), view mode: no byte of a buffer is copied. The C validator
// cannot address another memory, so it checks a shadow of the foreign tree
// in the core's memory (foreign-shadow.ts: the same lengths, offsets and
// counts) whose buffer pointers are foreign-window addresses
// (csrc/abi/window.c): its range checks compare with the other memory's
// size and its content reads fetch the other memory's bytes. Then the
// foreign struct is moved within its own memory (into a struct allocated by
// the module's allocator; the caller's is marked released, as the spec's
// move; or, for a module without an allocator and options.inPlace, owned
// where it is), and read as typed arrays over the other memory, until release(),
// which calls the producer's release through the module's table. On failure
// nothing is moved or released: the caller still owns what it passed.

import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../abi/errors.js';
import { validateThroughWindow } from './foreign-shadow.js';
import { named, releaseForeign, schemaForImport, type ImportSchema } from './from.js';
import { Imported, ImportedSchema, type Reader } from './handles.js';
import { checkCpuDeviceArray, LEVELS, levelOf, modeOf, type ForeignSource, type ImportOptions } from './options.js';

/** The foreign table holds a function at the struct's release: checked before anything is moved. */
function checkRelease(from: ForeignSource, at: number): void {
  const fn = from.space.structs.ptr('ArrowArray', at, 'release');
  if (fn === 0) throw new ArrowCDeviceError('array: expected a live array, found a released one', EINVAL);
  if (from.space.table !== null && from.space.table.signatureOf(fn) === null) {
    throw new ArrowCDeviceError(`array.release: ${fn} is not a function in the module's table`, EINVAL);
  }
}

/**
 * importArray from another module's memory in view mode: validated through
 * the window, moved within the module's memory, read as views over it.
 */
export function importArrayViewFrom<T>(core: Core, from: ForeignSource, schemaArg: number | ImportedSchema, ptr: number,
  struct: 'ArrowArray' | 'ArrowDeviceArray', options: ImportOptions, read: Reader<T>): Imported<T> {
  const mode = modeOf(options);
  if (mode !== 'view') throw new ArrowCDeviceError(`mode: expected 'view' here, found '${mode}'`, EINVAL);
  const level = levelOf(options);
  const space = from.space;
  const allocator = space.allocator;
  if (space.shared) {
    throw new ArrowCDeviceError(`${from.name}: its memory is shared (a SharedArrayBuffer): another agent may write it at any time, so views over it cannot keep what ` +
      `the validator checked; use mode: 'copy' (the copy is validated after it is taken)`, EINVAL);
  }
  const inPlace = options.inPlace === true;
  if (allocator === null && !inPlace) {
    throw new ArrowCDeviceError(`${from.name}: mode 'view' moves the struct within the module's memory and needs its allocator: pass malloc and free to acd.foreign(), ` +
      `or pass inPlace: true (the struct is owned where it is: keep what holds it alive until release()), or use mode: 'copy'`, ENOSYS);
  }
  const ownsSchema = typeof schemaArg === 'number';
  if (!ownsSchema && schemaArg.released) throw new ArrowCDeviceError('schema: used after release()', EINVAL);
  // Given as an address, the schema is copied for this import only: the reader keeps its field.
  const schema = ownsSchema ? schemaForImport(core, from, schemaArg) : schemaArg;
  let keepSchema = false;
  try {
    const s = space.structs;
    const size = s.size(struct);
    const offset = struct === 'ArrowDeviceArray' ? s.offsetOf('ArrowDeviceArray', 'array') : 0;
    try {
      s.checkRange(ptr, size, struct === 'ArrowDeviceArray' ? 'device array' : 'array');
      if (struct === 'ArrowDeviceArray') checkCpuDeviceArray(s, ptr, ': only CPU arrays can be read from another module');
      checkRelease(from, ptr + offset);
      if (level > LEVELS.none) validateThroughWindow(core, from, schema.ptr, schema.field.type, ptr + offset, level, ownsSchema ? (schema as ImportSchema).taken : 0);
    } catch (e) {
      throw named(from, e);
    }

    // The spec's move, within the module's memory: the caller's struct is
    // marked released. In place (no allocator): owned where it is.
    const moved = inPlace ? ptr : allocator!.alloc(size);
    const unmove = () => {
      if (inPlace) return;
      space.bytes.copyWithin(ptr, moved, moved + size);
      allocator!.free(moved);
    };
    if (!inPlace) {
      space.bytes.copyWithin(moved, ptr, ptr + size);
      s.setPtr('ArrowArray', ptr + offset, 'release', 0);
    }
    const at = moved + offset;
    let value: T;
    try {
      value = read(schema, at, mode, space);
    } catch (e) {
      unmove();
      throw named(from, e);
    }
    if (ownsSchema) {
      try {
        releaseForeign(from, 'ArrowSchema', schemaArg);
      } catch (e) {
        space.release('ArrowArray', at);
        if (!inPlace) allocator!.free(moved);
        throw e;
      }
    }
    const cleanup = () => {
      try {
        releaseForeign(from, 'ArrowArray', at);
      } finally {
        if (!inPlace) allocator!.free(moved);
        if (ownsSchema) (schema as ImportSchema).release();
      }
    };
    keepSchema = true;
    return new Imported(space, value, () => read(schema, at, mode, space), cleanup);
  } finally {
    if (ownsSchema && !keepSchema) (schema as ImportSchema).release();
  }
}
