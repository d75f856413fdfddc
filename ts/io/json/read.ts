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

import { ArrowCDeviceError, EINVAL, ENOSYS } from '../../abi/errors.js';
import type { RawArray } from '../../model/raw.js';
import { typesEqual, typeToString, type DataType, type Field, type IntType, type Metadata, type Schema, type TimeUnit } from '../../model/types.js';
import { parseJson, type JsonObject, type JsonValue } from './parse.js';

export interface IntegrationFile {
  readonly schema: Schema;
  /** One struct<schema fields> per record batch: offset 0, null count 0, buffers [null]. */
  readonly batches: RawArray[];
}

const TIME_UNITS: Record<string, TimeUnit> = { SECOND: 's', MILLISECOND: 'ms', MICROSECOND: 'us', NANOSECOND: 'ns' };
const TYPE_NAMES = 'null, bool, int, floatingpoint, utf8, largeutf8, utf8view, binary, largebinary, binaryview, fixedsizebinary, ' +
  'decimal, date, time, timestamp, duration, interval, list, largelist, listview, largelistview, fixedsizelist, struct, map, union, runendencoded';
const encoder = new TextEncoder();

function fail(path: string, message: string): never {
  throw new ArrowCDeviceError(`${path}: ${message}`, EINVAL, path);
}

/** A short description of a JSON value for error messages. */
function describe(v: JsonValue | undefined): string {
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return `an array of ${v.length} entries`;
  if (typeof v === 'bigint') return v.toString();
  if (v !== null && typeof v === 'object') return 'an object';
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

function object(v: JsonValue | undefined, path: string): JsonObject {
  if (v === null || v === undefined || typeof v !== 'object' || Array.isArray(v)) fail(path, `expected an object, found ${describe(v)}`);
  return v as JsonObject;
}

function array(v: JsonValue | undefined, path: string): JsonValue[] {
  if (!Array.isArray(v)) fail(path, `expected an array, found ${describe(v)}`);
  return v;
}

function string(v: JsonValue | undefined, path: string): string {
  if (typeof v !== 'string') fail(path, `expected a string, found ${describe(v)}`);
  return v;
}

function boolean(v: JsonValue | undefined, path: string): boolean {
  if (typeof v !== 'boolean') fail(path, `expected true or false, found ${describe(v)}`);
  return v;
}

/** An integer given as a JSON number, a big integer or a decimal string. */
function bigInteger(v: JsonValue | undefined, path: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  return fail(path, `expected an integer, found ${describe(v)}`);
}

/** A number-sized integer in [min, max]. */
function integer(v: JsonValue | undefined, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) return v;
  const big = bigInteger(v, path);
  if (big < BigInt(min) || big > BigInt(max)) fail(path, `expected an integer in [${min}, ${max}], found ${big}`);
  return Number(big);
}

function metadata(v: JsonValue | undefined, path: string): Metadata | null {
  if (v === undefined || v === null) return null;
  const m = new Map<string, string>();
  array(v, path).forEach((entry, i) => {
    const o = object(entry, `${path}[${i}]`);
    m.set(string(o.key, `${path}[${i}].key`), string(o.value, `${path}[${i}].value`));
  });
  return m;
}

// ---- schema -------------------------------------------------------------------

/** Dictionary ids of the schema, by the dictionary type object each field got. */
interface Dictionaries {
  readonly idOf: Map<DataType, number>;
  /** The value type of each id (fields sharing an id must agree) and where it was declared. */
  readonly valueType: Map<number, { type: DataType; path: string }>;
}

function unit(v: JsonValue | undefined, path: string): TimeUnit {
  const u = TIME_UNITS[string(v, path)];
  if (u === undefined) fail(path, `expected SECOND, MILLISECOND, MICROSECOND or NANOSECOND, found ${describe(v)}`);
  return u;
}

function intType(t: JsonObject, path: string): IntType {
  const bitWidth = integer(t.bitWidth, `${path}.bitWidth`);
  if (bitWidth !== 8 && bitWidth !== 16 && bitWidth !== 32 && bitWidth !== 64) fail(`${path}.bitWidth`, `expected 8, 16, 32 or 64, found ${bitWidth}`);
  return { kind: 'int', bitWidth, signed: boolean(t.isSigned, `${path}.isSigned`) };
}

