// The reader's schema half: integration JSON fields → the project's fields and
// data types, and the dictionary ids they declare (read-values.ts checks each
// JSON value; read.ts reads the data against the result).

import { typesEqual, typeToString, type DataType, type Field, type IntType, type TimeUnit } from '../../model/types.js';
import type { JsonObject, JsonValue } from './parse.js';
import { array, boolean, describe, fail, integer, metadata, object, string } from './read-values.js';

const TIME_UNITS: Record<string, TimeUnit> = { SECOND: 's', MILLISECOND: 'ms', MICROSECOND: 'us', NANOSECOND: 'ns' };
const TYPE_NAMES = 'null, bool, int, floatingpoint, utf8, largeutf8, utf8view, binary, largebinary, binaryview, fixedsizebinary, ' +
  'decimal, date, time, timestamp, duration, interval, list, largelist, listview, largelistview, fixedsizelist, struct, map, union, runendencoded';

/** Dictionary ids of the schema, by the dictionary type object each field got. */
export interface Dictionaries {
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

export function readField(v: JsonValue | undefined, path: string, dicts: Dictionaries): Field {
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
