#!/usr/bin/env python3
"""The pyarrow peer of the conformance matrix (issue 12): loads every LP64
fixture image of a corpus through the portable C loader (csrc/fixtures/,
built here as a shared library into build/fixtures/), imports its roots with
pyarrow, validates them fully, compares them with the case's expected IPC
stream, and checks that pyarrow called every release exactly once.

    build/venv-cross/bin/python scripts/cross/peer_pyarrow.py CORPUS_DIR

CORPUS_DIR is what `arrow-c-device fixtures --out DIR` writes: manifest.json,
lp64/<case>.acdfix and expected/<case>.arrows. Prints one JSON object per
case, in the manifest's order:
  {"case", "outcome": "accepted" | "refused" | "unsupported" | "load-error",
   "equal": true | false | null, "message", "releases": {...}, "problems", "report"}
"refused" means pyarrow raised (message: its error); "unsupported" means
pyarrow's Python API has no import for a root of that kind (message: which).
"problems" counts what the loader's free found: structs pyarrow did not
release, or released twice.
"""

import ctypes
import gc
import json
import os
import subprocess
import sys

import pyarrow as pa

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
SOURCE = os.path.join(ROOT, 'csrc', 'fixtures', 'acd_fixture.c')
LIBRARY = os.path.join(ROOT, 'build', 'fixtures', 'libacd_fixture.so')
NO_SCHEMA = 0xFFFFFFFF
KINDS = {1: 'ArrowSchema', 2: 'ArrowArray', 3: 'ArrowDeviceArray', 4: 'ArrowArrayStream',
         5: 'ArrowDeviceArrayStream', 6: 'async script'}


class Error(ctypes.Structure):
    _fields_ = [('message', ctypes.c_char * 512)]


class Root(ctypes.Structure):
    _fields_ = [('kind', ctypes.c_uint32), ('schema_index', ctypes.c_uint32),
                ('ptr', ctypes.c_void_p), ('body_offset', ctypes.c_uint64)]


class Counts(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int64) for name in (
        'release_calls', 'double_releases', 'bad_releases', 'nodes', 'nodes_released',
        'not_released', 'stream_calls')]


def build_loader():
    """The loader as a shared library, rebuilt when its source is newer."""
    headers = [os.path.join(ROOT, 'csrc', 'fixtures', 'acd_fixture.h'), os.path.join(ROOT, 'csrc', 'arrow_c_device.h')]
    newest = max(os.path.getmtime(p) for p in [SOURCE] + headers)
    if not os.path.exists(LIBRARY) or os.path.getmtime(LIBRARY) < newest:
        os.makedirs(os.path.dirname(LIBRARY), exist_ok=True)
        cc = os.environ.get('CC', 'cc')
        subprocess.run([cc, '-std=c99', '-Wall', '-Wextra', '-Werror', '-O1', '-shared', '-fPIC',
                        '-I' + os.path.join(ROOT, 'csrc'), SOURCE, '-o', LIBRARY + '.tmp'], check=True)
        os.replace(LIBRARY + '.tmp', LIBRARY)
    lib = ctypes.CDLL(LIBRARY)
    lib.AcdFixtureLoadFile.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(Error)]
    lib.AcdFixtureLoadFile.restype = ctypes.c_int
    lib.AcdFixtureRootCount.argtypes = [ctypes.c_void_p]
    lib.AcdFixtureRootCount.restype = ctypes.c_uint32
    lib.AcdFixtureGetRoot.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(Root)]
    lib.AcdFixtureGetRoot.restype = ctypes.c_int
    lib.AcdFixtureGetCounts.argtypes = [ctypes.c_void_p, ctypes.POINTER(Counts)]
    lib.AcdFixtureGetCounts.restype = None
    lib.AcdFixtureFree.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.AcdFixtureFree.restype = ctypes.c_int
    return lib


