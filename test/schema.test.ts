// Every format string of the C Data Interface through real ArrowSchema structs
// in wasm memory: model → C → model, flags, metadata, and the errors for
// malformed formats (from the C parser, quoting the string).
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { toArrowField, toArrowType } from '../ts/arrow-js/arrow-types.js';
import { ArrowCDeviceError } from '../ts/abi/errors.js';
import { ImageBuilder, SECTION } from '../ts/fixtures/image.js';
import { imageSpace, parseFixtureImage } from '../ts/fixtures/parse.js';
import { writeSchemaTree } from '../ts/fixtures/write.js';
import { formatOf } from '../ts/model/format.js';
import { readField } from '../ts/model/schema.js';
import * as t from '../ts/model/types.js';
import { core } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await core(); });

const F = t.field;
/** A type of every kind and parameter the spec has. */
const TYPES: Record<string, t.DataType> = {
  null: t.nullType(), bool: t.bool(),
  int8: t.int8(), uint8: t.uint8(), int16: t.int16(), uint16: t.uint16(), int32: t.int32(), uint32: t.uint32(), int64: t.int64(), uint64: t.uint64(),
  float16: t.float16(), float32: t.float32(), float64: t.float64(),
  binary: t.binary(), large_binary: t.largeBinary(), binary_view: t.binaryView(),
  utf8: t.utf8(), large_utf8: t.largeUtf8(), utf8_view: t.utf8View(),
  decimal32: t.decimal(9, 2, 32), decimal64: t.decimal(18, -3, 64), decimal128: t.decimal(38, 10), decimal256: t.decimal(76, 38, 256),
  fixed_size_binary: t.fixedSizeBinary(42), fixed_size_binary_0: t.fixedSizeBinary(0),
  date32: t.date('day'), date64: t.date('ms'),
  time_s: t.time('s'), time_ms: t.time('ms'), time_us: t.time('us'), time_ns: t.time('ns'),
  timestamp_s: t.timestamp('s'), timestamp_ms_utc: t.timestamp('ms', 'UTC'), timestamp_us_tz: t.timestamp('us', 'America/New_York'),
  timestamp_ns_offset: t.timestamp('ns', '+05:45'),
  duration_s: t.duration('s'), duration_ms: t.duration('ms'), duration_us: t.duration('us'), duration_ns: t.duration('ns'),
  interval_months: t.interval('months'), interval_day_time: t.interval('day_time'), interval_mdn: t.interval('month_day_nano'),
  list: t.list(t.int32()), large_list: t.largeList(F('x', t.utf8(), false)),
  list_view: t.listView(t.float64()), large_list_view: t.largeListView(t.bool()),
  fixed_size_list: t.fixedSizeList(123, t.int16()),
  struct: t.struct([F('ints', t.int32()), F('floats', t.float32(), false)]), empty_struct: t.struct([]),
  map: t.map(t.utf8(), t.float64()), map_sorted: t.map(t.int32(), t.utf8(), true),
  map_non_canonical: { kind: 'map', keysSorted: false, entries: F('pairs', t.struct([F('k', t.utf8(), false), F('v', t.int8())]), false) },
  dense_union: t.denseUnion([F('a', t.int32()), F('b', t.utf8())], [4, 5]),
  sparse_union: t.sparseUnion([F('a', t.int32()), F('b', t.float32()), F('c', t.nullType())], [0, 127, 3]),
  empty_union: t.denseUnion([], []),
  ree16: t.runEndEncoded(t.int16(), t.utf8()), ree32: t.runEndEncoded(t.int32(), t.float64()), ree64: t.runEndEncoded(t.int64(), t.bool()),
  dictionary: t.dictionary(t.int32(), t.utf8()), dictionary_ordered: t.dictionary(t.uint8(), t.decimal(12, 5), true),
  nested_dictionary: t.dictionary(t.int8(), t.list(t.dictionary(t.int16(), t.utf8()))),
  deep: t.list(t.struct([F('m', t.map(t.utf8(), t.list(t.dictionary(t.int64(), t.largeUtf8())))), F('u', t.sparseUnion([F('r', t.runEndEncoded(t.int32(), t.utf8View()))], [9]))])),
};

/** Exports field into wasm memory, imports it back (taking ownership), checks nothing leaked. */
function roundtrip(field: t.Field): t.Field {
  const start = acd.bytesAllocated();
  const exported = acd.exportSchema(field);
  const imported = acd.importSchema(exported.ptr);
  expect(acd.core.structs.ptr('ArrowSchema', exported.ptr, 'release')).toBe(0);
  const back = imported.field;
  imported.release();
  exported.release();
  expect(acd.bytesAllocated()).toBe(start);
  return back;
}

describe('every type through an ArrowSchema and back', () => {
  test.each(Object.keys(TYPES))('%s', (name) => {
    const type = TYPES[name];
    for (const nullable of [true, false]) {
      const field = F(`col_${name}`, type, nullable);
      const back = roundtrip(field);
      expect(back).toEqual(field);
      expect(t.fieldsEqual(back, field)).toBe(true);
    }
  });

  test('the C parser accepts every format the TypeScript side writes', () => {
    for (const type of Object.values(TYPES)) expect(() => acd.core.formatCheck(formatOf(type))).not.toThrow();
  });
});

