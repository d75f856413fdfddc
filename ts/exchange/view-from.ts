// Importing structs that another wasm module produced in its own memory
// (options.from), view mode: no byte of a buffer is copied. The C validator
// cannot address another memory, so it checks shadow structs in the core's
// memory (one core ArrowArray per foreign node, same lengths, offsets and
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
import type { StructReader } from '../abi/structs.js';
import { copySchemaFrom, named, releaseForeign } from './from.js';
import { Imported, ImportedSchema, type Reader } from './handles.js';
import { checkCpuDeviceArray, LEVELS, levelOf, modeOf, type ForeignSource, type ImportOptions } from './options.js';

/** The foreign window on wasm32 (ACD_FOREIGN_ADDRESS_BASE and _SIZE of csrc/abi/abi.h). */
const WINDOW_BASE = 0xc0000000;
const WINDOW_SIZE = 0x40000000;
/** The deepest array tree shadowed (the JS stack bounds it; the C validator's own limit is deeper). */
const MAX_DEPTH = 256;

/**
 * The window address standing for foreign address `address`. An address past
 * the window (wild: the memory is smaller) stands for its last byte, which
 * is never readable, so a buffer of 0 bytes there is still accepted, as in
 * the core's own memory; a buffer inside a memory larger than the window
 * cannot be checked.
 */
function windowAddress(address: number, memorySize: number, path: string): number {
  if (address < WINDOW_SIZE - 1) return WINDOW_BASE + address;
  if (address < memorySize) {
    throw new ArrowCDeviceError(`${path}: at ${address}, past the first ${WINDOW_SIZE - 1} bytes of the module's memory that view-mode validation reaches; use mode: 'copy', or validate: 'none'`, ENOSYS, path);
  }
  return WINDOW_BASE + WINDOW_SIZE - 1;
}

/**
 * Fills the core ArrowArray at dst (zeroed, or a child struct of a shadow)
 * with a shadow of the foreign ArrowArray at ptr. Struct-level faults that
 * the C validator would find in the struct itself are found here, with its
 * messages: the shadow only carries what the validator reads next.
 */
function shadow(core: Core, s: StructReader, memorySize: number, ptr: number, dst: number, path: string, seen: Set<number>, depth: number): void {
  if (ptr === 0) throw new ArrowCDeviceError(`${path}: expected an array, found NULL`, EINVAL, path);
  const align = s.layout.structs.ArrowArray.align;
  if (ptr % align !== 0) throw new ArrowCDeviceError(`${path}: expected a struct ArrowArray aligned to ${align} bytes, found ${ptr}`, EINVAL, path);
  s.checkRange(ptr, s.size('ArrowArray'), path);
  if (seen.has(ptr)) throw new ArrowCDeviceError(`${path}: the node at ${ptr} is reached twice (the tree is a DAG or has a cycle)`, EINVAL, path);
  if (depth > MAX_DEPTH) throw new ArrowCDeviceError(`${path}: deeper than ${MAX_DEPTH} levels`, EINVAL, path);
  seen.add(ptr);
  if (s.ptr('ArrowArray', ptr, 'release') === 0) throw new ArrowCDeviceError(`${path}: expected a live array, found a released one (release is NULL)`, EINVAL, path);
  const nBuffers = s.i64('ArrowArray', ptr, 'n_buffers');
  const nChildren = s.i64('ArrowArray', ptr, 'n_children');
  const buffers = s.ptr('ArrowArray', ptr, 'buffers');
  const children = s.ptr('ArrowArray', ptr, 'children');
  const dictionary = s.ptr('ArrowArray', ptr, 'dictionary');
  const pointers = (n: number, at: number, field: string) => {
    if (n < 0) throw new ArrowCDeviceError(`${path}.n_${field}: expected a non-negative count, found ${n}`, EINVAL, `${path}.n_${field}`);
    if (n === 0 || at === 0) return;
    if (at % s.layout.pointerSize !== 0) throw new ArrowCDeviceError(`${path}.${field}: expected ${n} pointers aligned to ${s.layout.pointerSize} bytes, found ${at}`, EINVAL, `${path}.${field}`);
    s.checkRange(at, n * s.layout.pointerSize, `${path}.${field}`);
  };
  pointers(nBuffers, buffers, 'buffers');
  pointers(nChildren, children, 'children');
  core.arrayInit(dst, s.i64('ArrowArray', ptr, 'length'), s.i64('ArrowArray', ptr, 'null_count'), s.i64('ArrowArray', ptr, 'offset'),
    nBuffers, nChildren, dictionary !== 0);
  const t = core.structs;
  // NULL pointer arrays stay NULL, for the validator to name (the shadow's own block is freed by its release all the same).
  if (buffers === 0) t.setPtr('ArrowArray', dst, 'buffers', 0);
  if (children === 0) t.setPtr('ArrowArray', dst, 'children', 0);
  const ourBuffers = t.ptr('ArrowArray', dst, 'buffers');
  for (let i = 0; buffers !== 0 && i < nBuffers; i++) {
    const at = s.ptrAt(buffers + i * s.layout.pointerSize);
    core.space.view.setUint32(ourBuffers + i * 4, at === 0 ? 0 : windowAddress(at, memorySize, `${path}.buffers[${i}]`), true);
  }
  const ourChildren = t.ptr('ArrowArray', dst, 'children');
  for (let i = 0; children !== 0 && i < nChildren; i++) {
    shadow(core, s, memorySize, s.ptrAt(children + i * s.layout.pointerSize), t.ptrAt(ourChildren + i * t.layout.pointerSize),
      `${path}.children[${i}]`, seen, depth + 1);
  }
  if (dictionary !== 0) shadow(core, s, memorySize, dictionary, t.ptr('ArrowArray', dst, 'dictionary'), `${path}.dictionary`, seen, depth + 1);
}

/** Validates the foreign ArrowArray at ptr against the (core) schema at level, through a shadow. */
function validateThroughWindow(core: Core, from: ForeignSource, schema: ImportedSchema, ptr: number, level: number): void {
  const memorySize = from.space.memory.buffer.byteLength;
  const own = core.alloc(core.structs.size('ArrowArray'));
  try {
    shadow(core, from.space.structs, memorySize, ptr, own, 'array', new Set(), 0);
    core.withForeignWindow(from.space.memory, Math.min(memorySize, WINDOW_SIZE - 1), () => core.arrayValidate(schema.ptr, own, level, true));
  } finally {
    core.space.release('ArrowArray', own);
    core.free(own);
  }
}

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
  const schema = ownsSchema ? copySchemaFrom(core, from, schemaArg) : schemaArg;
  let keepSchema = false;
  try {
    if (schema.released) throw new ArrowCDeviceError('schema: used after release()', EINVAL);
    const s = space.structs;
    const size = s.size(struct);
    const offset = struct === 'ArrowDeviceArray' ? s.offsetOf('ArrowDeviceArray', 'array') : 0;
    try {
      s.checkRange(ptr, size, struct === 'ArrowDeviceArray' ? 'device array' : 'array');
      if (struct === 'ArrowDeviceArray') checkCpuDeviceArray(s, ptr, ': only CPU arrays can be read from another module');
      checkRelease(from, ptr + offset);
      if (level > LEVELS.none) validateThroughWindow(core, from, schema, ptr + offset, level);
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
        if (ownsSchema) schema.release();
      }
    };
    keepSchema = true;
    return new Imported(space, value, () => read(schema, at, mode, space), cleanup);
  } finally {
    if (ownsSchema && !keepSchema && !schema.released) schema.release();
  }
}
