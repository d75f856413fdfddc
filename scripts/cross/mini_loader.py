"""A second, minimal loader of LP64 fixture images, written from docs/fixtures.md
alone (not from csrc/fixtures/acd_fixture.c), to measure the document's claim
that a loader fits in well under 200 lines. Python stdlib (ctypes) only.

    fx = MiniLoader(path)   # header checks, body at a 64-aligned address, relocation, callbacks
    fx.roots                # [Root(kind, schema_index, ptr, script)]: ptr = base + the root's offset
    fx.problems()           # the structs not released exactly once ([] when every one was)

Callbacks installed: releases (behaviours 1, 2: children and dictionary not yet
released, counted, release set to NULL; 6, 10: a stream's, counted, which also
drops the structs of its script it never handed out), get_schema (3, 7: a deep
copy of the script's schema with its own releases: each call gives a schema the
caller owns), get_next (4, 8: each batch moved out of the image once, then the
end of stream; at the failing batch the script's errno), get_last_error (5, 9).
NOT PLAYED: async device stream scripts (root kind 6). Such a root is handed out
with ptr = the script's address; release_script(ptr) drops its structs.
The private_data of a struct with a callback holds the loader's record id of it,
so a consumer that moves a struct (pyarrow does) carries its record along.
"""

import ctypes
import struct
from collections import namedtuple

HEADER = struct.Struct('<8sHBBIQQQIIII8s')  # magic .. layout (docs/fixtures.md, "Header")
Root = namedtuple('Root', 'kind schema_index ptr script')
RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
GET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
ERROR = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
# Per behaviour: the callback field's offset in its struct, and the struct's private_data offset (LP64).
FIELD = {1: 56, 2: 64, 3: 0, 4: 8, 5: 16, 6: 24, 7: 8, 8: 16, 9: 24, 10: 32}
PRIVATE = {1: 64, 2: 72, 3: 32, 4: 32, 5: 32, 6: 32, 7: 40, 8: 40, 9: 40, 10: 40}
# ArrowSchema, ArrowArray: offsets of n_children, children, dictionary, release, private_data.
TREE = {1: (32, 40, 48, 56, 64), 2: (32, 48, 56, 64, 72)}


def u64(address):
    return ctypes.c_uint64.from_address(address)


def call_release(ptr, field):
    """Calls the release at ptr + field, whatever function it is, unless the struct is released."""
    if u64(ptr + field).value:
        RELEASE(u64(ptr + field).value)(ptr)


def fn_address(fn):
    return ctypes.cast(fn, ctypes.c_void_p).value


