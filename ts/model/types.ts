// The project's own type model: every type of the C Data Interface, as plain
// immutable objects, independent of apache-arrow (arrow-types.ts converts).
// Longer than 400 lines because each constructor carries its reference
// documentation (docs/api/ is generated from it).

import { checkOptions, optionKeys } from '../abi/option-keys.js';

/** A unit of time: seconds, milliseconds, microseconds or nanoseconds. */
export type TimeUnit = 's' | 'ms' | 'us' | 'ns';
/** The widths of integer types. */
export type IntBitWidth = 8 | 16 | 32 | 64;

/** Every type of the C Data Interface, as a plain immutable object told apart by `kind` (apache-arrow's types are converted by `fromArrowType` and `toArrowType`). The timezone of a timestamp is '' for none; a time is 32-bit for s and ms, 64-bit for us and ns; a map's entries are a struct of key and value. */
export type DataType =
  | { readonly kind: 'null' }
  | { readonly kind: 'bool' }
  | { readonly kind: 'int'; readonly bitWidth: IntBitWidth; readonly signed: boolean }
  | { readonly kind: 'float'; readonly bitWidth: 16 | 32 | 64 }
  | { readonly kind: 'binary' | 'large_binary' | 'binary_view' | 'utf8' | 'large_utf8' | 'utf8_view' }
  | { readonly kind: 'decimal'; readonly bitWidth: 32 | 64 | 128 | 256; readonly precision: number; readonly scale: number }
  | { readonly kind: 'fixed_size_binary'; readonly byteWidth: number }
  | { readonly kind: 'date'; readonly unit: 'day' | 'ms' }
  /** 32-bit for s/ms, 64-bit for us/ns. */
  | { readonly kind: 'time'; readonly unit: TimeUnit }
  /** timezone '' means no time zone. */
  | { readonly kind: 'timestamp'; readonly unit: TimeUnit; readonly timezone: string }
  | { readonly kind: 'duration'; readonly unit: TimeUnit }
  | { readonly kind: 'interval'; readonly unit: 'months' | 'day_time' | 'month_day_nano' }
  | { readonly kind: 'list' | 'large_list' | 'list_view' | 'large_list_view'; readonly child: Field }
  | { readonly kind: 'fixed_size_list'; readonly listSize: number; readonly child: Field }
  | { readonly kind: 'struct'; readonly children: readonly Field[] }
  /** entries: a `struct<key, value>` field, usually named 'entries'. */
  | { readonly kind: 'map'; readonly entries: Field; readonly keysSorted: boolean }
  | { readonly kind: 'union'; readonly mode: 'dense' | 'sparse'; readonly typeIds: readonly number[]; readonly children: readonly Field[] }
  | { readonly kind: 'run_end_encoded'; readonly runEnds: Field; readonly values: Field }
  | { readonly kind: 'dictionary'; readonly indexType: IntType; readonly valueType: DataType; readonly ordered: boolean };

/** An integer type. */
export type IntType = Extract<DataType, { kind: 'int' }>;
/** The kind of a type (`'int'`, `'list_view'`, ...). */
export type Kind = DataType['kind'];
/** Key-value metadata, in order (binary strings: bytes that are not UTF-8 are U+DC80..U+DCFF). */
export type Metadata = ReadonlyMap<string, string>;

/** A field: a name, a type, nullability and metadata (an ArrowSchema node). */
export interface Field {
  /** Its name ('' is allowed). */
  readonly name: string;
  /** Its type. */
  readonly type: DataType;
  /** Whether it may hold nulls (ARROW_FLAG_NULLABLE). */
  readonly nullable: boolean;
  /** null: no metadata at all (a NULL pointer in C), distinct from an empty map. */
  readonly metadata: Metadata | null;
}

/** A schema: fields and metadata (a record batch's ArrowSchema is a struct of them, `recordBatchField`). */
export interface Schema {
  /** The columns. */
  readonly fields: readonly Field[];
  /** The schema's metadata, or null for none. */
  readonly metadata: Metadata | null;
}

// ---- constructors ---------------------------------------------------------

/**
 * A field. Ownership: pure; nothing to release.
 * @param name - its name.
 * @param type - its type.
 * @param nullable - whether it may hold nulls (default true).
 * @param metadata - its metadata, or null.
 */