describe('flags', () => {
  test.each([
    ['nullable', F('a', t.int32(), true), 2],
    ['not nullable', F('a', t.int32(), false), 0],
    ['ordered dictionary', F('a', t.dictionary(t.int32(), t.utf8(), true), true), 3],
    ['sorted map keys', F('a', t.map(t.utf8(), t.int32(), true), false), 4],
  ])('%s', (_name, field, flags) => {
    const exported = acd.exportSchema(field);
    expect(acd.core.structs.i64('ArrowSchema', exported.ptr, 'flags')).toBe(flags);
    expect(roundtrip(field)).toEqual(field);
    exported.release();
  });
});

describe('metadata', () => {
  test.each([
    ['none (NULL)', null],
    ['empty (a count of 0, not NULL)', new Map()],
    ['ASCII', new Map([['key1', 'value1']])],
    ['non-ASCII keys and values', new Map([['clé', '値🎉'], ['ключ', ''], ['', 'empty key'], ['ARROW:extension:name', 'arrow.uuid']])],
  ])('%s', (_name, metadata) => {
    const field = F('m', t.utf8(), true, metadata as t.Metadata | null);
    const exported = acd.exportSchema(field);
    const ptr = acd.core.structs.ptr('ArrowSchema', exported.ptr, 'metadata');
    if (metadata === null) expect(ptr).toBe(0);
    else expect(ptr).not.toBe(0);
    exported.release();
    const back = roundtrip(field);
    expect(back.metadata === null ? null : [...back.metadata]).toEqual(metadata === null ? null : [...metadata]);
  });

  test("the spec's example is encoded byte for byte", () => {
    const exported = acd.exportSchema(F('m', t.int8(), true, new Map([['key1', 'value1']])));
    const ptr = acd.core.structs.ptr('ArrowSchema', exported.ptr, 'metadata');
    const bytes = [...acd.core.bytes.subarray(ptr, ptr + 22)];
    expect(bytes).toEqual([1, 0, 0, 0, 4, 0, 0, 0, ...Buffer.from('key1'), 6, 0, 0, 0, ...Buffer.from('value1')]);
    exported.release();
  });

  test('a record batch schema keeps schema and field metadata', () => {
    const schema = new arrow.Schema([new arrow.Field('a', new arrow.Int32(), true, new Map([['f', '1']]))], new Map([['s', 'ü']]));
    const exported = acd.exportSchema(schema);
    const imported = acd.importSchema(exported.ptr);
    expect(imported.field.type.kind).toBe('struct');
    expect([...imported.schema.metadata!]).toEqual([['s', 'ü']]);
    expect([...imported.schema.fields[0].metadata!]).toEqual([['f', '1']]);
    imported.release();
    exported.release();
  });
});

describe('types apache-arrow lacks', () => {
  test.each(['list_view', 'large_list_view', 'ree32', 'deep'])('%s is described, exported and imported, but not converted', (name) => {
    const field = F('x', TYPES[name]);
    expect(roundtrip(field)).toEqual(field);
    expect(() => toArrowField(field)).toThrow(/is not supported by apache-arrow/);
    try {
      toArrowType(field.type);
    } catch (e) {
      expect(e).toBeInstanceOf(ArrowCDeviceError);
      expect((e as ArrowCDeviceError).errno).toBe(52); // ENOSYS
    }
  });
});

describe('malformed format strings: the C parser quotes them', () => {
  test.each(['', 'ii', 'd:19', 'd:19,10,48', 'w:', 'w:-1', '+w:x', 'tsx:', '+ud:1,1', '+ud:1,,2', '+ud:200', 'xyz', 'tdX', '+'])('%j', (format) => {
    expect(() => acd.core.formatCheck(format)).toThrow(ArrowCDeviceError);
    expect(() => acd.core.formatCheck(format)).toThrow(`'${format}'`);
  });
});

test('metadata: at most MAX_METADATA_BYTES are decoded in one schema tree, not per node', () => {
  // Four children of 20 MiB of metadata each: each alone is within the limit, all together are not.
  const value = 'a'.repeat(20 << 20);
  const children = [0, 1, 2, 3].map((i) => t.field(`c${i}`, t.int32(), true, new Map([['k', value]])));
  const b = new ImageBuilder('wasm32');
  const root = writeSchemaTree(b, t.field('', t.struct(children), false));
  const image = parseFixtureImage(b.finish());
  const space = imageSpace(image);
  const at = root.offset + image.sections.find((s) => s.kind === SECTION.structs)!.offset;
  expect(() => readField(space.structs, at)).toThrow(
    'schema.children[3].metadata: metadata value 0 (key \'k\') at byte offset 9: length 20971520 takes the metadata past the 67108864 bytes this library reads in one schema tree');
  // Three of them are read.
  const three = new ImageBuilder('wasm32');
  const r3 = writeSchemaTree(three, t.field('', t.struct(children.slice(0, 3)), false));
  const image3 = parseFixtureImage(three.finish());
  const read = readField(imageSpace(image3).structs, r3.offset + image3.sections.find((s) => s.kind === SECTION.structs)!.offset);
  expect(read.type.kind === 'struct' && read.type.children.map((c) => c.metadata?.get('k')?.length)).toEqual([20 << 20, 20 << 20, 20 << 20]);
});