def schema_format(ptr):
    """The format string of the ArrowSchema at ptr (its first field)."""
    return ctypes.cast(ptr, ctypes.POINTER(ctypes.c_char_p))[0].decode('utf-8', 'replace')


def release_root(root):
    """Calls a root's own release when pyarrow cannot take it (the loader must see every root released)."""
    if root.kind in (1, 2, 3):
        offset = 56 if root.kind == 1 else 64  # release in ArrowSchema / ArrowArray (LP64)
        fn = ctypes.cast(root.ptr + offset, ctypes.POINTER(ctypes.c_void_p))[0]
        if fn:
            ctypes.CFUNCTYPE(None, ctypes.c_void_p)(fn)(root.ptr)
    elif root.kind in (4, 5):
        offset = 24 if root.kind == 4 else 32  # release in ArrowArrayStream / ArrowDeviceArrayStream
        fn = ctypes.cast(root.ptr + offset, ctypes.POINTER(ctypes.c_void_p))[0]
        if fn:
            ctypes.CFUNCTYPE(None, ctypes.c_void_p)(fn)(root.ptr)


def import_roots(roots):
    """Every root imported by pyarrow: a list of ('schema' | 'field' | 'batch' | 'array' | 'stream', value).
    A stream's value is (batches, error message or None). Raises what pyarrow raises."""
    used = {r.schema_index for r in roots if r.kind in (2, 3) and r.schema_index != NO_SCHEMA}
    items, unsupported = [], []
    for i, r in enumerate(roots):
        if r.kind == 1 and i not in used:
            if schema_format(r.ptr) == '+s':
                items.append(('schema', pa.Schema._import_from_c(r.ptr)))
            else:
                items.append(('field', pa.Field._import_from_c(r.ptr)))
        elif r.kind in (2, 3):
            if r.schema_index == NO_SCHEMA:
                unsupported.append('root %d: an %s without a schema root' % (i, KINDS[r.kind]))
                release_root(r)
                continue
            schema = roots[r.schema_index].ptr
            struct = schema_format(schema) == '+s'
            if r.kind == 2:
                value = (pa.RecordBatch if struct else pa.Array)._import_from_c(r.ptr, schema)
            else:
                value = (pa.RecordBatch if struct else pa.Array)._import_from_c_device(r.ptr, schema)
            items.append(('batch' if struct else 'array', value))
        elif r.kind == 4:
            reader = pa.RecordBatchReader._import_from_c(r.ptr)
            batches, error = [], None
            try:
                while True:
                    batches.append(reader.read_next_batch())
            except StopIteration:
                pass
            except Exception as e:  # the stream's failure, as pyarrow raises it (EIO: OSError)
                error = '%s: %s' % (type(e).__name__, e)
            items.append(('stream', (reader.schema, batches, error)))
            del reader
        elif r.kind == 5:
            unsupported.append('root %d: pyarrow 26 has no Python import of an ArrowDeviceArrayStream' % i)
            release_root(r)
        elif r.kind == 6:
            unsupported.append('root %d: pyarrow 26 has no Python consumer of an async device stream' % i)
    return items, unsupported


def validate(items):
    for kind, value in items:
        if kind in ('batch', 'array'):
            value.validate(full=True)
        elif kind == 'stream':
            for b in value[1]:
                b.validate(full=True)


def as_batches(items):
    """The imported values as (schema, batches) to compare with the expected stream."""
    schema, batches = None, []
    for kind, value in items:
        if kind == 'batch':
            schema = value.schema
            batches.append(value)
        elif kind == 'array':
            batch = pa.RecordBatch.from_arrays([value], names=['' if value.type else ''])
            schema = batch.schema
            batches.append(batch)
        elif kind == 'stream':
            schema = value[0]
            batches.extend(value[1])
        elif kind == 'schema':
            schema = value
        elif kind == 'field':
            schema = pa.schema([value])
    return schema, batches


