#!/usr/bin/env python3
"""Cross-implementation IPC fixtures written by pyarrow (Arrow C++), for the
types and cases the shared gold files lack: view types, list views, run-end
encoding, decimal32/64, unions with custom type codes, every dictionary index
type, delta and replacement dictionaries, sorted maps, sliced nested arrays,
extension types, empty batches, a file without batches, legacy (pre-0.15,
metadata V4) framing, and bodies compressed with LZ4_FRAME and ZSTD.

    pyarrow_fixtures.py OUT_DIR

writes, deterministically, for each fixture NAME: NAME.arrow (file format,
unless the file format cannot hold it) and NAME.arrows (stream format), and
one manifest.json with the expected schema (field types as ts/types.ts
typeToString prints them) and the expected values of every column of every
batch, normalized exactly as ts/raw-values.ts rawValues does:
  null slot -> null; bool -> boolean; ints up to 32 bits, float16/32/64,
  date32, time32 -> number (NaN, Infinity, -Infinity as strings); 64-bit ints,
  date64, time64, timestamps, durations, decimals (unscaled) -> decimal string;
  binary kinds -> uppercase hex; utf8 kinds -> string; month_day_nano ->
  {months, days, nanoseconds (string)}; lists -> arrays; struct -> [name, value]
  pairs; map -> [key, value] pairs; union -> {typeId, value} (null when the
  child's slot is null); run-end encoded, dictionary, extension -> the value.
Fixtures that the reader must refuse carry "error": {"code", "message"}.
"""

import decimal
import json
import math
import os
import struct
import sys

import pyarrow as pa

decimal.getcontext().prec = 200


# ---- expected values (rawValues' normalization) ------------------------------------------

def number(x):
    if math.isnan(x):
        return 'NaN'
    if math.isinf(x):
        return 'Infinity' if x > 0 else '-Infinity'
    return x


def value(s):
    """The normalized value of one scalar of any type."""
    t = s.type
    if isinstance(t, pa.BaseExtensionType):
        return value(s.cast(t.storage_type))
    if pa.types.is_union(t):
        # A union slot is null when its child's slot is.
        if s.value is None or not s.value.is_valid:
            return None
        return {'typeId': s.type_code, 'value': value(s.value)}
    if pa.types.is_run_end_encoded(t):
        return value(s.value)
    if not s.is_valid:
        return None
    if pa.types.is_dictionary(t):
        return value(s.value)
    if pa.types.is_null(t):
        return None
    if pa.types.is_boolean(t):
        return s.as_py()
    if pa.types.is_integer(t):
        return str(s.as_py()) if t.bit_width == 64 else s.as_py()
    if pa.types.is_floating(t):
        return number(float(s.as_py()))
    if pa.types.is_decimal(t):
        return str(int(s.as_py().scaleb(t.scale)))
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return s.cast(pa.int32()).as_py()
    if pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t) or pa.types.is_duration(t):
        return str(s.cast(pa.int64()).as_py())
    if t == pa.month_day_nano_interval():
        v = s.as_py()
        return {'months': v.months, 'days': v.days, 'nanoseconds': str(v.nanoseconds)}
    if (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
            or pa.types.is_fixed_size_binary(t)):
        return s.as_py().hex().upper()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return s.as_py()
    if pa.types.is_map(t):
        return [[value(e[0]), value(e[1])] for e in s.values]
    if (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
            or pa.types.is_list_view(t) or pa.types.is_large_list_view(t)):
        return [value(x) for x in s.values]
    if pa.types.is_struct(t):
        return [[t.field(k).name, value(s[k])] for k in range(t.num_fields)]
    raise TypeError(f'no normalization for {t}')


def values(array):
    return [value(array[i]) for i in range(len(array))]


# ---- expected types (typeToString) -----------------------------------------------------

UNITS = {'s': 's', 'ms': 'ms', 'us': 'us', 'ns': 'ns'}


def field_string(f):
    return f'{f.name}: {type_string(f.type)}{"" if f.nullable else " not null"}'


