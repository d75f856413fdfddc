// The Schema table of Schema.fbs → the project's Schema, with the dictionary
// id of every dictionary-encoded field. Slot numbers and enum values are
// those of Arrow's Schema.fbs.

import { ArrowCDeviceError, ENOSYS } from '../../abi/errors.js';
import { typesEqual, typeToString, type DataType, type Field, type IntType, type Metadata, type Schema, type TimeUnit } from '../../model/types.js';
import type { Table } from './flatbuffers.js';

/** Dictionary ids of a schema, by the dictionary type object each field got. */
export interface SchemaDictionaries {
  readonly idOf: Map<DataType, bigint>;
  /** The value type of each id (fields sharing an id agree). */
  readonly valueType: Map<bigint, DataType>;
}

export interface IpcSchema {
  readonly schema: Schema;
  readonly dictionaries: SchemaDictionaries;
}

// Type union tags of Schema.fbs.
const TYPE_NAMES = [
  'NONE', 'Null', 'Int', 'FloatingPoint', 'Binary', 'Utf8', 'Bool', 'Decimal', 'Date', 'Time', 'Timestamp', 'Interval',
  'List', 'Struct_', 'Union', 'FixedSizeBinary', 'FixedSizeList', 'Map', 'Duration', 'LargeBinary', 'LargeUtf8', 'LargeList',
  'RunEndEncoded', 'BinaryView', 'Utf8View', 'ListView', 'LargeListView',
] as const;
const TIME_UNITS: readonly TimeUnit[] = ['s', 'ms', 'us', 'ns'];
const ENDIANNESS_BIG = 1;
/** Nesting deeper than this is refused (the C core's limit too). */
const MAX_DEPTH = 64;

function fail(t: Table, message: string): never {
  return t.fb.fail(t.path, message);
}

export function readMetadata(t: Table, slot: number): Metadata | null {
  const entries = t.tables(slot, 'custom_metadata');
  if (entries === null) return null;
  return new Map(entries.map((kv) => [kv.binaryString(0, 'key') ?? '', kv.binaryString(1, 'value') ?? '']));
}

function intType(t: Table): IntType {
  const bitWidth = t.int32(0, 'bitWidth', 0);
  if (bitWidth !== 8 && bitWidth !== 16 && bitWidth !== 32 && bitWidth !== 64) fail(t, `bitWidth ${bitWidth}, expected 8, 16, 32 or 64`);
  return { kind: 'int', bitWidth, signed: t.bool(1, 'is_signed') };
}

function timeUnit(t: Table, fallback: number): TimeUnit {
  const u = t.int16(0, 'unit', fallback);
  const unit = TIME_UNITS[u];
  if (unit === undefined) fail(t, `unit ${u}, expected 0..3 (SECOND, MILLISECOND, MICROSECOND, NANOSECOND)`);
  return unit;
}

