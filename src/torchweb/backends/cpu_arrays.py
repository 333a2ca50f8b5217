"""numpy, imported on first use (an optional dependency), and the numpy view of a cpu tensor:
what the cpu backend (cpu.py) and its parts (cpu_conv, cpu_count, cpu_embedding, cpu_index,
cpu_optim, cpu_sort) share."""

from .._numpy import np


def view(t):
    """A numpy view of tensor t that shares its storage."""
    a = t._storage.array
    item = a.itemsize
    return np().lib.stride_tricks.as_strided(a[t._offset:], shape=t.shape,
                                             strides=[s * item for s in t._stride])
