// Raw arrays → Arrow integration JSON (Integration.rst), the inverse of
// read.ts. Arrays with an offset are written as their logical slice (the JSON
// has no offsets). Dictionaries are told apart by identity, given ids 0, 1, ...
// in order of first use, and written once in "dictionaries".

import { ArrowCDeviceError, EINVAL } from '../../abi/errors.js';
import { byteWidth, type RawArray } from '../../model/raw.js';
import { compareRaw, intAt, isValid, leafValue, toHex } from '../../model/raw-values.js';
import { childFields, type DataType, type Field, type Metadata, type TimeUnit } from '../../model/types.js';
import type { JsonObject, JsonValue } from './parse.js';
import type { IntegrationFile } from './read.js';

const UNIT_NAMES: Record<TimeUnit, string> = { s: 'SECOND', ms: 'MILLISECOND', us: 'MICROSECOND', ns: 'NANOSECOND' };
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function fail(path: string, message: string): never {
  throw new ArrowCDeviceError(`${path}: ${message}`, EINVAL, path);
}

// ---- schema -------------------------------------------------------------------

function typeJson(t: DataType): JsonObject {
  switch (t.kind) {
    case 'null': case 'bool': case 'utf8': case 'binary': case 'struct':
      return { name: t.kind };
    case 'large_utf8': return { name: 'largeutf8' };
    case 'utf8_view': return { name: 'utf8view' };
    case 'large_binary': return { name: 'largebinary' };
    case 'binary_view': return { name: 'binaryview' };
    case 'int': return { name: 'int', isSigned: t.signed, bitWidth: t.bitWidth };
    case 'float': return { name: 'floatingpoint', precision: { 16: 'HALF', 32: 'SINGLE', 64: 'DOUBLE' }[t.bitWidth] };
    case 'decimal': return { name: 'decimal', precision: t.precision, scale: t.scale, bitWidth: t.bitWidth };
    case 'fixed_size_binary': return { name: 'fixedsizebinary', byteWidth: t.byteWidth };
    case 'date': return { name: 'date', unit: t.unit === 'day' ? 'DAY' : 'MILLISECOND' };
    case 'time': return { name: 'time', unit: UNIT_NAMES[t.unit], bitWidth: t.unit === 's' || t.unit === 'ms' ? 32 : 64 };
    case 'timestamp':
      return t.timezone === '' ? { name: 'timestamp', unit: UNIT_NAMES[t.unit] } : { name: 'timestamp', unit: UNIT_NAMES[t.unit], timezone: t.timezone };
    case 'duration': return { name: 'duration', unit: UNIT_NAMES[t.unit] };
    case 'interval': return { name: 'interval', unit: { months: 'YEAR_MONTH', day_time: 'DAY_TIME', month_day_nano: 'MONTH_DAY_NANO' }[t.unit] };
    case 'list': return { name: 'list' };
    case 'large_list': return { name: 'largelist' };
    case 'list_view': return { name: 'listview' };
    case 'large_list_view': return { name: 'largelistview' };
    case 'fixed_size_list': return { name: 'fixedsizelist', listSize: t.listSize };
    case 'map': return { name: 'map', keysSorted: t.keysSorted };
    case 'union': return { name: 'union', mode: t.mode === 'sparse' ? 'SPARSE' : 'DENSE', typeIds: [...t.typeIds] };
    case 'run_end_encoded': return { name: 'runendencoded' };
    case 'dictionary': return typeJson(t.valueType);
  }
}

function metadataJson(m: Metadata): JsonValue {
  return [...m].map(([key, value]) => ({ key, value }));
}

// ---- dictionaries ---------------------------------------------------------------

/**
 * Dictionary ids by schema position. A position's key is the column index,
 * then '.k' per child and '.d' into a dictionary's values, alike in the
 * schema and in the data.
 */
class DictionaryIds {
  private readonly idOf = new Map<RawArray, number>();
  /** raw: null for ids of fields that no batch has data for. */
  private readonly atKey = new Map<string, { id: number; raw: RawArray | null; path: string }>();
  readonly entries: { id: number; raw: RawArray }[] = [];
  private next = 0;

