"""numpy, imported on first use (an optional dependency), and the numpy view of a cpu tensor
(pending values written first: backends/pending.py):
what the cpu backend (cpu.py) and its parts (cpu_conv, cpu_count, cpu_embedding, cpu_index,
cpu_sort) share."""

from .._numpy import np
from . import pending


def view(t):
    """A numpy view of tensor t that shares its storage, for reading or writing: pending
    values are written first, and pending readers run first (they must see the old values)."""
    s = t._storage
    if s.pending is not None or s.readers:
        pending.realize_for_write(s)
    a = s.array
    item = a.itemsize
    return np().lib.stride_tricks.as_strided(a[t._offset:], shape=t.shape,
                                             strides=[s * item for s in t._stride])


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
