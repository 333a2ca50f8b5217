"""Moving values between Python and GPU buffers without numpy (Pyodide may not have it)."""

import struct
from array import array

_BOOLISH = ("bool", "uint8")


def pack(values, dtype):
    """Bytes of a flat sequence of Python numbers in dtype's GPU storage format."""
    if dtype.gpu_storage == "f16":
        return struct.pack(f"<{len(values)}e", *values)
    if dtype.gpu_storage == "f32":
        return array("f", values).tobytes()
    if dtype.name in _BOOLISH:
        return array("I", [int(v) & 0xFF for v in values]).tobytes() if dtype.name == "uint8" \
            else array("I", [1 if v else 0 for v in values]).tobytes()
    return array("i", values).tobytes()


def unpack(data, dtype, count):
    """Python numbers from bytes in dtype's GPU storage format."""
    if dtype.gpu_storage == "f16":
        return list(struct.unpack(f"<{count}e", bytes(data[:2 * count])))
    mv = memoryview(data)[:4 * count]
    if dtype.gpu_storage == "f32":
        return mv.cast("f").tolist()
    if dtype.name == "bool":
        return [v != 0 for v in mv.cast("I").tolist()]
    if dtype.name == "uint8":
        return mv.cast("I").tolist()
    return mv.cast("i").tolist()