function typeOf(t: JsonObject, children: Field[], path: string): DataType {
  const name = string(t.name, `${path}.name`);
  const nChildren = (n: number) => {
    if (children.length !== n) fail(path, `a ${name} has ${n} ${n === 1 ? 'child' : 'children'}, found ${children.length}`);
  };
  if (!['list', 'largelist', 'listview', 'largelistview', 'fixedsizelist', 'struct', 'map', 'union', 'runendencoded'].includes(name)) nChildren(0);
  switch (name) {
    case 'null': return { kind: 'null' };
    case 'bool': return { kind: 'bool' };
    case 'int': return intType(t, path);
    case 'floatingpoint': {
      const bitWidth = ({ HALF: 16, SINGLE: 32, DOUBLE: 64 } as const)[string(t.precision, `${path}.precision`) as 'HALF'];
      if (bitWidth === undefined) fail(`${path}.precision`, `expected HALF, SINGLE or DOUBLE, found ${describe(t.precision)}`);
      return { kind: 'float', bitWidth };
    }
    case 'utf8': return { kind: 'utf8' };
    case 'largeutf8': return { kind: 'large_utf8' };
    case 'utf8view': return { kind: 'utf8_view' };
    case 'binary': return { kind: 'binary' };
    case 'largebinary': return { kind: 'large_binary' };
    case 'binaryview': return { kind: 'binary_view' };
    case 'fixedsizebinary': return { kind: 'fixed_size_binary', byteWidth: integer(t.byteWidth, `${path}.byteWidth`, 0, 2 ** 31 - 1) };
    case 'decimal': {
      const bitWidth = t.bitWidth === undefined ? 128 : integer(t.bitWidth, `${path}.bitWidth`);
      if (bitWidth !== 32 && bitWidth !== 64 && bitWidth !== 128 && bitWidth !== 256) fail(`${path}.bitWidth`, `expected 32, 64, 128 or 256, found ${bitWidth}`);
      const precision = integer(t.precision, `${path}.precision`, 1, 76);
      return { kind: 'decimal', bitWidth, precision, scale: integer(t.scale, `${path}.scale`, -(2 ** 31), 2 ** 31 - 1) };
    }
    case 'date': {
      const u = string(t.unit, `${path}.unit`);
      if (u !== 'DAY' && u !== 'MILLISECOND') fail(`${path}.unit`, `expected DAY or MILLISECOND, found ${describe(u)}`);
      return { kind: 'date', unit: u === 'DAY' ? 'day' : 'ms' };
    }
    case 'time': {
      const u = unit(t.unit, `${path}.unit`);
      const expected = u === 's' || u === 'ms' ? 32 : 64;
      const bitWidth = t.bitWidth === undefined ? expected : integer(t.bitWidth, `${path}.bitWidth`);
      if (bitWidth !== expected) fail(`${path}.bitWidth`, `expected ${expected} for a time in ${t.unit}, found ${bitWidth}`);
      return { kind: 'time', unit: u };
    }
    case 'timestamp': {
      const tz = t.timezone === undefined || t.timezone === null ? '' : string(t.timezone, `${path}.timezone`);
      return { kind: 'timestamp', unit: unit(t.unit, `${path}.unit`), timezone: tz };
    }
    case 'duration': return { kind: 'duration', unit: unit(t.unit, `${path}.unit`) };
    case 'interval': {
      const u = ({ YEAR_MONTH: 'months', DAY_TIME: 'day_time', MONTH_DAY_NANO: 'month_day_nano' } as const)[string(t.unit, `${path}.unit`) as 'DAY_TIME'];
      if (u === undefined) fail(`${path}.unit`, `expected YEAR_MONTH, DAY_TIME or MONTH_DAY_NANO, found ${describe(t.unit)}`);
      return { kind: 'interval', unit: u };
    }
    case 'list': case 'largelist': case 'listview': case 'largelistview': {
      nChildren(1);
      const kind = ({ list: 'list', largelist: 'large_list', listview: 'list_view', largelistview: 'large_list_view' } as const)[name];
      return { kind, child: children[0]! };
    }
    case 'fixedsizelist':
      nChildren(1);
      return { kind: 'fixed_size_list', listSize: integer(t.listSize, `${path}.listSize`, 0, 2 ** 31 - 1), child: children[0]! };
    case 'struct': return { kind: 'struct', children };
    case 'map': {
      nChildren(1);
      const entries = children[0]!;
      if (entries.type.kind !== 'struct' || entries.type.children.length !== 2) {
        fail(path, `a map's child is a struct of 2 fields (key, value), found ${typeToString(entries.type)}`);
      }
      return { kind: 'map', entries, keysSorted: t.keysSorted === undefined ? false : boolean(t.keysSorted, `${path}.keysSorted`) };
    }
    case 'union': {
      const mode = string(t.mode, `${path}.mode`).toUpperCase();
      if (mode !== 'SPARSE' && mode !== 'DENSE') fail(`${path}.mode`, `expected SPARSE or DENSE, found ${describe(t.mode)}`);
      const typeIds = t.typeIds === undefined || t.typeIds === null
        ? children.map((_, i) => i)
        : array(t.typeIds, `${path}.typeIds`).map((id, i) => integer(id, `${path}.typeIds[${i}]`, 0, 127));
      if (typeIds.length !== children.length) fail(`${path}.typeIds`, `expected ${children.length} entries (one per child), found ${typeIds.length}`);
      if (new Set(typeIds).size !== typeIds.length) fail(`${path}.typeIds`, `expected distinct type ids, found ${typeIds.join(', ')}`);
      return { kind: 'union', mode: mode === 'SPARSE' ? 'sparse' : 'dense', typeIds, children };
    }
    case 'runendencoded': {
      nChildren(2);
      const runEnds = children[0]!;
      if (runEnds.type.kind !== 'int' || !runEnds.type.signed || runEnds.type.bitWidth === 8) {
        fail(path, `run ends are int16, int32 or int64, found ${typeToString(runEnds.type)}`);
      }
      return { kind: 'run_end_encoded', runEnds, values: children[1]! };
    }
    default:
      return fail(`${path}.name`, `unknown type name ${describe(name)}; expected one of ${TYPE_NAMES}`);
  }
}