export function field(name: string, type: DataType, nullable = true, metadata: Metadata | null = null): Field {
  return { name, type, nullable, metadata };
}

/**
 * A schema. Ownership: pure; nothing to release.
 * @param fields - the fields.
 * @param metadata - the metadata, or null.
 */
export function schema(fields: readonly Field[], metadata: Metadata | null = null): Schema {
  return { fields, metadata };
}

const int = (bitWidth: IntBitWidth, signed: boolean) => (): IntType => ({ kind: 'int', bitWidth, signed });

/** The null type (format `n`). Ownership: pure; nothing to release. */
export const nullType = (): DataType => ({ kind: 'null' });
/** The boolean type (`b`). Ownership: pure; nothing to release. */
export const bool = (): DataType => ({ kind: 'bool' });
/** int8 (`c`). Ownership: pure; nothing to release. */
export const int8 = int(8, true);
/** int16 (`s`). Ownership: pure; nothing to release. */
export const int16 = int(16, true);
/** int32 (`i`). Ownership: pure; nothing to release. */
export const int32 = int(32, true);
/** int64 (`l`). Ownership: pure; nothing to release. */
export const int64 = int(64, true);
/** uint8 (`C`). Ownership: pure; nothing to release. */
export const uint8 = int(8, false);
/** uint16 (`S`). Ownership: pure; nothing to release. */
export const uint16 = int(16, false);
/** uint32 (`I`). Ownership: pure; nothing to release. */
export const uint32 = int(32, false);
/** uint64 (`L`). Ownership: pure; nothing to release. */
export const uint64 = int(64, false);
/** float16 (`e`). Ownership: pure; nothing to release. */
export const float16 = (): DataType => ({ kind: 'float', bitWidth: 16 });
/** float32 (`f`). Ownership: pure; nothing to release. */
export const float32 = (): DataType => ({ kind: 'float', bitWidth: 32 });
/** float64 (`g`). Ownership: pure; nothing to release. */
export const float64 = (): DataType => ({ kind: 'float', bitWidth: 64 });
/** binary (`z`). Ownership: pure; nothing to release. */
export const binary = (): DataType => ({ kind: 'binary' });
/** large binary (`Z`). Ownership: pure; nothing to release. */
export const largeBinary = (): DataType => ({ kind: 'large_binary' });
/** binary (`z`). Ownership: pure; nothing to release. */
export const binaryView = (): DataType => ({ kind: 'binary_view' });
/** utf8 (`u`). Ownership: pure; nothing to release. */
export const utf8 = (): DataType => ({ kind: 'utf8' });
/** large utf8 (`U`). Ownership: pure; nothing to release. */
export const largeUtf8 = (): DataType => ({ kind: 'large_utf8' });
/** utf8 (`u`). Ownership: pure; nothing to release. */
export const utf8View = (): DataType => ({ kind: 'utf8_view' });

/**
 * A decimal of a precision and scale, 128-bit unless said (`d:P,S` or `d:P,S,W`). Ownership: pure; nothing to release.
 * @param precision - the precision.
 * @param scale - the scale.
 * @param bitWidth - 32, 64, 128 (the default) or 256.
 */
export function decimal(precision: number, scale: number, bitWidth: 32 | 64 | 128 | 256 = 128): DataType {
  return { kind: 'decimal', bitWidth, precision, scale };
}
/**
 * Fixed-size binary of a byte width (`w:N`). Ownership: pure; nothing to release.
 * @param byteWidth - the bytes of each value.
 */
export const fixedSizeBinary = (byteWidth: number): DataType => ({ kind: 'fixed_size_binary', byteWidth });
/**
 * A date, in days (the default, `tdD`) or milliseconds (`tdm`). Ownership: pure; nothing to release.
 * @param unit - `day` (the default) or `ms`.
 */
export const date = (unit: 'day' | 'ms' = 'day'): DataType => ({ kind: 'date', unit });
/**
 * A time of day: 32-bit for s and ms, 64-bit for us and ns (`tts`, ...). Ownership: pure; nothing to release.
 * @param unit - s, ms, us or ns.
 */
export const time = (unit: TimeUnit): DataType => ({ kind: 'time', unit });
/**
 * A time of day: 32-bit for s and ms, 64-bit for us and ns (`tts`, ...). Ownership: pure; nothing to release.
 * @param unit - the unit.
 * @param timezone - the time zone ('' for none).
 */
