// Arrow integration JSON (Integration.rst, "JSON test data format") → the
// project's schema and raw arrays, for every type of the spec. Independent of
// apache-arrow. Buffers are built exactly as the JSON gives them: validity
// bitmaps as given (also when all valid), values of null slots kept.
//
// Pre-1.0 files (union V4 metadata, e.g. arrow-testing 0.17.1/generated_union)
// give unions a VALIDITY array. Since format 1.0 a union has no validity
// buffer (the C Data Interface has none either): its nulls are its children's.
// As the IPC readers of Arrow C++, Go and C# do for such unions, an all-valid
// VALIDITY is dropped, and one with nulls is refused (ENOSYS) rather than
// moved into the children, which would rewrite their data (and for dense
// unions insert child slots).
//
// The parts: read-values.ts (typed accessors of JSON values), read-schema.ts
// (fields, types, dictionary ids), read-buffers.ts (leaf values → buffers);
// here, the data reader and the file.

import { ArrowCDeviceError, ENOSYS } from '../../abi/errors.js';
import type { RawArray } from '../../model/raw.js';
import type { DataType, Field, Schema } from '../../model/types.js';
import { parseJson, type JsonObject, type JsonValue } from './parse.js';
import { bytes, fixedWidth, hex, readValidity, readViews } from './read-buffers.js';
import { readField, type Dictionaries } from './read-schema.js';
import { array, describe, encoder, fail, integer, metadata, object, string } from './read-values.js';

/**
 * An integration JSON file (or an IPC file read by this library): the schema and each batch as a raw struct array of its fields.
 */
export interface IntegrationFile {
  /** The schema. */
  readonly schema: Schema;
  /** One `struct<schema fields>` per record batch: offset 0, null count 0, buffers [null]. */
  readonly batches: RawArray[];
}

// ---- data -------------------------------------------------------------------------

/** Turns JSON columns into raw arrays; dictionaries are read once, on first use. */
class DataReader {
  private readonly resolved = new Map<number, RawArray>();
  private readonly resolving = new Set<number>();

  constructor(
    private readonly dicts: Dictionaries,
    private readonly batches: Map<number, { column: JsonObject; count: number; path: string }>,
  ) {}

  dictionary(type: DataType, path: string): RawArray {
    const id = this.dicts.idOf.get(type)!;
    const done = this.resolved.get(id);
    if (done !== undefined) return done;
    const batch = this.batches.get(id);
    if (batch === undefined) fail(path, `dictionary id ${id} is not in "dictionaries"`);
    if (this.resolving.has(id)) fail(batch.path, `dictionary id ${id} contains itself`);
    this.resolving.add(id);
    const raw = this.array(this.dicts.valueType.get(id)!.type, batch.column, batch.path, batch.count);
    this.resolving.delete(id);
    this.resolved.set(id, raw);
    return raw;
  }

