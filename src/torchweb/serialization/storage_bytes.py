"""Element bytes between files and device storages, with or without numpy.

Files (PyTorch's zip format, safetensors) hold little-endian elements of PyTorch's dtypes;
torchweb's storages hold numpy arrays (cpu) or GPU buffers in the GPU storage format (webgpu:
f32, f16, i32 for int32 and int64, u32 for uint8 and bool; bfloat16 is f32 words, numpy float32). Pyodide has no numpy, so every
conversion here has a pure-Python path (`array`/`struct`); numpy is used where present, for
speed.
"""

import math
import sys
import warnings
from array import array

from .. import _dtype as D
from ..backends import backend_for
from ..backends.cpu_arrays import array_for_read, np as cpu_numpy, storage_from_array
from ..backends.webgpu.raw_bytes import read_storage_bytes

_LITTLE = sys.byteorder == "little"
_F32_MAX = 3.4028235677973366e38   # past this a float64 rounds to inf in float32


class FileDtype:
    """One element type as a file stores it: PyTorch's name (torch.<name>), its legacy storage
    class (torch.FloatStorage), its safetensors name (F32), its size, and the torchweb dtype it
    loads as (`target`; None: refused) with `convert` True where that changes the type."""

    __slots__ = ("name", "storage", "st_name", "itemsize", "code", "target", "convert")

    def __init__(self, name, storage, st_name, itemsize, code, target, convert=False):
        self.name, self.storage, self.st_name = name, storage, st_name
        self.itemsize, self.code, self.target, self.convert = itemsize, code, target, convert

    def __repr__(self):
        return f"torch.{self.name}"


_TABLE = [
    FileDtype("float32", "FloatStorage", "F32", 4, "f", D.float32),
    FileDtype("float16", "HalfStorage", "F16", 2, "e", D.float16),
    # held in f32 words (_dtype.py): the file's 16 bits are the words' high halves
    FileDtype("bfloat16", "BFloat16Storage", "BF16", 2, "H", D.bfloat16),
    FileDtype("int64", "LongStorage", "I64", 8, "q", D.int64),
    FileDtype("int32", "IntStorage", "I32", 4, "i", D.int32),
    FileDtype("uint8", "ByteStorage", "U8", 1, "B", D.uint8),
    FileDtype("bool", "BoolStorage", "BOOL", 1, "B", D.bool),
    # no such torchweb dtype: converted (with a warning) to the one that holds every value
    FileDtype("float64", "DoubleStorage", "F64", 8, "d", D.float32, True),
    FileDtype("int8", "CharStorage", "I8", 1, "b", D.int32, True),
    FileDtype("int16", "ShortStorage", "I16", 2, "h", D.int32, True),
    FileDtype("uint16", None, "U16", 2, "H", D.int32, True),
    # float32 pairs (docs/complex.md): read and written as float32, twice the elements
    FileDtype("complex64", "ComplexFloatStorage", "C64", 8, "f", D.complex64),
    # refused
    FileDtype("uint32", None, "U32", 4, "I", None),
    FileDtype("uint64", None, "U64", 8, "Q", None),
    FileDtype("complex128", "ComplexDoubleStorage", "C128", 16, None, None),
    FileDtype("float8_e4m3fn", None, "F8_E4M3", 1, None, None),
    FileDtype("float8_e5m2", None, "F8_E5M2", 1, None, None),
    FileDtype("float8_e8m0fnu", None, "F8_E8M0", 1, None, None),
    FileDtype("float4_e2m1fn_x2", None, "F4", 1, None, None),
]
BY_NAME = {f.name: f for f in _TABLE}
BY_STORAGE = {f.storage: f for f in _TABLE if f.storage}
BY_ST_NAME = {f.st_name: f for f in _TABLE}
OF_DTYPE = {f.target: f for f in _TABLE if f.target is not None and not f.convert}


def file_dtype_of(dtype):
    """The file type of a torchweb dtype (saving)."""
    return OF_DTYPE[dtype]


