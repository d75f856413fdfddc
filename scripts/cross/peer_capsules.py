#!/usr/bin/env python3
"""The PyCapsule peers of the conformance matrix (issue 12): nanoarrow
(Python) and arro3-core (arrow-rs compiled for Python). Loads every LP64
fixture image of a corpus through the portable C loader (as peer_pyarrow.py
does), wraps each root's structs in PyCapsules named as the Arrow PyCapsule
interface says, behind a producer object with __arrow_c_schema__,
__arrow_c_array__, __arrow_c_device_array__ or __arrow_c_stream__, and
imports it with the peer. nanoarrow validates every array at its full level
(ArrowArrayViewValidate, NANOARROW_VALIDATION_LEVEL_FULL, from the C library
its wheel ships); arrow-rs validates nothing on import, so what arro3 read
is checked by pyarrow's validate(full=True) of arro3's own export. The
peer's result goes back to pyarrow through its own __arrow_c_array__ export
and is compared with the case's expected values as peer_pyarrow.py does.

    build/venv-cross/bin/python scripts/cross/peer_capsules.py nanoarrow|arro3 CORPUS_DIR

Prints one JSON object per case, as peer_pyarrow.py does, plus "capsules":
how many structs the capsule destructors released (the peer kept the struct
in place, as the interface allows, or refused it), how many roots the
driver released itself (never exported: no import for their kind) and how
many capsules were still alive after the case (must be 0); and
"compared_via_iterator" when nanoarrow's values were read back through its
iterator rather than its export (see Nanoarrow.to_pa).
"""

import ctypes
import gc
import json
import os
import sys

import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_pyarrow as base  # noqa: E402  (the loader, the expected values, the comparison)

# ---- the producer side of the PyCapsule interface -------------------------------------------

RELEASE_OFFSET = {'arrow_schema': 56, 'arrow_array': 64, 'arrow_device_array': 64,  # LP64 offsets of
                  'arrow_array_stream': 24, 'arrow_device_array_stream': 32}  # each struct's release
NAMES = {n: ctypes.create_string_buffer(n.encode()) for n in RELEASE_OFFSET}  # alive as long as capsules
RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
LIVE = {}  # id(capsule) -> (struct address, capsule name): capsules not destroyed yet
STATS = {'by_destructor': 0, 'iterated': 0, 'compare': True}

_new = ctypes.pythonapi.PyCapsule_New
_new.restype = ctypes.py_object
_new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


def release_of(ptr, name):
    return ctypes.cast(ptr + RELEASE_OFFSET[name], ctypes.POINTER(ctypes.c_void_p))[0]


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _destroy(capsule):
    # The interface's destructor: release the struct unless the consumer moved it out (release NULL).
    # The struct is the loader's, so nothing is freed here.
    entry = LIVE.pop(capsule, None)
    if entry is None:
        return  # a capsule outliving its case: its image was leaked on purpose, not freed
    ptr, name = entry
    fn = release_of(ptr, name)
    if fn:
        RELEASE(fn)(ptr)
        STATS['by_destructor'] += 1


def capsule(ptr, name):
    c = _new(ptr, ctypes.addressof(NAMES[name]), ctypes.cast(_destroy, ctypes.c_void_p))
    LIVE[id(c)] = (ptr, name)
    return c


class Producer:
    """One root of a fixture as an exporter: each struct goes into one capsule, once (capsules are
    consumed once). An array's schema capsule is the peer's own export of the schema root it imported."""

    def __init__(self, root, schema=None):
        self.root, self.schema, self.taken = root, schema, False

    def _take(self, name):
        if self.taken:
            raise RuntimeError('root already exported: a fixture struct can be moved out once')
        self.taken = True
        return capsule(self.root.ptr, name)


class SchemaProducer(Producer):
    def __arrow_c_schema__(self):
        return self._take('arrow_schema')


class ArrayProducer(Producer):
    def __arrow_c_array__(self, requested_schema=None):
        return self.schema.__arrow_c_schema__(), self._take('arrow_array')