  /** The raw array of a column of the given type; `expectedCount` when the parent fixes it. */
  array(type: DataType, col: JsonObject, path: string, expectedCount?: number): RawArray {
    const n = integer(col.count, `${path}.count`, 0, 2 ** 31 - 1);
    if (expectedCount !== undefined && n !== expectedCount) fail(`${path}.count`, `expected ${expectedCount}, found ${n}`);
    const entries = (key: string, size = n): JsonValue[] => {
      const v = col[key];
      if (v === undefined && size === 0) return [];
      const a = array(v, `${path}.${key}`);
      if (a.length !== size) fail(`${path}.${key}`, `expected ${size} entries, found ${a.length}`);
      return a;
    };
    // n + 1 offsets; a zero-length array may come with none (as in 0.14.1 files).
    const offsetEntries = (): JsonValue[] =>
      n === 0 && (col.OFFSET === undefined || (Array.isArray(col.OFFSET) && col.OFFSET.length === 0)) ? [0] : entries('OFFSET', n + 1);
    const children = (fields: readonly Field[]): JsonObject[] => {
      const c = col.children === undefined && fields.length === 0 ? [] : array(col.children, `${path}.children`);
      if (c.length !== fields.length) fail(`${path}.children`, `expected ${fields.length} entries, found ${c.length}`);
      return c.map((x, i) => object(x, `${path}.children[${i}]`));
    };
    const child = (f: Field, c: JsonObject, i: number, min?: number): RawArray => {
      const at = `${path}.children[${i}] '${f.name}'`;
      const raw = this.array(f.type, c, at);
      if (min !== undefined && raw.length < min) fail(`${at}.count`, `expected at least ${min}, found ${raw.length}`);
      return raw;
    };
    const make = (buffers: (Uint8Array | null)[], nullCount: number, kids: RawArray[] = [], dictionary: RawArray | null = null): RawArray =>
      ({ type, length: n, nullCount, offset: 0, buffers, children: kids, dictionary });

    switch (type.kind) {
      case 'null':
        return make([], n);
      case 'union': {
        const validity = col.VALIDITY === undefined ? null : readValidity(entries('VALIDITY'), `${path}.VALIDITY`);
        if (validity !== null && validity.nulls > 0) {
          throw new ArrowCDeviceError(`${path}.VALIDITY: a union with ${validity.nulls} null slots in a validity buffer ` +
            '(pre-1.0 union metadata) is not supported; since format 1.0 a union\'s nulls are its children\'s', ENOSYS, path);
        }
        const ids = entries('TYPE_ID');
        const typeIds = new Uint8Array(n);
        ids.forEach((v, i) => {
          const id = integer(v, `${path}.TYPE_ID[${i}]`, 0, 127);
          if (!type.typeIds.includes(id)) fail(`${path}.TYPE_ID[${i}]`, `expected one of the type ids ${type.typeIds.join(', ')}, found ${id}`);
          typeIds[i] = id;
        });
        const json = children(type.children);
        if (type.mode === 'sparse') return make([typeIds], 0, type.children.map((f, i) => child(f, json[i]!, i, n)));
        const kids = type.children.map((f, i) => child(f, json[i]!, i));
        const offsets = new Int32Array(n);
        entries('OFFSET').forEach((v, i) => {
          const k = type.typeIds.indexOf(typeIds[i]!);
          const offset = integer(v, `${path}.OFFSET[${i}]`, 0, 2 ** 31 - 1);
          if (offset >= kids[k]!.length) {
            fail(`${path}.OFFSET[${i}]`, `expected an offset into child ${k} '${type.children[k]!.name}' of ${kids[k]!.length} slots, found ${offset}`);
          }
          offsets[i] = offset;
        });
        return make([typeIds, bytes(offsets)], 0, kids);
      }
      case 'run_end_encoded': {
        const json = children([type.runEnds, type.values]);
        return make([], 0, [child(type.runEnds, json[0]!, 0), child(type.values, json[1]!, 1)]);
      }
      default:
        break;
    }

    const validity = col.VALIDITY === undefined ? null : readValidity(entries('VALIDITY'), `${path}.VALIDITY`);
    const bitmap = n === 0 ? null : validity?.bitmap ?? null;
    const nulls = validity?.nulls ?? 0;
    // Values of null slots are data, kept as given; a JSON null there stands for zero.
    const dataOf = (key: string): JsonValue[] => {
      const a = entries(key);
      if (bitmap === null || nulls === 0 || !a.includes(null)) return a;
      const zero = zeroOf(type);
      return a.map((v, i) => (v === null && ((bitmap[i >> 3]! >> (i & 7)) & 1) === 0 ? zero : v));
    };
    switch (type.kind) {
      case 'bool': {
        const bits = new Uint8Array(Math.ceil(n / 8));
        dataOf('DATA').forEach((v, i) => {
          if (v === true || v === 1) bits[i >> 3] |= 1 << (i & 7);
          else if (v !== false && v !== 0) fail(`${path}.DATA[${i}]`, `expected true, false, 1 or 0, found ${describe(v)}`);
        });
        return make([bitmap, bits], nulls);
      }
      case 'binary': case 'large_binary': case 'utf8': case 'large_utf8': {
        const large = type.kind === 'large_binary' || type.kind === 'large_utf8';
        const offsets = offsetEntries().map((v, i) => integer(v, `${path}.OFFSET[${i}]`, 0, large ? Number.MAX_SAFE_INTEGER : 2 ** 31 - 1));
        const values = dataOf('DATA').map((v, i) => type.kind === 'utf8' || type.kind === 'large_utf8'
          ? encoder.encode(string(v, `${path}.DATA[${i}]`))
          : hex(v, `${path}.DATA[${i}]`));
        const data = new Uint8Array(offsets[n]!);
        values.forEach((b, i) => {
          const size = offsets[i + 1]! - offsets[i]!;
          if (size < 0) fail(`${path}.OFFSET[${i + 1}]`, `expected offsets in increasing order, found ${offsets[i + 1]} after ${offsets[i]}`);
          if (b.length !== size) fail(`${path}.DATA[${i}]`, `expected ${size} bytes (OFFSET[${i + 1}] - OFFSET[${i}]), found ${b.length}`);
          data.set(b, offsets[i]!);
        });
        return make([bitmap, large ? bytes(BigInt64Array.from(offsets, BigInt)) : bytes(Int32Array.from(offsets)), data], nulls);
      }
      case 'binary_view': case 'utf8_view':
        return make([bitmap, ...readViews(type.kind, dataOf('VIEWS'), col.VARIADIC_DATA_BUFFERS, path)], nulls);
      case 'fixed_size_binary': {
        const w = type.byteWidth;
        const data = new Uint8Array(n * w);
        dataOf('DATA').forEach((v, i) => {
          const b = hex(v, `${path}.DATA[${i}]`);
          if (b.length !== w) fail(`${path}.DATA[${i}]`, `expected ${w} bytes, found ${b.length}`);
          data.set(b, i * w);
        });
        return make([bitmap, data], nulls);
      }
      case 'list': case 'large_list': case 'map': {
        const f = type.kind === 'map' ? type.entries : type.child;
        const kid = child(f, children([f])[0]!, 0);
        const large = type.kind === 'large_list';
        const offsets = offsetEntries().map((v, i) => integer(v, `${path}.OFFSET[${i}]`, 0, kid.length));
        return make([bitmap, large ? bytes(BigInt64Array.from(offsets, BigInt)) : bytes(Int32Array.from(offsets))], nulls, [kid]);
      }
      case 'list_view': case 'large_list_view': {
        const kid = child(type.child, children([type.child])[0]!, 0);
        const large = type.kind === 'large_list_view';
        const max = large ? Number.MAX_SAFE_INTEGER : 2 ** 31 - 1;
        const offsets = entries('OFFSET').map((v, i) => integer(v, `${path}.OFFSET[${i}]`, 0, max));
        const sizes = entries('SIZE').map((v, i) => integer(v, `${path}.SIZE[${i}]`, 0, max));
        const encode = (a: number[]) => (large ? bytes(BigInt64Array.from(a, BigInt)) : bytes(Int32Array.from(a)));
        return make([bitmap, encode(offsets), encode(sizes)], nulls, [kid]);
      }
      case 'fixed_size_list':
        return make([bitmap], nulls, [child(type.child, children([type.child])[0]!, 0, n * type.listSize)]);
      case 'struct': {
        const json = children(type.children);
        return make([bitmap], nulls, type.children.map((f, i) => child(f, json[i]!, i, n)));
      }
      case 'dictionary': {
        const dictionary = this.dictionary(type, path);
        return make([bitmap, fixedWidth(type.indexType, dataOf('DATA'), `${path}.DATA`)], nulls, [], dictionary);
      }
      default:
        return make([bitmap, fixedWidth(type, dataOf('DATA'), `${path}.DATA`)], nulls);
    }
  }
}

