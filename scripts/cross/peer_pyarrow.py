#!/usr/bin/env python3
"""The pyarrow peer of the conformance matrix (issue 12): loads every LP64
fixture image of a corpus through the portable C loader (csrc/fixtures/,
built here as a shared library into build/fixtures/), imports its roots with
pyarrow, validates them fully, compares each with the case's expected IPC
stream (or its integration JSON, integration_json.py), and checks that
pyarrow called every release exactly once.

    build/venv-cross/bin/python scripts/cross/peer_pyarrow.py CORPUS_DIR

CORPUS_DIR is what `arrow-c-device fixtures --out DIR` (or mini_corpus.py)
writes: manifest.json, the lp64 images and the expected files it names.
Prints one JSON object per case, in the manifest's order:
  {"case", "outcome": "accepted" | "refused" | "unsupported" | "load-error",
   "equal": true | false | null, "message", "releases": {...}, "problems",
   "report", "stream_error"?, "as_struct_array"?}
"refused" means pyarrow raised (message: its errors, root by root; the other
roots are still imported); "unsupported" means pyarrow's Python API has no
import for the case's roots (message: which). "stream_error" is the error a
stream raised after its batches. "as_struct_array" is the same case with a
refused RecordBatch import retried as a StructArray. "problems" counts what
the loader's free found: structs pyarrow did not release, or released twice.
An invalid case (the manifest's "invalid": true) is imported and validated
the same way but compared with nothing: pyarrow must refuse it ("refused"),
and "accepted" (equal null) means its full validation let it through.
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
        tmp = '%s.%d.tmp' % (LIBRARY, os.getpid())  # peers built in parallel (jest workers) each write their own
        subprocess.run([cc, '-std=c99', '-Wall', '-Wextra', '-Werror', '-O1', '-shared', '-fPIC',
                        '-I' + os.path.join(ROOT, 'csrc'), SOURCE, '-o', tmp], check=True)
        os.replace(tmp, LIBRARY)
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


def holds_release(root):
    """Whether the root's struct still holds its release (pyarrow moves out what it takes)."""
    offset = {1: 56, 2: 64, 3: 64, 4: 24, 5: 32}.get(root.kind)  # the release field's LP64 offset
    return offset is not None and bool(ctypes.cast(root.ptr + offset, ctypes.POINTER(ctypes.c_void_p))[0])


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


def import_root(i, r, schemas, as_struct):
    """Root i imported by pyarrow: (kind, value), or None for a root pyarrow has no import for."""
    if r.kind in (2, 3):
        schema = schemas[r.schema_index]
        if isinstance(schema, pa.Schema) and as_struct:
            # The same struct tree as a StructArray: pyarrow's import without RecordBatch's restrictions.
            typ = pa.struct(list(schema))
            value = pa.Array._import_from_c(r.ptr, typ) if r.kind == 2 else pa.Array._import_from_c_device(r.ptr, typ)
            return 'batch', pa.RecordBatch.from_struct_array(value).replace_schema_metadata(schema.metadata)
        cls, arg = (pa.RecordBatch, schema) if isinstance(schema, pa.Schema) else (pa.Array, schema.type)
        value = cls._import_from_c(r.ptr, arg) if r.kind == 2 else cls._import_from_c_device(r.ptr, arg)
        return ('batch' if cls is pa.RecordBatch else 'array'), value
    if r.kind == 4:
        reader = pa.RecordBatchReader._import_from_c(r.ptr)
        batches, error = [], None
        try:
            while True:
                batches.append(reader.read_next_batch())
        except StopIteration:
            pass
        except Exception as e:  # the stream's failure, as pyarrow raises it (EIO: OSError)
            error = '%s: %s' % (type(e).__name__, e)
        return 'stream', (reader.schema, batches, error)
    return None


def import_roots(roots, as_struct=False):
    """Every root imported by pyarrow: items (root index, 'schema' | 'batch' | 'array' | 'stream', value),
    a stream's value being (schema, batches, its error or None); the roots pyarrow has no import for;
    the roots it refused, with its error. A schema root is imported once and given to every array root
    that names it. Roots left unreleased by a refusal or without an import are released here."""
    schemas, items, unsupported, refused = {}, [], [], []
    for i, r in enumerate(roots):
        try:
            if r.kind == 1:
                struct = schema_format(r.ptr) == '+s'
                schemas[i] = (pa.Schema if struct else pa.Field)._import_from_c(r.ptr)
                items.append((i, 'schema', schemas[i] if struct else pa.schema([schemas[i]])))
        except Exception as e:
            refused.append('root %d (%s): %s: %s' % (i, KINDS[r.kind], type(e).__name__, e))
    for i, r in enumerate(roots):
        if r.kind in (2, 3) and r.schema_index not in schemas:
            unsupported.append('root %d: an %s without an imported schema root' % (i, KINDS[r.kind]))
        elif r.kind == 5:
            unsupported.append('root %d: pyarrow 26 has no Python import of an ArrowDeviceArrayStream' % i)
        elif r.kind == 6:
            unsupported.append('root %d: pyarrow 26 has no Python consumer of an async device stream' % i)
        elif r.kind != 1:
            try:
                items.append((i,) + import_root(i, r, schemas, as_struct))
            except Exception as e:  # pyarrow's refusal, whatever its class
                refused.append('root %d (%s): %s: %s' % (i, KINDS[r.kind], type(e).__name__, e))
    left = [i for i, r in enumerate(roots) if holds_release(r) and any(x.startswith('root %d ' % i) for x in refused)]
    if left:
        refused.append('pyarrow refused and did not release root(s) %s (released here)' % left)
    for r in roots:
        release_root(r)  # only those still holding their release
    return items, unsupported, refused


