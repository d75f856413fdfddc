// ArrowSchema trees ↔ the type model (Field): reading one from any address
// space, and writing one into the core's memory (through flat.ts), where the
// C core allocates and owns everything (its release frees it).

import type { Core } from '../abi/core.js';
import type { StructReader } from '../abi/structs.js';
import { writeFlat } from './flat.js';
import { typeFromFormat } from './format.js';
import { decodeMetadataAt, MAX_METADATA_BYTES, type MetadataBudget } from './metadata.js';
import type { Field } from './types.js';

/**
 * Reads a validated ArrowSchema tree, decoding at most MAX_METADATA_BYTES of metadata in all its nodes.
 *
 * Ownership: borrows the struct, which stays its owner's; the field is JS memory.
 * @param s - the struct reader of the struct's space (`space.structs`).
 * @param ptr - the ArrowSchema's address.
 * @param path - for messages.
 * @param budget - how much metadata may still be decoded.
 * @throws `ArrowCDeviceError` naming the path when the tree cannot be read.
 */
export function readField(s: StructReader, ptr: number, path = 'schema', budget: MetadataBudget = { bytes: MAX_METADATA_BYTES }): Field {
  const format = s.cString(s.ptr('ArrowSchema', ptr, 'format'), `${path}.format`);
  const namePtr = s.ptr('ArrowSchema', ptr, 'name');
  const name = namePtr === 0 ? '' : s.cString(namePtr, `${path}.name`);
  const metadataPtr = s.ptr('ArrowSchema', ptr, 'metadata');
  const metadata = metadataPtr === 0 ? null : decodeMetadataAt(s, metadataPtr, `${path}.metadata`, budget);
  const flags = s.i64('ArrowSchema', ptr, 'flags');
  const n = s.i64('ArrowSchema', ptr, 'n_children');
  const childArray = s.ptr('ArrowSchema', ptr, 'children');
  const children: Field[] = [];
  for (let i = 0; i < n; i++) {
    children.push(readField(s, s.ptrAt(childArray + i * s.layout.pointerSize), `${path}.children[${i}]`, budget));
  }
  const dictionaryPtr = s.ptr('ArrowSchema', ptr, 'dictionary');
  const dictionaryValue = dictionaryPtr === 0 ? undefined : readField(s, dictionaryPtr, `${path}.dictionary`, budget).type;
  const type = typeFromFormat(format, children, flags, dictionaryValue);
  return { name, type, nullable: (flags & 2) !== 0, metadata };
}

/**
 * Initializes the ArrowSchema at `ptr` (its old content is ignored) for field.
 * On success the struct owns everything (its release frees it); on failure
 * nothing stays allocated and the struct is released.
 */
export function writeSchema(core: Core, ptr: number, field: Field): void {
  writeFlat(core, ptr, field, 0, null);
}
