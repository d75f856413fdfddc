// The one module that converts types, fields and schemas between the
// project's model (types.ts) and apache-arrow (a peer dependency).
//
// Metadata: arrow-js fields and schemas always carry a Map and have no
// "no metadata" state, so model null ↔ arrow-js empty map.

import * as arrow from 'apache-arrow';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../abi/errors.js';
import { typeToString } from '../model/types.js';
import type { DataType, Field, IntBitWidth, Metadata, Schema, TimeUnit } from '../model/types.js';

const TIME_UNIT: Record<TimeUnit, arrow.TimeUnit> = {
  s: arrow.TimeUnit.SECOND,
  ms: arrow.TimeUnit.MILLISECOND,
  us: arrow.TimeUnit.MICROSECOND,
  ns: arrow.TimeUnit.NANOSECOND,
};
const MODEL_TIME_UNIT: TimeUnit[] = ['s', 'ms', 'us', 'ns']; // indexed by arrow.TimeUnit
const PRECISION = { 16: arrow.Precision.HALF, 32: arrow.Precision.SINGLE, 64: arrow.Precision.DOUBLE } as const;
const FLOAT_BITS = [16, 32, 64] as const; // indexed by arrow.Precision
const INTERVAL_UNIT = {
  months: arrow.IntervalUnit.YEAR_MONTH,
  day_time: arrow.IntervalUnit.DAY_TIME,
  month_day_nano: arrow.IntervalUnit.MONTH_DAY_NANO,
} as const;
const MODEL_INTERVAL_UNIT = ['months', 'day_time', 'month_day_nano'] as const; // indexed by arrow.IntervalUnit

function unsupported(t: DataType): never {
  throw new ArrowCDeviceError(`${typeToString(t)} is not supported by apache-arrow`, ENOSYS);
}

function toArrowMetadata(m: Metadata | null): Map<string, string> | null {
  return m ? new Map(m) : null;
}

function fromArrowMetadata(m: ReadonlyMap<string, string> | null | undefined): Metadata | null {
  return m && m.size > 0 ? new Map(m) : null;
}

// arrow-js's Map_ constructor renames its entries field and the struct's two
// fields to entries/key/value in place; this puts the model's names back.
function rename(f: arrow.Field, name: string): void {
  (f as { name: string }).name = name;
}

function toArrowMap(t: Extract<DataType, { kind: 'map' }>): arrow.Map_ {
  const e = t.entries;
  if (e.type.kind !== 'struct' || e.type.children.length !== 2) {
    throw new ArrowCDeviceError(`${typeToString(t)}: expected entries of type struct<key, value>`, EINVAL);
  }
  const [key, value] = e.type.children.map(toArrowField) as [arrow.Field, arrow.Field];
  const entries = new arrow.Field(e.name, new arrow.Struct([key, value]), e.nullable, toArrowMetadata(e.metadata));
  const map = new arrow.Map_(entries, t.keysSorted);
  rename(entries, e.name);
  rename(key, e.type.children[0]!.name);
  rename(value, e.type.children[1]!.name);
  return map;
}

/**
 * The apache-arrow type for a model type; throws ENOSYS for types arrow-js lacks.
 *
 * Ownership: pure; nothing to release.
 * @param t - the type.
 */
