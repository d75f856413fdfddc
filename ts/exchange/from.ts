// Importing structs that another wasm module produced in its own memory
// (options.from), copy mode (view mode: view-from.ts). The C validator reads only the core's memory,
// so the foreign tree is first copied into it: the schema node by node (its
// strings and metadata byte for byte, no node reached twice), the array by
// the per-type buffer rules of the raw reader, every read bounds-checked
// against the foreign memory. The copy is then validated and imported like
// any struct of the core's own, and the producer's structs are released
// through the foreign table. On failure nothing is released: the caller
// still owns what it passed.

import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, withContext } from '../abi/errors.js';
import { metadataBytesAt } from '../model/metadata.js';
import { readRaw, writeRaw } from '../model/raw.js';
import { ImportedSchema } from './handles.js';
import { checkCpuDeviceArray, type ForeignSource } from './options.js';

/** The deepest schema tree copied (the C validator's own limit is far deeper; this bounds the JS stack). */
const MAX_DEPTH = 256;

/**
 * Copies the ArrowSchema tree at `ptr` of `from` into a new schema at `dst`
 * of the core (made by the core: its release frees it). No node may be
 * reached twice (a DAG or a cycle is refused, as the C validator does).
 */
function copySchema(core: Core, from: ForeignSource, ptr: number, dst: number, path: string, seen: Set<number>, depth: number): void {
  const s = from.space.structs;
  s.checkRange(ptr, s.size('ArrowSchema'), path);
  if (seen.has(ptr)) throw new ArrowCDeviceError(`${path}: the node at ${ptr} is reached twice (the tree is a DAG or has a cycle)`, EINVAL, path);
  if (depth > MAX_DEPTH) throw new ArrowCDeviceError(`${path}: deeper than ${MAX_DEPTH} levels`, EINVAL, path);
  seen.add(ptr);
  if (s.ptr('ArrowSchema', ptr, 'release') === 0) throw new ArrowCDeviceError(`${path}: expected a live schema, found a released one`, EINVAL, path);
  const formatPtr = s.ptr('ArrowSchema', ptr, 'format');
  if (formatPtr === 0) throw new ArrowCDeviceError(`${path}.format: expected a string, found NULL`, EINVAL, `${path}.format`);
  const format = s.cString(formatPtr, `${path}.format`);
  const namePtr = s.ptr('ArrowSchema', ptr, 'name');
  const name = namePtr === 0 ? null : s.cString(namePtr, `${path}.name`);
  const metadataPtr = s.ptr('ArrowSchema', ptr, 'metadata');
  const metadata = metadataPtr === 0 ? null : metadataBytesAt(from.space, metadataPtr, `${path}.metadata`);
  const flags = s.i64('ArrowSchema', ptr, 'flags');
  const n = s.i64('ArrowSchema', ptr, 'n_children');
  const children = s.ptr('ArrowSchema', ptr, 'children');
  const dictionary = s.ptr('ArrowSchema', ptr, 'dictionary');
  if (n < 0) throw new ArrowCDeviceError(`${path}.n_children: expected a non-negative count, found ${n}`, EINVAL, `${path}.n_children`);
  if (n > 0) s.checkRange(children, n * s.layout.pointerSize, `${path}.children`);
  core.schemaInit(dst, format, name, metadata, flags, n, dictionary !== 0);
  try {
    const t = core.structs;
    const ours = t.ptr('ArrowSchema', dst, 'children');
    for (let i = 0; i < n; i++) {
      copySchema(core, from, s.ptrAt(children + i * s.layout.pointerSize), t.ptrAt(ours + i * t.layout.pointerSize),
        `${path}.children[${i}]`, seen, depth + 1);
    }
    if (dictionary !== 0) copySchema(core, from, dictionary, t.ptr('ArrowSchema', dst, 'dictionary'), `${path}.dictionary`, seen, depth + 1);
  } catch (e) {
    core.space.release('ArrowSchema', dst);
    throw e;
  }
}

/**
 * Copies the foreign ArrowSchema at ptr into the core and validates the
 * copy; the foreign struct is left as it was (the caller releases it).
 */
export function copySchemaFrom(core: Core, from: ForeignSource, ptr: number): ImportedSchema {
  const own = core.alloc(core.structs.size('ArrowSchema'));
  try {
    copySchema(core, from, ptr, own, 'schema', new Set(), 0);
  } catch (e) {
    core.free(own);
    throw named(from, e);
  }
  try {
    core.schemaValidate(own);
    return new ImportedSchema(core, own);
  } catch (e) {
    core.space.release('ArrowSchema', own);
    core.free(own);
    throw named(from, e);
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
