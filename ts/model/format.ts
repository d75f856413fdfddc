// Format strings and flags of ArrowSchema: DataType ↔ format, and assembling
// a DataType from a parsed format plus its children, flags and dictionary.

import { ArrowCDeviceError } from '../abi/errors.js';
import * as t from './types.js';
import type { DataType, Field, TimeUnit } from './types.js';

/** ArrowSchema flag: the dictionary's order is meaningful. */
export const ARROW_FLAG_DICTIONARY_ORDERED = 1;
/** ArrowSchema flag: the field may hold nulls. */
export const ARROW_FLAG_NULLABLE = 2;
/** ArrowSchema flag: the keys of each map are sorted. */
export const ARROW_FLAG_MAP_KEYS_SORTED = 4;

type NestedKind = 'list' | 'large_list' | 'list_view' | 'large_list_view' | 'fixed_size_list' | 'struct' | 'map' | 'union' | 'run_end_encoded';

/** Types that a format string describes completely. */
export type LeafType = Exclude<DataType, { kind: NestedKind | 'dictionary' }>;

/** What a format string says: a leaf type, or a nested type still missing its children. */
export type FormatInfo =
  | LeafType
  | { readonly kind: 'list' | 'large_list' | 'list_view' | 'large_list_view' | 'struct' | 'map' | 'run_end_encoded' }
  | { readonly kind: 'fixed_size_list'; readonly listSize: number }
  | { readonly kind: 'union'; readonly mode: 'dense' | 'sparse'; readonly typeIds: readonly number[] };

const INT32_MAX = 2147483647;
const MAX_TYPE_ID = 127;
const DECIMAL_MAX_PRECISION = { 32: 9, 64: 18, 128: 38, 256: 76 } as const;
const UNIT_OF_CHAR: Record<string, TimeUnit> = { s: 's', m: 'ms', u: 'us', n: 'ns' };
const UNIT_CHAR: Record<TimeUnit, string> = { s: 's', ms: 'm', us: 'u', ns: 'n' };

// Formats that are a fixed string; frozen because parseFormat returns them shared.
const FIXED = new Map<string, FormatInfo>(
  (
    [
      ['n', t.nullType()], ['b', t.bool()],
      ['c', t.int8()], ['C', t.uint8()], ['s', t.int16()], ['S', t.uint16()],
      ['i', t.int32()], ['I', t.uint32()], ['l', t.int64()], ['L', t.uint64()],
      ['e', t.float16()], ['f', t.float32()], ['g', t.float64()],
      ['z', t.binary()], ['Z', t.largeBinary()], ['vz', t.binaryView()],
      ['u', t.utf8()], ['U', t.largeUtf8()], ['vu', t.utf8View()],
      ['tdD', t.date('day')], ['tdm', t.date('ms')],
      ['tts', t.time('s')], ['ttm', t.time('ms')], ['ttu', t.time('us')], ['ttn', t.time('ns')],
      ['tDs', t.duration('s')], ['tDm', t.duration('ms')], ['tDu', t.duration('us')], ['tDn', t.duration('ns')],
      ['tiM', t.interval('months')], ['tiD', t.interval('day_time')], ['tin', t.interval('month_day_nano')],
      ['+l', { kind: 'list' }], ['+L', { kind: 'large_list' }],
      ['+vl', { kind: 'list_view' }], ['+vL', { kind: 'large_list_view' }],
      ['+s', { kind: 'struct' }], ['+m', { kind: 'map' }], ['+r', { kind: 'run_end_encoded' }],
    ] as [string, FormatInfo][]
  ).map(([f, info]) => [f, Object.freeze(info)]),
);

// Formats of kinds that take no parameters.
const KIND_FORMAT: Partial<Record<DataType['kind'], string>> = {
  null: 'n', bool: 'b', binary: 'z', large_binary: 'Z', binary_view: 'vz', utf8: 'u', large_utf8: 'U', utf8_view: 'vu',
  list: '+l', large_list: '+L', list_view: '+vl', large_list_view: '+vL', struct: '+s', map: '+m', run_end_encoded: '+r',
};
const INT_CHAR: Record<number, string> = { 8: 'c', 16: 's', 32: 'i', 64: 'l' };
const FLOAT_CHAR: Record<number, string> = { 16: 'e', 32: 'f', 64: 'g' };
const INTERVAL_FORMAT: Record<string, string> = { months: 'tiM', day_time: 'tiD', month_day_nano: 'tin' };

function fail(format: string, expected: string): never {
  throw new ArrowCDeviceError(`format '${format}': ${expected}`);
}

function parseCount(format: string, text: string | undefined, max: number, expected: string): number {
  if (text === undefined || !/^\d+$/.test(text) || Number(text) > max) fail(format, expected);
  return Number(text);
}

