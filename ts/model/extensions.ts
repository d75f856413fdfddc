// Extension types: a storage type plus ARROW:extension:name and
// ARROW:extension:metadata in the field's metadata, which this library always
// keeps intact. The canonical extensions (shared/spec/CanonicalExtensions.rst)
// are recognised by name, and their storage types checked against the spec.

import { EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, typeToString, type DataType, type Field } from './types.js';

/** A field's extension type, from its `ARROW:extension:*` metadata. */
export interface Extension {
  /** Its name (`arrow.uuid`, ...). */
  readonly name: string;
  /** The serialized parameters ('' when absent). */
  readonly metadata: string;
  /** Whether the name is one of the canonical extensions. */
  readonly canonical: boolean;
  /** For a canonical extension, what is wrong with its storage type or parameters (null when nothing). */
  readonly problem: string | null;
}

type Check = (storage: DataType, metadata: string) => string | null;

const binaryLike = (t: DataType) => t.kind === 'binary' || t.kind === 'large_binary' || t.kind === 'binary_view';
const child = (t: DataType, name: string): Field | undefined =>
  t.kind === 'struct' ? t.children.find((f) => f.name === name) : undefined;
const expected = (what: string, t: DataType) => `expected ${what}, found ${typeToString(t)}`;

function parseJson(metadata: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(metadata);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const CHECKS: Record<string, Check> = {
  'arrow.fixed_shape_tensor': (t, m) => {
    if (t.kind !== 'fixed_size_list') return expected('a fixed_size_list storage', t);
    const shape = parseJson(m)?.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      return `expected metadata with a "shape" array of dimensions, found '${m}'`;
    }
    const size = shape.reduce((a: number, d: number) => a * d, 1);
    return size === t.listSize ? null : `expected the shape's product (${size}) to be the list size, found ${t.listSize}`;
  },
  'arrow.variable_shape_tensor': (t) => {
    const data = child(t, 'data');
    const shape = child(t, 'shape');
    if (data === undefined || shape === undefined) return expected('a struct<data: list, shape: fixed_size_list<int32>> storage', t);
    if (data.type.kind !== 'list') return expected('the data field to be a list', data.type);
    const ok = shape.type.kind === 'fixed_size_list' && shape.type.child.type.kind === 'int' && shape.type.child.type.bitWidth === 32;
    return ok ? null : expected('the shape field to be a fixed_size_list<int32>', shape.type);
  },
  'arrow.json': (t) => (t.kind === 'utf8' || t.kind === 'large_utf8' || t.kind === 'utf8_view' ? null : expected('a utf8, large_utf8 or utf8_view storage', t)),
  'arrow.uuid': (t) => (t.kind === 'fixed_size_binary' && t.byteWidth === 16 ? null : expected('a fixed_size_binary[16] storage', t)),
  'arrow.opaque': (_t, m) => {
    const p = parseJson(m);
    return p !== null && typeof p.type_name === 'string' && typeof p.vendor_name === 'string'
      ? null : `expected metadata with "type_name" and "vendor_name" strings, found '${m}'`;
  },
  'arrow.bool8': (t) => (t.kind === 'int' && t.bitWidth === 8 && t.signed ? null : expected('an int8 storage', t)),
  'arrow.parquet.variant': (t) => {
    const metadata = child(t, 'metadata');
    if (metadata === undefined || metadata.nullable || !binaryLike(metadata.type)) {
      return expected('a struct with a non-nullable binary "metadata" field', t);
    }
    const value = child(t, 'value');
    if (value !== undefined && !binaryLike(value.type)) return expected('the value field to be binary', value.type);
    return value !== undefined || child(t, 'typed_value') !== undefined ? null : expected('a "value" or "typed_value" field', t);
  },
  'arrow.timestamp_with_offset': (t) => {
    if (t.kind !== 'struct' || t.children.length !== 2) return expected('a struct<timestamp, offset_minutes> storage', t);
    const [ts, offset] = t.children;
    if (ts.name !== 'timestamp' || ts.nullable || ts.type.kind !== 'timestamp' || ts.type.timezone !== 'UTC') {
      return expected('a non-nullable timestamp[*, tz=UTC] field named timestamp first', ts.type);
    }
    const storage = offset.type.kind === 'dictionary' ? offset.type.valueType
      : offset.type.kind === 'run_end_encoded' ? offset.type.values.type : offset.type;
    const ok = offset.name === 'offset_minutes' && !offset.nullable && storage.kind === 'int' && storage.bitWidth === 16 && storage.signed;
    return ok ? null : expected('a non-nullable int16 field named offset_minutes second', offset.type);
  },
};

/** The canonical extension names. */
export const CANONICAL_EXTENSIONS: readonly string[] = Object.keys(CHECKS);

/**
 * The field's extension type, or null when it has none.
 *
 * Ownership: pure; nothing to release.
 * @param field - the field.
 */
export function extensionOf(field: Field): Extension | null {
  const name = field.metadata?.get(EXTENSION_NAME_KEY);
  if (name === undefined) return null;
  const metadata = field.metadata?.get(EXTENSION_METADATA_KEY) ?? '';
  const check = CHECKS[name];
  return { name, metadata, canonical: check !== undefined, problem: check === undefined ? null : check(field.type, metadata) };
}
