#!/usr/bin/env python3
"""Peers' own exports dumped into fixture images (issue 12, item 6): for
every valid case of a corpus, a peer takes the case's expected values, exports
them through its own C Data Interface exporter, and the C core's dumper
(csrc/fixtures/acd_dump.h, in the native core library built by
scripts/native/build.sh) writes what it exported as OUT/<peer>/<case>.acdfix,
which arrow-c-device reads back (test/fixtures-dump.test.ts).

    build/venv-cross/bin/python scripts/cross/peer_dump.py LIBDIR CORPUS OUT PEER...

PEER is pyarrow, nanoarrow or arro3. What each exports:
  - pyarrow: the expected IPC stream (or integration JSON) read by pyarrow;
    a batch through RecordBatch._export_to_c, a -device twin through
    _export_to_c_device, a stream case through RecordBatchReader._export_to_c
    (a failing one from a generator raising the case's error after its batches);
  - nanoarrow: the expected IPC stream read by nanoarrow's own IPC reader
    (pyarrow's reading, imported by nanoarrow, where nanoarrow cannot read it:
    "source" says which), exported through __arrow_c_array__,
    nanoarrow.device.c_device_array(...).__arrow_c_device_array__ and
    __arrow_c_stream__; nanoarrow's Python API has no stream that fails;
  - arro3 (arrow-rs): pyarrow's reading imported by arro3 (RecordBatch,
    RecordBatchReader .from_arrow), exported by arrow-rs through
    __arrow_c_array__ and __arrow_c_stream__ (a failing stream wraps pyarrow's
    failing one); arro3 has no device exporter, so its -device twins are
    "unsupported".
Every case is dumped at FULL validation. Prints one JSON line per peer and
case: {"peer", "case", "outcome": "dumped" | "refused" (the dumper refused the
export: message) | "export-error" (the peer raised) | "unsupported",
"message", "root": "batch" | "device" | "stream", "source"}.
"""

import ctypes
import gc
import json
import os
import sys

import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_pyarrow as base  # noqa: E402  (expected_of, cases_of)

FULL = 3
SCHEMA_SIZE, ARRAY_SIZE, DEVICE_ARRAY_SIZE, STREAM_SIZE = 72, 80, 128, 40  # LP64
RELEASE = {'schema': 56, 'array': 64, 'device': 64, 'stream': 24}  # LP64 offsets of release
ERRORS = {'EIO': OSError, 'EINVAL': ValueError}  # what pyarrow turns into each errno
CALL = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class AcdError(ctypes.Structure):
    # struct AcdError of csrc/abi/abi.h, field for field: the core writes both.
    _fields_ = [('message', ctypes.c_char * 1024), ('path', ctypes.c_char * 512)]


def load(libdir):
    lib = ctypes.CDLL(os.path.join(libdir, 'libarrow_c_device.so'))
    p, e = ctypes.c_void_p, ctypes.POINTER(AcdError)
    sigs = {'AcdDumpNew': [ctypes.POINTER(p), e], 'AcdDumpFree': [p],
            'AcdDumpAddBatch': [p, p, p, ctypes.c_int, p, e], 'AcdDumpAddDeviceBatch': [p, p, p, ctypes.c_int, p, e],
            'AcdDumpAddArrayStream': [p, p, ctypes.c_int, p, e], 'AcdDumpWriteFile': [p, ctypes.c_char_p, e]}
    for name, args in sigs.items():
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = None if name == 'AcdDumpFree' else ctypes.c_int
    return lib


def release(ptr, kind):
    fn = ctypes.c_void_p.from_address(ptr + RELEASE[kind]).value
    if fn:
        CALL(fn)(ptr)


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def pointer(capsule, name):
    return _get_pointer(capsule, name.encode())


class Export:
    """What a peer exported: the structs' addresses, what keeps them alive, and who releases them."""

    def __init__(self, root, ptrs, keep, owned):
        self.root, self.ptrs, self.keep, self.owned = root, ptrs, keep, owned

    def done(self):
        # Structs in our own buffers are released here; capsules release theirs when collected.
        if self.owned:
            kinds = {'batch': ('schema', 'array'), 'device': ('schema', 'device'), 'stream': ('stream',)}[self.root]
            for ptr, kind in zip(self.ptrs, kinds):
                release(ptr, kind)
        self.keep = None


def buffers(*sizes):
    bufs = [ctypes.create_string_buffer(n) for n in sizes]
    return bufs, [ctypes.addressof(b) for b in bufs]


def failing(batches, failure):
    """The batches, then the case's error (as pyarrow maps a Python exception to an errno)."""
    yield from batches
    if failure is not None:
        raise ERRORS[failure['errno']['name']](failure['message'])


def pyarrow_export(kind, schema, batches, failure, corpus, entry):
    if kind == 'stream':
        bufs, ptrs = buffers(STREAM_SIZE)
        pa.RecordBatchReader.from_batches(schema, failing(batches, failure))._export_to_c(ptrs[0])
        return Export('stream', ptrs, bufs, True), 'pyarrow'
    if kind == 'device':
        bufs, ptrs = buffers(SCHEMA_SIZE, DEVICE_ARRAY_SIZE)
        batches[0]._export_to_c_device(ptrs[1], ptrs[0])
        return Export('device', ptrs, bufs, True), 'pyarrow'
    bufs, ptrs = buffers(SCHEMA_SIZE, ARRAY_SIZE)
    batches[0]._export_to_c(ptrs[1], ptrs[0])
    return Export('batch', ptrs, bufs, True), 'pyarrow'


