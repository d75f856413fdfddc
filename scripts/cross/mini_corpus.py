#!/usr/bin/env python3
"""A small LP64 fixture corpus written in Python, independently of the TS
writer, straight from docs/fixtures.md: pyarrow exports each case's data
through the C Data Interface, this script copies the struct trees it gets
into an image (a dumper for a subset of types: booleans, integers, floats,
utf8, binary, lists, structs, dictionaries), and pyarrow writes the
expected IPC stream. It checks the loader and the pyarrow peer against the
format document, not against one writer.

    build/venv-cross/bin/python scripts/cross/mini_corpus.py OUT_DIR

writes OUT_DIR/manifest.json, OUT_DIR/lp64/<case>.acdfix and
OUT_DIR/expected/<case>.arrows, the same bytes on every run.
"""

import ctypes
import json
import os
import struct
import sys

import pyarrow as pa

NO_SCHEMA = 0xFFFFFFFF
EIO = 5


class CSchema(ctypes.Structure):
    pass


CSchema._fields_ = [('format', ctypes.c_char_p), ('name', ctypes.c_char_p), ('metadata', ctypes.c_void_p),
                    ('flags', ctypes.c_int64), ('n_children', ctypes.c_int64),
                    ('children', ctypes.POINTER(ctypes.POINTER(CSchema))), ('dictionary', ctypes.POINTER(CSchema)),
                    ('release', ctypes.c_void_p), ('private_data', ctypes.c_void_p)]


class CArray(ctypes.Structure):
    pass


CArray._fields_ = [('length', ctypes.c_int64), ('null_count', ctypes.c_int64), ('offset', ctypes.c_int64),
                   ('n_buffers', ctypes.c_int64), ('n_children', ctypes.c_int64),
                   ('buffers', ctypes.POINTER(ctypes.c_void_p)), ('children', ctypes.POINTER(ctypes.POINTER(CArray))),
                   ('dictionary', ctypes.POINTER(CArray)), ('release', ctypes.c_void_p), ('private_data', ctypes.c_void_p)]

WIDTH = {b'c': 1, b'C': 1, b's': 2, b'S': 2, b'i': 4, b'I': 4, b'l': 8, b'L': 8, b'f': 4, b'g': 8}


