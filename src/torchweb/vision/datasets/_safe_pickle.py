"""Reading CIFAR's pickled batches without numpy and without running pickled code.

The batches are dicts of plain data and numpy arrays. This unpickler accepts only the globals
a pickled numpy array uses (ndarray reconstruction, dtype, scalar, _frombuffer), each mapped to
an inert stand-in that records shape, element type and bytes, which `to_tensor` turns into a
torchweb tensor; any other global (os.system, builtins.eval, ...) raises UnpicklingError."""

import io
import pickle

from ._files import tensor_from_bytes

# numpy's type strings (kind + size) as safetensors' names
_TYPES = {"u1": "U8", "i1": "I8", "i2": "I16", "i4": "I32", "i8": "I64", "f2": "F16", "f4": "F32",
          "f8": "F64", "b1": "BOOL"}


class _Dtype:
    def __init__(self, obj, align=False, copy=False):
        obj = obj.decode("latin1") if isinstance(obj, bytes) else str(obj)
        self.order = "<" if obj[:1] not in "<>|=" else obj[0]
        self.code = obj.lstrip("<>|=")
        if self.code not in _TYPES:
            raise pickle.UnpicklingError(f"numpy dtype '{obj}' is not supported here")

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) > 1 and state[1] in ("<", ">", "|", "="):
            self.order = state[1]

    @property
    def big_endian(self):
        return self.order == ">"


class _Array:
    """A pickled ndarray's shape, dtype and bytes."""
    shape, dtype, raw, fortran = (), None, b"", False

    def __setstate__(self, state):
        _, self.shape, self.dtype, self.fortran, raw = state[:5]
        if not isinstance(self.dtype, _Dtype):
            raise pickle.UnpicklingError("ndarray of objects is not supported here")
        self.raw = raw.encode("latin1") if isinstance(raw, str) else bytes(raw)   # Python 2's str


class _NdarrayType:
    pass


def _reconstruct(cls, shape, typecode):
    if cls is not _NdarrayType:
        raise pickle.UnpicklingError("only numpy.ndarray may be reconstructed")
    return _Array()


def _frombuffer(buf, dtype, shape, order):
    a = _Array()
    a.shape, a.dtype, a.raw, a.fortran = tuple(shape), dtype, bytes(buf), order == "F"
    return a


def _scalar(dtype, data):
    t = to_tensor(_frombuffer(data if isinstance(data, bytes) else data.encode("latin1"), dtype, (), "C"))
    return t.item()


def _encode(text, encoding="utf-8"):
    """Protocol 2 writes Python 3 bytes as _codecs.encode(text, 'latin1')."""
    return str(text).encode(str(encoding))


_ALLOWED = {("_codecs", "encode"): _encode}
for _mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
    _ALLOWED[(_mod, "_reconstruct")] = _reconstruct
    _ALLOWED[(_mod, "scalar")] = _scalar
for _mod in ("numpy.core.numeric", "numpy._core.numeric"):
    _ALLOWED[(_mod, "_frombuffer")] = _frombuffer
_ALLOWED[("numpy", "ndarray")] = _NdarrayType
_ALLOWED[("numpy", "dtype")] = _Dtype


class SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        fn = _ALLOWED.get((module, name))
        if fn is None:
            raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed in a dataset file "
                                         "(only plain data and numpy arrays are read)")
        return fn


def load(f, encoding="latin1"):
    """pickle.load of plain data and numpy arrays (arrays come back as _Array; see to_tensor)."""
    if isinstance(f, (bytes, bytearray)):
        f = io.BytesIO(f)
    return SafeUnpickler(f, encoding=encoding).load()


def to_tensor(a):
    """A torchweb tensor with the array's values and shape (C or Fortran order)."""
    shape = tuple(a.shape)
    t = tensor_from_bytes(a.raw, _TYPES[a.dtype.code], shape[::-1] if a.fortran else shape, a.dtype.big_endian)
    return t.permute(*range(len(shape) - 1, -1, -1)) if a.fortran and len(shape) > 1 else t