export function toArrowType(t: DataType): arrow.DataType {
  switch (t.kind) {
    case 'null': return new arrow.Null();
    case 'bool': return new arrow.Bool();
    case 'int': return new arrow.Int(t.signed, t.bitWidth);
    case 'float': return new arrow.Float(PRECISION[t.bitWidth]);
    case 'binary': return new arrow.Binary();
    case 'large_binary': return new arrow.LargeBinary();
    case 'binary_view': return new arrow.BinaryView();
    case 'utf8': return new arrow.Utf8();
    case 'large_utf8': return new arrow.LargeUtf8();
    case 'utf8_view': return new arrow.Utf8View();
    case 'decimal': return new arrow.Decimal(t.scale, t.precision, t.bitWidth);
    case 'fixed_size_binary': return new arrow.FixedSizeBinary(t.byteWidth);
    case 'date': return new arrow.Date_(t.unit === 'day' ? arrow.DateUnit.DAY : arrow.DateUnit.MILLISECOND);
    case 'time': return new arrow.Time(TIME_UNIT[t.unit], t.unit === 's' || t.unit === 'ms' ? 32 : 64);
    case 'timestamp': return new arrow.Timestamp(TIME_UNIT[t.unit], t.timezone === '' ? null : t.timezone);
    case 'duration': return new arrow.Duration(TIME_UNIT[t.unit]);
    case 'interval': return new arrow.Interval(INTERVAL_UNIT[t.unit]);
    case 'list': return new arrow.List(toArrowField(t.child));
    case 'large_list': return new arrow.LargeList(toArrowField(t.child));
    case 'fixed_size_list': return new arrow.FixedSizeList(t.listSize, toArrowField(t.child));
    case 'struct': return new arrow.Struct(t.children.map(toArrowField));
    case 'map': return toArrowMap(t);
    case 'union': {
      const children = t.children.map(toArrowField);
      return t.mode === 'dense' ? new arrow.DenseUnion([...t.typeIds], children) : new arrow.SparseUnion([...t.typeIds], children);
    }
    case 'dictionary':
      // arrow-js types its indices as 8..32-bit ints only; it holds 64-bit ones
      // (and the C interface allows them), but its get() cannot read through
      // them: an import into apache-arrow refuses them unless converted
      // (arrow-data.ts, 'dictionary_index64'). null id: arrow-js assigns a fresh one.
      return new arrow.Dictionary(toArrowType(t.valueType), toArrowType(t.indexType) as arrow.Int32, null, t.ordered);
    case 'list_view':
    case 'large_list_view':
    case 'run_end_encoded':
      return unsupported(t);
  }
}

/**
 * The apache-arrow Field for a model field.
 *
 * Ownership: pure; nothing to release.
 * @param f - the field.
 */
export function toArrowField(f: Field): arrow.Field {
  return new arrow.Field(f.name, toArrowType(f.type), f.nullable, toArrowMetadata(f.metadata));
}

/**
 * The apache-arrow Schema for a model schema.
 *
 * Ownership: pure; nothing to release.
 * @param s - the schema.
 */
export function toArrowSchema(s: Schema): arrow.Schema {
  return new arrow.Schema(s.fields.map(toArrowField), toArrowMetadata(s.metadata));
}

function invalid(t: arrow.DataType, why: string): never {
  throw new ArrowCDeviceError(`apache-arrow type ${String(t)}: ${why}`, EINVAL);
}

function fromArrowUnit(t: arrow.DataType, unit: arrow.TimeUnit): TimeUnit {
  return MODEL_TIME_UNIT[unit] ?? invalid(t, `unknown time unit ${unit}`);
}

function fromArrowInt(t: arrow.Int): Extract<DataType, { kind: 'int' }> {
  const bitWidth = t.bitWidth as number;
  if (bitWidth !== 8 && bitWidth !== 16 && bitWidth !== 32 && bitWidth !== 64) invalid(t, `unknown bit width ${bitWidth}`);
  return { kind: 'int', bitWidth: bitWidth as IntBitWidth, signed: t.isSigned };
}

/**
 * The model type for an apache-arrow type.
 *
 * Ownership: pure; nothing to release.
 * @param t - the type.
 */