class Image:
    """The body, relocations, callbacks and roots of one LP64 image."""

    def __init__(self):
        self.body = bytearray(64)  # offset 0 stands for NULL
        self.relocs, self.callbacks, self.roots = [], [], []

    def alloc(self, size, align=8):
        off = (len(self.body) + align - 1) // align * align
        self.body.extend(bytes(off + size - len(self.body)))
        return off

    def put(self, off, fmt, value):
        struct.pack_into('<' + fmt, self.body, off, value)

    def ptr(self, field, target):
        self.put(field, 'Q', target)
        self.relocs.append(field)

    def data(self, raw, align=1):
        off = self.alloc(max(len(raw), 1), align)
        self.body[off:off + len(raw)] = raw
        return off

    def pointers(self, targets):
        off = self.alloc(8 * len(targets))
        for i, t in enumerate(targets):
            self.ptr(off + 8 * i, t)
        return off

    def schema(self, s):
        """A copy of the C ArrowSchema tree s (pyarrow's export)."""
        children = [self.schema(s.children[i].contents) for i in range(s.n_children)]
        dictionary = self.schema(s.dictionary.contents) if s.dictionary else 0
        off = self.alloc(72)
        self.ptr(off, self.data(s.format + b'\0'))
        self.ptr(off + 8, self.data(s.name + b'\0') if s.name is not None else 0)
        self.ptr(off + 16, self.data(metadata_bytes(s.metadata)) if s.metadata else 0)
        self.put(off + 24, 'q', s.flags)
        self.put(off + 32, 'q', s.n_children)
        self.ptr(off + 40, self.pointers(children) if children else 0)
        self.ptr(off + 48, dictionary)
        self.callbacks.append((off + 56, 1))
        self.ptr(off + 64, 0)
        return off

    def array(self, a, s, at=None):
        """A copy of the C ArrowArray tree a of type s, its buffers 64-byte aligned."""
        sizes = buffer_sizes(a, s)
        buffers = [self.data(ctypes.string_at(a.buffers[i], n), 64) if a.buffers[i] else 0 for i, n in enumerate(sizes)]
        child_schemas = [s.children[i].contents for i in range(s.n_children)]
        children = [self.array(a.children[i].contents, child_schemas[i]) for i in range(a.n_children)]
        dictionary = self.array(a.dictionary.contents, s.dictionary.contents) if a.dictionary else 0
        off = at if at is not None else self.alloc(80)
        for i, v in enumerate((a.length, a.null_count, a.offset, a.n_buffers, a.n_children)):
            self.put(off + 8 * i, 'q', v)
        self.ptr(off + 40, self.pointers(buffers) if buffers else 0)
        self.ptr(off + 48, self.pointers(children) if children else 0)
        self.ptr(off + 56, dictionary)
        self.callbacks.append((off + 64, 2))
        self.ptr(off + 72, 0)
        return off

    def device_array(self, a, s):
        off = self.alloc(128)
        self.array(a, s, at=off)
        self.put(off + 80, 'q', -1)  # device_id: the CPU has none
        self.put(off + 88, 'i', 1)   # ARROW_DEVICE_CPU
        self.ptr(off + 96, 0)        # sync_event
        return off

    def script(self, schema, batches, fail_at=-1, errno=0, message=None):
        off = self.alloc(48)
        listing = self.alloc(8 * len(batches))
        for i, b in enumerate(batches):
            self.put(listing + 8 * i, 'Q', b)
        self.put(off, 'Q', schema)
        self.put(off + 8, 'Q', len(batches))
        self.put(off + 16, 'Q', listing if batches else 0)
        self.put(off + 24, 'q', fail_at)
        self.put(off + 32, 'i', errno)
        self.put(off + 40, 'Q', self.data(message.encode() + b'\0') if message else 0)
        return off

    def stream(self, kind):
        if kind == 4:
            off = self.alloc(40)
            self.callbacks += [(off, 3), (off + 8, 4), (off + 16, 5), (off + 24, 6)]
            self.ptr(off + 32, 0)
        else:
            off = self.alloc(48)
            self.put(off, 'i', 1)
            self.callbacks += [(off + 8, 7), (off + 16, 8), (off + 24, 9), (off + 32, 10)]
            self.ptr(off + 40, 0)
        return off

    def root(self, kind, off, schema=NO_SCHEMA, script=0):
        self.roots.append((kind, schema, off, script))
        return len(self.roots) - 1

    def write(self):
        body = bytes(self.body) + bytes(-len(self.body) % 64)
        tables = b''.join(struct.pack('<Q', r) for r in sorted(self.relocs))
        tables += b''.join(struct.pack('<QII', o, b, 0) for o, b in self.callbacks)
        tables += b''.join(struct.pack('<IIQQQ', k, s, o, sc, 0) for k, s, o, sc in self.roots)
        body_off = (128 + len(tables) + 63) // 64 * 64
        header = b'ACDFIX\r\n' + struct.pack('<HBBIQQQIIII', 1, 8, 1, 0, body_off, len(body), 128, 0,
                                             len(self.relocs), len(self.callbacks), len(self.roots))
        header += b'lp64\0\0\0\0' + bytes(64)
        return header + tables + bytes(body_off - 128 - len(tables)) + body


def metadata_bytes(address):
    """ArrowSchema.metadata's encoding, read to its end: int32 n, then n (int32 length, bytes) pairs twice."""
    n = struct.unpack('<i', ctypes.string_at(address, 4))[0]
    size = 4
    for _ in range(2 * n):
        size += 4 + struct.unpack('<i', ctypes.string_at(address + size, 4))[0]
    return ctypes.string_at(address, size)


def buffer_sizes(a, s):
    """The bytes each buffer of a needs (the subset of types this dumper knows)."""
    fmt, end = s.format, a.offset + a.length
    validity = (end + 7) // 8
    if fmt == b'b':
        return [validity, validity]
    if fmt in WIDTH:
        return [validity, end * WIDTH[fmt]]
    if fmt in (b'u', b'z'):
        offsets = ctypes.cast(a.buffers[1], ctypes.POINTER(ctypes.c_int32))
        return [validity, (end + 1) * 4, offsets[end] if a.buffers[1] else 0]
    if fmt == b'+l':
        return [validity, (end + 1) * 4]
    if fmt == b'+s':
        return [validity]
    raise ValueError('mini_corpus: no buffer rule for format %r' % fmt)


