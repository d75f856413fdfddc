// Consuming: ArrowSchema / ArrowArray structs in the core's memory, after the
// C validator has checked them, read into the type model and apache-arrow Data.

import type * as arrow from 'apache-arrow';
import { toArrowData, type Conversion } from './arrow-data.js';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { typeFromFormat } from '../model/format.js';
import { decodeMetadataAt } from '../model/metadata.js';
import { readRaw, type ImportMode } from '../model/raw.js';
import type { StructReader } from '../abi/structs.js';
import type { DataType, Field } from '../model/types.js';

export type { ImportMode } from '../model/raw.js';

/** Reads a validated ArrowSchema tree. */
export function readField(s: StructReader, ptr: number, path = 'schema'): Field {
  const format = s.cString(s.ptr('ArrowSchema', ptr, 'format'), `${path}.format`);
  const namePtr = s.ptr('ArrowSchema', ptr, 'name');
  const name = namePtr === 0 ? '' : s.cString(namePtr, `${path}.name`);
  const metadataPtr = s.ptr('ArrowSchema', ptr, 'metadata');
  const metadata = metadataPtr === 0 ? null : decodeMetadataAt(s.view.buffer, metadataPtr, `${path}.metadata`);
  const flags = s.i64('ArrowSchema', ptr, 'flags');
  const n = s.i64('ArrowSchema', ptr, 'n_children');
  const childArray = s.ptr('ArrowSchema', ptr, 'children');
  const children: Field[] = [];
  for (let i = 0; i < n; i++) {
    children.push(readField(s, s.ptrAt(childArray + i * s.layout.pointerSize), `${path}.children[${i}]`));
  }
  const dictionaryPtr = s.ptr('ArrowSchema', ptr, 'dictionary');
  const dictionaryValue = dictionaryPtr === 0 ? undefined : readField(s, dictionaryPtr, `${path}.dictionary`).type;
  const type = typeFromFormat(format, children, flags, dictionaryValue);
  return { name, type, nullable: (flags & 2) !== 0, metadata };
}

/**
 * Reads a (validated) ArrowArray tree into apache-arrow Data: views of wasm
 * memory in view mode, copies in copy mode. Types apache-arrow lacks throw
 * unless `convert` names them. validatedFully: the tree was validated at
 * 'full' (the slot-by-slot reference checks are then not repeated).
 */
export function readData(core: Core, ptr: number, type: DataType, mode: ImportMode, convert: readonly Conversion[] = [],
  validatedFully = false): arrow.Data {
  const raw = readRaw(core, ptr, type, mode);
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