function typeOf(tag: number, t: Table | null, children: Field[], fieldTable: Table): DataType {
  const name = TYPE_NAMES[tag];
  if (name === undefined || name === 'NONE') fail(fieldTable, `type tag ${tag}, expected 1..${TYPE_NAMES.length - 1}`);
  const nested = ['List', 'Struct_', 'Union', 'FixedSizeList', 'Map', 'LargeList', 'RunEndEncoded', 'ListView', 'LargeListView'];
  if (!nested.includes(name) && children.length > 0) fail(fieldTable, `a ${name} has no children, found ${children.length}`);
  const n = (count: number) => {
    if (children.length !== count) fail(fieldTable, `a ${name} has ${count} ${count === 1 ? 'child' : 'children'}, found ${children.length}`);
  };
  // Tables without fields may be absent (some writers leave them out); those with fields must be there.
  const table = (): Table => t ?? fail(fieldTable, `type ${name} without its table`);
  switch (name) {
    case 'Null': return { kind: 'null' };
    case 'Int': return intType(table());
    case 'FloatingPoint': {
      const p = table().int16(0, 'precision', 0);
      const bitWidth = ([16, 32, 64] as const)[p];
      if (bitWidth === undefined) fail(table(), `precision ${p}, expected 0..2 (HALF, SINGLE, DOUBLE)`);
      return { kind: 'float', bitWidth };
    }
    case 'Binary': return { kind: 'binary' };
    case 'Utf8': return { kind: 'utf8' };
    case 'Bool': return { kind: 'bool' };
    case 'Decimal': {
      const d = table();
      const bitWidth = d.int32(2, 'bitWidth', 128);
      if (bitWidth !== 32 && bitWidth !== 64 && bitWidth !== 128 && bitWidth !== 256) fail(d, `bitWidth ${bitWidth}, expected 32, 64, 128 or 256`);
      const precision = d.int32(0, 'precision', 0);
      if (precision < 1) fail(d, `precision ${precision}, expected at least 1`);
      return { kind: 'decimal', bitWidth, precision, scale: d.int32(1, 'scale', 0) };
    }
    case 'Date': {
      const u = table().int16(0, 'unit', 1);
      if (u !== 0 && u !== 1) fail(table(), `unit ${u}, expected 0 (DAY) or 1 (MILLISECOND)`);
      return { kind: 'date', unit: u === 0 ? 'day' : 'ms' };
    }
    case 'Time': {
      const unit = timeUnit(table(), 1);
      const expected = unit === 's' || unit === 'ms' ? 32 : 64;
      const bitWidth = table().int32(1, 'bitWidth', 32);
      if (bitWidth !== expected) fail(table(), `bitWidth ${bitWidth} for a time in ${unit}, expected ${expected}`);
      return { kind: 'time', unit };
    }
    case 'Timestamp': return { kind: 'timestamp', unit: timeUnit(table(), 0), timezone: table().string(1, 'timezone') ?? '' };
    case 'Duration': return { kind: 'duration', unit: timeUnit(table(), 1) };
    case 'Interval': {
      const u = table().int16(0, 'unit', 0);
      const unit = (['months', 'day_time', 'month_day_nano'] as const)[u];
      if (unit === undefined) fail(table(), `unit ${u}, expected 0..2 (YEAR_MONTH, DAY_TIME, MONTH_DAY_NANO)`);
      return { kind: 'interval', unit };
    }
    case 'FixedSizeBinary': {
      const byteWidth = table().int32(0, 'byteWidth', 0);
      if (byteWidth < 0) fail(table(), `byteWidth ${byteWidth}, expected >= 0`);
      return { kind: 'fixed_size_binary', byteWidth };
    }
    case 'LargeBinary': return { kind: 'large_binary' };
    case 'LargeUtf8': return { kind: 'large_utf8' };
    case 'BinaryView': return { kind: 'binary_view' };
    case 'Utf8View': return { kind: 'utf8_view' };
    case 'List': case 'LargeList': case 'ListView': case 'LargeListView': {
      n(1);
      const kind = ({ List: 'list', LargeList: 'large_list', ListView: 'list_view', LargeListView: 'large_list_view' } as const)[name];
      return { kind, child: children[0]! };
    }
    case 'FixedSizeList': {
      n(1);
      const listSize = table().int32(0, 'listSize', 0);
      if (listSize < 0) fail(table(), `listSize ${listSize}, expected >= 0`);
      return { kind: 'fixed_size_list', listSize, child: children[0]! };
    }
    case 'Struct_': return { kind: 'struct', children };
    case 'Map': {
      n(1);
      const entries = children[0]!;
      if (entries.type.kind !== 'struct' || entries.type.children.length !== 2) {
        fail(fieldTable, `a map's child is a struct of 2 fields (key, value), found ${typeToString(entries.type)}`);
      }
      return { kind: 'map', entries, keysSorted: t?.bool(0, 'keysSorted') ?? false };
    }
    case 'Union': {
      const u = table();
      const m = u.int16(0, 'mode', 0);
      if (m !== 0 && m !== 1) fail(u, `mode ${m}, expected 0 (Sparse) or 1 (Dense)`);
      const typeIds = u.int32s(1, 'typeIds') ?? children.map((_, i) => i);
      if (typeIds.length !== children.length) fail(u, `${typeIds.length} typeIds for ${children.length} children`);
      if (typeIds.some((id) => id < 0 || id > 127)) fail(u, `typeIds ${typeIds.join(', ')}, expected each in 0..127`);
      if (new Set(typeIds).size !== typeIds.length) fail(u, `typeIds ${typeIds.join(', ')}, expected distinct ids`);
      return { kind: 'union', mode: m === 0 ? 'sparse' : 'dense', typeIds, children };
    }
    case 'RunEndEncoded': {
      n(2);
      const runEnds = children[0]!;
      if (runEnds.type.kind !== 'int' || !runEnds.type.signed || runEnds.type.bitWidth === 8) {
        fail(fieldTable, `run ends are int16, int32 or int64, found ${typeToString(runEnds.type)}`);
      }
      return { kind: 'run_end_encoded', runEnds, values: children[1]! };
    }
    default:
      return fail(fieldTable, `type ${name} is not supported`);
  }
}