function parseDecimal(format: string): FormatInfo {
  const expected = "expected 'd:PRECISION,SCALE[,BITWIDTH]'";
  const m = /^d:(\d+),(-?\d+)(?:,(\d+))?$/.exec(format);
  if (!m) fail(format, expected);
  const bitWidth = m[3] === undefined ? 128 : Number(m[3]);
  if (bitWidth !== 32 && bitWidth !== 64 && bitWidth !== 128 && bitWidth !== 256) {
    fail(format, `expected a decimal bit width of 32, 64, 128 or 256, found ${m[3]}`);
  }
  const max = DECIMAL_MAX_PRECISION[bitWidth];
  const precision = Number(m[1]);
  const scale = Number(m[2]);
  if (precision < 1 || precision > max) fail(format, `expected a decimal${bitWidth} precision in [1, ${max}], found ${m[1]}`);
  if (Math.abs(scale) > INT32_MAX) fail(format, `expected a 32-bit scale, found ${m[2]}`);
  return { kind: 'decimal', bitWidth, precision, scale };
}

function parseUnion(format: string): FormatInfo {
  const expected = "expected '+ud:ID,...' or '+us:ID,...' with distinct type ids in [0, 127]";
  const m = /^\+u([ds]):(.*)$/s.exec(format);
  if (!m) fail(format, expected);
  const typeIds = m[2] === '' ? [] : m[2]!.split(',').map((id) => parseCount(format, id, MAX_TYPE_ID, expected));
  const duplicate = typeIds.find((id, i) => typeIds.indexOf(id) !== i);
  if (duplicate !== undefined) fail(format, `expected distinct type ids, found ${duplicate} twice`);
  return { kind: 'union', mode: m[1] === 'd' ? 'dense' : 'sparse', typeIds };
}

/**
 * Parses one format string; throws ArrowCDeviceError (EINVAL) quoting it when malformed.
 *
 * Ownership: pure; nothing to release.
 * @param format - the format string.
 */
export function parseFormat(format: string): FormatInfo {
  const fixed = FIXED.get(format);
  if (fixed) return fixed;
  if (format.startsWith('d:')) return parseDecimal(format);
  if (format.startsWith('w:')) {
    return { kind: 'fixed_size_binary', byteWidth: parseCount(format, format.slice(2), INT32_MAX, "expected 'w:BYTE_WIDTH' with 0 <= BYTE_WIDTH < 2^31") };
  }
  if (format.startsWith('+w:')) {
    return { kind: 'fixed_size_list', listSize: parseCount(format, format.slice(3), INT32_MAX, "expected '+w:LIST_SIZE' with 0 <= LIST_SIZE < 2^31") };
  }
  if (format.startsWith('ts')) {
    const m = /^ts([smun]):(.*)$/s.exec(format);
    if (!m) fail(format, "expected 'tsU:TIMEZONE' with U one of s, m, u, n (the colon is mandatory, TIMEZONE may be empty)");
    return { kind: 'timestamp', unit: UNIT_OF_CHAR[m[1]!]!, timezone: m[2]! };
  }
  if (format.startsWith('+u')) return parseUnion(format);
  if (format === '') fail(format, 'expected a non-empty format string');
  if (format.startsWith('t')) fail(format, 'expected a temporal format: tdD, tdm, tt[smun], ts[smun]:TZ, tD[smun], ti[MDn]');
  if (format.startsWith('+')) fail(format, 'expected a nested format: +l, +L, +vl, +vL, +w:N, +s, +m, +ud:IDS, +us:IDS, +r');
  if (FIXED.has(format[0]!)) fail(format, `expected '${format[0]}' alone`);
  return fail(format, 'expected a format string of the C data interface (n, b, c, C, s, S, i, I, l, L, e, f, g, z, Z, vz, u, U, vu, d:..., w:..., t..., +...)');
}

function checkInt(type: DataType, what: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ArrowCDeviceError(`${t.typeToString(type)}: expected ${what} in [${min}, ${max}], found ${value}`);
  }
}

/**
 * The format string of a type; for a dictionary, of its index type (the value type goes in the dictionary child).
 *
 * Ownership: pure; nothing to release.
 * @param type - the type.
 */