export const timestamp = (unit: TimeUnit, timezone = ''): DataType => ({ kind: 'timestamp', unit, timezone });
/**
 * A duration (`tDs`, ...). Ownership: pure; nothing to release.
 * @param unit - the unit.
 */
export const duration = (unit: TimeUnit): DataType => ({ kind: 'duration', unit });
/**
 * An interval (`tiM`, `tiD`, `tin`). Ownership: pure; nothing to release.
 * @param unit - the unit.
 */
export const interval = (unit: 'months' | 'day_time' | 'month_day_nano'): DataType => ({ kind: 'interval', unit });

/** A child given as a bare type becomes a nullable field named 'item'. */
function itemField(child: Field | DataType): Field {
  return 'kind' in child ? field('item', child) : child;
}

/**
 * A list (`+l`); a bare child type becomes a nullable field named 'item'. Ownership: pure; nothing to release.
 * @param child - the child field, or its type (a nullable field named 'item').
 */
export const list = (child: Field | DataType): DataType => ({ kind: 'list', child: itemField(child) });
/**
 * A large list (`+L`). Ownership: pure; nothing to release.
 * @param child - the child field, or its type (a nullable field named 'item').
 */
export const largeList = (child: Field | DataType): DataType => ({ kind: 'large_list', child: itemField(child) });
/**
 * A list view (`+vl`). Ownership: pure; nothing to release.
 * @param child - the child field, or its type (a nullable field named 'item').
 */
export const listView = (child: Field | DataType): DataType => ({ kind: 'list_view', child: itemField(child) });
/**
 * A large list (`+L`). Ownership: pure; nothing to release.
 * @param child - the child field, or its type (a nullable field named 'item').
 */
export const largeListView = (child: Field | DataType): DataType => ({ kind: 'large_list_view', child: itemField(child) });
/**
 * A fixed-size list (`+w:N`). Ownership: pure; nothing to release.
 * @param listSize - the values of each list.
 * @param child - the child field, or its type (a nullable field named 'item').
 */
export function fixedSizeList(listSize: number, child: Field | DataType): DataType {
  return { kind: 'fixed_size_list', listSize, child: itemField(child) };
}
/**
 * A struct of fields (`+s`). Ownership: pure; nothing to release.
 * @param children - the child fields.
 */
export const struct = (children: readonly Field[]): DataType => ({ kind: 'struct', children });

/**
 * `map<key, value>` with the spec's names: entries (not null) → key (not null), value. Ownership: pure; nothing to release.
 * @param key - the key type.
 * @param value - the value type.
 * @param keysSorted - whether the keys of each map are sorted.
 * @param valueNullable - whether values may be null (default true).
 */
export function map(key: DataType, value: DataType, keysSorted = false, valueNullable = true): DataType {
  const entries = field('entries', struct([field('key', key, false), field('value', value, valueNullable)]), false);
  return { kind: 'map', entries, keysSorted };
}

/**
 * Type ids default to 0..n-1. Ownership: pure; nothing to release.
 * @param mode - `dense` or `sparse`.
 * @param children - the child fields.
 * @param typeIds - the type ids (default 0..n-1).
 */
export function union(mode: 'dense' | 'sparse', children: readonly Field[], typeIds?: readonly number[]): DataType {
  return { kind: 'union', mode, typeIds: typeIds ?? children.map((_, i) => i), children };
}
/**
 * A dense union (`+ud:...`). Ownership: pure; nothing to release.
 * @param children - the child fields.
 * @param typeIds - the type ids (default 0..n-1).
 */
export const denseUnion = (children: readonly Field[], typeIds?: readonly number[]) => union('dense', children, typeIds);
/**
 * A sparse union (`+us:...`). Ownership: pure; nothing to release.
 * @param children - the child fields.
 * @param typeIds - the type ids (default 0..n-1).
 */
export const sparseUnion = (children: readonly Field[], typeIds?: readonly number[]) => union('sparse', children, typeIds);

/**
 * Children named as in the spec: run_ends (not null) and values. Ownership: pure; nothing to release.
 * @param runEndsType - the integer type of the run ends.
 * @param valuesType - the values' type.
 */
export function runEndEncoded(runEndsType: IntType, valuesType: DataType): DataType {
  return { kind: 'run_end_encoded', runEnds: field('run_ends', runEndsType, false), values: field('values', valuesType) };
}

