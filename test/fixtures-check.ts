// Checks of a fixture image against what was written into it (test/fixtures.test.ts):
// every pointer field and pointer-array entry of every reachable struct is
// in the relocation table and nothing else is; every callback field is in
// the callback table with its behaviour; buffers are 64-aligned; and the
// project's readers give back the very field and raw arrays written.

import type { Core } from '../ts/abi/core.js';
import type { StructReader } from '../ts/abi/structs.js';
import type { StructName } from '../ts/abi/layout-types.js';
import { BEHAVIOUR, EVENT_RECORD_SIZE, SECTION } from '../ts/fixtures/image.js';
import { eventKindOf } from '../ts/device/device.js';
import { imageSpace, readScript, type FixtureImage } from '../ts/fixtures/parse.js';
import { readRaw, type RawArray } from '../ts/model/raw.js';
import { rawValues, show } from '../ts/model/raw-values.js';
import { readField } from '../ts/model/schema.js';
import { childFields, fieldsEqual, recordBatchField, typeToString, type Field } from '../ts/model/types.js';
import type { FixtureCase } from '../ts/fixtures/case.js';
import { CPU, ERRNO } from '../ts/fixtures/write.js';

/** What the walk found: pointer places, callback places with behaviours, buffer addresses. */
class Walk {
  readonly pointers = new Set<number>();
  readonly callbacks = new Map<number, number>();
  readonly buffers: number[] = [];
  constructor(readonly s: StructReader) {}

  ptrFields(struct: StructName, at: number): void {
    for (const f of Object.values(this.s.layout.structs[struct].fields)) if (f.kind === 'ptr') this.pointers.add(at + f.offset);
  }

  callback(struct: StructName, at: number, field: string, behaviour: number): void {
    this.callbacks.set(at + this.s.offsetOf(struct, field), behaviour);
  }

  /** The addresses in a pointer array of n entries (each a relocated place). */
  entries(array: number, n: number): number[] {
    return Array.from({ length: n }, (_, i) => {
      const at = array + i * this.s.layout.pointerSize;
      this.pointers.add(at);
      return this.s.ptrAt(at);
    });
  }

  schema(at: number): void {
    this.ptrFields('ArrowSchema', at);
    this.callback('ArrowSchema', at, 'release', BEHAVIOUR.schemaRelease);
    const n = this.s.i64('ArrowSchema', at, 'n_children');
    for (const c of this.entries(this.s.ptr('ArrowSchema', at, 'children'), n)) this.schema(c);
    const d = this.s.ptr('ArrowSchema', at, 'dictionary');
    if (d !== 0) this.schema(d);
  }

  array(at: number): void {
    this.ptrFields('ArrowArray', at);
    this.callback('ArrowArray', at, 'release', BEHAVIOUR.arrayRelease);
    const buffers = this.entries(this.s.ptr('ArrowArray', at, 'buffers'), this.s.i64('ArrowArray', at, 'n_buffers'));
    this.buffers.push(...buffers.filter((b) => b !== 0));
    for (const c of this.entries(this.s.ptr('ArrowArray', at, 'children'), this.s.i64('ArrowArray', at, 'n_children'))) this.array(c);
    const d = this.s.ptr('ArrowArray', at, 'dictionary');
    if (d !== 0) this.array(d);
  }

  deviceArray(at: number): void {
    this.ptrFields('ArrowDeviceArray', at);
    this.array(at + this.s.offsetOf('ArrowDeviceArray', 'array'));
  }
}

/** Node by node: the struct fields and the bytes a reader takes must be the written ones. */
function rawDifferences(written: RawArray, read: RawArray, path: string, out: string[]): void {
  for (const k of ['length', 'offset', 'nullCount'] as const) {
    if (written[k] !== read[k]) out.push(`${path}.${k}: wrote ${written[k]}, read ${read[k]}`);
  }
  if (written.buffers.length !== read.buffers.length) out.push(`${path}: wrote ${written.buffers.length} buffers, read ${read.buffers.length}`);
  written.buffers.forEach((b, i) => {
    const r = read.buffers[i];
    if ((b === null) !== (r === null)) out.push(`${path}.buffers[${i}]: wrote ${b === null ? 'NULL' : 'a buffer'}, read ${r === null ? 'NULL' : 'a buffer'}`);
    else if (b !== null && r !== null && !(r!.length <= b.length && r!.every((x, k) => x === b[k]))) {
      out.push(`${path}.buffers[${i}]: the bytes read are not the bytes written`);
    }
  });
  written.children.forEach((c, i) => rawDifferences(c, read.children[i]!, `${path}.children[${i}]`, out));
  if (written.dictionary !== null) rawDifferences(written.dictionary, read.dictionary!, `${path}.dictionary`, out);
}