def compare(items, expected_path):
    """Whether the imported values equal the expected IPC stream (None without one)."""
    if not os.path.exists(expected_path):
        return None, 'no expected stream %s' % os.path.basename(expected_path)
    with pa.ipc.open_stream(expected_path) as reader:
        want_schema, want = reader.schema, list(reader)
    schema, got = as_batches(items)
    if schema is None:
        return None, 'nothing imported to compare'
    if any(k == 'array' for k, _ in items) and want_schema.names and schema.names != want_schema.names:
        # A lone array is compared with the expected batch's columns, whatever their names.
        got = [pa.RecordBatch.from_arrays(b.columns, schema=want_schema) if b.schema.types == want_schema.types else b for b in got]
        schema = got[0].schema if got else schema
    if not schema.equals(want_schema, check_metadata=True):
        return False, 'schema differs: got %s, expected %s' % (schema, want_schema)
    have = pa.Table.from_batches(got, schema=schema)
    need = pa.Table.from_batches(want, schema=want_schema)
    if not have.equals(need, check_metadata=True):
        return False, 'values differ: got %s, expected %s' % (have.to_pydict(), need.to_pydict())
    return True, None


def run_case(lib, name, image, expected_path):
    result = {'case': name, 'outcome': None, 'equal': None, 'message': None}
    fx = ctypes.c_void_p()
    error = Error()
    if lib.AcdFixtureLoadFile(image.encode(), ctypes.byref(fx), ctypes.byref(error)) != 0:
        result.update(outcome='load-error', message=error.message.decode('utf-8', 'replace'))
        return result
    roots = []
    for i in range(lib.AcdFixtureRootCount(fx)):
        r = Root()
        lib.AcdFixtureGetRoot(fx, i, ctypes.byref(r))
        roots.append(r)
    items = []
    try:
        items, unsupported = import_roots(roots)
        validate(items)
        if unsupported and not items:
            result.update(outcome='unsupported', message='; '.join(unsupported))
        else:
            equal, why = compare(items, expected_path)
            result.update(outcome='accepted', equal=equal, message=why if not unsupported else '; '.join(unsupported + [why or '']))
            if items and items[-1][0] == 'stream' and items[-1][1][2] is not None:
                result['stream_error'] = items[-1][1][2]
    except Exception as e:  # pyarrow's refusal, whatever its class
        result.update(outcome='refused', message='%s: %s' % (type(e).__name__, e))
    del items
    gc.collect()
    counts = Counts()
    lib.AcdFixtureGetCounts(fx, ctypes.byref(counts))
    result['releases'] = {f: getattr(counts, f) for f, _ in Counts._fields_}
    if counts.not_released > 0:
        # pyarrow still holds views of the image: freeing it would pull the memory from under them.
        result.update(problems=counts.not_released, report='%d structs not released: the image is leaked, not freed' % counts.not_released)
        return result
    report = ctypes.create_string_buffer(4096)
    result['problems'] = lib.AcdFixtureFree(fx, report, len(report))
    result['report'] = report.value.decode('utf-8', 'replace')
    return result


def cases_of(corpus):
    """The manifest's case names, in its order (or every lp64 image, sorted, without one)."""
    path = os.path.join(corpus, 'manifest.json')
    if os.path.exists(path):
        with open(path) as f:
            manifest = json.load(f)
        entries = manifest['cases'] if isinstance(manifest, dict) else manifest
        return [e['name'] for e in entries]
    return sorted(n[:-len('.acdfix')] for n in os.listdir(os.path.join(corpus, 'lp64')) if n.endswith('.acdfix'))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    corpus = argv[1]
    lib = build_loader()
    for name in cases_of(corpus):
        image = os.path.join(corpus, 'lp64', name + '.acdfix')
        if not os.path.exists(image):
            continue  # a case without an LP64 image (wasm32 only)
        result = run_case(lib, name, image, os.path.join(corpus, 'expected', name + '.arrows'))
        print(json.dumps(result, sort_keys=True), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