/**
 * A dictionary-encoded type: integer indices into values of `valueType`. Ownership: pure; nothing to release.
 * @param indexType - the integer type of the indices.
 * @param valueType - the type of the values.
 * @param ordered - whether the order is meaningful.
 */
export function dictionary(indexType: IntType, valueType: DataType, ordered = false): DataType {
  return { kind: 'dictionary', indexType, valueType, ordered };
}

// ---- printing -------------------------------------------------------------

const TIME_BITS: Record<TimeUnit, number> = { s: 32, ms: 32, us: 64, ns: 64 };

function fieldToString(f: Field): string {
  return `${f.name}: ${typeToString(f.type)}${f.nullable ? '' : ' not null'}`;
}

/**
 * A record batch's schema as the C interface has it: a struct with the schema's metadata. Ownership: pure; nothing to release.
 * @param schema - the schema.
 */
export function recordBatchField(schema: Schema): Field {
  return { name: '', type: { kind: 'struct', children: schema.fields }, nullable: false, metadata: schema.metadata };
}

/**
 * The fields an ArrowSchema of this type has as children. Ownership: pure; nothing to release.
 * @param type - the type.
 */
export function childFields(type: DataType): readonly Field[] {
  switch (type.kind) {
    case 'list': case 'large_list': case 'list_view': case 'large_list_view': case 'fixed_size_list':
      return [type.child];
    case 'struct': case 'union':
      return type.children;
    case 'map':
      return [type.entries];
    case 'run_end_encoded':
      return [type.runEnds, type.values];
    default:
      return [];
  }
}

/**
 * A readable one-line description: `list<item: int32>`, `timestamp[ms, tz=UTC]`. Ownership: pure; nothing to release.
 * @param type - the type.
 */
export function typeToString(type: DataType): string {
  switch (type.kind) {
    case 'int':
      return `${type.signed ? '' : 'u'}int${type.bitWidth}`;
    case 'float':
      return `float${type.bitWidth}`;
    case 'decimal':
      return `decimal${type.bitWidth}(${type.precision}, ${type.scale})`;
    case 'fixed_size_binary':
      return `fixed_size_binary[${type.byteWidth}]`;
    case 'date':
      return type.unit === 'day' ? 'date32[day]' : 'date64[ms]';
    case 'time':
      return `time${TIME_BITS[type.unit]}[${type.unit}]`;
    case 'timestamp':
      return `timestamp[${type.unit}${type.timezone ? `, tz=${type.timezone}` : ''}]`;
    case 'duration':
      return `duration[${type.unit}]`;
    case 'interval':
      return `interval[${type.unit}]`;
    case 'list':
    case 'large_list':
    case 'list_view':
    case 'large_list_view':
      return `${type.kind}<${fieldToString(type.child)}>`;
    case 'fixed_size_list':
      return `fixed_size_list<${fieldToString(type.child)}>[${type.listSize}]`;
    case 'struct':
      return `struct<${type.children.map(fieldToString).join(', ')}>`;
    case 'map': {
      const kv = type.entries.type.kind === 'struct' ? type.entries.type.children : [type.entries];
      return `map<${kv.map(fieldToString).join(', ')}${type.keysSorted ? ', keys_sorted' : ''}>`;
    }
    case 'union': {
      const members = type.children.map((c, i) => `${fieldToString(c)}=${type.typeIds[i]}`);
      return `${type.mode}_union<${members.join(', ')}>`;
    }
    case 'run_end_encoded':
      return `run_end_encoded<${fieldToString(type.runEnds)}, ${fieldToString(type.values)}>`;
    case 'dictionary':
      return `dictionary<values=${typeToString(type.valueType)}, indices=${typeToString(type.indexType)}${type.ordered ? ', ordered' : ''}>`;
    default:
      return type.kind;
  }
}

// ---- equality -------------------------------------------------------------

/** Options of `fieldsEqual` and `typesEqual`. */
export interface EqualOptions {
  /** Compare field names, nested ones included (default true). */
  readonly checkNames?: boolean;
  /** Compare field metadata, nested ones included (default true). */
  readonly checkMetadata?: boolean;
}