def check_loadable(fmt, what):
    """Refuse a type torchweb cannot hold; warn where it is converted. what: names the tensor."""
    if fmt.target is None:
        raise RuntimeError(f"{what} has dtype torch.{fmt.name}, which torchweb cannot load "
                           "(it holds bool, uint8, int32, int64, float16, bfloat16 and float32); convert it "
                           "in PyTorch before saving")
    if fmt.convert:
        why = "torchweb has no torch." + fmt.name
        warnings.warn(f"{what} has dtype torch.{fmt.name}: loaded as torch.{fmt.target.name} ({why})",
                      UserWarning, stacklevel=4)


def for_device(fmt, device, what):
    """How fmt loads on device: as itself (float16 without 'shader-f16' too: held in f32 words)."""
    return fmt


def _np():
    try:
        import numpy
        return numpy
    except ImportError:
        return None


# -- loading: file bytes -> device storage --------------------------------------------------------
def storage_from_file_bytes(data, fmt, numel, device, big_endian=False, wrap=False):
    """A storage of `device` holding numel elements of file type fmt (converted to fmt.target).
    int64 values outside int32's range raise Int64OutOfRange on webgpu, or with wrap=True are
    stored wrapped (for elements no tensor views: the caller checks the views, check_views)."""
    dtype = fmt.target
    data = memoryview(data)[:numel * fmt.itemsize]
    np = _np()
    if device.type == "cpu":
        if np is None:
            cpu_numpy()   # raises: the cpu device needs numpy
        return storage_from_array(_to_numpy(np, data, fmt, big_endian), dtype)
    from ..backends.webgpu.transfer import storage_from_bytes  # deferred: driver choice (the webgpu backend needs one)
    return storage_from_bytes(_gpu_bytes(np, data, fmt, numel, big_endian, wrap), numel, dtype)


def _to_numpy(np, data, fmt, big_endian):
    order = ">" if big_endian else "<"
    if fmt.name == "bool":
        return np.frombuffer(data, dtype=np.uint8) != 0
    if fmt.name == "bfloat16":
        bits = np.frombuffer(data, dtype=order + "u2").astype(np.uint32) << 16
        return bits.view(np.float32)
    arr = np.frombuffer(data, dtype=order + fmt.code)
    if fmt.convert or arr.dtype.byteorder == ">":
        with np.errstate(over="ignore"):
            arr = arr.astype(getattr(np, fmt.target.numpy_name))
    return arr if arr.flags.writeable else arr.copy()   # frombuffer's arrays are read-only


def _gpu_bytes(np, data, fmt, numel, big_endian, wrap=False):
    """data (numel elements of fmt) in the GPU storage format of fmt.target."""
    dtype = fmt.target
    if ((dtype.gpu_storage, fmt.code) in (("f32", "f"), ("f16", "e")) and not fmt.convert
            and big_endian == (not _LITTLE)):
        return data                                   # f32/f16 bytes are the GPU's already
    if np is not None:
        arr = _to_numpy(np, data, fmt, big_endian)
        if dtype is D.int64 and arr.size and not wrap:
            _check_int32_range(int(arr.min()), int(arr.max()))
        gpu = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32}[dtype.gpu_storage]
        return np.ascontiguousarray(arr.astype(gpu)).tobytes()
    if fmt.name in ("bool", "uint8"):
        raw = bytes(data)   # (array("I", bytes) would read the bytes as 4-byte words)
        return array("I", list(raw) if fmt.name == "uint8" else [1 if b else 0 for b in raw]).tobytes()
    values = _host_array(data, fmt, big_endian)
    if fmt.name == "bfloat16":
        return array("I", [v << 16 for v in values]).tobytes()
    if dtype is D.float32:                             # from float64
        return array("f", [_narrow(v) for v in values]).tobytes()
    if dtype is D.float16 or dtype is D.float32:
        return values.tobytes()
    if values and dtype is D.int64:
        if wrap:
            values = [(v + 2 ** 31) % 2 ** 32 - 2 ** 31 for v in values]
        else:
            _check_int32_range(min(values), max(values))
    return array("i", values).tobytes()


