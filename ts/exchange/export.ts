// Producing structs in the core's memory: an ArrowSchema for a field, and an
// ArrowSchema with an ArrowArray (or ArrowDeviceArray) whose array part a
// writer fills (raw here, apache-arrow data in ts/arrow-js/). The C core
// allocates and owns everything the structs hold; the handles own the base
// structs until a consumer moves them out.

import type { Core } from '../abi/core.js';
import { constants } from '../abi/generated/layout.js';
import { writeRaw, type RawArray } from '../model/raw.js';
import { writeSchema } from '../model/schema.js';
import type { Field } from '../model/types.js';
import { ExportedArray, ExportedSchema } from './handles.js';

/** Exports a field as an ArrowSchema. */
export function exportField(core: Core, field: Field): ExportedSchema {
  const ptr = core.alloc(core.structs.size('ArrowSchema'));
  try {
    writeSchema(core, ptr, field);
  } catch (e) {
    core.free(ptr);
    throw e;
  }
  return new ExportedSchema(core, ptr);
}

/**
 * Exports field as an ArrowSchema and, with `write`, the array as an
 * ArrowArray or an ArrowDeviceArray on the CPU; `onto` (devices) may then
 * move the device array elsewhere in place, releasing it on failure.
 */
export function exportWith(core: Core, field: Field, struct: 'ArrowArray' | 'ArrowDeviceArray',
  write: (ptr: number) => void, onto?: (schema: number, array: number) => void): ExportedArray {
  const schema = core.alloc(core.structs.size('ArrowSchema'));
  const array = core.alloc(core.structs.size(struct));
  let written = false;
  try {
    writeSchema(core, schema, field);
    written = true;
    write(struct === 'ArrowDeviceArray' ? array + core.structs.offsetOf('ArrowDeviceArray', 'array') : array);
    if (struct === 'ArrowDeviceArray') {
      core.deviceArrayInitDevice(array, constants.ARROW_DEVICE_CPU, -1);
      onto?.(schema, array);
    }
  } catch (e) {
    if (written) core.space.release('ArrowSchema', schema);
    core.free(schema);
    core.free(array);
    throw e;
  }
  return new ExportedArray(core, schema, array);
}

/** Exports a raw array (any type of the spec, as its C buffers) and its field as an ArrowSchema and ArrowArray. */
export function exportRaw(core: Core, field: Field, raw: RawArray): ExportedArray {
  return exportWith(core, field, 'ArrowArray', (ptr) => writeRaw(core, ptr, raw));
}