def type_string(t):
    if isinstance(t, pa.BaseExtensionType):
        return type_string(t.storage_type)
    if pa.types.is_dictionary(t):
        return (f'dictionary<values={type_string(t.value_type)}, indices={type_string(t.index_type)}'
                f'{", ordered" if t.ordered else ""}>')
    if pa.types.is_integer(t):
        return f'{"" if pa.types.is_signed_integer(t) else "u"}int{t.bit_width}'
    if pa.types.is_floating(t):
        return f'float{t.bit_width}'
    if pa.types.is_decimal(t):
        return f'decimal{t.bit_width}({t.precision}, {t.scale})'
    if pa.types.is_fixed_size_binary(t):
        return f'fixed_size_binary[{t.byte_width}]'
    if pa.types.is_date32(t):
        return 'date32[day]'
    if pa.types.is_date64(t):
        return 'date64[ms]'
    if pa.types.is_time32(t) or pa.types.is_time64(t):
        return f'time{t.bit_width}[{t.unit}]'
    if pa.types.is_timestamp(t):
        return f'timestamp[{t.unit}{", tz=" + t.tz if t.tz else ""}]'
    if pa.types.is_duration(t):
        return f'duration[{t.unit}]'
    if t == pa.month_day_nano_interval():
        return 'interval[month_day_nano]'
    if pa.types.is_map(t):
        sorted_ = ', keys_sorted' if t.keys_sorted else ''
        return f'map<{field_string(t.key_field)}, {field_string(t.item_field)}{sorted_}>'
    for check, name in ((pa.types.is_list, 'list'), (pa.types.is_large_list, 'large_list'),
                        (pa.types.is_list_view, 'list_view'), (pa.types.is_large_list_view, 'large_list_view')):
        if check(t):
            return f'{name}<{field_string(t.value_field)}>'
    if pa.types.is_fixed_size_list(t):
        return f'fixed_size_list<{field_string(t.value_field)}>[{t.list_size}]'
    if pa.types.is_struct(t):
        return f'struct<{", ".join(field_string(t.field(k)) for k in range(t.num_fields))}>'
    if pa.types.is_union(t):
        members = ', '.join(f'{field_string(t.field(k))}={t.type_codes[k]}' for k in range(t.num_fields))
        return f'{t.mode}_union<{members}>'
    if pa.types.is_run_end_encoded(t):
        return f'run_end_encoded<{field_string(t.field(0))}, {field_string(t.field(1))}>'
    simple = {pa.null(): 'null', pa.bool_(): 'bool', pa.string(): 'utf8', pa.large_string(): 'large_utf8',
              pa.string_view(): 'utf8_view', pa.binary(): 'binary', pa.large_binary(): 'large_binary',
              pa.binary_view(): 'binary_view'}
    if t in simple:
        return simple[t]
    raise TypeError(f'no type string for {t}')


def field_metadata(f):
    """The field's metadata as the IPC carries it: extension types add their name and metadata."""
    m = {k.decode(): v.decode() for k, v in (f.metadata or {}).items()}
    if isinstance(f.type, pa.BaseExtensionType):
        # Canonical extensions implemented in C++ (arrow.uuid) serialize to nothing.
        serialize = getattr(f.type, '__arrow_ext_serialize__', lambda: b'')
        m['ARROW:extension:name'] = f.type.extension_name
        m['ARROW:extension:metadata'] = serialize().decode()
    return m or None


# ---- fixtures ----------------------------------------------------------------------------------

class Ints16(pa.ExtensionType):
    """A registered extension type with metadata: int16 storage, a unit."""

    def __init__(self, unit):
        self.unit = unit
        super().__init__(pa.int16(), 'cross.quantity')

    def __arrow_ext_serialize__(self):
        return json.dumps({'unit': self.unit}).encode()

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls(json.loads(serialized)['unit'])


FIXTURES = []


def fixture(file=True, options=None, error=None):
    """Registers a function returning (schema, [record batches])."""
    def register(f):
        FIXTURES.append({'name': f.__name__, 'make': f, 'file': file, 'options': options, 'error': error})
        return f
    return register


def batch(schema, columns):
    return pa.record_batch(columns, schema=schema)


def table_batches(columns, metadata=None):
    t = pa.table(columns)
    if metadata is not None:
        t = t.replace_schema_metadata(metadata)
    return t.schema, t.to_batches()