function arrayDifferences(space: ReturnType<typeof imageSpace>, at: number, field: Field, written: RawArray, path: string): string[] {
  const read = readRaw(space, at, field.type, 'copy');
  const out: string[] = [];
  rawDifferences(written, read, path, out);
  if (show(rawValues(written)) !== show(rawValues(read))) out.push(`${path}: values differ`);
  return out;
}

function schemaDifferences(s: StructReader, at: number, expected: Field, path: string): string[] {
  const read = readField(s, at);
  return fieldsEqual(expected, read) ? [] : [`${path}: wrote ${typeToString(expected.type)}, read ${typeToString(read.type)}`];
}

/** Metadata pointers: NULL exactly where the field has no metadata (an empty map is a 4-byte count). */
function metadataPointers(s: StructReader, at: number, f: Field, path: string, out: string[]): void {
  if ((s.ptr('ArrowSchema', at, 'metadata') === 0) !== (f.metadata === null)) out.push(`${path}.metadata: NULL where it must not be, or the reverse`);
  const children = childFields(f.type);
  const array = s.ptr('ArrowSchema', at, 'children');
  children.forEach((c, i) => metadataPointers(s, s.ptrAt(array + i * s.layout.pointerSize), c, `${path}.children[${i}]`, out));
}

/** Every difference between an image and its case (empty when the image holds exactly the case). */
export function imageDifferences(image: FixtureImage, c: FixtureCase): string[] {
  const space = imageSpace(image, c.name);
  const s = space.structs;
  const walk = new Walk(s);
  const out: string[] = [];
  const field = recordBatchField(c.schema);
  const checkSchema = (at: number, path: string) => {
    walk.schema(at);
    out.push(...schemaDifferences(s, at, field, path));
    metadataPointers(s, at, field, path, out);
  };
  const device = c.device ?? CPU;
  const events = new Set<number>();
  const checkDevice = (at: number, raw: RawArray, path: string) => {
    walk.deviceArray(at);
    if (s.i64('ArrowDeviceArray', at, 'device_id') !== device.id) out.push(`${path}.device_id is not ${device.id}`);
    if (s.i32('ArrowDeviceArray', at, 'device_type') !== device.type) out.push(`${path}.device_type is not ${device.type}`);
    const event = s.ptr('ArrowDeviceArray', at, 'sync_event');
    const kind = eventKindOf(device.type);
    if (kind === null) {
      if (event !== 0) out.push(`${path}.sync_event is not NULL`);
    } else {
      // An event record of its own (docs/fixtures.md, "Sync events"), in a section of kind 5.
      const v = new DataView(image.body.buffer, image.body.byteOffset + event);
      const record = [v.getUint32(0, true), v.getUint32(4, true), Number(v.getBigInt64(8, true))];
      if (show(record) !== show([kind, device.type, device.id])) out.push(`${path}.sync_event: the record ${show(record)} is not the device's`);
      if (!image.sections.some((sec) => sec.kind === SECTION.events && event >= sec.offset && event + EVENT_RECORD_SIZE <= sec.offset + sec.size)) {
        out.push(`${path}.sync_event is not in an events section`);
      }
      if (events.has(event)) out.push(`${path}.sync_event is another array's`);
      events.add(event);
    }
    const reserved = s.offsetOf('ArrowDeviceArray', 'reserved');
    if (image.body.subarray(at + reserved, at + reserved + 24).some((b) => b !== 0)) out.push(`${path}.reserved is not zero`);
    out.push(...arrayDifferences(space, at + s.offsetOf('ArrowDeviceArray', 'array'), field, raw, path));
  };
  if (c.stream === null) {
    const kinds = image.roots.map((r) => r.kind).join(',');
    const expected = c.device !== undefined ? '1,3' : '1,2';
    if (kinds !== expected) return [`roots: expected kinds ${expected}, found ${kinds}`];
    checkSchema(image.roots[0]!.offset, 'root 0');
    if (c.device !== undefined) checkDevice(image.roots[1]!.offset, c.batches[0]!, 'root 1');
    else {
      walk.array(image.roots[1]!.offset);
      out.push(...arrayDifferences(space, image.roots[1]!.offset, field, c.batches[0]!, 'root 1'));
    }
  } else {
    const root = image.roots[0]!;
    const expectedKind = { array: 4, device: 5, async: 6 }[c.stream.kind];
    if (image.roots.length !== 1 || root.kind !== expectedKind) return [`roots: expected one of kind ${expectedKind}`];
    const script = readScript(image, c.stream.kind === 'async' ? root.offset : root.script);
    const struct: StructName | null = c.stream.kind === 'array' ? 'ArrowArrayStream' : c.stream.kind === 'device' ? 'ArrowDeviceArrayStream' : null;
    if (struct !== null) {
      walk.ptrFields(struct, root.offset);
      const base = struct === 'ArrowArrayStream' ? BEHAVIOUR.streamGetSchema : BEHAVIOUR.deviceStreamGetSchema;
      ['get_schema', 'get_next', 'get_last_error', 'release'].forEach((f, i) => walk.callback(struct, root.offset, f, base + i));
    }
    checkSchema(script.schema, 'script.schema');
    if (script.batches.length !== c.batches.length) out.push(`script: ${script.batches.length} batches, expected ${c.batches.length}`);
    script.batches.forEach((at, i) => {
      if (c.stream!.kind === 'array') {
        walk.array(at);
        out.push(...arrayDifferences(space, at, field, c.batches[i]!, `script.batches[${i}]`));
      } else checkDevice(at, c.batches[i]!, `script.batches[${i}]`);
    });
    const f = c.stream.failure;
    if (script.failAt !== (f?.at ?? -1)) out.push(`script.failAt ${script.failAt}`);
    if (script.errno !== (f === null ? 0 : ERRNO[f.errno][image.layoutName])) out.push(`script.errno ${script.errno}`);
    if (script.message !== (f?.message ?? null)) out.push(`script.message ${script.message}`);
  }
  const relocations = [...image.relocations];
  const walked = [...walk.pointers].sort((a, b) => a - b);
  if (show(relocations) !== show(walked)) out.push(`relocations: the table has ${relocations.length} places, the structs ${walked.length}`);
  const callbacks = image.callbacks.map((cb) => [cb.offset, cb.behaviour]);
  const walkedCallbacks = [...walk.callbacks].sort((a, b) => a[0] - b[0]);
  if (show(callbacks) !== show(walkedCallbacks)) out.push(`callbacks: the table is not the structs' callback fields with their behaviours`);
  const unaligned = walk.buffers.filter((b) => b % 64 !== 0);
  if (unaligned.length > 0) out.push(`buffers not 64-aligned: ${unaligned.join(', ')}`);
  return out;
}

/**
 * What a loader does with a wasm32 image in the core (docs/fixtures.md,
 * "Loading, in short"): place the body at a 64-aligned address, relocate,
 * install a callback per behaviour (`callback(behaviour)` gives the table
 * index). Returns the base; `free` gives the block back.
 */
export function placeImage(core: Core, image: FixtureImage, callback: (behaviour: number) => number): { base: number; free(): void } {
  const block = core.alloc(image.body.length + 64);
  const base = Math.ceil(block / 64) * 64;
  core.bytes.set(image.body, base);
  const v = core.view;
  for (const r of image.relocations) if (v.getUint32(base + r, true) !== 0) v.setUint32(base + r, v.getUint32(base + r, true) + base, true);
  for (const cb of image.callbacks) v.setUint32(base + cb.offset, callback(cb.behaviour), true);
  return { base, free: () => core.free(block) };
}
