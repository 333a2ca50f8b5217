"""numpy, imported on first use (an optional dependency), and the numpy view of a cpu tensor:
what the cpu backend (cpu.py) and its parts (cpu_conv, cpu_count, cpu_embedding, cpu_index,
cpu_optim, cpu_sort) share, with the storage class and the dtypes; also what the host side uses
to move numpy arrays in and out (tensor.numpy(), torch.from_numpy, loading)."""

from .._numpy import np


class CPUStorage:
    __slots__ = ("array", "dtype", "version", "__weakref__")
    device_type = "cpu"

    def __init__(self, array, dtype):
        self.array = array
        self.dtype = dtype
        self.version = 0

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
    return CPUStorage(np().ascontiguousarray(arr, dtype=np_dtype(dtype)).reshape(-1), dtype)


def view(t):
    """A numpy view of tensor t that shares its storage."""
    a = t._storage.array
    item = a.itemsize
    return np().lib.stride_tricks.as_strided(a[t._offset:], shape=t.shape,
                                             strides=[s * item for s in t._stride])