class MiniLoader:
    def __init__(self, path):
        with open(path, 'rb') as f:
            data = f.read()
        if len(data) < HEADER.size:
            raise ValueError('%s: shorter than a header' % path)
        magic, version, psize, endian, flags, body_off, size, at, n_sec, n_rel, n_cb, n_roots, layout = HEADER.unpack_from(data)
        if (magic, version, psize, endian, flags, layout) != (b'ACDFIX\r\n', 1, 8, 1, 0, b'lp64\0\0\0\0'):
            raise ValueError('%s: not a version 1 little-endian lp64 image (magic %r, version %d, pointer_size %d, '
                             'endianness %d, flags %d, layout %r)' % (path, magic, version, psize, endian, flags, layout))
        if body_off % 64 or body_off + size > len(data) or at + 24 * n_sec + 8 * n_rel + 16 * n_cb + 32 * n_roots > len(data):
            raise ValueError('%s: body or tables past the end of the file' % path)
        self.memory = ctypes.create_string_buffer(size + 64)  # room to place the body at a 64-aligned address
        self.base = base = (ctypes.addressof(self.memory) + 63) & ~63
        self.size = size
        ctypes.memmove(base, data[body_off:body_off + size], size)
        at += 24 * n_sec  # the section table is informational: skipped
        for (off,) in struct.iter_unpack('<Q', data[at:at + 8 * n_rel]):
            value = u64(self.at(off, 8)).value
            if value:
                u64(base + off).value = self.at(value, 1)
        at += 8 * n_rel
        callbacks = list(struct.iter_unpack('<QII', data[at:at + 16 * n_cb]))
        at += 16 * n_cb
        self.roots, scripts = [], {}
        for kind, schema_index, off, script, _ in struct.iter_unpack('<IIQQQ', data[at:at + 32 * n_roots]):
            self.roots.append(Root(kind, schema_index, self.at(off, 8), self.at(script, 48) if script else 0))
            scripts[off] = script
        # Records: id -> [what, body offset (None: a copy), releases counted, stream state or None]; ids from 1.
        self.records, self.strangers, self.keep = [None], 0, []  # keep: get_schema's copies, alive with the loader
        self.fns = {1: RELEASE(lambda p: self.release_tree(p, 1)), 2: RELEASE(lambda p: self.release_tree(p, 2))}
        for b, private in ((3, 32), (7, 40)):  # ArrowArrayStream, ArrowDeviceArrayStream
            self.fns[b] = GET(lambda p, out, private=private: self.get_schema(p, out, private))
            self.fns[b + 1] = GET(lambda p, out, private=private: self.get_next(p, out, private))
            self.fns[b + 2] = ERROR(lambda p, private=private: self.stream(p, private)['error'])
            self.fns[b + 3] = RELEASE(lambda p, private=private: self.release_stream(p, private))
        ids = {}
        for off, b, _ in callbacks:
            if b not in FIELD:
                raise ValueError('%s: callback behaviour %d unknown' % (path, b))
            start = off - FIELD[b]
            if start not in ids:
                what = ('ArrowSchema', 'ArrowArray')[b - 1] if b < 3 else 'Arrow%sArrayStream' % ('Device' if b > 6 else '')
                ids[start] = self.record(what, start)
                if b > 2:  # a stream: its root gives its script
                    self.records[ids[start]][3] = {'script': scripts[start], 'next': 0, 'error': None, 'device': b > 6}
                u64(self.at(start + PRIVATE[b], 8)).value = ids[start]
            u64(self.at(off, 8)).value = fn_address(self.fns[b])

    def at(self, off, n):
        """The address of n bytes at body offset off, checked against the body."""
        if off + n > self.size:
            raise ValueError('body offset %d (+%d bytes) past the body (%d bytes)' % (off, n, self.size))
        return self.base + off

    def record(self, what, off):
        self.records.append([what, off, 0, None])
        return len(self.records) - 1

    def counted(self, ptr, private):
        """Counts a release of the struct at ptr, by the record id in its private_data."""
        rid = u64(ptr + private).value
        if 0 < rid < len(self.records):
            self.records[rid][2] += 1
        else:
            self.strangers += 1  # a struct that is not the loader's

    def release_tree(self, ptr, b):  # behaviours 1 (ArrowSchema), 2 (ArrowArray, or an ArrowDeviceArray's)
        n_children, children, dictionary, release, private = TREE[b]
        self.counted(ptr, private)
        n, kids = ctypes.c_int64.from_address(ptr + n_children).value, u64(ptr + children).value
        for i in range(max(n, 0) if kids else 0):
            call_release(u64(kids + 8 * i).value, release)  # skips a child already released
        if u64(ptr + dictionary).value:
            call_release(u64(ptr + dictionary).value, release)
        u64(ptr + release).value = 0

    def stream(self, ptr, private):
        """The state of the stream at ptr, by the record id in its private_data."""
        rid = u64(ptr + private).value
        if not (0 < rid < len(self.records) and self.records[rid][3] is not None):
            raise ValueError('a stream callback on a struct the loader does not know')
        return self.records[rid][3]

    def script(self, state):
        """A stream's script: schema offset, batch offsets, fail_at, errno, message offset ("Scripts")."""
        fields = ctypes.string_at(self.at(state['script'], 48), 48)
        schema, n, batches, fail_at, errno, _, message = struct.unpack('<QQQqiIQ', fields)
        return schema, [u64(self.at(batches + 8 * i, 8)).value for i in range(n)], fail_at, errno, message

    def copy_schema(self, src):
        """A deep copy of the ArrowSchema at src (its strings shared with the image), with records of its own."""
        copy = ctypes.create_string_buffer(72)
        ctypes.memmove(copy, src, 72)
        n, kids = ctypes.c_int64.from_address(src + 32).value, u64(src + 40).value
        if kids and n > 0:
            children = (ctypes.c_uint64 * n)(*[self.copy_schema(u64(kids + 8 * i).value) for i in range(n)])
            self.keep.append(children)
            u64(ctypes.addressof(copy) + 40).value = ctypes.addressof(children)
        if u64(src + 48).value:
            u64(ctypes.addressof(copy) + 48).value = self.copy_schema(u64(src + 48).value)
        u64(ctypes.addressof(copy) + 56).value = fn_address(self.fns[1])
        u64(ctypes.addressof(copy) + 64).value = self.record('ArrowSchema (a copy get_schema gave)', None)
        self.keep.append(copy)
        return ctypes.addressof(copy)

    def get_schema(self, ptr, out, private):  # behaviours 3, 7
        ctypes.memmove(out, self.copy_schema(self.base + self.script(self.stream(ptr, private))[0]), 72)
        return 0

    def get_next(self, ptr, out, private):  # behaviours 4, 8: the image's batch moved out, once
        state = self.stream(ptr, private)
        _, batches, fail_at, errno, message = self.script(state)
        if state['next'] == fail_at:
            state['error'] = self.base + message if message else None
            return errno
        size = 128 if state['device'] else 80  # ArrowDeviceArray, ArrowArray
        if state['next'] >= len(batches):
            ctypes.memset(out, 0, size)  # the end of the stream: out's release NULL
            return 0
        batch = self.at(batches[state['next']], size)
        ctypes.memmove(out, batch, size)
        u64(batch + 64).value = 0  # moved out: the image's struct is released
        state['next'] += 1
        return 0

    def release_stream(self, ptr, private):  # behaviours 6, 10
        self.counted(ptr, private)
        self.release_script(self.base + self.stream(ptr, private)['script'])
        u64(ptr + FIELD[6 if private == 32 else 10]).value = 0

    def release_script(self, script):
        """Releases the structs of a script never handed out (its schema, the batches not moved out)."""
        schema, n, batches = struct.unpack('<QQQ', ctypes.string_at(script, 24))
        call_release(self.base + schema, 56)
        for i in range(n):
            call_release(self.base + u64(self.at(batches + 8 * i, 8)).value, 64)

    def problems(self):
        """Every struct not released exactly once, and the releases of structs not the loader's."""
        found = ['%s at %s released %d times' % (what, 'a copy' if off is None else 'body offset %d' % off, n)
                 for what, off, n, _ in self.records[1:] if n != 1]
        return found + (["%d releases of structs not the loader's" % self.strangers] if self.strangers else [])