  /** Finds the dictionaries of a (physical) raw array and its descendants. */
  collect(raw: RawArray, key: string, path: string): void {
    const { type } = raw;
    if (type.kind === 'dictionary') {
      const dict = raw.dictionary;
      if (dict === null) fail(path, 'dictionary-encoded array without a dictionary');
      const known = this.atKey.get(key);
      if (known !== undefined && known.raw !== null) {
        if (known.raw === dict) return;
        const differences = compareRaw(known.raw, dict, `${path}.dictionary`, 1);
        if (differences.length > 0) {
          fail(`${path}.dictionary`, `the JSON format has one dictionary per field, and this one differs from the one at ${known.path}: ${differences[0]}`);
        }
        return;
      }
      let id = this.idOf.get(dict);
      if (id === undefined) {
        id = this.next++;
        this.idOf.set(dict, id);
        this.entries.push({ id, raw: dict });
      }
      this.atKey.set(key, { id, raw: dict, path });
      this.collect(dict, `${key}.d`, `${path}.dictionary`);
      return;
    }
    raw.children.forEach((c, k) => this.collect(c, `${key}.${k}`, `${path}.children[${k}]`));
  }

  /** The id of the dictionary field at a key; a fresh one when no data has one there. */
  idAt(key: string): number {
    const known = this.atKey.get(key);
    if (known !== undefined) return known.id;
    const id = this.next++;
    this.atKey.set(key, { id, raw: null, path: key });
    return id;
  }
}

function fieldJson(f: Field, key: string, ids: DictionaryIds): JsonObject {
  const type = f.type;
  const valueType = type.kind === 'dictionary' ? type.valueType : type;
  const childKey = type.kind === 'dictionary' ? `${key}.d` : key;
  const out: JsonObject = {
    name: f.name,
    nullable: f.nullable,
    type: typeJson(valueType),
    children: childFields(valueType).map((c, k) => fieldJson(c, `${childKey}.${k}`, ids)),
  };
  if (type.kind === 'dictionary') {
    out.dictionary = { id: ids.idAt(key), indexType: typeJson(type.indexType), isOrdered: type.ordered };
  }
  if (f.metadata !== null) out.metadata = metadataJson(f.metadata);
  return out;
}

// ---- data -----------------------------------------------------------------------