def half(xs):
    """A float16 array from Python floats (no numpy needed)."""
    validity = bytearray((len(xs) + 7) // 8)
    for i, x in enumerate(xs):
        if x is not None:
            validity[i // 8] |= 1 << (i % 8)
    data = struct.pack(f'<{len(xs)}e', *[0.0 if x is None else x for x in xs])
    return pa.Array.from_buffers(pa.float16(), len(xs), [pa.py_buffer(bytes(validity)), pa.py_buffer(data)])


@fixture()
def primitives():
    return table_batches({
        'bool': pa.array([True, None, False, True]),
        'i8': pa.array([-128, 127, None, 0], pa.int8()),
        'i16': pa.array([-32768, 32767, None, 1], pa.int16()),
        'i32': pa.array([-2**31, 2**31 - 1, None, 2], pa.int32()),
        'i64': pa.array([-2**63, 2**63 - 1, None, 3], pa.int64()),
        'u8': pa.array([0, 255, None, 4], pa.uint8()),
        'u16': pa.array([0, 65535, None, 5], pa.uint16()),
        'u32': pa.array([0, 2**32 - 1, None, 6], pa.uint32()),
        'u64': pa.array([0, 2**64 - 1, None, 7], pa.uint64()),
        'f16': half([1.5, -0.0, None, float('inf')]),
        'f32': pa.array([1.25, float('nan'), None, float('-inf')], pa.float32()),
        'f64': pa.array([-0.0, 1e300, None, float('nan')], pa.float64()),
        'utf8': pa.array(['', 'héllo', None, '日本']),
        'large_utf8': pa.array(['a', None, '', 'zz'], pa.large_string()),
        'binary': pa.array([b'\x00\xff', None, b'', b'abc'], pa.binary()),
        'large_binary': pa.array([b'', b'\x01', None, b'\xfe\xfe'], pa.large_binary()),
        'fixed3': pa.array([b'abc', None, b'\x00\x00\x00', b'xyz'], pa.binary(3)),
        'null': pa.nulls(4),
    }, metadata={'origin': 'pyarrow', 'case': 'primitives'})


@fixture()
def temporal():
    mdn = pa.MonthDayNano
    return table_batches({
        'date32': pa.array([0, -1, None, 19000], pa.date32()),
        'date64': pa.array([0, 86400000, None, -86400000], pa.date64()),
        'time32s': pa.array([0, 86399, None, 1], pa.time32('s')),
        'time32ms': pa.array([0, 86399999, None, 1], pa.time32('ms')),
        'time64us': pa.array([0, 86399999999, None, 1], pa.time64('us')),
        'time64ns': pa.array([0, 86399999999999, None, 1], pa.time64('ns')),
        'ts_s': pa.array([0, -1, None, 2**40], pa.timestamp('s')),
        'ts_ms_utc': pa.array([0, 1, None, -2**40], pa.timestamp('ms', tz='UTC')),
        'ts_us_paris': pa.array([1, 2, None, 3], pa.timestamp('us', tz='Europe/Paris')),
        'ts_ns': pa.array([2**62, -2**62, None, 0], pa.timestamp('ns')),
        'dur_s': pa.array([-5, 5, None, 0], pa.duration('s')),
        'dur_ns': pa.array([2**63 - 1, -2**63, None, 0], pa.duration('ns')),
        'interval': pa.array([mdn([1, -2, 3]), None, mdn([-2**31, 2**31 - 1, -2**63]), mdn([0, 0, 2**63 - 1])],
                             pa.month_day_nano_interval()),
    })


@fixture()
def decimals():
    D = decimal.Decimal
    return table_batches({
        'd32': pa.array([D('1234567.89'), D('-9999999.99'), None, D('0.01')], pa.decimal32(9, 2)),
        'd64': pa.array([D('-123456789012345678'), D('999999999999999999'), None, D('-1')], pa.decimal64(18, 0)),
        'd64_neg_scale': pa.array([D('1.2E+4'), D('-5E+3'), None, D('0')], pa.decimal64(5, -3)),
        'd128': pa.array([D('-' + '9' * 28 + '.' + '9' * 10), D('1E-10'), None, D('0')], pa.decimal128(38, 10)),
        'd256': pa.array([D('9' * 56 + '.' + '9' * 20), D('-1E-20'), None, D('-' + '9' * 56 + '.' + '9' * 20)], pa.decimal256(76, 20)),
    })


@fixture()
def views():
    long_a = 'a string longer than twelve bytes'
    long_b = 'another out-of-line string, in a second buffer'
    s1 = pa.array(['short', long_a, None, '', 'exactly12byt'], pa.string_view())
    s2 = pa.array([long_b, 'x', None], pa.string_view())
    b1 = pa.array([b'\x00' * 13, b'tiny', None], pa.binary_view())
    b2 = pa.array([b'', b'\xff' * 40, b'0123456789abcdef', None, b'ab'], pa.binary_view())
    strings = pa.concat_arrays([s1, s2])  # two variadic buffers
    binaries = pa.concat_arrays([b1, b2])
    schema = pa.schema([('utf8_view', pa.string_view()), ('binary_view', pa.binary_view())])
    return schema, [
        batch(schema, [strings, binaries]),
        batch(schema, [strings.slice(1, 5), binaries.slice(2, 5)]),
    ]


@fixture()
def list_views():
    values = pa.array([1, 2, None, 4, 5, 6])
    # Out of order and overlapping: [4, 5], [1, 2, None], null, [], [None, 4, 5, 6], [2, None]
    lv = pa.ListViewArray.from_arrays(pa.array([3, 0, 5, 2, 2, 1], pa.int32()), pa.array([2, 3, 0, 0, 4, 2], pa.int32()),
                                      values, mask=pa.array([False, False, True, False, False, False]))
    large = pa.LargeListViewArray.from_arrays(pa.array([1, 0, 2], pa.int64()), pa.array([2, 1, 0], pa.int64()),
                                              pa.array(['x', None, 'zz']))
    nested = pa.ListViewArray.from_arrays(pa.array([1, 0], pa.int32()), pa.array([1, 2], pa.int32()),
                                          pa.array([[1], None, [2, 3]], pa.list_view(pa.int16())))
    schema = pa.schema([('list_view', lv.type), ('large_list_view', large.type), ('nested', nested.type)])
    return schema, [
        batch(schema, [lv[:3], large, pa.concat_arrays([nested, nested[:1]])]),
        batch(schema, [lv.slice(2, 4), pa.concat_arrays([large, large]).slice(1, 4), pa.concat_arrays([nested, nested, nested]).slice(1, 4)]),
    ]


@fixture()
def run_end_encoded():
    def ree(ends, vals, end_type):
        return pa.RunEndEncodedArray.from_arrays(pa.array(ends, end_type), vals)
    r16 = ree([2, 3, 7], pa.array(['a', None, 'ccc']), pa.int16())
    r32 = ree([1, 4, 5, 7], pa.array([1.5, 2.5, None, -1.0]), pa.int32())
    r64 = ree([7], pa.array([[1, 2]], pa.list_(pa.int8())), pa.int64())
    schema = pa.schema([('ree16', r16.type), ('ree32', r32.type), ('ree64', r64.type)])
    return schema, [batch(schema, [r16, r32, r64]), batch(schema, [r16.slice(1, 5), r32.slice(2, 5), r64.slice(2, 5)])]


@fixture()
def unions():
    dense = pa.UnionArray.from_dense(
        pa.array([5, 2, 9, 5, 2, 9], pa.int8()), pa.array([0, 0, 0, 1, 1, 1], pa.int32()),
        [pa.array([10, None]), pa.array(['two', 'deux']), pa.array([[True], None], pa.list_(pa.bool_()))],
        ['i', 's', 'l'], [5, 2, 9])
    sparse = pa.UnionArray.from_sparse(
        pa.array([3, 7, 7, 3, 3, 7], pa.int8()),
        [pa.array([1.5, None, 0.0, None, -2.0, 9.0]), pa.array(['a', 'b', None, 'd', 'e', 'f'])],
        ['f', 's'], [3, 7])
    schema = pa.schema([('dense', dense.type), ('sparse', sparse.type)])
    return schema, [batch(schema, [dense, sparse]), batch(schema, [dense.slice(1, 4), sparse.slice(2, 4)])]


@fixture()
def dictionaries():
    words = pa.array(['zero', 'one', None, 'three'])
    indices = [0, 3, None, 1, 2, 0]
    columns = {}
    for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()):
        columns[str(t)] = pa.DictionaryArray.from_arrays(pa.array(indices, t), words)
    columns['ordered_int64_values'] = pa.DictionaryArray.from_arrays(
        pa.array([1, 0, 1, None, 0, 0], pa.int32()), pa.array([2**40, -1], pa.int64()), ordered=True)
    columns['struct_values'] = pa.DictionaryArray.from_arrays(
        pa.array([1, 1, 0, 0, None, 1], pa.int16()),
        pa.StructArray.from_arrays([pa.array([1, 2]), pa.array(['p', None])], names=['n', 's']))
    columns['in_a_list'] = pa.ListArray.from_arrays(
        pa.array([0, 2, 2, 5, 5, 6], pa.int32()), pa.DictionaryArray.from_arrays(pa.array([0, 1, 1, 0, None, 1], pa.int8()), pa.array(['p', 'q'])),
        mask=pa.array([False, False, False, False, True]))
    columns['in_a_list'] = pa.concat_arrays([columns['in_a_list'], pa.array([None], columns['in_a_list'].type)])
    schema, batches = table_batches(columns)
    return schema, batches + [b.slice(2, 3) for b in batches]


def delta_batches(with_replacement):
    schema = pa.schema([pa.field('d', pa.dictionary(pa.int16(), pa.string())),
                        pa.field('keep', pa.dictionary(pa.int8(), pa.int32()))])
    keep = pa.DictionaryArray.from_arrays(pa.array([0, 1, None], pa.int8()), pa.array([7, 8], pa.int32()))
    batches = [
        batch(schema, [pa.DictionaryArray.from_arrays(pa.array([0, 1, None], pa.int16()), pa.array(['a', 'b'])), keep]),
        batch(schema, [pa.DictionaryArray.from_arrays(pa.array([3, 2, 0], pa.int16()), pa.array(['a', 'b', 'c', None])), keep]),
        batch(schema, [pa.DictionaryArray.from_arrays(pa.array([4, None, 1], pa.int16()), pa.array(['a', 'b', 'c', None, 'e'])), keep]),
    ]
    if with_replacement:
        batches.append(batch(schema, [pa.DictionaryArray.from_arrays(pa.array([1, 0, 0], pa.int16()), pa.array(['x', 'y'])), keep]))
    return schema, batches


@fixture(options={'emit_dictionary_deltas': True})
def dictionary_deltas():
    return delta_batches(False)


@fixture(file=False, options={'emit_dictionary_deltas': True})
def dictionary_replacement():
    return delta_batches(True)


@fixture()
def maps():
    sorted_ = pa.MapArray.from_arrays(pa.array([0, 2, 2, 3, 5], pa.int32()), pa.array(['a', 'b', 'a', 'c', 'd']),
                                      pa.array([1, None, 3, 4, 5], pa.int32()), mask=pa.array([False, True, False, False]))
    sorted_ = sorted_.cast(pa.map_(pa.string(), pa.int32(), keys_sorted=True))
    nested = pa.array([[(1, ['x', None])], [], None, [(2, []), (3, ['y'])]], pa.map_(pa.int16(), pa.list_(pa.string())))
    schema = pa.schema([('sorted', sorted_.type), ('nested', nested.type)])
    return schema, [batch(schema, [sorted_, nested]), batch(schema, [sorted_.slice(1, 3), nested.slice(1, 3)])]


@fixture()
def nested_sliced():
    struct = pa.StructArray.from_arrays(
        [pa.array([1, None, 3, 4, 5, 6, 7, 8]),
         pa.array([['a'], None, [], ['b', None], ['c'], None, ['d', 'e'], []]),
         pa.StructArray.from_arrays([pa.array([True, False, None, True, True, False, None, True])], names=['d'])],
        names=['a', 'b', 'c'], mask=pa.array([False, False, True, False, False, False, True, False]))
    list_of_structs = pa.array([[{'x': 1, 'y': 'p'}], None, [], [{'x': None, 'y': None}, None], [{'x': 5, 'y': 'q'}],
                                [{'x': 6, 'y': 'r'}], None, [{'x': 8, 'y': 's'}]], pa.list_(pa.struct([('x', pa.int64()), ('y', pa.string())])))
    fsl = pa.array([[1, 2, 3], None, [4, None, 6], [7, 8, 9], [0, 0, 0], None, [1, 1, 1], [2, 2, 2]], pa.list_(pa.int16(), 3))
    large = pa.array([['a', None], None, [], ['b'], ['c', 'd'], [], None, ['e']], pa.large_list(pa.large_string()))
    lists_of_lists = pa.array([[[1], None], None, [[]], [[2, 3]], [], [[4]], [[None]], [[5], [6]]], pa.list_(pa.list_(pa.int32())))
    schema = pa.schema([('struct', struct.type), ('list_of_structs', list_of_structs.type), ('fsl', fsl.type),
                        ('large', large.type), ('lists_of_lists', lists_of_lists.type)])
    columns = [struct, list_of_structs, fsl, large, lists_of_lists]
    return schema, [batch(schema, [c.slice(2, 5) for c in columns]), batch(schema, [c.slice(7, 1) for c in columns]),
                    batch(schema, columns)]


@fixture()
def extensions():
    pa.register_extension_type(Ints16('m'))
    try:
        uuids = pa.ExtensionArray.from_storage(pa.uuid(), pa.array([bytes(range(16)), None, b'\xff' * 16], pa.binary(16)))
        quantity = pa.ExtensionArray.from_storage(Ints16('m'), pa.array([1, None, -3], pa.int16()))
        schema = pa.schema([pa.field('uuid', pa.uuid()),
                            pa.field('quantity', Ints16('m'), metadata={'note': 'field metadata kept next to the extension keys'}),
                            pa.field('plain', pa.int8(), nullable=False, metadata={'k': 'v', 'empty': ''})],
                           metadata={'schema': 'level'})
        return schema, [batch(schema, [uuids, quantity, pa.array([1, 2, 3], pa.int8())])]
    finally:
        pa.unregister_extension_type('cross.quantity')


def many_types():
    return pa.schema([
        ('utf8', pa.string()), ('list', pa.list_(pa.int32())), ('struct', pa.struct([('a', pa.bool_())])),
        ('dict', pa.dictionary(pa.int8(), pa.string())), ('ree', pa.run_end_encoded(pa.int32(), pa.string())),
        ('view', pa.string_view()), ('list_view', pa.list_view(pa.int8())),
        ('union', pa.dense_union([pa.field('i', pa.int8())])), ('map', pa.map_(pa.string(), pa.int8())),
    ])


@fixture()
def empty_batch():
    schema = many_types()
    one = [pa.array(['x']), pa.array([[1]], pa.list_(pa.int32())), pa.array([{'a': True}], schema.field('struct').type),
           pa.DictionaryArray.from_arrays(pa.array([0], pa.int8()), pa.array(['v'])),
           pa.RunEndEncodedArray.from_arrays(pa.array([1], pa.int32()), pa.array(['r'])),
           pa.array(['view'], pa.string_view()),
           pa.ListViewArray.from_arrays(pa.array([0], pa.int32()), pa.array([1], pa.int32()), pa.array([1], pa.int8())),
           pa.UnionArray.from_dense(pa.array([0], pa.int8()), pa.array([0], pa.int32()), [pa.array([1], pa.int8())], ['i']),
           pa.array([[('k', 1)]], pa.map_(pa.string(), pa.int8()))]
    # pyarrow cannot build an empty dense union from a list: that one is a slice.
    # The dictionary stays ['v'] (the file format cannot replace it).
    empty = [c.slice(0, 0) if pa.types.is_union(c.type) else pa.array([], c.type) for c in one]
    empty[3] = pa.DictionaryArray.from_arrays(pa.array([], pa.int8()), pa.array(['v']))
    return schema, [batch(schema, empty), batch(schema, one), batch(schema, [c.slice(1, 0) for c in one])]


@fixture()
def no_batches():
    return many_types().with_metadata({'batches': 'none'}), []


@fixture(options={'use_legacy_format': True, 'metadata_version': pa.ipc.MetadataVersion.V4})
def legacy_v4():
    # Pre-0.15 framing (no continuation marker) and V4 metadata, where unions carry a validity buffer.
    sparse = pa.UnionArray.from_sparse(pa.array([0, 1, 0], pa.int8()), [pa.array([1, None, 3]), pa.array(['a', 'b', None])])
    dense = pa.UnionArray.from_dense(pa.array([1, 0, 1], pa.int8()), pa.array([0, 0, 1], pa.int32()),
                                     [pa.array([None], pa.int64()), pa.array(['x', 'y'])])
    return table_batches({'sparse': sparse, 'dense': dense, 'i': pa.array([1, None, 3], pa.int64())})


def compressible():
    """Many types with nulls, in several batches (one empty), big enough that every codec compresses."""
    def columns(n, k):
        ints = [None if i % 7 == 0 else i * k for i in range(n)]
        return [
            pa.array(ints, pa.int32()),
            pa.array([None if x is None else x * 1000003 for x in ints], pa.int64()),
            pa.array([None if i % 5 == 0 else i / 4 for i in range(n)], pa.float64()),
            pa.array([i % 3 == 0 for i in range(n)]),
            pa.array([None if i % 11 == 0 else f'row {i % 50}' for i in range(n)]),
            pa.array([None if i % 13 == 0 else list(range(i % 4)) for i in range(n)], pa.list_(pa.int16())),
            pa.array([{'a': i % 2 == 0, 'b': f'{i % 9}'} for i in range(n)], pa.struct([('a', pa.bool_()), ('b', pa.string())])),
            pa.DictionaryArray.from_arrays(pa.array([None if i % 17 == 0 else i % 3 for i in range(n)], pa.int8()),
                                           pa.array(['red', 'green', 'blue'])),
            pa.array([f'view {i % 20}' for i in range(n)], pa.string_view()),
        ]
    schema = pa.schema([('i32', pa.int32()), ('i64', pa.int64()), ('f64', pa.float64()), ('bool', pa.bool_()),
                        ('utf8', pa.string()), ('list', pa.list_(pa.int16())),
                        ('struct', pa.struct([('a', pa.bool_()), ('b', pa.string())])),
                        ('dict', pa.dictionary(pa.int8(), pa.string())), ('view', pa.string_view())])
    return schema, [batch(schema, columns(n, k)) for k, n in enumerate([1500, 0, 1000, 3], 1)]


@fixture(options={'compression': 'zstd'})
def compressed_zstd():
    return compressible()


@fixture(options={'compression': 'lz4'})
def compressed_lz4():
    return compressible()


# ---- writing -----------------------------------------------------------------------------------

def write(path, make_writer, schema, batches, options):
    with open(path, 'wb') as sink:
        with make_writer(sink, schema, options=options) as writer:
            for b in batches:
                writer.write_batch(b)


def main(out):
    os.makedirs(out, exist_ok=True)
    manifest = {'pyarrow': pa.__version__, 'fixtures': []}
    for f in FIXTURES:
        name = f['name']
        schema, batches = f['make']()
        options = pa.ipc.IpcWriteOptions(**(f['options'] or {}))
        pa.register_extension_type(Ints16('m'))
        try:
            files = {}
            if f['file']:
                files['file'] = f'{name}.arrow'
                write(os.path.join(out, files['file']), pa.ipc.new_file, schema, batches, options)
            files['stream'] = f'{name}.arrows'
            write(os.path.join(out, files['stream']), pa.ipc.new_stream, schema, batches, options)
        finally:
            pa.unregister_extension_type('cross.quantity')
        manifest['fixtures'].append({
            'name': name,
            'file': files.get('file'),
            'stream': files['stream'],
            'error': f['error'],
            'schema': {
                'metadata': {k.decode(): v.decode() for k, v in schema.metadata.items()} if schema.metadata else None,
                'fields': [{'name': fld.name, 'type': type_string(fld.type), 'nullable': fld.nullable,
                            'metadata': field_metadata(fld)} for fld in schema],
            },
            'batches': [{'length': b.num_rows, 'columns': [values(c) for c in b.columns]} for b in batches],
        })
    with open(os.path.join(out, 'manifest.json'), 'w') as m:
        json.dump(manifest, m, indent=1, ensure_ascii=False, allow_nan=False)
        m.write('\n')
    print(f'wrote {len(FIXTURES)} fixtures with pyarrow {pa.__version__} into {out}')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(f'usage: {sys.argv[0]} OUT_DIR')
    main(sys.argv[1])