function readField(v: JsonValue | undefined, path: string, dicts: Dictionaries): Field {
  const f = object(v, path);
  const name = string(f.name, `${path}.name`);
  const at = `${path} '${name}'`;
  const children = f.children === undefined || f.children === null ? [] : array(f.children, `${at}.children`);
  const fields = children.map((c, i) => readField(c, `${at}.children[${i}]`, dicts));
  let type = typeOf(object(f.type, `${at}.type`), fields, `${at}.type`);
  if (f.dictionary !== undefined && f.dictionary !== null) {
    const d = object(f.dictionary, `${at}.dictionary`);
    const id = integer(d.id, `${at}.dictionary.id`, Number.MIN_SAFE_INTEGER);
    const indexType = intType(object(d.indexType, `${at}.dictionary.indexType`), `${at}.dictionary.indexType`);
    const ordered = d.isOrdered === undefined ? false : boolean(d.isOrdered, `${at}.dictionary.isOrdered`);
    const known = dicts.valueType.get(id);
    if (known !== undefined && !typesEqual(known.type, type)) {
      fail(`${at}.dictionary.id`, `id ${id} is ${typeToString(known.type)} at ${known.path}, found ${typeToString(type)}`);
    }
    if (known === undefined) dicts.valueType.set(id, { type, path: at });
    type = { kind: 'dictionary', indexType, valueType: type, ordered };
    dicts.idOf.set(type, id);
  }
  return { name, type, nullable: boolean(f.nullable, `${at}.nullable`), metadata: metadata(f.metadata, `${at}.metadata`) };
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

function bytes(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function readValidity(entries: JsonValue[], path: string): { bitmap: Uint8Array; nulls: number } {
  const bitmap = new Uint8Array(Math.ceil(entries.length / 8));
  let nulls = 0;
  entries.forEach((v, i) => {
    if (v === 1 || v === true) bitmap[i >> 3] |= 1 << (i & 7);
    else if (v === 0 || v === false) nulls++;
    else fail(`${path}[${i}]`, `expected 1 or 0, found ${describe(v)}`);
  });
  return { bitmap, nulls };
}

function hex(v: JsonValue, path: string): Uint8Array {
  const s = string(v, path);
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) fail(path, `expected a hex string of whole bytes, found ${describe(s)}`);
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** VIEWS and VARIADIC_DATA_BUFFERS → [views, ...variadic buffers, variadic sizes]. */
function readViews(kind: 'binary_view' | 'utf8_view', views: JsonValue[], variadic: JsonValue | undefined, path: string): Uint8Array[] {
  const buffers = (variadic === undefined ? [] : array(variadic, `${path}.VARIADIC_DATA_BUFFERS`))
    .map((b, i) => hex(b, `${path}.VARIADIC_DATA_BUFFERS[${i}]`));
  const out = new Uint8Array(views.length * 16);
  const dv = new DataView(out.buffer);
  views.forEach((v, i) => {
    const at = `${path}.VIEWS[${i}]`;
    const view = object(v, at);
    const size = integer(view.SIZE, `${at}.SIZE`, 0, 2 ** 31 - 1);
    dv.setInt32(i * 16, size, true);
    if (size <= 12) {
      if (view.INLINED === undefined) fail(at, `expected INLINED for a view of ${size} bytes, found ${Object.keys(view).join(', ')}`);
      const inlined = kind === 'utf8_view' ? encoder.encode(string(view.INLINED, `${at}.INLINED`)) : hex(view.INLINED, `${at}.INLINED`);
      if (inlined.length !== size) fail(`${at}.INLINED`, `expected ${size} bytes (SIZE), found ${inlined.length}`);
      out.set(inlined, i * 16 + 4);
      return;
    }
    const prefix = hex(view.PREFIX_HEX ?? null, `${at}.PREFIX_HEX`);
    if (prefix.length !== 4) fail(`${at}.PREFIX_HEX`, `expected 4 bytes, found ${prefix.length}`);
    const index = integer(view.BUFFER_INDEX, `${at}.BUFFER_INDEX`, 0, Math.max(0, buffers.length - 1));
    const buffer = buffers[index];
    if (buffer === undefined) fail(`${at}.BUFFER_INDEX`, `expected an index into VARIADIC_DATA_BUFFERS, found ${index} with none`);
    const offset = integer(view.OFFSET, `${at}.OFFSET`, 0, 2 ** 31 - 1);
    if (offset + size > buffer.length) fail(`${at}.OFFSET`, `bytes [${offset}, ${offset + size}) run past buffer ${index} of ${buffer.length} bytes`);
    if (!prefix.every((b, k) => buffer[offset + k] === b)) fail(`${at}.PREFIX_HEX`, `expected the first 4 bytes of the viewed data, found ${describe(view.PREFIX_HEX ?? null)}`);
    out.set(prefix, i * 16 + 4);
    dv.setInt32(i * 16 + 8, index, true);
    dv.setInt32(i * 16 + 12, offset, true);
  });
  const sizes = BigInt64Array.from(buffers, (b) => BigInt(b.length));
  return [out, ...buffers, bytes(sizes)];
}

/** IEEE 754 half-precision bits of a number, rounded to nearest, ties to even. */
function toHalf(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00; // 65520 is halfway between 65504 and 2^16: ties round to infinity
  const roundEven = (m: number) => {
    const f = Math.floor(m);
    const d = m - f;
    return d > 0.5 || (d === 0.5 && f % 2 === 1) ? f + 1 : f;
  };
  if (a < 2 ** -14) return sign | roundEven(a * 2 ** 24); // subnormal (1024 carries into the exponent)
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  let m = roundEven(a * 2 ** (10 - e));
  if (m === 2048) {
    m = 1024;
    e++;
  }
  return sign | ((e + 15) << 10) | (m - 1024);
}

function float(v: JsonValue, path: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && (v === 'NaN' || /^[-+]?(Infinity|\d+(\.\d*)?([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)$/.test(v))) return Number(v);
  return fail(path, `expected a number, found ${describe(v)}`);
}

function int32Field(o: JsonObject, key: string, path: string): number {
  return integer(o[key], `${path}.${key}`, -(2 ** 31), 2 ** 31 - 1);
}

function int64(v: JsonValue | undefined, path: string): bigint {
  const b = bigInteger(v, path);
  if (b < -(2n ** 63n) || b >= 2n ** 63n) fail(path, `expected a signed 64-bit integer, found ${b}`);
  return b;
}

/** DATA of a fixed-width type as its little-endian values buffer. */
function fixedWidth(type: DataType, values: JsonValue[], path: string): Uint8Array {
  const n = values.length;
  const at = (i: number) => `${path}[${i}]`;
  switch (type.kind) {
    case 'int': {
      const { bitWidth, signed } = type;
      if (bitWidth === 64) {
        const out = signed ? new BigInt64Array(n) : new BigUint64Array(n);
        values.forEach((v, i) => {
          const b = bigInteger(v, at(i));
          const ok = signed ? b >= -(2n ** 63n) && b < 2n ** 63n : b >= 0n && b < 2n ** 64n;
          if (!ok) fail(at(i), `expected an ${signed ? '' : 'u'}int64, found ${b}`);
          out[i] = b;
        });
        return bytes(out);
      }
      const min = signed ? -(2 ** (bitWidth - 1)) : 0;
      const max = signed ? 2 ** (bitWidth - 1) - 1 : 2 ** bitWidth - 1;
      const Ctor = { 8: signed ? Int8Array : Uint8Array, 16: signed ? Int16Array : Uint16Array, 32: signed ? Int32Array : Uint32Array }[bitWidth];
      const out = new Ctor(n);
      values.forEach((v, i) => {
        if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) out[i] = v;
        else out[i] = integer(v, at(i), min, max);
      });
      return bytes(out);
    }
    case 'float': {
      if (type.bitWidth === 16) return bytes(Uint16Array.from(values, (v, i) => toHalf(float(v, at(i)))));
      const numbers = values.map((v, i) => float(v, at(i)));
      return bytes(type.bitWidth === 32 ? Float32Array.from(numbers) : Float64Array.from(numbers));
    }
    case 'decimal': {
      const w = type.bitWidth / 8;
      const out = new Uint8Array(n * w);
      const limit = 1n << BigInt(type.bitWidth - 1);
      values.forEach((v, i) => {
        let b = bigInteger(v, at(i));
        if (b < -limit || b >= limit) fail(at(i), `expected an integer that fits ${type.bitWidth} bits, found ${b}`);
        if (b < 0n) b += limit << 1n;
        for (let k = 0; k < w; k++, b >>= 8n) out[i * w + k] = Number(b & 0xffn);
      });
      return out;
    }
    case 'date':
      return fixedWidth({ kind: 'int', bitWidth: type.unit === 'day' ? 32 : 64, signed: true }, values, path);
    case 'time':
      return fixedWidth({ kind: 'int', bitWidth: type.unit === 's' || type.unit === 'ms' ? 32 : 64, signed: true }, values, path);
    case 'timestamp': case 'duration':
      return fixedWidth({ kind: 'int', bitWidth: 64, signed: true }, values, path);
    case 'interval': {
      if (type.unit === 'months') return fixedWidth({ kind: 'int', bitWidth: 32, signed: true }, values, path);
      if (type.unit === 'day_time') {
        const out = new Int32Array(2 * n);
        values.forEach((v, i) => {
          const o = object(v, at(i));
          out[2 * i] = int32Field(o, 'days', at(i));
          out[2 * i + 1] = int32Field(o, 'milliseconds', at(i));
        });
        return bytes(out);
      }
      const out = new Uint8Array(16 * n);
      const dv = new DataView(out.buffer);
      values.forEach((v, i) => {
        const o = object(v, at(i));
        dv.setInt32(16 * i, int32Field(o, 'months', at(i)), true);
        dv.setInt32(16 * i + 4, int32Field(o, 'days', at(i)), true);
        dv.setBigInt64(16 * i + 8, int64(o.nanoseconds, `${at(i)}.nanoseconds`), true);
      });
      return out;
    }
    default:
      return fail(path, `${typeToString(type)} has no DATA of fixed width`);
  }
}

// ---- file ---------------------------------------------------------------------------

/**
 * Reads an integration JSON file. Every batch is a struct<schema fields> raw
 * array; a dictionary is read once and shared (the same RawArray) by every
 * batch and field that uses its id. Throws ArrowCDeviceError (EINVAL, or
 * ENOSYS for pre-1.0 unions with nulls) naming the place in the file, what
 * was expected and what was found.
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