/** JSON of n slots of raw starting at physical slot `start`. */
function columnJson(raw: RawArray, name: string, start: number, n: number, path: string): JsonObject {
  const { type } = raw;
  const out: JsonObject = { name, count: n };
  const slots = (f: (i: number) => JsonValue): JsonValue[] => {
    const a = new Array<JsonValue>(n);
    for (let i = 0; i < n; i++) a[i] = f(start + i);
    return a;
  };
  const fields = childFields(type);
  const kid = (k: number, from: number, count: number): JsonObject => {
    const c = raw.children[k];
    if (c === undefined) fail(path, `expected ${fields.length} children, found ${raw.children.length}`);
    const name = fields[k]!.name;
    if (from < c.offset || from + count > c.offset + c.length) {
      fail(`${path}.children[${k}]`, `expected slots [${from - c.offset}, ${from - c.offset + count}) within its length ${c.length}`);
    }
    return columnJson(c, name, from, count, `${path}.children[${k}] '${name}'`);
  };
  const wholeKid = (k: number) => kid(k, raw.children[k]?.offset ?? 0, raw.children[k]?.length ?? 0);
  const at = (i: number) => `${path}.buffers[${i}]`;

  if (type.kind === 'null') return out;
  if (type.kind !== 'union' && type.kind !== 'run_end_encoded') out.VALIDITY = slots((i) => (isValid(raw, i) ? 1 : 0));

  switch (type.kind) {
    case 'union': {
      out.TYPE_ID = slots((i) => intAt(raw.buffers[0] ?? null, 1, i, true, at(0)));
      if (type.mode === 'dense') {
        out.OFFSET = slots((i) => intAt(raw.buffers[1] ?? null, 4, i, true, at(1)));
        out.children = type.children.map((_, k) => wholeKid(k));
      } else {
        out.children = type.children.map((_, k) => kid(k, (raw.children[k]?.offset ?? 0) + start, n));
      }
      return out;
    }
    case 'run_end_encoded':
      out.children = runEndEncodedJson(raw, start, n, path);
      return out;
    case 'binary': case 'large_binary': case 'utf8': case 'large_utf8': {
      const w = type.kind === 'binary' || type.kind === 'utf8' ? 4 : 8;
      const first = intAt(raw.buffers[1] ?? null, w, start, true, at(1));
      const text = type.kind === 'utf8' || type.kind === 'large_utf8';
      out.OFFSET = offsetsJson(Array.from({ length: n + 1 }, (_, i) => intAt(raw.buffers[1] ?? null, w, start + i, true, at(1)) - first), w);
      out.DATA = slots((i) => {
        const s = intAt(raw.buffers[1] ?? null, w, i, true, at(1));
        const e = intAt(raw.buffers[1] ?? null, w, i + 1, true, at(1));
        const data = raw.buffers[2] ?? new Uint8Array(0);
        if (s < 0 || e < s || e > data.length) fail(at(2), `slot ${i - raw.offset} has bytes [${s}, ${e}), expected them within ${data.length} bytes`);
        return text ? decodeUtf8(data.subarray(s, e), `${path} slot ${i - raw.offset}`) : toHex(data.subarray(s, e));
      });
      return out;
    }
    case 'binary_view': case 'utf8_view': {
      const views = raw.buffers[1] ?? new Uint8Array(0);
      out.VIEWS = slots((i): JsonObject => {
        if ((i + 1) * 16 > views.length) fail(at(1), `expected ${(i + 1) * 16} bytes, found ${views.length}`);
        const view = views.subarray(i * 16, i * 16 + 16);
        const dv = new DataView(view.buffer, view.byteOffset, 16);
        const size = dv.getInt32(0, true);
        if (size <= 12) {
          const inlined = view.subarray(4, 4 + Math.max(0, size));
          return { SIZE: size, INLINED: type.kind === 'utf8_view' ? decodeUtf8(inlined, `${path} slot ${i - raw.offset}`) : toHex(inlined) };
        }
        return { SIZE: size, PREFIX_HEX: toHex(view.subarray(4, 8)), BUFFER_INDEX: dv.getInt32(8, true), OFFSET: dv.getInt32(12, true) };
      });
      out.VARIADIC_DATA_BUFFERS = raw.buffers.slice(2, -1).map((b) => toHex(b ?? new Uint8Array(0)));
      return out;
    }
    case 'list': case 'large_list': case 'map': {
      const w = type.kind === 'large_list' ? 8 : 4;
      const offsets = Array.from({ length: n + 1 }, (_, i) => intAt(raw.buffers[1] ?? null, w, start + i, true, at(1)));
      out.OFFSET = offsetsJson(offsets.map((o) => o - offsets[0]!), w);
      out.children = [kid(0, (raw.children[0]?.offset ?? 0) + offsets[0]!, offsets[n]! - offsets[0]!)];
      return out;
    }
    case 'list_view': case 'large_list_view': {
      const w = type.kind === 'large_list_view' ? 8 : 4;
      out.OFFSET = offsetsJson(slots((i) => intAt(raw.buffers[1] ?? null, w, i, true, at(1))) as number[], w);
      out.SIZE = offsetsJson(slots((i) => intAt(raw.buffers[2] ?? null, w, i, true, at(2))) as number[], w);
      out.children = [wholeKid(0)];
      return out;
    }
    case 'fixed_size_list':
      out.children = [kid(0, (raw.children[0]?.offset ?? 0) + start * type.listSize, n * type.listSize)];
      return out;
    case 'struct':
      out.children = type.children.map((_, k) => kid(k, (raw.children[k]?.offset ?? 0) + start, n));
      return out;
    case 'dictionary':
      out.DATA = slots((i) => leafValue(type.indexType, raw.buffers, i, path) as JsonValue);
      return out;
    case 'interval':
      if (type.unit === 'months') {
        out.DATA = slots((i) => (leafValue(type, raw.buffers, i, path) as { months: number }).months);
        return out;
      }
      if (type.unit === 'month_day_nano') {
        // Arrow C++ reads nanoseconds as a JSON integer, not a string.
        out.DATA = slots((i) => {
          const v = leafValue(type, raw.buffers, i, path) as { months: number; days: number; nanoseconds: string };
          return { months: v.months, days: v.days, nanoseconds: BigInt(v.nanoseconds) };
        });
        return out;
      }
      out.DATA = slots((i) => leafValue(type, raw.buffers, i, path) as JsonValue);
      return out;
    default:
      out.DATA = slots((i) => leafValue(type, raw.buffers, i, path) as JsonValue);
      return out;
  }
}

/** 32-bit offsets as numbers, 64-bit ones as strings (as the spec writes them). */
function offsetsJson(offsets: number[], width: number): JsonValue[] {
  return width === 8 ? offsets.map(String) : offsets;
}

function decodeUtf8(bytes: Uint8Array, where: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return fail(where, 'expected valid UTF-8 (the JSON format holds utf8 data as strings), found invalid bytes');
  }
}