/** Fields read so far, and how many the flatbuffer can hold (each takes a 4-byte offset in a vector). */
interface FieldCount { read: number; readonly limit: number }

function readField(t: Table, dicts: SchemaDictionaries, depth: number, count: FieldCount): Field {
  if (depth > MAX_DEPTH) fail(t, `fields nested deeper than ${MAX_DEPTH} levels`);
  // Children vectors that point at shared tables would make a small schema expand exponentially.
  if (++count.read > count.limit) fail(t, `more fields than a flatbuffer of ${t.fb.bytes.byteLength} bytes holds: fields are shared (a DAG, not a tree)`);
  const name = t.string(0, 'name') ?? '';
  const children = (t.tables(5, 'children') ?? []).map((c) => readField(c, dicts, depth + 1, count));
  const tag = t.uint8(2, 'type_type', 0);
  let type = typeOf(tag, t.table(3, 'type'), children, t);
  const encoding = t.table(4, 'dictionary');
  if (encoding !== null) {
    const id = encoding.int64(0, 'id');
    const index = encoding.table(1, 'indexType');
    const indexType: IntType = index === null ? { kind: 'int', bitWidth: 32, signed: true } : intType(index);
    const kind = encoding.int16(3, 'dictionaryKind', 0);
    if (kind !== 0) fail(encoding, `dictionaryKind ${kind}, expected 0 (DenseArray)`);
    const known = dicts.valueType.get(id);
    if (known !== undefined && !typesEqual(known, type)) {
      fail(encoding, `dictionary id ${id} is ${typeToString(known)} elsewhere in the schema, found ${typeToString(type)}`);
    }
    dicts.valueType.set(id, type);
    type = { kind: 'dictionary', indexType, valueType: type, ordered: encoding.bool(2, 'isOrdered') };
    dicts.idOf.set(type, id);
  }
  return { name, type, nullable: t.bool(1, 'nullable'), metadata: readMetadata(t, 6) };
}

/** Reads a Schema table; a big-endian schema is refused (ENOSYS). */
export function readSchema(t: Table): IpcSchema {
  if (t.int16(0, 'endianness', 0) === ENDIANNESS_BIG) {
    throw new ArrowCDeviceError(`${t.fb.where}: ${t.path}: the data is big-endian; only little-endian Arrow IPC is supported`, ENOSYS);
  }
  const dictionaries: SchemaDictionaries = { idOf: new Map(), valueType: new Map() };
  const count: FieldCount = { read: 0, limit: Math.floor(t.fb.bytes.byteLength / 4) };
  const fields = (t.tables(1, 'fields') ?? []).map((f) => readField(f, dictionaries, 0, count));
  return { schema: { fields, metadata: readMetadata(t, 2) }, dictionaries };
}
