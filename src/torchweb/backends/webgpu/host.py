"""Moving values between Python and GPU buffers without numpy (Pyodide may not have it)."""

import struct
from array import array

from ..._bfloat16 import round_words

_BOOLISH = ("bool", "uint8")


def pack(values, dtype):
    """Bytes of a flat sequence of Python numbers in dtype's GPU storage format."""
    if dtype.gpu_storage == "f16":
        return struct.pack(f"<{len(values)}e", *values)
    if dtype.name == "float16":   # held in f32 words (no shader-f16): rounded to half first
        n = len(values)
        return array("f", struct.unpack(f"<{n}e", struct.pack(f"<{n}e", *values))).tobytes()
    if dtype.name == "bfloat16":   # held in f32 words: rounded to bfloat16 first
        return round_words(values).tobytes()
    if dtype.gpu_storage == "f32":
        return array("f", values).tobytes()
    if dtype.name in _BOOLISH:
        return array("I", [int(v) & 0xFF for v in values]).tobytes() if dtype.name == "uint8" \
            else array("I", [1 if v else 0 for v in values]).tobytes()
    return array("i", values).tobytes()


def _half_views():
    try:    # memoryview learnt the 'e' format in Python 3.12
        memoryview(bytes(2)).cast("e")
        return True
    except (ValueError, NotImplementedError):
        return False


# dtype -> (format of the memoryview a user gets, whether the GPU storage already is that format)
_VIEW_FORMAT = {"float32": ("f", True), "bfloat16": ("f", True), "float16": ("e", True) if _half_views() else ("f", False),
                "int32": ("i", True), "int64": ("q", False), "uint8": ("B", False), "bool": ("?", False)}


def view_format(dtype):
    return _VIEW_FORMAT[dtype.name][0]


def shaped(flat, fmt, shape, count):
    """flat (bytes-like of count elements of format fmt) as a memoryview shaped like shape;
    memoryview cannot take a shape with a zero in it, so an empty one stays flat."""
    flat = memoryview(flat).cast("B")
    return flat.cast(fmt) if count == 0 else flat.cast(fmt, list(shape))


def as_memoryview(data, skip, dtype, count, shape):
    """A memoryview of `count` elements of dtype (format 'f', 'e', 'i', 'q', 'B' or '?';
    float16 comes as 'f' before Python 3.12) shaped like `shape`, from bytes in the GPU storage
    format starting at byte `skip`. float32, float16 and int32 are the bytes themselves (no copy
    past the readback); the others are converted through array, their GPU storage being 32-bit."""
    fmt, same = _VIEW_FORMAT[dtype.name]
    raw = memoryview(data)
    if dtype.name == "float16" and dtype.gpu_storage == "f32":   # held in f32 words
        words = raw[skip:skip + 4 * count].cast("f")
        flat = struct.pack(f"<{count}e", *words) if fmt == "e" else array("f", words)
    elif same:
        flat = raw[skip:skip + (2 if fmt == "e" else 4) * count]
    elif dtype.name == "float16":
        flat = array("f", struct.unpack(f"<{count}e", bytes(raw[skip:skip + 2 * count])))
    else:
        words = raw[skip:skip + 4 * count].cast("I" if dtype.name in _BOOLISH else "i")
        flat = bytes(1 if w else 0 for w in words) if dtype.name == "bool" else array(fmt, words)
    return shaped(flat, fmt, shape, count)


def unpack(data, dtype, count):
    """Python numbers from bytes in dtype's GPU storage format, read in place (memoryview casts:
    no copy of the bytes, no Python loop over the values: a million floats cost one tolist)."""
    if dtype.gpu_storage == "f16":
        if _VIEW_FORMAT["float16"][0] == "e":
            return memoryview(data)[:2 * count].cast("e").tolist()
        return list(struct.unpack(f"<{count}e", bytes(data[:2 * count])))
    mv = memoryview(data)[:4 * count]
    if dtype.gpu_storage == "f32":
        return mv.cast("f").tolist()
    if dtype.name == "bool":
        return list(map(bool, mv.cast("I")))
    if dtype.name == "uint8":
        return mv.cast("I").tolist()
    return mv.cast("i").tolist()