/** The JSON of a zero value of a type's DATA (or VIEWS) entries. */
function zeroOf(type: DataType): JsonValue {
  switch (type.kind) {
    case 'bool': return false;
    case 'binary': case 'large_binary': case 'utf8': case 'large_utf8': return '';
    case 'binary_view': case 'utf8_view': return { SIZE: 0, INLINED: '' };
    case 'fixed_size_binary': return '00'.repeat(type.byteWidth);
    case 'interval':
      if (type.unit === 'day_time') return { days: 0, milliseconds: 0 };
      if (type.unit === 'month_day_nano') return { months: 0, days: 0, nanoseconds: 0 };
      return 0;
    default: return 0;
  }
}

// ---- file ---------------------------------------------------------------------------

/**
 * Reads an integration JSON file. Every batch is a raw struct array of the schema's fields; a dictionary is read once and shared (the same RawArray) by every batch and field that uses its id.
 *
 * Ownership: JS memory; nothing to release.
 * @param text - the file's text.
 * @returns the schema and the batches.
 * @throws `ArrowCDeviceError` (EINVAL, or ENOSYS for pre-1.0 unions with nulls) naming the place in the file, what was expected and what was found.
 */
export function readIntegrationJson(text: string): IntegrationFile {
  const root = object(parseJson(text), 'file');
  const s = object(root.schema, 'schema');
  const dicts: Dictionaries = { idOf: new Map(), valueType: new Map() };
  const fields = array(s.fields, 'schema.fields').map((f, i) => readField(f, `schema.fields[${i}]`, dicts));
  const schema: Schema = { fields, metadata: metadata(s.metadata, 'schema.metadata') };

  const dictionaryBatches = new Map<number, { column: JsonObject; count: number; path: string }>();
  const dictionaries = root.dictionaries === undefined || root.dictionaries === null ? [] : array(root.dictionaries, 'dictionaries');
  dictionaries.forEach((d, i) => {
    const at = `dictionaries[${i}]`;
    const o = object(d, at);
    const id = integer(o.id, `${at}.id`, Number.MIN_SAFE_INTEGER);
    if (dictionaryBatches.has(id)) fail(`${at}.id`, `expected distinct dictionary ids, found ${id} twice`);
    // The spec shows "data" as a list of one batch; files have the batch itself.
    let data = o.data;
    if (Array.isArray(data)) {
      if (data.length !== 1) fail(`${at}.data`, `expected one record batch, found ${data.length}`);
      data = data[0];
    }
    const batch = object(data, `${at}.data`);
    const count = integer(batch.count, `${at}.data.count`, 0, 2 ** 31 - 1);
    const columns = array(batch.columns, `${at}.data.columns`);
    if (columns.length !== 1) fail(`${at}.data.columns`, `expected 1 entry, found ${columns.length}`);
    dictionaryBatches.set(id, { column: object(columns[0], `${at}.data.columns[0]`), count, path: `${at} (id ${id}).data.columns[0]` });
  });

  const reader = new DataReader(dicts, dictionaryBatches);
  const type: DataType = { kind: 'struct', children: fields };
  const batches = array(root.batches, 'batches').map((b, i): RawArray => {
    const at = `batches[${i}]`;
    const o = object(b, at);
    const count = integer(o.count, `${at}.count`, 0, 2 ** 31 - 1);
    const columns = array(o.columns, `${at}.columns`);
    if (columns.length !== fields.length) fail(`${at}.columns`, `expected ${fields.length} entries (one per field), found ${columns.length}`);
    const children = fields.map((f, k) => {
      const path = `${at}.columns[${k}] '${f.name}'`;
      return reader.array(f.type, object(columns[k], path), path, count);
    });
    return { type, length: count, nullCount: 0, offset: 0, buffers: [null], children, dictionary: null };
  });
  return { schema, batches };
}