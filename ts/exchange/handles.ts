// The handles of what crosses the boundary: structs this library produced
// (ExportedSchema, ExportedArray) and structs it took ownership of
// (ImportedSchema, Imported). Each owns its memory in the core until
// release() (or the finalizer backstop of ts/abi/handles.ts).

import type { AddressSpace } from '../abi/address-space.js';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { Handle } from '../abi/handles.js';
import { ARROW_C_ARRAY, ARROW_C_DEVICE_ARRAY, ARROW_C_SCHEMA, handOver, type ArrowCDescriptor } from './protocol.js';
import { readSchemaField } from './schema-cache.js';
import type { ForeignModule } from '../foreign/module.js';
import { recast } from './requested.js';
import type { Field, Schema } from '../model/types.js';
import type { ImportMode } from '../model/raw.js';

/**
 * Where an export's structs live: the core, or another module (`acd.foreign()`); both have an address space with an allocator.
 */
export interface ExportOwner {
  /** The address space the structs are allocated in. */
  readonly space: AddressSpace;
}


/**
 * An ArrowSchema this library produced at `ptr`, in the core's memory or in another module's (`space`).
 *
 * Ownership: the handle owns the struct until a consumer moves it out (the consumer's import marks it released); `release()` then calls the release callback of whatever is still there and frees the base struct. The caller must release it (or use `using`).
 */
export class ExportedSchema extends Handle {
  /** The address space the struct is in: the core's, or another module's. */
  readonly space: AddressSpace;

  /** The struct's address. */
  readonly ptr: number;

  /**
   * Made by `ArrowCDevice.exportSchema`; not meant to be called directly.
   *
   * Ownership: takes ownership of the struct at `ptr`, which the handle frees on `release()`.
   * @param owner - the core or the module the struct was allocated by.
   * @param ptr - the struct's address.
   */
  constructor(owner: ExportOwner, ptr: number) {
    const space = owner.space;
    super(() => { space.release('ArrowSchema', ptr); space.allocator!.free(ptr); });
    this.ptr = ptr;
    this.space = space;
  }

  /**
   * The protocol (docs/protocol.md): hands the schema over, moved into a descriptor.
   *
   * Ownership: the caller owns the descriptor and must call its `release()` (a consumer that imports it moves the struct out first); this handle keeps a released struct.
   * @returns the descriptor.
   * @throws `ArrowCDeviceError` (EINVAL) after `release()`.
   */
  [ARROW_C_SCHEMA](): ArrowCDescriptor {
    if (this.released) throw new ArrowCDeviceError('schema: used after release()', EINVAL);
    return handOver(this.space, [['ArrowSchema', this.ptr, 'schema']]);
  }
}

/**
 * An ArrowSchema and an ArrowArray (or ArrowDeviceArray) this library produced, in the core's memory or in another module's (`space`).
 *
 * Ownership: the handle owns both base structs. A consumer may move either struct out (its import marks the handle's copy released); `release()` calls the release callback of whatever is still there and frees both base structs. The caller must release it (or use `using`) also after a consumer imported the structs.
 */
export class ExportedArray extends Handle {
  /** The address space the structs are in: the core's, or another module's. */
  readonly space: AddressSpace;

  readonly #owner: ExportOwner;

  /** The ArrowSchema's address. */
  readonly schema: number;
  /** The ArrowArray's (or ArrowDeviceArray's) address. */
  readonly array: number;
  /** What `array` is: an ArrowArray (the default) or an ArrowDeviceArray. */
  readonly struct: 'ArrowArray' | 'ArrowDeviceArray';

  /**
   * Made by the exports of `ArrowCDevice`; not meant to be called directly.
   *
   * Ownership: takes ownership of the structs at `schema` and `array`, which the handle frees on `release()`.
   * @param owner - the core or the module the structs were allocated by.
   * @param schema - the ArrowSchema's address.
   * @param array - the ArrowArray's (or ArrowDeviceArray's) address.
   * @param struct - what `array` is.
   */
  constructor(owner: ExportOwner, schema: number,
    array: number,
    struct: 'ArrowArray' | 'ArrowDeviceArray' = 'ArrowArray') {
    const space = owner.space;
    super(() => {
      space.release('ArrowSchema', schema);
      space.release('ArrowArray', array);
      space.allocator!.free(schema);
      space.allocator!.free(array);
    });
    this.schema = schema;
    this.array = array;
    this.struct = struct;
    this.space = space;
    this.#owner = owner;
  }

  /**
   * The protocol (docs/protocol.md): the schema and the ArrowArray, moved into a descriptor. `requestedSchema` (an object offering `arrow.c_schema`) asks for another representation of the same data: 32-bit or 64-bit offsets are converted; a request it cannot meet gets the export as it is; a request for other data is refused.
   *
   * Ownership: the caller owns the descriptor and must call its `release()`; this handle keeps moved-from structs (still to be released).
   * @param requestedSchema - an object offering `Symbol.for('arrow.c_schema')`, or nothing.
   * @returns the descriptor.
   * @throws `ArrowCDeviceError` (EINVAL) after `release()`, for an export made as an ArrowDeviceArray, or for a request of other data.
   */
  [ARROW_C_ARRAY](requestedSchema?: unknown): ArrowCDescriptor {
    return this.handOver('ArrowArray', 'arrow.c_array', requestedSchema);
  }