def exported(value):
    """pyarrow's C export of a batch or an array: (CSchema, CArray), released by the caller."""
    s, a = CSchema(), CArray()
    value._export_to_c(ctypes.addressof(a), ctypes.addressof(s))
    return s, a


def release(*structs):
    for x in structs:
        if x.release:
            ctypes.CFUNCTYPE(None, ctypes.c_void_p)(x.release)(ctypes.addressof(x))


def cases():
    """(name, what it exercises, roots builder, expected schema, expected batches, stream error)."""
    meta = pa.schema([pa.field('a', pa.int32())], metadata={'k': 'v'})
    ints = pa.record_batch([pa.array([1, None, 3], pa.int32())], schema=meta)
    strings = pa.record_batch([pa.array(['x', None, 'yz', 'w'])], names=['s']).slice(1, 3)
    nested = pa.record_batch([pa.array([[1, 2], None, []], pa.list_(pa.int64())),
                              pa.array([{'x': True, 'y': 'a'}, None, {'x': None, 'y': 'c'}])], names=['l', 'st'])
    dictionary = pa.record_batch([pa.array(['a', 'b', None, 'a']).dictionary_encode()], names=['d'])
    floats = [pa.record_batch([pa.array([0.5 * i, None], pa.float64())], names=['f']) for i in range(2)]

    def batch(b):
        def build(img):
            s, a = exported(b)
            img.root(1, img.schema(s))
            img.root(2, img.array(a, s), schema=0)
            release(a, s)
        return build

    def device(b):
        def build(img):
            s, a = exported(b)
            img.root(1, img.schema(s))
            img.root(3, img.device_array(a, s), schema=0)
            release(a, s)
        return build

    def stream(batches, schema, kind=4, fail_at=-1, message=None):
        def build(img):
            so = None
            offs = []
            for b in batches:
                s, a = exported(b)
                so = so or img.schema(s)
                offs.append(img.device_array(a, s) if kind == 5 else img.array(a, s))
                release(a, s)
            if so is None:
                s = CSchema()
                schema._export_to_c(ctypes.addressof(s))
                so = img.schema(s)
                release(s)
            img.root(kind, img.stream(kind), script=img.script(so, offs, fail_at, EIO if fail_at >= 0 else 0, message))
        return build

    return [
        ('int32_nulls_metadata', 'an int32 column with a null and schema metadata', batch(ints), ints.schema, [ints], None),
        ('utf8_sliced', 'a utf8 column sliced (offset 1)', batch(strings), strings.schema, [strings], None),
        ('list_struct', 'a list of int64 and a struct of bool and utf8, with nulls', batch(nested), nested.schema, [nested], None),
        ('dictionary_utf8', 'a dictionary-encoded utf8 column (int8 indices)', batch(dictionary), dictionary.schema, [dictionary], None),
        ('device_cpu', 'an ArrowDeviceArray on the CPU (device_id -1)', device(ints), ints.schema, [ints], None),
        ('stream_two', 'an ArrowArrayStream of two batches', stream(floats, floats[0].schema), floats[0].schema, floats, None),
        ('stream_empty', 'an ArrowArrayStream without batches', stream([], floats[0].schema), floats[0].schema, [], None),
        ('stream_fails', 'an ArrowArrayStream failing at batch 1 with EIO and a message',
         stream(floats, floats[0].schema, fail_at=1, message='disk on fire'), floats[0].schema, floats[:1],
         {'at': 1, 'errno': EIO, 'message': 'disk on fire'}),
        ('device_stream', 'an ArrowDeviceArrayStream of two CPU batches', stream(floats, floats[0].schema, kind=5),
         floats[0].schema, floats, None),
    ]


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    os.makedirs(os.path.join(out, 'lp64'), exist_ok=True)
    os.makedirs(os.path.join(out, 'expected'), exist_ok=True)
    entries = []
    for name, what, build, schema, batches, error in cases():
        img = Image()
        build(img)
        with open(os.path.join(out, 'lp64', name + '.acdfix'), 'wb') as f:
            f.write(img.write())
        with pa.ipc.new_stream(os.path.join(out, 'expected', name + '.arrows'), schema) as w:
            for b in batches:
                w.write_batch(b)
        entries.append({'name': name, 'exercises': what, 'stream_error': error})
    with open(os.path.join(out, 'manifest.json'), 'w') as f:
        json.dump({'generator': 'scripts/cross/mini_corpus.py', 'cases': entries}, f, indent=1, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
