// What an import is asked to do: copy or view, how much the C validator
// checks first, which conversions apache-arrow needs. Shared by every import
// path (raw, apache-arrow, devices, streams).

import type { MemorySpace } from '../abi/address-space.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../abi/errors.js';
import { optionKeys } from '../abi/option-keys.js';
import type { StructReader } from '../abi/structs.js';
import type { ImportMode, RawArray } from '../model/raw.js';
import type { Conversion, Field } from '../model/types.js';

/**
 * How much the C validator checks before an import reads anything, with nanoarrow's meaning of the levels: `none`, `minimal` (struct fields, pointers, buffer and child counts), `default` (also every buffer's size), `full` (also every offset, UTF-8, union ids, run ends, views and dictionary indices).
 */
export type ValidationLevel = 'none' | 'minimal' | 'default' | 'full';

/** The C validator's levels (enum AcdValidationLevel in csrc/validate/validate.h). */
export const LEVELS: Readonly<Record<ValidationLevel, number>> = { none: 0, minimal: 1, default: 2, full: 3 };

/**
 * Another module's memory as an address space (a ForeignModule, from `acd.foreign()`, is one).
 */
export interface ForeignSource {
  /** Its name, in messages. */
  readonly name: string;
  /** Its memory as an address space. */
  readonly space: MemorySpace;
}

/** Options of every import. */
export interface ImportOptions {
  /**
   * The module whose memory the struct addresses belong to (`acd.foreign()`); by default the core's own memory.
   */
  from?: ForeignSource;
  /** 'copy' (default): owned copies, the C array is released at once; 'view': zero-copy until release(). */
  mode?: ImportMode;
  /**
   * View mode from another module that has no allocator (acd.foreign()
   * without malloc and free): the struct is not moved but owned where it is,
   * until release(). The caller must keep the memory that holds it (for
   * parquet-wasm, its FFI object) alive and not release it until then.
   * Without it, such an import is refused; with an allocator it is not needed.
   */
  inPlace?: boolean;
  /**
   * Importing from a protocol provider (docs/protocol.md): the schema asked
   * for, as an object offering [Symbol.for('arrow.c_schema')]() (for example
   * acd.exportSchema(schema)), passed to the provider's method. Best effort,
   * as PyCapsule's requested_schema: the provider may hand over its own.
   */
  requestedSchema?: object;
  /** How much the C validator checks before anything is read (default 'default'). */
  validate?: ValidationLevel;
  /**
   * Types apache-arrow lacks to convert into ones it has: 'run_end_encoded'
   * (expanded into plain values), 'list_view' (gathered into lists),
   * 'dictionary_index64' (a dictionary's 64-bit indices narrowed to int32, one
   * copy of them: apache-arrow holds 64-bit indices but cannot read through
   * them). Without it such data throws; importRaw keeps any type as it is.
   */
  convert?: readonly Conversion[];
}

export const IMPORT_OPTION_KEYS = optionKeys<ImportOptions>()(['from', 'mode', 'inPlace', 'requestedSchema', 'validate', 'convert']);

/** A raw import: the field and the array as its C buffers and children. */
export interface RawImport {
  /** The field, in the type model. */
  readonly field: Field;
  /** The array as its C buffers and children. */
  readonly array: RawArray;
}

/** options.mode, checked. */
export function modeOf(options: ImportOptions): ImportMode {
  const mode = options.mode ?? 'copy';
  if (mode !== 'copy' && mode !== 'view') throw new ArrowCDeviceError(`mode: expected 'copy' or 'view', found '${String(mode)}'`, EINVAL);
  return mode;
}

/** options.validate as the C validator's level, checked. */
export function levelOf(options: ImportOptions): number {
  const level = LEVELS[options.validate ?? 'default'];
  if (level === undefined) throw new ArrowCDeviceError(`validate: expected none, minimal, default or full, found '${String(options.validate)}'`, EINVAL);
  return level;
}

/**
 * A device array about to be read as host memory: on the CPU (else ENOSYS,
 * the message ending with `refusal`) and without a sync event, which the CPU
 * has no type for.
 */
export function checkCpuDeviceArray(s: StructReader, ptr: number, refusal: string): void {
  const type = s.i32('ArrowDeviceArray', ptr, 'device_type');
  if (type !== 1) throw new ArrowCDeviceError(`device_type: expected ARROW_DEVICE_CPU (1), found ${type}${refusal}`, ENOSYS, 'device_type');
  if (s.ptr('ArrowDeviceArray', ptr, 'sync_event') !== 0) {
    throw new ArrowCDeviceError('sync_event: expected NULL for ARROW_DEVICE_CPU, which has no event type', EINVAL, 'sync_event');
  }
}
