import { describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import {
  fromArrowField, fromArrowSchema, fromArrowType, toArrowField, toArrowSchema, toArrowType,
} from '../ts/arrow-js/arrow-types.js';
import { ArrowCDeviceError, EINVAL, ENOSYS, errnoName } from '../ts/abi/errors.js';
import {
  ARROW_FLAG_DICTIONARY_ORDERED, ARROW_FLAG_MAP_KEYS_SORTED, ARROW_FLAG_NULLABLE,
  flagsOf, formatOf, parseFormat, typeFromFormat,
} from '../ts/model/format.js';
import { decodeMetadata, encodeMetadata } from '../ts/model/metadata.js';
import * as t from '../ts/model/types.js';
import type { DataType, Field } from '../ts/model/types.js';
import { readField } from '../ts/model/schema.js';
import { core } from './helpers.js';

const f = t.field;
const ab = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

// The children and dictionary value type an ArrowSchema of this type carries.
const fromFormat = (format: string, type: DataType) =>
  typeFromFormat(format, t.childFields(type), flagsOf(f('x', type)), type.kind === 'dictionary' ? type.valueType : undefined);

// Every format string of the spec, with the model type it stands for.
const FORMATS: [string, DataType][] = [
  ['n', t.nullType()], ['b', t.bool()],
  ['c', t.int8()], ['C', t.uint8()], ['s', t.int16()], ['S', t.uint16()],
  ['i', t.int32()], ['I', t.uint32()], ['l', t.int64()], ['L', t.uint64()],
  ['e', t.float16()], ['f', t.float32()], ['g', t.float64()],
  ['z', t.binary()], ['Z', t.largeBinary()], ['vz', t.binaryView()],
  ['u', t.utf8()], ['U', t.largeUtf8()], ['vu', t.utf8View()],
  ['d:19,10', t.decimal(19, 10)], ['d:38,-3', t.decimal(38, -3)],
  ['d:9,2,32', t.decimal(9, 2, 32)], ['d:18,0,64', t.decimal(18, 0, 64)], ['d:76,10,256', t.decimal(76, 10, 256)],
  ['w:42', t.fixedSizeBinary(42)], ['w:0', t.fixedSizeBinary(0)],
  ['tdD', t.date('day')], ['tdm', t.date('ms')],
  ['tts', t.time('s')], ['ttm', t.time('ms')], ['ttu', t.time('us')], ['ttn', t.time('ns')],
  ['tss:', t.timestamp('s')], ['tsm:UTC', t.timestamp('ms', 'UTC')],
  ['tsu:Europe/Paris', t.timestamp('us', 'Europe/Paris')], ['tsn:+05:30', t.timestamp('ns', '+05:30')],
  ['tDs', t.duration('s')], ['tDm', t.duration('ms')], ['tDu', t.duration('us')], ['tDn', t.duration('ns')],
  ['tiM', t.interval('months')], ['tiD', t.interval('day_time')], ['tin', t.interval('month_day_nano')],
  ['+l', t.list(t.uint64())], ['+L', t.largeList(f('elem', t.utf8(), false))],
  ['+vl', t.listView(t.int32())], ['+vL', t.largeListView(t.uint64())],
  ['+w:123', t.fixedSizeList(123, t.float32())], ['+w:0', t.fixedSizeList(0, t.float32())],
  ['+s', t.struct([f('ints', t.int32()), f('floats', t.float32())])], ['+s', t.struct([])],
  ['+m', t.map(t.utf8(), t.float64())], ['+m', t.map(t.int32(), t.utf8(), true)],
  ['+ud:1,5', t.denseUnion([f('a', t.int32()), f('b', t.utf8())], [1, 5])],
  ['+us:4,5', t.sparseUnion([f('ints', t.int32()), f('floats', t.float32())], [4, 5])],
  ['+ud:', t.denseUnion([])], ['+us:127,0', t.sparseUnion([f('a', t.bool()), f('b', t.bool())], [127, 0])],
  ['+r', t.runEndEncoded(t.int32(), t.float32())], ['+r', t.runEndEncoded(t.int64(), t.utf8())],
  // Dictionary: the format is the index type's; the value type rides in the dictionary child.
  ['s', t.dictionary(t.int16(), t.decimal(12, 5))], ['L', t.dictionary(t.uint64(), t.utf8(), true)],
];

describe('format strings', () => {
  test.each(FORMATS.map(([format, type]) => [format, t.typeToString(type), type] as const))('%s ↔ %s', (format, _, type) => {
    expect(formatOf(type)).toBe(format);
    const parsed = fromFormat(format, type);
    expect(t.typesEqual(parsed, type)).toBe(true);
    expect(formatOf(parsed)).toBe(format);
  });

  test('explicit decimal bit width 128 is the default', () => {
    expect(t.typesEqual(typeFromFormat('d:19,10,128', [], 0), t.decimal(19, 10))).toBe(true);
    expect(formatOf(typeFromFormat('d:19,10,128', [], 0))).toBe('d:19,10');
  });

  test('parseFormat describes nested types without children', () => {
    expect(parseFormat('+l')).toEqual({ kind: 'list' });
    expect(parseFormat('+w:3')).toEqual({ kind: 'fixed_size_list', listSize: 3 });
    expect(parseFormat('+ud:1,5')).toEqual({ kind: 'union', mode: 'dense', typeIds: [1, 5] });
    expect(parseFormat('+us:')).toEqual({ kind: 'union', mode: 'sparse', typeIds: [] });
    expect(parseFormat('tsm:a:b')).toEqual({ kind: 'timestamp', unit: 'ms', timezone: 'a:b' });
  });

  const MALFORMED = [
    '', 'ii', 'd:19', 'd:19,10,48', 'w:', 'w:-1', '+w:x', 'tsx:', '+ud:1,1', '+ud:1,,2', '+ud:200', 'xyz',
    'tss', 'd:0,1', 'd:39,0', 'd:10,0,32', 'd:a,b', 'w:2147483648', '+w:', '+ux:1', 'tdx', '+x', 'vx', 'tsm',
  ];
  test.each(MALFORMED)('malformed %p throws, quoting it', (format) => {
    let error: unknown;
    try {
      parseFormat(format);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArrowCDeviceError);
    expect((error as ArrowCDeviceError).errno).toBe(EINVAL);
    expect((error as Error).message).toContain(`format '${format}': expected`);
  });

  test('messages say what was expected', () => {
    expect(() => parseFormat('d:19')).toThrow("format 'd:19': expected 'd:PRECISION,SCALE[,BITWIDTH]'");
    expect(() => parseFormat('+ud:1,1')).toThrow('expected distinct type ids, found 1 twice');
    expect(() => parseFormat('+ud:200')).toThrow('type ids in [0, 127]');
    expect(() => parseFormat('d:19,10,48')).toThrow('bit width of 32, 64, 128 or 256, found 48');
  });

  test('typeFromFormat checks children, run ends and dictionary indices', () => {
    expect(() => typeFromFormat('+l', [], 0)).toThrow("format '+l': expected 1 child, found 0");
    expect(() => typeFromFormat('+w:2', [f('a', t.int8()), f('b', t.int8())], 0)).toThrow('expected 1 child, found 2');
    expect(() => typeFromFormat('i', [f('a', t.int8())], 0)).toThrow("format 'i': expected 0 children, found 1");
    expect(() => typeFromFormat('+m', [f('entries', t.int32())], 0)).toThrow('expected a struct<key, value> child');
    expect(() => typeFromFormat('+m', [f('entries', t.struct([f('k', t.int32())]))], 0)).toThrow('struct<key, value>');
    expect(() => typeFromFormat('+ud:1,5', [f('a', t.int32())], 0)).toThrow('expected 2 children (one per type id), found 1');
    expect(() => typeFromFormat('+r', [f('r', t.int32())], 0)).toThrow('expected 2 children');
    expect(() => typeFromFormat('+r', [f('r', t.uint32()), f('v', t.utf8())], 0)).toThrow('run ends of type int16, int32 or int64, found uint32');
    expect(() => typeFromFormat('+r', [f('r', t.int8()), f('v', t.utf8())], 0)).toThrow('found int8');
    expect(() => typeFromFormat('u', [], 0, t.utf8())).toThrow("format 'u': expected an integer dictionary index type");
    expect(() => typeFromFormat('+l', [f('item', t.int8())], 0, t.utf8())).toThrow('integer dictionary index type');
  });

  test('flags: nullable, dictionary ordered, map keys sorted', () => {
    expect([ARROW_FLAG_DICTIONARY_ORDERED, ARROW_FLAG_NULLABLE, ARROW_FLAG_MAP_KEYS_SORTED]).toEqual([1, 2, 4]);
    expect(flagsOf(f('a', t.int32()))).toBe(2);
    expect(flagsOf(f('a', t.int32(), false))).toBe(0);
    expect(flagsOf(f('a', t.dictionary(t.int8(), t.utf8(), true)))).toBe(3);
    expect(flagsOf(f('a', t.map(t.utf8(), t.int32(), true), false))).toBe(4);
    const sorted = typeFromFormat('+m', t.childFields(t.map(t.utf8(), t.int32())), 6);
    expect(sorted).toMatchObject({ kind: 'map', keysSorted: true });
    expect(typeFromFormat('c', [], 1, t.utf8())).toMatchObject({ kind: 'dictionary', ordered: true });
    expect(typeFromFormat('c', [], 2, t.utf8())).toMatchObject({ kind: 'dictionary', ordered: false });
  });

  test('formatOf rejects values that have no format string', () => {
    expect(() => formatOf(t.decimal(39, 0))).toThrow('decimal128(39, 0): expected a precision in [1, 38], found 39');
    expect(() => formatOf(t.fixedSizeBinary(-1))).toThrow('fixed_size_binary[-1]: expected a byte width');
    expect(() => formatOf(t.fixedSizeList(1.5, t.int8()))).toThrow('expected a list size');
    expect(() => formatOf(t.denseUnion([f('a', t.int8())], [128]))).toThrow('expected type ids in [0, 127], found 128');
    expect(() => formatOf(t.denseUnion([f('a', t.int8()), f('b', t.int8())], [3, 3]))).toThrow('type id 3 appears twice');
    expect(() => formatOf(t.timestamp('ms', 'a\0b'))).toThrow('NUL');
    expect(() => formatOf({ kind: 'int', bitWidth: 12, signed: true } as unknown as DataType)).toThrow('int12: not a valid type');
  });
});

describe('metadata encoding', () => {
  test("the spec's example [('key1', 'value1')]", () => {
    const bytes = encodeMetadata(new Map([['key1', 'value1']]));
    expect(bytes).toEqual(ab('\x01\x00\x00\x00\x04\x00\x00\x00key1\x06\x00\x00\x00value1'));
    expect([...decodeMetadata(bytes!)]).toEqual([['key1', 'value1']]);
  });

  test('round trips non-ASCII keys and values, keeping order', () => {
    const m = new Map([['clé', '値🎉'], ['', ''], ['\uFEFFbom', 'x'], ['ARROW:extension:name', 'arrow.uuid']]);
    const bytes = encodeMetadata(m)!;
    expect(new DataView(bytes.buffer).getInt32(4, true)).toBe(4); // 'clé' is 4 UTF-8 bytes
    expect([...decodeMetadata(bytes)]).toEqual([...m]);
  });

  test('null is no metadata; an empty map is a zero count', () => {
    expect(encodeMetadata(null)).toBeNull();
    expect(encodeMetadata(undefined)).toBeNull();
    expect(encodeMetadata(new Map())).toEqual(new Uint8Array(4));
    expect(decodeMetadata(new Uint8Array(4)).size).toBe(0);
  });

  test('decodes from a view with trailing bytes and a non-zero byteOffset', () => {
    const inner = encodeMetadata(new Map([['a', 'b']]))!;
    const padded = new Uint8Array(inner.length + 10);
    padded.set(inner, 3);
    expect([...decodeMetadata(padded.subarray(3))]).toEqual([['a', 'b']]);
  });

  test('duplicate keys: the last value wins', () => {
    const bytes = ab('\x02\x00\x00\x00\x01\x00\x00\x00k\x01\x00\x00\x00a\x01\x00\x00\x00k\x01\x00\x00\x00b');
    expect([...decodeMetadata(bytes)]).toEqual([['k', 'b']]);
  });

  test.each([
    ['empty input', '', 'pair count at byte offset 0: expected a 4-byte length, found 0 bytes left'],
    ['negative count', '\xff\xff\xff\xff', 'pair count at byte offset 0: expected a non-negative length, found -1'],
    ['missing key', '\x01\x00\x00\x00', 'key 0 at byte offset 4: expected a 4-byte length'],
    ['negative key length', '\x01\x00\x00\x00\xfe\xff\xff\xff', 'key 0 at byte offset 4: expected a non-negative length, found -2'],
    ['truncated key', '\x01\x00\x00\x00\x04\x00\x00\x00ke', 'key 0 at byte offset 4: length 4 runs past the end (2 bytes left)'],
    ['truncated value', '\x01\x00\x00\x00\x01\x00\x00\x00k\x06\x00\x00\x00val', "value 0 (key 'k') at byte offset 9: length 6 runs past the end"],
    ['negative value length', '\x01\x00\x00\x00\x01\x00\x00\x00k\xff\xff\xff\xff', "value 0 (key 'k') at byte offset 9: expected a non-negative length"],
    ['second pair missing', '\x02\x00\x00\x00\x01\x00\x00\x00k\x01\x00\x00\x00v', 'key 1 at byte offset 14'],
  ])('%s throws', (_, input, message) => {
    expect(() => decodeMetadata(ab(input))).toThrow(ArrowCDeviceError);
    expect(() => decodeMetadata(ab(input))).toThrow(`metadata ${message}`);
  });

  test('bytes that are not UTF-8 decode to U+DC80..U+DCFF and encode back (binary strings)', () => {
    const bytes = ab('\x01\x00\x00\x00\x01\x00\x00\x00\xff\x00\x00\x00\x00');
    expect([...decodeMetadata(bytes)]).toEqual([['\udcff', '']]);
    expect([...encodeMetadata(decodeMetadata(bytes))!]).toEqual([...bytes]);
  });

  test('lone surrogates cannot be encoded', () => {
    expect(() => encodeMetadata(new Map([['k', 'a\uD800']]))).toThrow("metadata value 0 (key 'k'): not well-formed UTF-16");
  });
});

describe('type model', () => {
  test.each([
    [t.list(t.int32()), 'list<item: int32>'],
    [t.timestamp('ms', 'UTC'), 'timestamp[ms, tz=UTC]'],
    [t.timestamp('ns'), 'timestamp[ns]'],
    [t.time('us'), 'time64[us]'],
    [t.date('ms'), 'date64[ms]'],
    [t.decimal(9, 2, 32), 'decimal32(9, 2)'],
    [t.fixedSizeList(3, f('v', t.float32(), false)), 'fixed_size_list<v: float32 not null>[3]'],
    [t.map(t.utf8(), t.float64(), true), 'map<key: utf8 not null, value: float64, keys_sorted>'],
    [t.sparseUnion([f('a', t.int32()), f('b', t.utf8())], [4, 5]), 'sparse_union<a: int32=4, b: utf8=5>'],
    [t.runEndEncoded(t.int16(), t.bool()), 'run_end_encoded<run_ends: int16 not null, values: bool>'],
    [t.dictionary(t.uint8(), t.largeUtf8(), true), 'dictionary<values=large_utf8, indices=uint8, ordered>'],
    [t.struct([f('a', t.nullType()), f('b', t.interval('day_time'))]), 'struct<a: null, b: interval[day_time]>'],
  ])('typeToString(%j) = %s', (type, text) => {
    expect(t.typeToString(type)).toBe(text);
  });

  test('typesEqual is deep and structural', () => {
    expect(t.typesEqual(t.int32(), { kind: 'int', signed: true, bitWidth: 32 })).toBe(true);
    expect(t.typesEqual(t.int32(), t.uint32())).toBe(false);
    expect(t.typesEqual(t.timestamp('ms', 'UTC'), t.timestamp('ms'))).toBe(false);
    expect(t.typesEqual(t.list(t.int32()), t.largeList(t.int32()))).toBe(false);
    expect(t.typesEqual(t.list(t.int32()), t.list(t.int64()))).toBe(false);
    expect(t.typesEqual(t.denseUnion([f('a', t.int8())], [1]), t.denseUnion([f('a', t.int8())], [2]))).toBe(false);
    expect(t.typesEqual(t.map(t.utf8(), t.int8()), t.map(t.utf8(), t.int8(), true))).toBe(false);
    expect(t.typesEqual(t.dictionary(t.int8(), t.utf8()), t.dictionary(t.int8(), t.utf8(), true))).toBe(false);
    expect(t.typesEqual(t.list(f('a', t.int8())), t.list(f('b', t.int8())))).toBe(false);
    expect(t.typesEqual(t.list(f('a', t.int8())), t.list(f('b', t.int8())), { checkNames: false })).toBe(true);
  });

  test('fieldsEqual options; null and empty metadata compare equal', () => {
    const meta = new Map([['k', 'v']]);
    expect(t.fieldsEqual(f('a', t.int8(), true, meta), f('a', t.int8(), true, new Map([['k', 'v']])))).toBe(true);
    expect(t.fieldsEqual(f('a', t.int8(), true, meta), f('a', t.int8()))).toBe(false);
    expect(t.fieldsEqual(f('a', t.int8(), true, meta), f('a', t.int8()), { checkMetadata: false })).toBe(true);
    expect(t.fieldsEqual(f('a', t.int8(), true, new Map()), f('a', t.int8()))).toBe(true);
    expect(t.fieldsEqual(f('a', t.int8()), f('a', t.int8(), false))).toBe(false);
    expect(t.fieldsEqual(f('a', t.int8()), f('b', t.int8()), { checkNames: false })).toBe(true);
  });

  test('extensionName reads ARROW:extension:name', () => {
    expect(t.extensionName(f('u', t.fixedSizeBinary(16), true, new Map([['ARROW:extension:name', 'arrow.uuid']])))).toBe('arrow.uuid');
    expect(t.extensionName(f('u', t.fixedSizeBinary(16)))).toBeNull();
  });
});

describe('errors', () => {
  test('class, codes and names (Emscripten errno numbering)', () => {
    const e = new ArrowCDeviceError('boom', ENOSYS, 'children[0]');
    expect(e).toBeInstanceOf(Error);
    expect([e.name, e.message, e.code, e.errno, e.path]).toEqual(['ArrowCDeviceError', 'boom', 'ENOSYS', 52, 'children[0]']);
    expect([new ArrowCDeviceError('x').code, new ArrowCDeviceError('x').errno]).toEqual(['EINVAL', EINVAL]);
    expect(new ArrowCDeviceError('x').path).toBeUndefined();
    expect([EINVAL, errnoName(28), errnoName(48), errnoName(61), errnoName(999)]).toEqual([28, 'EINVAL', 'ENOMEM', 'EOVERFLOW', 'E999']);
    // A number without a name here is named E<number>.
    expect([new ArrowCDeviceError('x', 999).code, new ArrowCDeviceError('x', 999).errno]).toEqual(['E999', 999]);
  });

});

describe('apache-arrow conversion', () => {
  const meta = new Map([['ARROW:extension:name', 'my.ext'], ['clé', '値🎉']]);
  const SUPPORTED: DataType[] = [
    ...FORMATS.map(([, type]) => type).filter((type) => !['list_view', 'large_list_view', 'run_end_encoded'].includes(type.kind)),
    t.timestamp('ms', ''),
    t.list(f('item', t.int32(), false, meta)),
    t.struct([f('a', t.list(t.struct([f('x', t.utf8(), false)]))), f('b', t.dictionary(t.int32(), t.utf8()), true, meta)]),
    t.dictionary(t.int64(), t.list(t.utf8())),
    t.dictionary(t.uint32(), t.struct([f('a', t.int8())]), true),
    // Non-standard map names survive (arrow-js would rename them to entries/key/value).
    { kind: 'map', keysSorted: false, entries: f('key_value', t.struct([f('k', t.utf8(), false), f('v', t.int32(), false, meta)]), false) },
  ];

  test.each(SUPPORTED.map((type) => [t.typeToString(type), type] as const))('%s', (_, type) => {
    const back = fromArrowType(toArrowType(type));
    expect(t.typesEqual(back, type)).toBe(true);
    expect(back).toEqual(type);
  });

  test('fields and schemas keep names, nullability and metadata', () => {
    const fields = [f('a', t.int32(), false, meta), f('b', t.utf8()), f('c', t.map(t.utf8(), t.float64(), true))];
    for (const field of fields) expect(t.fieldsEqual(fromArrowField(toArrowField(field)), field)).toBe(true);
    const schema = t.schema(fields, new Map([['origin', 'test']]));
    const arrowSchema = toArrowSchema(schema);
    expect(arrowSchema.metadata.get('origin')).toBe('test');
    expect(arrowSchema.fields[0]!.nullable).toBe(false);
    expect(fromArrowSchema(arrowSchema)).toEqual(schema);
    // arrow-js has no "no metadata" state: null ↔ empty map.
    expect(toArrowField(f('x', t.int8())).metadata.size).toBe(0);
    expect(fromArrowField(new arrow.Field('x', new arrow.Int8(), true, new Map())).metadata).toBeNull();
    expect(fromArrowSchema(new arrow.Schema([])).metadata).toBeNull();
  });

  test('arrow-js objects get the expected properties', () => {
    const ts = toArrowType(t.timestamp('us')) as arrow.Timestamp;
    expect([ts.unit, ts.timezone]).toEqual([arrow.TimeUnit.MICROSECOND, null]);
    const dec = toArrowType(t.decimal(9, 2, 32)) as arrow.Decimal;
    expect([dec.precision, dec.scale, dec.bitWidth]).toEqual([9, 2, 32]);
    const dict = toArrowType(t.dictionary(t.int16(), t.utf8(), true)) as arrow.Dictionary;
    expect([dict.isOrdered, dict.indices.bitWidth, String(dict.dictionary)]).toEqual([true, 16, 'Utf8']);
    const map = toArrowType(t.map(t.utf8(), t.int32(), true)) as arrow.Map_;
    expect([map.keysSorted, map.children[0]!.name, map.childType.children.map((c) => c.name)]).toEqual([true, 'entries', ['key', 'value']]);
    const union = toArrowType(t.denseUnion([f('a', t.int32()), f('b', t.utf8())], [1, 5])) as arrow.DenseUnion;
    expect([union.mode, [...union.typeIds], union.typeIdToChildIndex[5]]).toEqual([arrow.UnionMode.Dense, [1, 5], 1]);
    expect(toArrowType(t.time('s'))).toMatchObject({ bitWidth: 32 });
    expect(toArrowType(t.time('ns'))).toMatchObject({ bitWidth: 64 });
  });

  test('types built by arrow-js itself convert', () => {
    const cases: [arrow.DataType, DataType][] = [
      [new arrow.Int8(), t.int8()], [new arrow.Uint64(), t.uint64()], [new arrow.Float16(), t.float16()],
      [new arrow.DateMillisecond(), t.date('ms')], [new arrow.TimeNanosecond(), t.time('ns')],
      [new arrow.TimestampSecond('UTC'), t.timestamp('s', 'UTC')], [new arrow.TimestampMillisecond(), t.timestamp('ms')],
      [new arrow.DurationMicrosecond(), t.duration('us')], [new arrow.IntervalYearMonth(), t.interval('months')],
      [new arrow.IntervalMonthDayNano(), t.interval('month_day_nano')], [new arrow.Decimal(3, 20), t.decimal(20, 3)],
      [new arrow.Map_(new arrow.Field('e', new arrow.Struct<{ key: arrow.Utf8; value: arrow.Int32 }>([new arrow.Field('k', new arrow.Utf8()), new arrow.Field('v', new arrow.Int32(), true)]))),
        t.map(t.utf8(), t.int32())],
      [new arrow.SparseUnion([3], [new arrow.Field('a', new arrow.Bool(), true)]), t.sparseUnion([f('a', t.bool())], [3])],
      [new arrow.Dictionary(new arrow.Utf8(), new arrow.Uint8(), 7, false), t.dictionary(t.uint8(), t.utf8())],
    ];
    for (const [arrowType, type] of cases) expect(fromArrowType(arrowType)).toEqual(type);
  });

  test.each([
    [t.listView(t.int32()), 'list_view<item: int32> is not supported by apache-arrow'],
    [t.largeListView(t.int32()), 'large_list_view<item: int32> is not supported by apache-arrow'],
    [t.runEndEncoded(t.int32(), t.utf8()), 'run_end_encoded<run_ends: int32 not null, values: utf8> is not supported by apache-arrow'],
    [t.struct([f('a', t.listView(t.int8()))]), 'list_view<item: int8> is not supported by apache-arrow'],
  ])('%j is not supported', (type, message) => {
    let error: unknown;
    try {
      toArrowType(type);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArrowCDeviceError);
    expect((error as ArrowCDeviceError).errno).toBe(ENOSYS);
    expect((error as Error).message).toBe(message);
  });

  test('invalid arrow-js types are rejected', () => {
    expect(() => fromArrowType(new arrow.Time(arrow.TimeUnit.SECOND, 64))).toThrow('a time in s must be 32-bit');
    expect(() => fromArrowType(new arrow.Decimal(1, 5, 96))).toThrow('unknown bit width 96');
  });
});

describe('metadata with runs of empty pairs (8 zero bytes each, as zeroed memory reads)', () => {
  // 3 empty pairs, ('k', 'v'), 2 empty pairs: the runs are skipped in words, the pair between them is read.
  const pair = (k: string, v: string) => [k.length, 0, 0, 0, ...[...k].map((c) => c.charCodeAt(0)), v.length, 0, 0, 0, ...[...v].map((c) => c.charCodeAt(0))];
  const bytes = new Uint8Array([6, 0, 0, 0, ...Array(24).fill(0), ...pair('k', 'v'), ...Array(16).fill(0)]);

  test('decode in JS: the empty key once, and the pair between the runs', () => {
    expect([...decodeMetadata(bytes)]).toEqual([['', ''], ['k', 'v']]);
    // At an odd offset too (the word walk needs alignment; the other walk does not).
    const odd = new Uint8Array(bytes.length + 1);
    odd.set(bytes, 1);
    expect([...decodeMetadata(odd.subarray(1))]).toEqual([['', ''], ['k', 'v']]);
    // A count past what is there still fails at the first pair that is missing.
    const short = bytes.slice();
    short[0] = 9;
    expect(() => decodeMetadata(short)).toThrow('metadata key 6 at byte offset 54: expected a 4-byte length, found 0 bytes left');
  });

  test('in C: the schema keeps every byte, and reads back the same', async () => {
    const acd = await core();
    const ptr = acd.core.alloc(acd.core.structs.size('ArrowSchema'));
    acd.core.schemaInit(ptr, 'i', 'x', bytes, 2, 0, false);
    acd.core.schemaValidate(ptr);
    const m = acd.core.structs.ptr('ArrowSchema', ptr, 'metadata');
    expect([...acd.core.space.bytes.slice(m, m + bytes.length)]).toEqual([...bytes]);
    expect([...readField(acd.core.structs, ptr).metadata!]).toEqual([['', ''], ['k', 'v']]);
    acd.core.space.release('ArrowSchema', ptr);
    acd.core.free(ptr);
  });
});

test('metadata: a pair count past MAX_METADATA_PAIRS (2^20) is refused before the walk; invalid UTF-8 in many pairs decodes without a throw per string', () => {
  const count = new Uint8Array(4);
  new DataView(count.buffer).setInt32(0, (1 << 20) + 1, true);
  expect(() => decodeMetadata(count)).toThrow(`metadata pair count: ${(1 << 20) + 1} pairs, more than the 1048576 this library reads`);
  const n = 1000;
  const bytes = new Uint8Array(4 + n * 10);
  const v = new DataView(bytes.buffer);
  v.setInt32(0, n, true);
  for (let i = 0; i < n; i++) {
    const at = 4 + i * 10;
    v.setInt32(at, 1, true);
    bytes[at + 4] = 0x80 + (i % 64); // a lone continuation byte: not UTF-8
    v.setInt32(at + 5, 1, true);
    bytes[at + 9] = 0x41;
  }
  const m = decodeMetadata(bytes);
  expect(m.size).toBe(64);
  expect(m.get(String.fromCharCode(0xdc00 + 0x80))).toBe("A"); // PEP 383: byte 0x80 as U+DC80
});

test('metadata: a string that takes the blob past MAX_METADATA_BYTES (64 MiB) is refused', () => {
  const bytes = new Uint8Array(4 + 4 + 8);
  const v = new DataView(bytes.buffer);
  v.setInt32(0, 1, true);
  v.setInt32(4, 64 << 20, true);
  expect(() => decodeMetadata(bytes)).toThrow('metadata key 0 at byte offset 4: length 67108864 takes the metadata past the 67108864 bytes this library reads');
});