class DeviceOnlyProducer(Producer):
    # Data not on the CPU: the device protocol only (PyCapsuleInterface.rst: "it is recommended to
    # only implement the device version of the protocol"), so a consumer sees the device type.
    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        if any(v is not None for v in kwargs.values()):
            raise NotImplementedError('keywords %s' % sorted(kwargs))
        return self.schema.__arrow_c_schema__(), self._take('arrow_device_array')


class DeviceArrayProducer(ArrayProducer, DeviceOnlyProducer):
    # On the CPU a producer may offer both protocols (PyCapsuleInterface.rst, "Device Support");
    # __arrow_c_array__ hands out the embedded ArrowArray.
    pass


def device_array_producer(root, schema):
    # ArrowDeviceArray (LP64): the ArrowArray (80 bytes), device_id (int64), device_type (int32).
    device_type = ctypes.c_int32.from_address(root.ptr + 88).value
    return (DeviceArrayProducer if device_type == 1 else DeviceOnlyProducer)(root, schema)


class StreamProducer(Producer):
    def __arrow_c_stream__(self, requested_schema=None):
        return self._take('arrow_array_stream')


class DeviceStreamProducer(Producer):
    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        return self._take('arrow_device_array_stream')


class Unsupported(Exception):
    """The peer's Python API has no import for this kind of root."""


def struct_to_pa(exportable, schema):
    """A peer's array export read back by pyarrow (validated fully), as a batch when its schema is a struct:
    pyarrow's StructArray import, since its RecordBatch import refuses a non-zero offset."""
    if not STATS['compare']:
        return 'unchecked', None  # an invalid case: the peer's refusal is the result, nothing is compared
    value = pa.array(exportable)
    value.validate(full=True)
    if isinstance(schema, pa.Schema):
        return 'batch', pa.RecordBatch.from_struct_array(value).replace_schema_metadata(schema.metadata)
    return 'array', value


# ---- the peers ------------------------------------------------------------------------------

class Nanoarrow:
    name = 'nanoarrow'

    def __init__(self):
        import nanoarrow
        import nanoarrow.device
        import nanoarrow._array
        from nanoarrow.c_schema import c_schema_view
        self.na, self.device, self.schema_view = nanoarrow, nanoarrow.device, c_schema_view
        # nanoarrow's Python API validates at the default level only (CArray.view()); its full level is in
        # the nanoarrow C library its extension modules carry (symbols prefixed PythonPkg).
        lib = ctypes.CDLL(nanoarrow._array.__file__)
        self.c = {n: getattr(lib, 'PythonPkgArrowArrayView' + n) for n in ('InitFromSchema', 'SetArray', 'Validate', 'Reset')}
        for n in ('InitFromSchema', 'SetArray'):
            self.c[n].argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.c['Validate'].argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        self.c['Reset'].argtypes = [ctypes.c_void_p]
        self.c['Reset'].restype = None

    def validate(self, carray):
        view, error = ctypes.create_string_buffer(16384), ctypes.create_string_buffer(1024)  # ArrowArrayView, ArrowError
        if self.c['InitFromSchema'](view, carray.schema._addr(), error) != 0:
            raise ValueError('ArrowArrayViewInitFromSchema: %s' % error.value.decode('utf-8', 'replace'))
        try:
            for step, call in (('ArrowArrayViewSetArray', lambda: self.c['SetArray'](view, carray._addr(), error)),
                               ('ArrowArrayViewValidate(FULL)', lambda: self.c['Validate'](view, 3, error))):
                if call() != 0:
                    raise ValueError('%s: %s' % (step, error.value.decode('utf-8', 'replace')))
        finally:
            self.c['Reset'](view)

    def walk(self, schema):
        self.schema_view(schema)  # parses the format, flags and metadata (ArrowSchemaViewInit)
        for child in schema.children:
            self.walk(child)
        if schema.dictionary is not None:
            self.walk(schema.dictionary)

    def schema(self, producer, struct):
        value = self.na.c_schema(producer)
        self.walk(value)
        return value, (pa.schema(value) if struct else pa.schema([pa.field(value)]))

    def most_buffers(self, carray):
        return max([carray.n_buffers] + [self.most_buffers(c) for c in carray.children] +
                   ([self.most_buffers(carray.dictionary)] if carray.dictionary is not None else []))

    def to_pa(self, carray, schema):
        if not STATS['compare'] or self.most_buffers(carray) <= 3:
            return struct_to_pa(carray, schema)
        # nanoarrow 0.9.0's __arrow_c_array__ (c_array_shallow_copy) writes past the 3 buffers of its own
        # ArrowArray for a node with more (string and binary views): heap corruption (docs/conformance.md).
        # Such a tree goes to pyarrow as the Python values nanoarrow's own iterator reads from it.
        from nanoarrow.iterator import PyIterator
        STATS['iterated'] += 1
        values = list(PyIterator(carray.schema)._set_array(carray))
        if isinstance(schema, pa.Schema):
            value = pa.array(values, type=pa.struct(list(schema)))
            return 'batch', pa.RecordBatch.from_struct_array(value).replace_schema_metadata(schema.metadata)
        return 'array', pa.array(values, type=schema.type)

    def array(self, producer, schema):
        carray = self.na.c_array(producer)
        self.validate(carray)
        return self.to_pa(carray, schema)

    def device_array(self, producer, schema):
        device_array = self.device.c_device_array(producer)
        if device_array.device_type_id != 1:
            # What a nanoarrow user does to read it on the CPU: nanoarrow refuses it (its own check), or
            # the matrix shows that it read device memory as host memory.
            carray = self.na.c_array(device_array)
            self.validate(carray)
            return self.to_pa(carray, schema)
        self.validate(device_array.array)
        return self.to_pa(device_array.array, schema)

    def stream(self, producer):
        stream = self.na.c_array_stream(producer)
        schema = stream.get_schema()
        self.walk(schema)
        want = pa.schema(schema)
        batches, error = [], None
        try:
            while True:
                carray = stream.get_next()
                self.validate(carray)
                batches.append(self.to_pa(carray, want)[1])
        except StopIteration:
            pass
        except Exception as e:  # the stream's failure, as nanoarrow raises it
            error = '%s: %s' % (type(e).__name__, e)
        stream.release()
        return want, batches, error

    def device_stream(self, producer):
        raise Unsupported('nanoarrow 0.9.0 (Python) has no import of an ArrowDeviceArrayStream (no __arrow_c_device_stream__ consumer)')


