// Canonical extension types recognised by name, their storage checked.
import { describe, expect, test } from '@jest/globals';
import { CANONICAL_EXTENSIONS, extensionOf } from '../ts/model/extensions.js';
import * as t from '../ts/model/types.js';

const ext = (name: string, type: t.DataType, metadata = '') =>
  t.field('x', type, true, new Map([['ARROW:extension:name', name], ['ARROW:extension:metadata', metadata]]));
const F = t.field;

test('the eight canonical extensions of the spec', () => {
  expect([...CANONICAL_EXTENSIONS].sort()).toEqual(['arrow.bool8', 'arrow.fixed_shape_tensor', 'arrow.json', 'arrow.opaque',
    'arrow.parquet.variant', 'arrow.timestamp_with_offset', 'arrow.uuid', 'arrow.variable_shape_tensor']);
});

describe('a valid storage has no problem', () => {
  test.each([
    ['arrow.uuid', t.fixedSizeBinary(16), ''],
    ['arrow.json', t.utf8View(), '{}'],
    ['arrow.bool8', t.int8(), ''],
    ['arrow.fixed_shape_tensor', t.fixedSizeList(6, t.float32()), '{"shape":[2,3],"dim_names":["r","c"]}'],
    ['arrow.variable_shape_tensor', t.struct([F('data', t.list(t.float64())), F('shape', t.fixedSizeList(2, t.int32()))]), '{}'],
    ['arrow.opaque', t.nullType(), '{"type_name":"geometry","vendor_name":"postgis"}'],
    ['arrow.parquet.variant', t.struct([F('metadata', t.binary(), false), F('value', t.binaryView())]), ''],
    ['arrow.timestamp_with_offset', t.struct([F('timestamp', t.timestamp('us', 'UTC'), false), F('offset_minutes', t.dictionary(t.int8(), t.int16()), false)]), ''],
  ])('%s', (name, type, metadata) => {
    expect(extensionOf(ext(name, type, metadata))).toEqual({ name, metadata, canonical: true, problem: null });
  });
});

describe('a wrong storage is named', () => {
  test.each([
    ['arrow.uuid', t.fixedSizeBinary(8), '', /expected a fixed_size_binary\[16\] storage, found fixed_size_binary\[8\]/],
    ['arrow.json', t.binary(), '', /expected a utf8, large_utf8 or utf8_view storage/],
    ['arrow.bool8', t.uint8(), '', /expected an int8 storage, found uint8/],
    ['arrow.fixed_shape_tensor', t.fixedSizeList(5, t.float32()), '{"shape":[2,3]}', /shape's product \(6\) to be the list size, found 5/],
    ['arrow.opaque', t.int32(), '{"type_name":"x"}', /"type_name" and "vendor_name"/],
    ['arrow.parquet.variant', t.struct([F('metadata', t.binary(), true), F('value', t.binary())]), '', /non-nullable binary "metadata"/],
    ['arrow.timestamp_with_offset', t.struct([F('timestamp', t.timestamp('us'), false), F('offset_minutes', t.int16(), false)]), '', /timestamp\[\*, tz=UTC\]/],
  ])('%s', (name, type, metadata, problem) => {
    const e = extensionOf(ext(name, type, metadata))!;
    expect(e.canonical).toBe(true);
    expect(e.problem).toMatch(problem);
  });
});

test('other extensions are kept as they are, and fields without one have none', () => {
  expect(extensionOf(ext('example.rational', t.struct([F('numer', t.int32()), F('denom', t.int32())]), 'v1')))
    .toEqual({ name: 'example.rational', metadata: 'v1', canonical: false, problem: null });
  expect(extensionOf(F('plain', t.int32()))).toBeNull();
});