/** The option keys `fieldsEqual` and `typesEqual` know (others are refused). */
export const EQUAL_OPTION_KEYS = optionKeys<EqualOptions>()(['checkNames', 'checkMetadata']);

/**
 * Null and empty metadata compare equal (as in Arrow C++); key order is ignored. Ownership: pure; nothing to release.
 * @param a - one metadata.
 * @param b - the other.
 */
export function metadataEqual(a: Metadata | null, b: Metadata | null): boolean {
  const sizeA = a?.size ?? 0;
  if (sizeA !== (b?.size ?? 0)) return false;
  if (sizeA === 0) return true;
  for (const [k, v] of a!) if (b!.get(k) !== v) return false;
  return true;
}

/**
 * Whether two fields are equal: name, type, nullability and metadata. Ownership: pure; nothing to release.
 * @param a - one field.
 * @param b - the other.
 * @param options - how to compare (names, metadata).
 */
export function fieldsEqual(a: Field, b: Field, options: EqualOptions = {}): boolean {
  checkOptions('fieldsEqual', options, EQUAL_OPTION_KEYS);
  return (
    (options.checkNames === false || a.name === b.name) &&
    a.nullable === b.nullable &&
    (options.checkMetadata === false || metadataEqual(a.metadata, b.metadata)) &&
    typesEqual(a.type, b.type, options)
  );
}

function fieldListsEqual(a: readonly Field[], b: readonly Field[], options: EqualOptions): boolean {
  return a.length === b.length && a.every((f, i) => fieldsEqual(f, b[i]!, options));
}

/**
 * Deep structural equality; child fields are compared with fieldsEqual. Ownership: pure; nothing to release.
 * @param a - one type.
 * @param b - the other.
 * @param options - how to compare (names, metadata).
 */
export function typesEqual(a: DataType, b: DataType, options: EqualOptions = {}): boolean {
  checkOptions('typesEqual', options, EQUAL_OPTION_KEYS);
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'list':
    case 'large_list':
    case 'list_view':
    case 'large_list_view':
      return fieldsEqual(a.child, (b as typeof a).child, options);
    case 'fixed_size_list': {
      const o = b as typeof a;
      return a.listSize === o.listSize && fieldsEqual(a.child, o.child, options);
    }
    case 'struct':
      return fieldListsEqual(a.children, (b as typeof a).children, options);
    case 'map': {
      const o = b as typeof a;
      return a.keysSorted === o.keysSorted && fieldsEqual(a.entries, o.entries, options);
    }
    case 'union': {
      const o = b as typeof a;
      return (
        a.mode === o.mode &&
        a.typeIds.length === o.typeIds.length &&
        a.typeIds.every((id, i) => id === o.typeIds[i]) &&
        fieldListsEqual(a.children, o.children, options)
      );
    }
    case 'run_end_encoded': {
      const o = b as typeof a;
      return fieldsEqual(a.runEnds, o.runEnds, options) && fieldsEqual(a.values, o.values, options);
    }
    case 'dictionary': {
      const o = b as typeof a;
      return a.ordered === o.ordered && typesEqual(a.indexType, o.indexType) && typesEqual(a.valueType, o.valueType, options);
    }
    default: {
      // Leaf types: every property is a primitive.
      const o = b as unknown as Record<string, unknown>;
      return Object.entries(a).every(([k, v]) => o[k] === v) && Object.keys(o).length === Object.keys(a).length;
    }
  }
}

// ---- extensions -----------------------------------------------------------

/** The metadata key of an extension type's name. */
export const EXTENSION_NAME_KEY = 'ARROW:extension:name';
/** The metadata key of an extension type's serialized metadata. */
export const EXTENSION_METADATA_KEY = 'ARROW:extension:metadata';

/**
 * The extension type name of a field (its storage type is field.type), or null. Ownership: pure; nothing to release.
 * @param f - the field.
 */
export function extensionName(f: Field): string | null {
  return f.metadata?.get(EXTENSION_NAME_KEY) ?? null;
}

/**
 * Types apache-arrow lacks, to convert on import into ones it has:
 * 'run_end_encoded' (expanded into plain values), 'list_view' (gathered
 * into lists), 'dictionary_index64' (a dictionary's 64-bit indices narrowed
 * to int32: apache-arrow holds them but cannot read through them).
 */
export type Conversion = 'run_end_encoded' | 'list_view' | 'dictionary_index64';