class Arro3:
    name = 'arro3'

    def __init__(self):
        import arro3.core
        self.a = arro3.core

    def schema(self, producer, struct):
        value = (self.a.Schema if struct else self.a.Field).from_arrow(producer)
        return value, (pa.schema(value) if struct else pa.schema([pa.field(value)]))

    def array(self, producer, schema):
        value = (self.a.RecordBatch if isinstance(schema, pa.Schema) else self.a.Array).from_arrow(producer)
        return struct_to_pa(value, schema)

    # arro3-core 0.9.1 has no device import: it takes a CPU device array through __arrow_c_array__.
    device_array = array

    def stream(self, producer):
        reader = self.a.RecordBatchReader.from_arrow(producer)
        want = pa.schema(reader.schema)
        batches, error = [], None
        try:
            while True:
                batches.append(struct_to_pa(reader.read_next_batch(), want)[1])
        except StopIteration:
            pass
        except Exception as e:  # the stream's failure, as arro3 raises it
            error = '%s: %s' % (type(e).__name__, e)
        return want, batches, error

    def device_stream(self, producer):
        raise Unsupported('arro3-core 0.9.1 has no import of an ArrowDeviceArrayStream (no __arrow_c_device_stream__ consumer)')


PEERS = {'nanoarrow': Nanoarrow, 'arro3': Arro3}

# ---- one case -------------------------------------------------------------------------------


