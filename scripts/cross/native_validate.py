#!/usr/bin/env python3
"""The C core, built natively (scripts/native/build.sh), validates what
pyarrow (Arrow C++) exports: a record batch of many types, sliced, through
pyarrow's own _export_to_c, at every validation level; then a corrupted copy
of its struct is refused with the validator's message. Every struct is
released through pyarrow's own release callback.

    native_validate.py LIBDIR

prints one JSON object: {"cases": [{"name", "level", "code", "message"}, ...]}.
"""

import ctypes
import datetime
import decimal
import json
import sys

import pyarrow as pa

lib = ctypes.CDLL(f"{sys.argv[1]}/libarrow_c_device.so")


class AcdError(ctypes.Structure):
    # struct AcdError of csrc/abi/abi.h, field for field: the core writes both.
    _fields_ = [("message", ctypes.c_char * 1024), ("path", ctypes.c_char * 512)]


SCHEMA_SIZE, ARRAY_SIZE = 72, 80  # LP64 struct ArrowSchema, struct ArrowArray
RELEASE_SCHEMA, RELEASE_ARRAY = 56, 64  # offset of release in each
lib.AcdArrayValidate.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(AcdError)]
lib.AcdArrayValidate.restype = ctypes.c_int
LEVELS = {"minimal": 1, "default": 2, "full": 3}


def release(ptr, offset):
    fn = ctypes.c_void_p.from_address(ptr + offset).value
    if fn:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(fn)(ptr)


def sample():
    n = 40
    ints = [None if i % 5 == 3 else i * 7 - 50 for i in range(n)]
    return pa.record_batch({
        "i32": pa.array(ints, pa.int32()),
        "u8": pa.array([None if v is None else abs(v) % 256 for v in ints], pa.uint8()),
        "f64": pa.array([None if v is None else v / 3 for v in ints], pa.float64()),
        "b": pa.array([None if v is None else v % 2 == 0 for v in ints]),
        "s": pa.array([None if v is None else f"s{v}é" for v in ints]),
        "ls": pa.array([None if v is None else "x" * (abs(v) % 9) for v in ints], pa.large_string()),
        "sv": pa.array([None if v is None else f"view value number {v}" for v in ints], pa.string_view()),
        "bin": pa.array([None if v is None else bytes([abs(v) % 256]) * 3 for v in ints], pa.binary()),
        "fsb": pa.array([None if v is None else bytes([1, 2, 3, abs(v) % 256]) for v in ints], pa.binary(4)),
        "dec": pa.array([None if v is None else decimal.Decimal(v) / 100 for v in ints], pa.decimal128(9, 2)),
        "d32": pa.array([None if v is None else datetime.date(2020, 1, 1) + datetime.timedelta(days=v) for v in ints], pa.date32()),
        "ts": pa.array([None if v is None else v * 1000 for v in ints], pa.timestamp("ms", tz="UTC")),
        "list": pa.array([None if v is None else list(range(abs(v) % 4)) for v in ints], pa.list_(pa.int64())),
        "lv": pa.array([None if v is None else list(range(abs(v) % 3)) for v in ints], pa.list_view(pa.int16())),
        "fsl": pa.array([None if v is None else [v, v + 1] for v in ints], pa.list_(pa.int32(), 2)),
        "st": pa.array([None if v is None else {"a": v, "b": str(v)} for v in ints]),
        "map": pa.array([None if v is None else [("k", v)] for v in ints], pa.map_(pa.string(), pa.int32())),
        "dict": pa.array([None if v is None else ["red", "green", "blue"][abs(v) % 3] for v in ints]).dictionary_encode(),
        "ree": pa.compute.run_end_encode(pa.array([abs(v) // 20 if v is not None else 0 for v in ints], pa.int32())),
        "du": pa.UnionArray.from_dense(pa.array([i % 2 for i in range(n)], pa.int8()), pa.array([i // 2 for i in range(n)], pa.int32()),
                                      [pa.array(range(n // 2), pa.int64()), pa.array([str(i) for i in range(n // 2)])]),
    })


def validate(batch, name, level, corrupt=None):
    schema = ctypes.create_string_buffer(SCHEMA_SIZE)
    array = ctypes.create_string_buffer(ARRAY_SIZE)
    s, a = ctypes.addressof(schema), ctypes.addressof(array)
    batch._export_to_c(a, s)
    saved = None
    if corrupt is not None:
        saved = corrupt(a)
    err = AcdError()
    code = lib.AcdArrayValidate(s, a, LEVELS[level], ctypes.byref(err))
    if saved is not None:
        saved()
    release(a, RELEASE_ARRAY)
    release(s, RELEASE_SCHEMA)
    released = ctypes.c_void_p.from_address(a + RELEASE_ARRAY).value is None and ctypes.c_void_p.from_address(s + RELEASE_SCHEMA).value is None
    return {"name": name, "level": level, "code": code, "message": err.message.decode(), "released": released}


def longer(a):
    length = ctypes.c_int64.from_address(a)
    old = length.value
    length.value = old + 1000
    return lambda: setattr(length, "value", old)


batch = sample()
cases = []
for level in LEVELS:
    cases.append(validate(batch, "batch", level))
    cases.append(validate(batch.slice(3, 30), "batch sliced 3..33", level))
cases.append(validate(batch, "batch with length + 1000", "default", longer))
print(json.dumps({"cases": cases, "pyarrow": pa.__version__}))
