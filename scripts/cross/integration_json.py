"""Arrow integration JSON -> pyarrow, for the fixture cases whose expected
values have no IPC stream (apache-arrow cannot write list views, run-end
encoded arrays, some view layouts, or non-UTF-8 metadata): the pyarrow peer
(peer_pyarrow.py) compares with these. pyarrow has no public reader of this
format. Covers the types those cases use: null, bool, int, floatingpoint,
utf8, binary (and large), utf8view, binaryview, list, largelist, listview,
largelistview, struct, runendencoded, sparse and dense unions, dictionaries.
Metadata strings hold non-UTF-8 bytes as lone surrogates (PEP 383).
"""

import json

import pyarrow as pa

FLOATS = {'HALF': pa.float16(), 'SINGLE': pa.float32(), 'DOUBLE': pa.float64()}


def metadata(entries):
    if entries is None:
        return None
    return {e['key'].encode('utf-8', 'surrogateescape'): e['value'].encode('utf-8', 'surrogateescape') for e in entries}


def data_type(t, children):
    name = t['name']
    if name == 'null':
        return pa.null()
    if name == 'bool':
        return pa.bool_()
    if name == 'int':
        return getattr(pa, ('int%d' if t['isSigned'] else 'uint%d') % t['bitWidth'])()
    if name == 'floatingpoint':
        return FLOATS[t['precision']]
    simple = {'utf8': pa.utf8(), 'largeutf8': pa.large_utf8(), 'binary': pa.binary(), 'largebinary': pa.large_binary(),
              'utf8view': pa.string_view(), 'binaryview': pa.binary_view()}
    if name in simple:
        return simple[name]
    if name in ('list', 'largelist', 'listview', 'largelistview'):
        maker = {'list': pa.list_, 'largelist': pa.large_list, 'listview': pa.list_view, 'largelistview': pa.large_list_view}
        return maker[name](children[0])
    if name == 'struct':
        return pa.struct(children)
    if name == 'runendencoded':
        return pa.run_end_encoded(children[0].type, children[1].type)
    if name == 'union':
        return (pa.sparse_union if t['mode'] == 'SPARSE' else pa.dense_union)(children, t['typeIds'])
    raise ValueError('integration_json: type %r is not supported' % name)


def field(f):
    children = [field(c) for c in f.get('children', [])]
    t = data_type(f['type'], children)
    if f.get('dictionary'):
        index = data_type(f['dictionary']['indexType'], [])
        t = pa.dictionary(index, t, ordered=f['dictionary']['isOrdered'])
    return pa.field(f['name'], t, nullable=f['nullable'], metadata=metadata(f.get('metadata')))


def unhex(s):
    return bytes.fromhex(s)


def views(col, binary):
    out = []
    for i, v in enumerate(col['VIEWS']):
        if col['VALIDITY'][i] == 0:
            out.append(None)
        elif 'INLINED' in v:
            out.append(unhex(v['INLINED']) if binary else v['INLINED'])
        else:
            raw = unhex(col['VARIADIC_DATA_BUFFERS'][v['BUFFER_INDEX']])[v['OFFSET']:v['OFFSET'] + v['SIZE']]
            out.append(raw if binary else raw.decode('utf-8'))
    return out


def column(col, f, dictionaries):
    """The pyarrow array of one JSON column of field f."""
    t = f.type
    if pa.types.is_dictionary(t):
        raise ValueError('integration_json: a dictionary below the top level is not supported')
    n = col['count']
    valid = col.get('VALIDITY', [1] * n)
    mask = pa.array([v == 0 for v in valid], pa.bool_())
    kids = [column(c, t.field(i), dictionaries) for i, c in enumerate(col.get('children', []))] \
        if pa.types.is_struct(t) or pa.types.is_union(t) else None
    if pa.types.is_null(t):
        return pa.nulls(n)
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        return pa.array(views(col, pa.types.is_binary_view(t)), t)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        child = column(col['children'][0], t.value_field, dictionaries)
        large = pa.types.is_large_list(t) or pa.types.is_large_list_view(t)
        offsets = pa.array([int(x) for x in col['OFFSET']], pa.int64() if large else pa.int32())
        if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
            sizes = pa.array([int(x) for x in col['SIZE']], offsets.type)
            return type(pa.array([], t)).from_arrays(offsets, sizes, child, type=t, mask=mask)
        return type(pa.array([], t)).from_arrays(offsets, child, type=t, mask=mask)
    if pa.types.is_run_end_encoded(t):
        ends = column(col['children'][0], pa.field('run_ends', t.run_end_type), dictionaries)
        values = column(col['children'][1], pa.field('values', t.value_type), dictionaries)
        return pa.RunEndEncodedArray.from_arrays(ends, values, type=t)
    if pa.types.is_struct(t):
        return pa.StructArray.from_arrays(kids, fields=list(t), mask=mask)
    if pa.types.is_union(t):
        types = pa.array(col['TYPE_ID'], pa.int8())
        if t.mode == 'sparse':
            return pa.UnionArray.from_sparse(types, kids, [x.name for x in t], list(t.type_codes))
        return pa.UnionArray.from_dense(types, pa.array([int(x) for x in col['OFFSET']], pa.int32()), kids, [x.name for x in t], list(t.type_codes))
    data = col.get('DATA', [])
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        data = [unhex(x) for x in data]
    if pa.types.is_integer(t):
        data = [int(x) for x in data]
    return pa.array([None if v == 0 else x for v, x in zip(valid, data)], t)


def read(path):
    """(schema, batches) of an integration JSON file."""
    with open(path) as f:
        doc = json.load(f)
    fields = [field(f) for f in doc['schema']['fields']]
    schema = pa.schema(fields, metadata=metadata(doc['schema'].get('metadata')))
    by_id = {f.name: j['dictionary']['id'] for j, f in zip(doc['schema']['fields'], fields) if j.get('dictionary')}
    dictionaries = {d['id']: d['data']['columns'][0] for d in doc.get('dictionaries', [])}
    batches = []
    for b in doc['batches']:
        columns = []
        for col, f in zip(b['columns'], fields):
            if pa.types.is_dictionary(f.type):
                values = column(dictionaries[by_id[f.name]], pa.field('DICT', f.type.value_type), {})
                indices = column(col, pa.field(f.name, f.type.index_type), {})
                columns.append(pa.DictionaryArray.from_arrays(indices, values, ordered=f.type.ordered))
            else:
                columns.append(column(col, f, dictionaries))
        batches.append(pa.RecordBatch.from_arrays(columns, schema=schema))
    return schema, batches
