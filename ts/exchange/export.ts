// Producing structs: an ArrowSchema for a field, and an ArrowSchema with an
// ArrowArray (or ArrowDeviceArray) whose array part a writer fills (raw here,
// apache-arrow data in ts/arrow-js/). In the core's memory the C core
// allocates and owns everything the structs hold; `into` another module's
// memory, ts/exchange/into.ts does it with that module's allocator and table.
// The handles own the base structs until a consumer moves them out.

import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import type { ForeignModule } from '../foreign/module.js';
import { constants } from '../abi/generated/layout.js';
import { exportFlat, rawWriter, type ArrayWriter, type SchemaPart } from '../model/flat.js';
import type { RawArray } from '../model/raw.js';
import { writeSchema } from '../model/schema.js';
import type { Field } from '../model/types.js';
import { ExportedArray, ExportedSchema } from './handles.js';
import { writeArrayInto, writeSchemaInto } from './into.js';

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
 * Exports field (or its schema part, described before) as an ArrowSchema and
 * the array `write` describes (a raw array: rawWriter; apache-arrow data:
 * arrowWriter) as an ArrowArray or an
 * ArrowDeviceArray on the CPU, both trees and their base structs in one call
 * into the core (exportFlat); `onto` (devices) may then move the device array elsewhere in
 * place, releasing it on failure.
 */
export function exportWith(core: Core, field: Field | SchemaPart, struct: 'ArrowArray' | 'ArrowDeviceArray',
  write: ArrayWriter, onto?: (schema: number, array: number) => void): ExportedArray {
  const [schema, array] = exportFlat(core, field, write, core.structs.size(struct));
  if (struct === 'ArrowDeviceArray') {
    try {
      core.deviceArrayInitDevice(array, constants.ARROW_DEVICE_CPU, -1);
      onto?.(schema, array);
    } catch (e) {
      // onto releases the array when it fails; releasing a released struct does nothing.
      core.space.release('ArrowArray', array);
      core.space.release('ArrowSchema', schema);
      core.free(schema);
      core.free(array);
      throw e;
    }
  }
  return new ExportedArray(core, schema, array, struct);
}

/**
 * Exports a raw array (any type of the spec, as its C buffers) and its field
 * as an ArrowSchema and ArrowArray, in the core's memory or `into` another module's.
 */
export function exportRaw(core: Core, field: Field, raw: RawArray, into?: ForeignModule): ExportedArray {
  if (into !== undefined) return exportInto(into, field, raw, 'ArrowArray');
  return exportWith(core, field, 'ArrowArray', rawWriter(raw));
}

/** Exports a field as an ArrowSchema in another module's memory. */
export function exportFieldInto(into: ForeignModule, field: Field): ExportedSchema {
  const ptr = allocIn(into, into.space.structs.size('ArrowSchema'));
  try {
    writeSchemaInto(into, ptr, field);
  } catch (e) {
    into.space.allocator!.free(ptr);
    throw e;
  }
  return new ExportedSchema(into, ptr);
}

/**
 * Exports a raw array and its field as an ArrowSchema and an ArrowArray (or
 * a CPU ArrowDeviceArray) in another module's memory, all of it allocated
 * there by its allocator, released by callbacks in its table.
 */
export function exportInto(into: ForeignModule, field: Field, raw: RawArray, struct: 'ArrowArray' | 'ArrowDeviceArray'): ExportedArray {
  const s = into.space.structs;
  const schema = allocIn(into, s.size('ArrowSchema'));
  const array = allocIn(into, s.size(struct));
  let written = false;
  try {
    writeSchemaInto(into, schema, field);
    written = true;
    writeArrayInto(into, struct === 'ArrowDeviceArray' ? array + s.offsetOf('ArrowDeviceArray', 'array') : array, raw);
    if (struct === 'ArrowDeviceArray') {
      s.setI64('ArrowDeviceArray', array, 'device_id', -1);
      into.space.view.setInt32(array + s.offsetOf('ArrowDeviceArray', 'device_type'), constants.ARROW_DEVICE_CPU, true);
    }
  } catch (e) {
    if (written) into.space.release('ArrowSchema', schema);
    into.space.allocator!.free(schema);
    into.space.allocator!.free(array);
    throw e;
  }
  return new ExportedArray(into, schema, array, struct);
}

function allocIn(into: ForeignModule, size: number): number {
  if (into.space.allocator === null) throw new ArrowCDeviceError(`into: ${into.name} has no allocator (malloc and free), so nothing can be exported into it`, EINVAL);
  return into.space.allocator.alloc(size);
}
