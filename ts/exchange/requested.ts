// The protocol's requested schema (docs/protocol.md, after PyCapsule's
// requested_schema): a consumer asks for another representation of the same
// data. An export hands its structs over as they are when the request is the
// same schema or one it cannot produce (as the rules allow), converts them
// when it can (32-bit and 64-bit offsets of strings, binaries and lists, at
// any depth), and refuses a request for other data (other fields, other
// names), as the rules require.

import { MemorySpace, type AddressSpace } from '../abi/address-space.js';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { wasm32 } from '../abi/generated/layout.js';
import { ForeignModule } from '../foreign/module.js';
import { readRaw, writeRaw, type RawArray } from '../model/raw.js';
import { readField, writeSchema } from '../model/schema.js';
import type { DataType, Field } from '../model/types.js';
import { writeArrayInto, writeSchemaInto } from './into.js';
import { ARROW_C_SCHEMA, descriptorOf } from './protocol.js';

/** A node's conversion of raw data to the requested type. */
type Cast = (raw: RawArray) => RawArray;

const OFFSET_PAIRS: Readonly<Record<string, string>> = {
  utf8: 'large_utf8', large_utf8: 'utf8', binary: 'large_binary', large_binary: 'binary', list: 'large_list', large_list: 'list',
};
const WIDE = new Set(['large_utf8', 'large_binary', 'large_list']);

/** The field a requested schema (an object offering arrow.c_schema) describes; its descriptor is released. */
export function requestedField(requested: unknown, space: AddressSpace): Field {
  if (typeof requested !== 'object' || requested === null) {
    throw new ArrowCDeviceError(`requestedSchema: expected an object offering [Symbol.for('arrow.c_schema')](), found ${requested === null ? 'null' : typeof requested}`, EINVAL);
  }
  const d = descriptorOf(requested, ARROW_C_SCHEMA, 'requestedSchema');
  try {
    const where = space instanceof MemorySpace && d.memory === space.memory ? space
      : new MemorySpace({ name: 'the requested schema\'s memory', memory: d.memory, layout: wasm32 });
    return readField(where.structs, d.schema, 'requestedSchema');
  } finally {
    d.release();
  }
}

/**
 * How data of `ours` becomes data of `want`: null when nothing is to do or
 * it cannot be done here (the export is handed over as it is); throws when
 * `want` describes other data.
 */
export function castOf(ours: DataType, want: DataType, path: string): Cast | null {
  if (ours.kind === 'struct' || want.kind === 'struct') {
    if (ours.kind !== 'struct' || want.kind !== 'struct') throw other(path, `a struct and a ${ours.kind === 'struct' ? want.kind : ours.kind}`);
    const a = ours.children;
    const b = want.children;
    if (a.length !== b.length || a.some((f, i) => f.name !== b[i].name)) {
      throw other(path, `fields [${a.map((f) => f.name).join(', ')}] and [${b.map((f) => f.name).join(', ')}]`);
    }
    const casts = a.map((f, i) => castOf(f.type, b[i].type, `${path}.${f.name}`));
    if (casts.every((c) => c === null)) return null;
    return (raw) => ({ ...raw, children: raw.children.map((c, i) => (casts[i] === null ? c : casts[i]!(c))) });
  }
  if (OFFSET_PAIRS[ours.kind] === want.kind) {
    const child = ours.kind === 'list' || ours.kind === 'large_list'
      ? castOf((ours as { child: Field }).child.type, (want as { child: Field }).child.type, `${path}.item`) : null;
    const wide = WIDE.has(want.kind);
    return (raw) => {
      const offsets = resize(raw.buffers[1], wide, path);
      return { ...raw, type: want, buffers: raw.buffers.map((b, i) => (i === 1 ? offsets : b)), children: child === null ? raw.children : raw.children.map(child) };
    };
  }
  if ((ours.kind === 'list' || ours.kind === 'large_list') && ours.kind === want.kind) {
    const child = castOf(ours.child.type, (want as { child: Field }).child.type, `${path}.item`);
    return child === null ? null : (raw) => ({ ...raw, children: raw.children.map(child) });
  }
  return null;
}

function other(path: string, what: string): ArrowCDeviceError {
  return new ArrowCDeviceError(`requestedSchema: ${path}: ${what} are other data, not another representation of the same (the protocol negotiates representations only)`, EINVAL);
}

/** Offsets of 32 bits as 64, or of 64 as 32 (throws, and nothing is converted, when one does not fit). */
function resize(b: Uint8Array | null, wide: boolean, path: string): Uint8Array | null {
  if (b === null) return null;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (wide) {
    const out = new BigInt64Array(b.byteLength / 4);
    for (let i = 0; i < out.length; i++) out[i] = BigInt(view.getInt32(4 * i, true));
    return new Uint8Array(out.buffer);
  }
  const out = new Int32Array(b.byteLength / 8);
  for (let i = 0; i < out.length; i++) {
    const v = view.getBigInt64(8 * i, true);
    if (v > 0x7fffffffn) throw new NotNarrow(path);
    out[i] = Number(v);
  }
  return new Uint8Array(out.buffer);
}

/** 64-bit offsets past 2^31 - 1: the data cannot take 32-bit ones (the export is handed over as it is). */
class NotNarrow extends Error {
  constructor(path: string) {
    super(`${path}: offsets past 2^31 - 1`);
  }
}

/**
 * Converts the export at (schema, array) of `owner`'s memory, in place, to
 * the requested schema when it can: the structs are released and written
 * again with the converted data, our names and metadata kept. Returns whether
 * it converted. Throws, converting nothing, when the request is other data.
 */
export function recast(owner: Core | ForeignModule, requested: unknown, schema: number, array: number, convertible = true): boolean {
  const space = owner.space;
  const ours = readField(space.structs, schema);
  const want = requestedField(requested, space);
  const cast = castOf(ours.type, want.type, ours.name === '' ? 'schema' : ours.name);
  // Arrays on a device other than the CPU are handed over as they are.
  if (cast === null || !convertible) return false;
  let raw: RawArray;
  try {
    raw = cast(readRaw(space, array, ours.type, 'copy'));
  } catch (e) {
    if (e instanceof NotNarrow) return false;
    throw e;
  }
  const field = retype(ours, want.type);
  space.release('ArrowSchema', schema);
  space.release('ArrowArray', array);
  if (owner instanceof ForeignModule) {
    writeSchemaInto(owner, schema, field);
    writeArrayInto(owner, array, raw);
  } else {
    writeSchema(owner, schema, field);
    writeRaw(owner, array, raw);
  }
  return true;
}

/** Our field with the requested types where they differ (names, nullability and metadata ours). */
function retype(ours: Field, want: DataType): Field {
  const type = ours.type;
  if (type.kind === 'struct' && want.kind === 'struct') {
    return { ...ours, type: { kind: 'struct', children: type.children.map((f, i) => retype(f, want.children[i].type)) } };
  }
  if ((type.kind === 'list' || type.kind === 'large_list') && (want.kind === 'list' || want.kind === 'large_list')) {
    return { ...ours, type: { kind: want.kind, child: retype(type.child, want.child.type) } };
  }
  if (OFFSET_PAIRS[type.kind] === want.kind) return { ...ours, type: want };
  return ours;
}
