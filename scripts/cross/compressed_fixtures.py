#!/usr/bin/env python3
"""Compressed Arrow files as users have them, written by pyarrow (Arrow C++)
for test/cross-compression.test.ts: one table of the types both readers hold
(apache-arrow's and this library's), with nulls, 5000 rows, written

  CODEC.feather   Feather v2 (pyarrow.feather.write_feather, chunksize 2000: 3 batches)
  CODEC.arrow     IPC file, batches of 2000, 0 (an empty batch) and 3000 rows
  CODEC.arrows    IPC stream, the same batches

for CODEC in lz4, zstd and uncompressed, and default.feather with
write_feather's defaults (LZ4 where pyarrow has it). manifest.json gives the
pyarrow version, the file sizes, the batch lengths and a few rows' values,
normalized as ts/model/raw-values.ts rawValues does (pyarrow_fixtures.py's
value()).

    compressed_fixtures.py OUT_DIR
"""

import datetime
import json
import os
import sys

import pyarrow as pa
import pyarrow.feather as feather

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyarrow_fixtures import value  # noqa: E402 (next to this script)

ROWS = 5000
CODECS = ['lz4', 'zstd', 'uncompressed']
SAMPLE_ROWS = [0, 1, 1999, 2000, 3456, ROWS - 1]


def table():
    n = range(ROWS)
    maybe = lambda i, k, v: None if i % k == 0 else v  # noqa: E731
    struct_type = pa.struct([('a', pa.bool_()), ('b', pa.string())])
    return pa.table({
        'i8': pa.array([maybe(i, 7, i % 100 - 50) for i in n], pa.int8()),
        'i32': pa.array([maybe(i, 11, i * 3) for i in n], pa.int32()),
        'i64': pa.array([maybe(i, 13, i * 1000003) for i in n], pa.int64()),
        'u32': pa.array([i % 1000 for i in n], pa.uint32()),
        'f32': pa.array([maybe(i, 5, i / 8) for i in n], pa.float32()),
        'f64': pa.array([maybe(i, 17, i / 3) for i in n], pa.float64()),
        'bool': pa.array([maybe(i, 19, i % 3 == 0) for i in n]),
        'utf8': pa.array([maybe(i, 23, f'value {i % 250}') for i in n]),
        'binary': pa.array([maybe(i, 29, bytes([i % 256, (i * 7) % 256])) for i in n], pa.binary()),
        'list': pa.array([maybe(i, 31, list(range(i % 5))) for i in n], pa.list_(pa.int32())),
        'struct': pa.array([maybe(i, 37, {'a': i % 2 == 0, 'b': f'{i % 9}'}) for i in n], struct_type),
        'dict': pa.array([maybe(i, 41, ['red', 'green', 'blue'][i % 3]) for i in n]).dictionary_encode(),
        'date32': pa.array([maybe(i, 43, datetime.date(2020, 1, 1) + datetime.timedelta(days=i % 1000)) for i in n], pa.date32()),
        'timestamp': pa.array([maybe(i, 47, 1_600_000_000_000 + i) for i in n], pa.timestamp('ms')),
    })


def batches(t):
    b = t.to_batches()
    assert len(b) == 1
    whole = b[0]
    return [whole.slice(0, 2000), whole.slice(2000, 0), whole.slice(2000)]


def write_ipc(path, new, t, codec):
    options = pa.ipc.IpcWriteOptions(compression=None if codec == 'uncompressed' else codec)
    with open(path, 'wb') as sink:
        with new(sink, t.schema, options=options) as writer:
            for b in batches(t):
                writer.write_batch(b)


def main(out):
    os.makedirs(out, exist_ok=True)
    t = table()
    files = {}
    for codec in CODECS:
        feather.write_feather(t, os.path.join(out, f'{codec}.feather'), compression=codec, chunksize=2000)
        write_ipc(os.path.join(out, f'{codec}.arrow'), pa.ipc.new_file, t, codec)
        write_ipc(os.path.join(out, f'{codec}.arrows'), pa.ipc.new_stream, t, codec)
    feather.write_feather(t, os.path.join(out, 'default.feather'))
    for name in sorted(os.listdir(out)):
        if name != 'manifest.json':
            files[name] = os.path.getsize(os.path.join(out, name))
    manifest = {
        'pyarrow': pa.__version__,
        'rows': ROWS,
        'columns': t.column_names,
        'batches': {'feather': [2000, 2000, 1000], 'ipc': [2000, 0, 3000]},
        'sizes': files,
        'samples': {str(r): [value(t.column(c)[r]) for c in t.column_names] for r in SAMPLE_ROWS},
    }
    with open(os.path.join(out, 'manifest.json'), 'w') as m:
        json.dump(manifest, m, indent=1, allow_nan=False)
    print(f'wrote {len(files)} compressed and uncompressed files with pyarrow {pa.__version__} into {out}')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(f'usage: {sys.argv[0]} OUT_DIR')
    main(sys.argv[1])
