"""numpy, imported on first use (an optional dependency), and the numpy view of a cpu tensor
(pending values written first: backends/pending.py):
what the cpu backend (cpu.py) and its parts (cpu_conv, cpu_count, cpu_embedding, cpu_index,
cpu_sort) share, with the storage class and the dtypes; also what the host side uses
to move numpy arrays in and out (tensor.numpy(), torch.from_numpy, loading)."""

from .. import _bfloat16
from .._numpy import np
from . import pending


class CPUStorage:
    __slots__ = ("array", "dtype", "version", "pending", "readers", "readers_limit", "__weakref__")
    device_type = "cpu"
    touched = True   # (always: an elementwise op with out= runs now, only fresh outputs are deferred)

    def __init__(self, array, dtype):
        self.array = array
        self.dtype = dtype
        self.version = 0
        self.pending = None   # a lazy Node: the expression whose values the array will hold
        self.readers = None   # {id: group} of the pending storages that read this one

    @property
    def numel(self):
        return self.array.size


def np_dtype(dtype):
    return getattr(np(), dtype.numpy_name)


def compute_np_dtype(dtype, cls):
    if cls == "b":
        return np().bool_
    if dtype.name == "float16":
        return np().float32  # half is computed in float32, as PyTorch's CPU path does
    return np_dtype(dtype)


def storage_from_array(arr, dtype):
    arr = np().ascontiguousarray(arr, dtype=np_dtype(dtype)).reshape(-1)
    if dtype.name == "bfloat16":   # float32 words holding bfloat16's values
        arr = _bfloat16.round_np(np(), arr)
    return CPUStorage(arr, dtype)


def view(t):
    """A numpy view of tensor t that shares its storage, for reading or writing: pending
    values are written first, and pending readers run first (they must see the old values)."""
    return strided(array_for_write(t._storage), t._offset, t.shape, t._stride)


def strided(array, offset, shape, stride):
    """A numpy view of flat `array` in a tensor's layout (offset and strides in elements)."""
    return np().lib.stride_tricks.as_strided(array[offset:], shape=shape,
                                             strides=[s * array.itemsize for s in stride])


def array_for_read(storage):
    """storage's flat array, to read: its pending values written first."""
    if storage.pending is not None:
        pending.realize_for_read(storage)
    return storage.array


def array_for_write(storage):
    """storage's flat array, to write: its pending readers run first, on the old values."""
    if storage.pending is not None or storage.readers:
        pending.realize_for_write(storage)
    return storage.array