export function formatOf(type: DataType): string {
  switch (type.kind) {
    case 'decimal': {
      const max = DECIMAL_MAX_PRECISION[type.bitWidth];
      if (max === undefined) throw new ArrowCDeviceError(`${t.typeToString(type)}: expected a bit width of 32, 64, 128 or 256`);
      checkInt(type, 'a precision', type.precision, 1, max);
      checkInt(type, 'a scale', type.scale, -INT32_MAX, INT32_MAX);
      return `d:${type.precision},${type.scale}${type.bitWidth === 128 ? '' : `,${type.bitWidth}`}`;
    }
    case 'fixed_size_binary':
      checkInt(type, 'a byte width', type.byteWidth, 0, INT32_MAX);
      return `w:${type.byteWidth}`;
    case 'timestamp':
      if (type.timezone.includes('\0')) throw new ArrowCDeviceError(`${t.typeToString(type)}: time zone contains a NUL character`);
      return `ts${known(type, UNIT_CHAR[type.unit])}:${type.timezone}`;
    case 'fixed_size_list':
      checkInt(type, 'a list size', type.listSize, 0, INT32_MAX);
      return `+w:${type.listSize}`;
    case 'union':
      type.typeIds.forEach((id, i) => {
        checkInt(type, 'type ids', id, 0, MAX_TYPE_ID);
        if (type.typeIds.indexOf(id) !== i) throw new ArrowCDeviceError(`${t.typeToString(type)}: type id ${id} appears twice`);
      });
      return `+u${type.mode === 'dense' ? 'd' : 's'}:${type.typeIds.join(',')}`;
    case 'dictionary':
      return formatOf(type.indexType);
    case 'int': {
      const c = known(type, INT_CHAR[type.bitWidth]);
      return type.signed ? c : c.toUpperCase();
    }
    case 'float':
      return known(type, FLOAT_CHAR[type.bitWidth]);
    case 'date':
      return known(type, { day: 'tdD', ms: 'tdm' }[type.unit]);
    case 'time':
      return `tt${known(type, UNIT_CHAR[type.unit])}`;
    case 'duration':
      return `tD${known(type, UNIT_CHAR[type.unit])}`;
    case 'interval':
      return known(type, INTERVAL_FORMAT[type.unit]);
    default:
      return known(type, KIND_FORMAT[type.kind]);
  }
}

// Guards against objects built outside the type system (plain JS callers).
function known(type: DataType, format: string | undefined): string {
  if (format === undefined) throw new ArrowCDeviceError(`${t.typeToString(type)}: not a valid type of the C data interface`);
  return format;
}

function expectChildren(format: string, children: readonly Field[], n: number): void {
  if (children.length !== n) fail(format, `expected ${n} ${n === 1 ? 'child' : 'children'}, found ${children.length}`);
}

/**
 * Assembles the DataType of an ArrowSchema from its format, its children's
 * fields, its flags and, for a dictionary-encoded type, the value type read
 * from its `dictionary` child. Throws ArrowCDeviceError (EINVAL) when they
 * do not fit together.
 *
 * Ownership: pure; nothing to release.
 * @param format - the format string.
 * @param children - the children's fields.
 * @param flags - the ArrowSchema flags.
 * @param dictionaryValue - the dictionary's value type, for a dictionary-encoded type.
 */
export function typeFromFormat(format: string, children: readonly Field[], flags: number, dictionaryValue?: DataType): DataType {
  const info = parseFormat(format);
  if (dictionaryValue !== undefined) {
    if (info.kind !== 'int') fail(format, `expected an integer dictionary index type, found ${info.kind}`);
    expectChildren(format, children, 0);
    return t.dictionary(info, dictionaryValue, (flags & ARROW_FLAG_DICTIONARY_ORDERED) !== 0);
  }
  switch (info.kind) {
    case 'list':
    case 'large_list':
    case 'list_view':
    case 'large_list_view':
      expectChildren(format, children, 1);
      return { kind: info.kind, child: children[0]! };
    case 'fixed_size_list':
      expectChildren(format, children, 1);
      return { kind: 'fixed_size_list', listSize: info.listSize, child: children[0]! };
    case 'struct':
      return t.struct(children);
    case 'map': {
      expectChildren(format, children, 1);
      const entries = children[0]!;
      if (entries.type.kind !== 'struct' || entries.type.children.length !== 2) {
        fail(format, `expected a struct<key, value> child, found ${t.typeToString(entries.type)}`);
      }
      return { kind: 'map', entries, keysSorted: (flags & ARROW_FLAG_MAP_KEYS_SORTED) !== 0 };
    }
    case 'union':
      if (children.length !== info.typeIds.length) {
        fail(format, `expected ${info.typeIds.length} children (one per type id), found ${children.length}`);
      }
      return { kind: 'union', mode: info.mode, typeIds: info.typeIds, children };
    case 'run_end_encoded': {
      expectChildren(format, children, 2);
      const runEnds = children[0]!.type;
      if (runEnds.kind !== 'int' || !runEnds.signed || runEnds.bitWidth === 8) {
        fail(format, `expected run ends of type int16, int32 or int64, found ${t.typeToString(runEnds)}`);
      }
      return { kind: 'run_end_encoded', runEnds: children[0]!, values: children[1]! };
    }
    default:
      expectChildren(format, children, 0);
      return info;
  }
}

/** The ArrowSchema flags of a field: nullable, dictionary ordered, map keys sorted. */
export function flagsOf(f: Field): number {
  return (
    (f.nullable ? ARROW_FLAG_NULLABLE : 0) |
    (f.type.kind === 'dictionary' && f.type.ordered ? ARROW_FLAG_DICTIONARY_ORDERED : 0) |
    (f.type.kind === 'map' && f.type.keysSorted ? ARROW_FLAG_MAP_KEYS_SORTED : 0)
  );
}
