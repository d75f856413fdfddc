// Producing: fields and apache-arrow data written into ArrowSchema /
// ArrowArray structs in the core's memory. The C core allocates and owns
// everything (release frees it).

import type * as arrow from 'apache-arrow';
import { fromArrowData } from './arrow-data.js';
import type { Core } from '../abi/core.js';
import { flagsOf, formatOf } from '../model/format.js';
import { encodeMetadata } from '../model/metadata.js';
import { writeRaw } from '../model/raw.js';
import { childFields, type DataType, type Field } from '../model/types.js';

/**
 * Initializes the ArrowSchema at `ptr` (its old content is ignored) for field.
 * On success the struct owns everything (its release frees it); on failure
 * nothing stays allocated and the struct is released.
 */
export function writeSchema(core: Core, ptr: number, field: Field): void {
  const { type } = field;
  const children = childFields(type);
  const dictionary = type.kind === 'dictionary' ? type : null;
  core.schemaInit(ptr, formatOf(type), field.name, encodeMetadata(field.metadata), flagsOf(field),
    children.length, dictionary !== null);
  try {
    const s = core.structs;
    const childArray = s.ptr('ArrowSchema', ptr, 'children');
    for (let i = 0; i < children.length; i++) {
      writeSchema(core, s.ptrAt(childArray + i * s.layout.pointerSize), children[i]);
    }
    if (dictionary !== null) {
      const value: Field = { name: '', type: dictionary.valueType, nullable: true, metadata: null };
      writeSchema(core, s.ptr('ArrowSchema', ptr, 'dictionary'), value);
    }
  } catch (e) {
    core.schemaRelease(ptr);
    throw e;
  }
}

/**
 * Initializes the ArrowArray at `ptr` (its old content is ignored) with a copy
 * of apache-arrow data of the given type. On success the struct owns every
 * buffer and child; on failure nothing stays allocated and the struct is released.
 */
export function writeArray(core: Core, ptr: number, data: arrow.Data, type: DataType): void {
  writeRaw(core, ptr, fromArrowData(data, type));
}