def import_roots(peer, roots):
    """Items (root index, kind, pyarrow value) as peer_pyarrow.py's, the unsupported roots, the refusals."""
    schemas, items, unsupported, refused = {}, [], [], []
    for i, r in enumerate(roots):
        if r.kind != 1:
            continue
        struct = base.schema_format(r.ptr) == '+s'
        try:
            value, as_pa = peer.schema(SchemaProducer(r), struct)
            schemas[i] = (value, as_pa if struct else as_pa.field(0))
            items.append((i, 'schema', as_pa))
        except BaseException as e:  # as below
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            refused.append('root %d (%s): %s: %s' % (i, base.KINDS[r.kind], type(e).__name__, e))
    for i, r in enumerate(roots):
        try:
            if r.kind in (2, 3):
                if r.schema_index not in schemas:
                    unsupported.append('root %d: an %s without an imported schema root' % (i, base.KINDS[r.kind]))
                    continue
                value, as_pa = schemas[r.schema_index]
                if r.kind == 2:
                    items.append((i,) + peer.array(ArrayProducer(r, value), as_pa))
                else:
                    items.append((i,) + peer.device_array(device_array_producer(r, value), as_pa))
            elif r.kind == 4:
                items.append((i, 'stream', peer.stream(StreamProducer(r))))
            elif r.kind == 5:
                items.append((i, 'stream', peer.device_stream(DeviceStreamProducer(r))))
            elif r.kind == 6:
                raise Unsupported('%s has no Python consumer of an async device stream' % peer.name)
        except Unsupported as e:
            unsupported.append('root %d: %s' % (i, e))
        except BaseException as e:  # the peer's refusal, whatever its class (arro3's panics are BaseExceptions)
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            refused.append('root %d (%s): %s: %s' % (i, base.KINDS[r.kind], type(e).__name__, e))
    return items, unsupported, refused


def run_case(lib, peer, name, image, expected, invalid=False):
    result = {'case': name, 'outcome': None, 'equal': None, 'message': None}
    fx, error = ctypes.c_void_p(), base.Error()
    if lib.AcdFixtureLoadFile(image.encode(), ctypes.byref(fx), ctypes.byref(error)) != 0:
        result.update(outcome='load-error', message=error.message.decode('utf-8', 'replace'))
        return result
    roots = []
    for i in range(lib.AcdFixtureRootCount(fx)):
        r = base.Root()
        lib.AcdFixtureGetRoot(fx, i, ctypes.byref(r))
        roots.append(r)
    STATS.update(by_destructor=0, iterated=0, compare=not invalid)
    items, unsupported, refused = import_roots(peer, roots)
    base.classify(result, items, unsupported, refused, None if invalid else expected)
    del items
    gc.collect()
    # Only now, with every capsule destroyed, may the driver release what was never exported.
    live = len(LIVE)
    by_driver = 0
    if not live:
        for r in roots:
            by_driver += base.holds_release(r)
            base.release_root(r)
    result['capsules'] = {'by_destructor': STATS['by_destructor'], 'by_driver': by_driver, 'live': live}
    if STATS['iterated']:
        result['compared_via_iterator'] = STATS['iterated']  # roots read back through nanoarrow's iterator
    counts = base.Counts()
    lib.AcdFixtureGetCounts(fx, ctypes.byref(counts))
    result['releases'] = {f: getattr(counts, f) for f, _ in base.Counts._fields_}
    if live or counts.not_released > 0:
        # The peer still holds capsules or views of the image: freeing it would pull the memory from under them.
        result.update(problems=max(live, counts.not_released),
                      report='%d capsules alive, %d structs not released: the image is leaked, not freed' % (live, counts.not_released))
        LIVE.clear()
        return result
    report = ctypes.create_string_buffer(4096)
    result['problems'] = lib.AcdFixtureFree(fx, report, len(report))
    result['report'] = report.value.decode('utf-8', 'replace')
    return result


def main(argv):
    if len(argv) != 3 or argv[1] not in PEERS:
        sys.stderr.write(__doc__)
        return 2
    peer, corpus = PEERS[argv[1]](), argv[2]
    lib = base.build_loader()
    for entry in base.cases_of(corpus):
        image = os.path.join(corpus, entry.get('images', {}).get('lp64', 'lp64/%s.acdfix' % entry['name']))
        if not os.path.exists(image):
            continue  # a case without an LP64 image
        invalid = bool(entry.get('invalid'))  # a negative fixture: the peer must refuse it, nothing to compare
        try:
            expected = None if invalid else base.expected_of(corpus, entry)
        except Exception as e:  # our reader's fault, not the peer's: the case is then not equal
            expected = (None, None, 'unreadable expected values (%s: %s)' % (type(e).__name__, e))
        result = run_case(lib, peer, entry['name'], image, expected, invalid)
        if invalid:
            result['invalid'] = True
        print(json.dumps(result, sort_keys=True), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