def validate(items):
    for _, kind, value in items:
        if kind in ('batch', 'array'):
            value.validate(full=True)
        elif kind == 'stream':
            for b in value[1]:
                b.validate(full=True)


def expected_of(corpus, entry):
    """The case's expected (schema, batches): its IPC stream, else its integration JSON."""
    expected = entry.get('expected', {})
    ipc = expected.get('ipc') if 'expected' in entry else 'expected/%s.arrows' % entry['name']
    if ipc and os.path.exists(os.path.join(corpus, ipc)):
        with pa.ipc.open_stream(os.path.join(corpus, ipc)) as reader:
            return reader.schema, list(reader), ipc
    if expected.get('json'):
        import integration_json
        schema, batches = integration_json.read(os.path.join(corpus, expected['json']))
        return schema, batches, expected['json']
    return None, None, None


def compare_one(kind, value, want_schema, want):
    """None when equal, else what differs."""
    if kind == 'schema':
        schema, got = value, None
    elif kind == 'stream':
        schema, got = value[0], value[1]
    elif kind == 'batch':
        schema, got = value.schema, [value]
    else:
        got = [pa.RecordBatch.from_arrays([value], schema=want_schema)] if len(want_schema) == 1 else [value]
        schema = want_schema
    if not schema.equals(want_schema, check_metadata=True):
        return 'schema differs: got %s, expected %s' % (schema, want_schema)
    if got is None:
        return None
    have = pa.Table.from_batches(got, schema=schema)
    need = pa.Table.from_batches(want, schema=want_schema)
    if not have.equals(need, check_metadata=True):
        return 'values differ: got %s, expected %s' % (have.to_pydict(), need.to_pydict())
    return None


def compare(items, expected):
    """Whether every imported root equals the expected values (None without them), and the first difference."""
    want_schema, want, source = expected
    if want_schema is None:
        return None, source or 'no expected values'
    for index, kind, value in items:
        why = compare_one(kind, value, want_schema, want)
        if why is not None:
            return False, 'root %d (%s) against %s: %s' % (index, kind, source, why)
    return True, None


def judge(result, roots, expected, as_struct=False):
    """Imports the roots, validates them fully and compares them with the expected values: the
    outcome into result (also used by mini_loader_check.py with the other loader's roots)."""
    items, unsupported, refused = import_roots(roots, as_struct)
    try:
        validate(items)
    except Exception as e:
        refused.append('validate(full=True): %s: %s' % (type(e).__name__, e))
    classify(result, items, unsupported, refused, expected)


def classify(result, items, unsupported, refused, expected):
    """A peer's outcome from what its imports gave: refused, unsupported (no root imported), or
    accepted, compared with the expected values unless there are none (an invalid case); a
    stream's error kept. Shared with peer_capsules.py."""
    if refused:
        result.update(outcome='refused', message='; '.join(refused))
        return
    if unsupported and not items:
        result.update(outcome='unsupported', message='; '.join(unsupported))
        return
    equal, why = (None, None) if expected is None else compare(items, expected)
    result.update(outcome='accepted', equal=equal, message='; '.join(unsupported + ([why] if why else [])) or None)
    errors = [v[2] for _, k, v in items if k == 'stream' and v[2] is not None]
    if errors:
        result['stream_error'] = errors[0]


def run_case(lib, name, image, expected, as_struct=False):
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
    judge(result, roots, expected, as_struct)
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
    """The manifest's cases, in its order."""
    with open(os.path.join(corpus, 'manifest.json')) as f:
        return json.load(f)['cases']


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    corpus = argv[1]
    lib = build_loader()
    for entry in cases_of(corpus):
        image = os.path.join(corpus, entry.get('images', {}).get('lp64', 'lp64/%s.acdfix' % entry['name']))
        if not os.path.exists(image):
            continue  # a case without an LP64 image
        try:
            expected = None if entry.get('invalid') else expected_of(corpus, entry)
        except Exception as e:  # our reader's fault, not pyarrow's: the case is then not equal
            expected = (None, None, 'unreadable expected values (%s: %s)' % (type(e).__name__, e))
        result = run_case(lib, entry['name'], image, expected)
        if result['outcome'] == 'refused' and 'RecordBatch' in (result['message'] or '') and not entry.get('invalid'):
            # Whose fault: the same image through pyarrow's StructArray import.
            again = run_case(lib, entry['name'], image, expected, as_struct=True)
            result['as_struct_array'] = {k: again[k] for k in ('outcome', 'equal', 'message', 'problems')}
        print(json.dumps(result, sort_keys=True), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