export function fromArrowType(t: arrow.DataType): DataType {
  const T = arrow.Type;
  switch (t.typeId) {
    case T.Null: return { kind: 'null' };
    case T.Bool: return { kind: 'bool' };
    case T.Int: return fromArrowInt(t as arrow.Int);
    case T.Float: {
      const bitWidth = FLOAT_BITS[(t as arrow.Float).precision] ?? invalid(t, 'unknown precision');
      return { kind: 'float', bitWidth };
    }
    case T.Binary: return { kind: 'binary' };
    case T.LargeBinary: return { kind: 'large_binary' };
    case T.BinaryView: return { kind: 'binary_view' };
    case T.Utf8: return { kind: 'utf8' };
    case T.LargeUtf8: return { kind: 'large_utf8' };
    case T.Utf8View: return { kind: 'utf8_view' };
    case T.Decimal: {
      const { bitWidth, precision, scale } = t as arrow.Decimal;
      if (bitWidth !== 32 && bitWidth !== 64 && bitWidth !== 128 && bitWidth !== 256) invalid(t, `unknown bit width ${bitWidth}`);
      return { kind: 'decimal', bitWidth, precision, scale };
    }
    case T.FixedSizeBinary: return { kind: 'fixed_size_binary', byteWidth: (t as arrow.FixedSizeBinary).byteWidth };
    case T.Date: return { kind: 'date', unit: (t as arrow.Date_).unit === arrow.DateUnit.DAY ? 'day' : 'ms' };
    case T.Time: {
      const unit = fromArrowUnit(t, (t as arrow.Time).unit);
      const bitWidth = unit === 's' || unit === 'ms' ? 32 : 64;
      if ((t as arrow.Time).bitWidth !== bitWidth) invalid(t, `a time in ${unit} must be ${bitWidth}-bit`);
      return { kind: 'time', unit };
    }
    case T.Timestamp: {
      const { unit, timezone } = t as arrow.Timestamp;
      return { kind: 'timestamp', unit: fromArrowUnit(t, unit), timezone: timezone ?? '' };
    }
    case T.Duration: return { kind: 'duration', unit: fromArrowUnit(t, (t as arrow.Duration).unit) };
    case T.Interval: {
      const unit = MODEL_INTERVAL_UNIT[(t as arrow.Interval).unit] ?? invalid(t, 'unknown interval unit');
      return { kind: 'interval', unit };
    }
    case T.List: return { kind: 'list', child: fromArrowField((t as arrow.List).children[0]!) };
    case T.LargeList: return { kind: 'large_list', child: fromArrowField((t as arrow.LargeList).children[0]!) };
    case T.FixedSizeList: {
      const { listSize, children } = t as arrow.FixedSizeList;
      return { kind: 'fixed_size_list', listSize, child: fromArrowField(children[0]!) };
    }
    case T.Struct: return { kind: 'struct', children: (t as arrow.Struct).children.map(fromArrowField) };
    case T.Map: {
      const { children, keysSorted } = t as arrow.Map_;
      return { kind: 'map', entries: fromArrowField(children[0]!), keysSorted: Boolean(keysSorted) };
    }
    case T.Union: {
      const { mode, typeIds, children } = t as arrow.Union;
      return {
        kind: 'union',
        mode: mode === arrow.UnionMode.Dense ? 'dense' : 'sparse',
        typeIds: Array.from(typeIds),
        children: children.map(fromArrowField),
      };
    }
    case T.Dictionary: {
      const { indices, dictionary, isOrdered } = t as arrow.Dictionary;
      // The cast-free check: arrow-js's typings claim Int8..Uint32, the object may hold anything.
      if (!arrow.DataType.isInt(indices)) invalid(t, 'dictionary indices must be an integer type');
      return { kind: 'dictionary', indexType: fromArrowInt(indices), valueType: fromArrowType(dictionary), ordered: Boolean(isOrdered) };
    }
    default:
      throw new ArrowCDeviceError(`apache-arrow type ${String(t)} (type id ${t.typeId}) is not supported`, ENOSYS);
  }
}

/**
 * The model field for an apache-arrow Field.
 *
 * Ownership: pure; nothing to release.
 * @param f - the field.
 */
export function fromArrowField(f: arrow.Field): Field {
  return { name: f.name, type: fromArrowType(f.type), nullable: f.nullable, metadata: fromArrowMetadata(f.metadata) };
}

/**
 * The model schema for an apache-arrow Schema.
 *
 * Ownership: pure; nothing to release.
 * @param s - the schema.
 */
export function fromArrowSchema(s: arrow.Schema): Schema {
  return { fields: s.fields.map(fromArrowField), metadata: fromArrowMetadata(s.metadata) };
}

/**
 * A record batch's schema with each column's type taken from its data.
 * apache-arrow's IPC reader can give a schema whose fields of the same name
 * carry each other's types; the Data tree is always right, so the types come
 * from there and names, nullability and metadata from the schema.
 */
export function fromArrowBatch(batch: arrow.RecordBatch): Schema {
  const columns = batch.data.children;
  const fields = batch.schema.fields.map((f, i): Field => ({
    name: f.name,
    type: fromArrowType(columns[i]?.type ?? f.type),
    nullable: f.nullable,
    metadata: fromArrowMetadata(f.metadata),
  }));
  return { fields, metadata: fromArrowMetadata(batch.schema.metadata) };
}