/** The runs covering slots [start, start + n) of a run-end encoded array, re-based to 0. */
function runEndEncodedJson(raw: RawArray, start: number, n: number, path: string): JsonValue[] {
  const type = raw.type as Extract<DataType, { kind: 'run_end_encoded' }>;
  const [runEnds, values] = raw.children;
  if (runEnds === undefined || values === undefined) fail(path, `expected 2 children, found ${raw.children.length}`);
  const w = byteWidth(runEnds.type);
  const end = (k: number) => intAt(runEnds.buffers[1] ?? null, w, runEnds.offset + k, true, `${path}.children[0].buffers[1]`);
  // First run ending after `start`, last run ending at or after start + n.
  let first = 0;
  while (first < runEnds.length && end(first) <= start) first++;
  let last = first;
  while (n > 0 && last < runEnds.length && end(last) < start + n) last++;
  if (n > 0 && last >= runEnds.length) fail(`${path}.children[0]`, `the runs end before slot ${start + n - raw.offset}`);
  const count = n === 0 ? 0 : last - first + 1;
  const ends = new Array<bigint>(count);
  for (let k = 0; k < count; k++) ends[k] = BigInt(Math.min(end(first + k), start + n) - start);
  const buffer = w === 8 ? BigInt64Array.from(ends) : w === 4 ? Int32Array.from(ends, Number) : Int16Array.from(ends, Number);
  const rebased: RawArray = {
    type: runEnds.type, length: count, nullCount: 0, offset: 0, children: [], dictionary: null,
    buffers: [null, new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)],
  };
  return [
    columnJson(rebased, type.runEnds.name, 0, count, `${path}.children[0] '${type.runEnds.name}'`),
    columnJson(values, type.values.name, values.offset + first, count, `${path}.children[1] '${type.values.name}'`),
  ];
}

// ---- text -----------------------------------------------------------------------------

/** JSON text; bigints as bare integers, -0 as -0.0. */
function stringify(v: JsonValue, out: string[]): void {
  if (v === null) out.push('null');
  else if (typeof v === 'string') out.push(JSON.stringify(v));
  else if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new ArrowCDeviceError(`cannot write ${v} as a JSON number`, EINVAL);
    out.push(Object.is(v, -0) ? '-0.0' : String(v));
  } else if (typeof v === 'bigint' || typeof v === 'boolean') out.push(String(v));
  else if (Array.isArray(v)) {
    out.push('[');
    v.forEach((x, i) => {
      if (i > 0) out.push(',');
      stringify(x, out);
    });
    out.push(']');
  } else {
    out.push('{');
    let first = true;
    for (const [k, x] of Object.entries(v)) {
      if (!first) out.push(',');
      first = false;
      out.push(JSON.stringify(k), ':');
      stringify(x, out);
    }
    out.push('}');
  }
}

/**
 * Writes an integration JSON file that readIntegrationJson reads back to an
 * equal schema and logically equal batches. Each batch must be a struct of
 * the schema's fields. Throws ArrowCDeviceError (EINVAL) naming the place for
 * what the format cannot hold: invalid UTF-8 in utf8 data, or a field whose
 * batches carry different dictionaries (the JSON has one per field).
 *
 * Ownership: pure; nothing to release.
 * @param file - the schema and the batches.
 * @returns the JSON text.
 */
export function writeIntegrationJson(file: IntegrationFile): string {
  const { schema, batches } = file;
  const ids = new DictionaryIds();
  const batchesJson = batches.map((b, i): JsonValue => {
    const at = `batches[${i}]`;
    if (b.type.kind !== 'struct' || b.children.length !== schema.fields.length) {
      fail(at, `expected a struct of the schema's ${schema.fields.length} fields, found ${b.type.kind} with ${b.children.length} children`);
    }
    const columns = schema.fields.map((f, k) => {
      const c = b.children[k]!;
      const path = `${at}.columns[${k}] '${f.name}'`;
      // A struct's offset applies to its children as well.
      const start = c.offset + b.offset;
      if (b.offset + b.length > c.length) fail(path, `expected at least ${b.offset + b.length} slots, found ${c.length}`);
      ids.collect(c, String(k), path);
      return columnJson(c, f.name, start, b.length, path);
    });
    return { count: b.length, columns };
  });
  const fields = schema.fields.map((f, k) => fieldJson(f, String(k), ids));
  const root: JsonObject = { schema: schema.metadata === null ? { fields } : { fields, metadata: metadataJson(schema.metadata) } };
  if (ids.entries.length > 0) {
    root.dictionaries = ids.entries.map(({ id, raw }) => ({
      id,
      data: { count: raw.length, columns: [columnJson(raw, `DICT${id}`, raw.offset, raw.length, `dictionary ${id}`)] },
    }));
  }
  root.batches = batchesJson;
  const out: string[] = [];
  stringify(root, out);
  return out.join('');
}