def _narrow(v):
    """A float64 as float32 takes it: past float32's range (and finite), an infinity."""
    return v if -_F32_MAX < v < _F32_MAX or v != v else math.copysign(math.inf, v)


def _host_array(data, fmt, big_endian):
    """The elements as an array.array (pure Python)."""
    if fmt.code == "e":
        import struct
        values = array("f", struct.unpack(("<" if not big_endian else ">") + f"{len(data) // 2}e", data))
        return values
    a = array(fmt.code)
    a.frombytes(bytes(data))
    if big_endian == _LITTLE and a.itemsize > 1:
        a.byteswap()
    return a


class Int64OutOfRange(RuntimeError):
    """An int64 value a webgpu storage cannot hold."""


def check_views(data, fmt, big_endian, offset, size, stride):
    """Raise Int64OutOfRange if an element of this view of the file's int64 elements is outside
    int32's range (a storage may hold unset slack elements no tensor reads: PyTorch's
    coalesced sparse indices are such a view)."""
    np = _np()
    if np is not None:
        arr = np.frombuffer(data, dtype=(">" if big_endian else "<") + "i8")
        view = np.lib.stride_tricks.as_strided(arr[offset:], shape=size, strides=[st * 8 for st in stride])
        if view.size:
            _check_int32_range(int(view.min()), int(view.max()))
        return
    values = _host_array(data, fmt, big_endian)
    positions = [offset]
    for n, st in zip(size, stride):
        positions = [p + i * st for p in positions for i in range(n)]
    if positions and all(size):
        picked = [values[p] for p in positions]
        _check_int32_range(min(picked), max(picked))


def _check_int32_range(lo, hi):
    for v in (lo, hi):
        if not D.int32.min <= v <= D.int32.max:
            raise Int64OutOfRange(
                f"value {v} is out of range for torch.int64 on webgpu: WebGPU has no 64-bit "
                "integers, so int64 tensors hold values in [-2147483648, 2147483647] on the GPU; "
                "load with map_location='cpu' to keep them")


# -- saving: device storage -> file bytes ---------------------------------------------------------
def storage_to_file_bytes(storage):
    """Every element of a storage, little-endian in its file type (PyTorch's format)."""
    dtype = storage.dtype
    if storage.device_type == "cpu":
        arr = array_for_read(storage)
        np = _np()
        if dtype is D.bfloat16:   # float32 words holding bfloat16 values: their high halves
            return (np.ascontiguousarray(arr).view(np.uint32) >> np.uint32(16)).astype("<u2").tobytes()
        if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and not _LITTLE):
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        return np.ascontiguousarray(arr).tobytes()
    raw = read_storage_bytes(storage)
    return gpu_to_file_bytes(raw, dtype)


def gpu_to_file_bytes(raw, dtype):
    if dtype is D.bfloat16:   # f32 words holding bfloat16 values: their high halves
        halves = array("H", bytes(raw))[1 if _LITTLE else 0::2]
        if not _LITTLE:
            halves.byteswap()
        return halves.tobytes()
    if dtype is D.float16 and dtype.gpu_storage == "f32":   # held in f32 words (no shader-f16)
        import struct
        words = memoryview(raw).cast("f")
        return struct.pack(("<" if _LITTLE else ">") + f"{len(words)}e", *words)
    if dtype.gpu_storage in ("f32", "f16") or dtype is D.int32:
        return raw if _LITTLE else _swap(raw, dtype)
    if dtype.name in ("bool", "uint8"):
        return bytes(memoryview(raw)[0 if _LITTLE else 3::4])
    # int64 held as i32: sign-extend
    a = array("i")
    a.frombytes(raw)
    out = array("q", a)
    if not _LITTLE:
        out.byteswap()
    return out.tobytes()


def _swap(raw, dtype):
    a = array({"f32": "f", "f16": "H", "i32": "i"}[dtype.gpu_storage])
    a.frombytes(raw)
    a.byteswap()
    return a.tobytes()