  /**
   * The protocol: the schema and the ArrowDeviceArray (of an export made as one), moved into a descriptor; `requestedSchema` as for `arrow.c_array` (CPU arrays).
   *
   * Ownership: the caller owns the descriptor and must call its `release()`; this handle keeps moved-from structs (still to be released).
   * @param requestedSchema - an object offering `Symbol.for('arrow.c_schema')`, or nothing.
   * @returns the descriptor.
   * @throws `ArrowCDeviceError` (EINVAL) after `release()` or for an export made as an ArrowArray.
   */
  [ARROW_C_DEVICE_ARRAY](requestedSchema?: unknown): ArrowCDescriptor {
    return this.handOver('ArrowDeviceArray', 'arrow.c_device_array', requestedSchema);
  }

  private handOver(struct: 'ArrowArray' | 'ArrowDeviceArray', method: string, requested: unknown): ArrowCDescriptor {
    if (this.released) throw new ArrowCDeviceError('array: used after release()', EINVAL);
    if (struct !== this.struct) throw new ArrowCDeviceError(`${method}: this export is an ${this.struct}`, EINVAL);
    if (requested !== undefined && requested !== null) {
      const s = this.space.structs;
      if (s.ptr('ArrowSchema', this.schema, 'release') === 0) throw new ArrowCDeviceError('ArrowSchema: handed over or moved out already', EINVAL);
      const onCpu = struct === 'ArrowArray' || s.i32('ArrowDeviceArray', this.array, 'device_type') === 1;
      const at = struct === 'ArrowDeviceArray' ? this.array + s.offsetOf('ArrowDeviceArray', 'array') : this.array;
      recast(this.#owner as Core | ForeignModule, requested, this.schema, at, onCpu);
    }
    return handOver(this.space, [['ArrowSchema', this.schema, 'schema'], [struct, this.array, 'array']]);
  }
}

/** What a reader reads an ArrowArray in: the core's memory, or another module's (view mode). */
export type ReadSpace = Pick<AddressSpace, 'structs'>;

/** What a reader needs of an imported schema: an ImportedSchema, or another module's schema copied for one import. */
export type ReadSchema = Pick<ImportedSchema, 'field' | 'schema'>;

/** Reads an imported (validated, moved) ArrowArray at `ptr` of `space` into T. */
export type Reader<T> = (schema: ReadSchema, ptr: number, mode: ImportMode, space: ReadSpace) => T;

/** The columns and metadata of a field that is a struct (a record batch's schema). */
export function recordSchema(field: Field): Schema {
  if (field.type.kind !== 'struct') {
    throw new ArrowCDeviceError(`schema: a record batch schema is a struct ('+s'), found ${field.type.kind}`, EINVAL);
  }
  return { fields: field.type.children, metadata: field.metadata };
}

/**
 * A schema moved out of a producer's struct into this library's memory.
 *
 * Ownership: the handle owns the moved struct; the caller must call `release()` (or use `using`). Passing it to an import in place of a schema address borrows it: it stays the caller's.
 */
export class ImportedSchema extends Handle {
  /**
   * The schema as a field (a record batch's: a struct whose children are the
   * columns). Frozen, and the same object for every import of an equal schema
   * tree (same formats, names, flags, children, dictionaries and metadata).
   */
  readonly field: Field;

  /** The moved struct's address, in the core's memory. */
  readonly ptr: number;

  /**
   * Made by `ArrowCDevice.importSchema`; not meant to be called directly.
   *
   * Ownership: takes ownership of the (already moved) struct at `ptr`; when reading it fails, nothing is taken.
   * @param core - the core whose memory holds the struct.
   * @param ptr - the struct's address.
   * @param field - the schema as read already (by the import that moved it), or nothing: it is read here.
   * @throws `ArrowCDeviceError` naming the path at fault when the schema cannot be read.
   */
  constructor(core: Core, ptr: number, field?: Field) {
    // Read before the handle exists: when reading fails, the caller takes the struct back.
    field ??= readSchemaField(core, ptr);
    super(() => { core.space.release('ArrowSchema', ptr); core.free(ptr); });
    this.ptr = ptr;
    this.field = field;
  }

  /** The columns and metadata, when the schema is a struct (a record batch's). */
  get schema(): Schema {
    return recordSchema(this.field);
  }
}

/**
 * Imported data, as `value`.
 *
 * Ownership: the handle owns what the import kept; the caller must call `release()` (or use `using`). In copy mode it owns only JS memory: the C array was released during the import, so `value` is never rebuilt. In view mode it owns the moved C array until `release()`; `value` is rebuilt over the new buffer if the memory its views are over (the core's or another module's) grew: views taken earlier are then detached, so always read `value` again.
 */
export class Imported<T> extends Handle {
  #value: T;
  #buffer: ArrayBufferLike;
  readonly #rebuild: (() => T) | null;

  /**
   * Made by the imports of `ArrowCDevice`; not meant to be called directly. `value` is built before the handle exists, so a failed read leaves no half-built handle whose finalizer would free what the caller took back.
   *
   * Ownership: takes ownership of what `cleanup` frees (the moved C array in view mode).
   * @param owner - the memory the views are over.
   * @param value - the data as read.
   * @param rebuild - view mode only: reads the owned C array again.
   * @param cleanup - frees what the handle owns.
   */
  constructor(private readonly owner: { readonly memory: WebAssembly.Memory }, value: T, rebuild: (() => T) | null, cleanup: () => void) {
    super(cleanup);
    this.#value = value;
    this.#rebuild = rebuild;
    this.#buffer = owner.memory.buffer;
  }

  /** The imported data (rebuilt over the memory's new buffer after it grew, in view mode). */
  get value(): T {
    if (this.released) throw new ArrowCDeviceError('imported data used after release()', EINVAL);
    if (this.#rebuild !== null && this.#buffer !== this.owner.memory.buffer) {
      this.#value = this.#rebuild();
      this.#buffer = this.owner.memory.buffer;
    }
    return this.#value;
  }
}