def has_views(t):
    """Whether a type has a string or binary view anywhere (a node of more than 3 buffers)."""
    if t in (pa.string_view(), pa.binary_view()):
        return True
    if pa.types.is_dictionary(t):
        return has_views(t.index_type) or has_views(t.value_type)
    return any(has_views(t.field(i).type) for i in range(t.num_fields))


def nanoarrow_export(kind, schema, batches, failure, corpus, entry):
    import nanoarrow as na
    import nanoarrow.device as nd
    if failure is not None:
        return None, 'nanoarrow\'s Python API has no producer of a stream that fails'
    if kind != 'stream' and any(has_views(f.type) for f in schema):
        # Its c_array_shallow_copy writes past the 3 buffers of its own ArrowArray (docs/conformance.md).
        return None, 'nanoarrow 0.9.0 __arrow_c_array__ crashes on a node of more than 3 buffers (views)'
    ipc = entry['expected'].get('ipc')
    source = 'nanoarrow IPC reader'
    value = None
    if ipc is not None:
        try:
            stream = na.ArrayStream.from_path(os.path.join(corpus, ipc))
            value = stream if kind == 'stream' else stream.read_all()
        except Exception as e:  # noqa: BLE001  (its reader's limits, e.g. dictionaries)
            source = 'pyarrow reader, imported by nanoarrow (its IPC reader: %s)' % str(e).splitlines()[0]
    else:
        source = 'pyarrow reader (integration JSON), imported by nanoarrow'
    if value is None:
        if kind == 'stream':
            value = na.ArrayStream(pa.RecordBatchReader.from_batches(schema, batches))
        else:
            value = na.Array(batches[0])
    if kind == 'stream':
        capsule = value.__arrow_c_stream__()
        return Export('stream', [pointer(capsule, 'arrow_array_stream')], (value, capsule), False), source
    if kind == 'device':
        value = nd.c_device_array(value)
        caps = value.__arrow_c_device_array__()
        return Export('device', [pointer(caps[0], 'arrow_schema'), pointer(caps[1], 'arrow_device_array')], (value, caps), False), source
    caps = value.__arrow_c_array__()
    return Export('batch', [pointer(caps[0], 'arrow_schema'), pointer(caps[1], 'arrow_array')], (value, caps), False), source


def arro3_export(kind, schema, batches, failure, corpus, entry):
    import arro3.core as a3
    if kind == 'device':
        return None, 'arro3-core has no device exporter (no __arrow_c_device_array__)'
    if kind == 'stream':
        value = a3.RecordBatchReader.from_arrow(pa.RecordBatchReader.from_batches(schema, failing(batches, failure)))
        capsule = value.__arrow_c_stream__()
        return Export('stream', [pointer(capsule, 'arrow_array_stream')], (value, capsule), False), 'pyarrow reader, imported by arro3'
    value = a3.RecordBatch.from_arrow(batches[0])
    caps = value.__arrow_c_array__()
    return Export('batch', [pointer(caps[0], 'arrow_schema'), pointer(caps[1], 'arrow_array')], (value, caps), False), 'pyarrow reader, imported by arro3'


PEERS = {'pyarrow': pyarrow_export, 'nanoarrow': nanoarrow_export, 'arro3': arro3_export}


def kind_of(entry):
    roots = entry['roots']
    if len(roots) == 1:
        return 'stream', (roots[0] if roots[0].get('fail_at', -1) >= 0 else None)
    return ('device' if roots[1]['kind'] == 'ArrowDeviceArray' else 'batch'), None


def dump(lib, export, path):
    d, err = ctypes.c_void_p(), AcdError()
    code = lib.AcdDumpNew(ctypes.byref(d), ctypes.byref(err))
    p = export.ptrs
    if code == 0 and export.root == 'batch':
        code = lib.AcdDumpAddBatch(d, p[0], p[1], FULL, None, ctypes.byref(err))
    elif code == 0 and export.root == 'device':
        code = lib.AcdDumpAddDeviceBatch(d, p[0], p[1], FULL, None, ctypes.byref(err))
    elif code == 0:
        code = lib.AcdDumpAddArrayStream(d, p[0], FULL, None, ctypes.byref(err))
    if code == 0:
        code = lib.AcdDumpWriteFile(d, path.encode(), ctypes.byref(err))
    lib.AcdDumpFree(d)
    return code, err.message.decode('utf-8', 'replace')


def run(lib, peer, corpus, out, entry):
    name = entry['name']
    kind, failure = kind_of(entry)
    result = {'peer': peer, 'case': name, 'root': kind, 'outcome': None, 'message': None, 'source': None}
    try:
        schema, batches, _ = base.expected_of(corpus, entry)
        if schema is None:
            raise ValueError('no expected values')
        export, result['source'] = PEERS[peer](kind, schema, batches, failure, corpus, entry)
    except Exception as e:  # noqa: BLE001  (the peer's refusal is a result)
        result.update(outcome='export-error', message='%s: %s' % (type(e).__name__, e))
        return result
    if export is None:
        result.update(outcome='unsupported', message=result.pop('source'), source=None)
        return result
    code, message = dump(lib, export, os.path.join(out, peer, name + '.acdfix'))
    export.done()
    result.update(outcome='dumped' if code == 0 else 'refused', message=None if code == 0 else message)
    return result


def main(argv):
    if len(argv) < 5:
        sys.stderr.write(__doc__)
        return 2
    libdir, corpus, out, peers = argv[1], argv[2], argv[3], argv[4:]
    lib = load(libdir)
    cases = [e for e in base.cases_of(corpus) if not e.get('invalid')]
    for peer in peers:
        os.makedirs(os.path.join(out, peer), exist_ok=True)
        for entry in cases:
            print(json.dumps(run(lib, peer, corpus, out, entry), sort_keys=True), flush=True)
            gc.collect()  # capsules released case by case
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
