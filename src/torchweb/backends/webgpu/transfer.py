"""Moving values between the host and GPU storages: uploads of Python numbers or raw bytes,
and readbacks as Python numbers, numpy arrays or memoryviews (what tensor.tolist(), .numpy(),
torch.tensor and loading need; backend.py exports the two of them that ops/ calls on every
device)."""

from . import host
from .runtime import get_runtime
from .storage import GPUStorage


def _empty(numel, dtype):
    return GPUStorage(get_runtime(), numel, dtype)


def storage_from_values(values, dtype):
    """A storage holding a flat list of Python numbers (already range-checked)."""
    s = _empty(len(values), dtype)
    if values:
        get_runtime().upload(s.buffer_for_write(), 0, host.pack(values, dtype))
    return s


def storage_from_bytes(data, numel, dtype):
    """A storage from bytes already in dtype's GPU storage format."""
    s = _empty(numel, dtype)
    if numel:
        get_runtime().upload(s.buffer_for_write(), 0, data)
    return s


def _read_range(t):
    """(buffer id, byte offset, nbytes, skip) to read t's elements; t must be contiguous."""
    elem = 2 if t.dtype.gpu_storage == "f16" else 4
    start = t._offset * elem
    aligned = start & ~3
    nbytes = (start - aligned + t.numel() * elem + 3) & ~3
    return t._storage.buffer_for_read(), aligned, nbytes, start - aligned


def read_values(t):
    """The elements of contiguous t as a flat list of Python numbers (blocks until ready)."""
    if t.numel() == 0:
        return []
    bid, off, nbytes, skip = _read_range(t)
    data = get_runtime().read(bid, off, nbytes)
    return host.unpack(memoryview(data)[skip:], t.dtype, t.numel())


def read_array(t, np):
    """The elements of contiguous t as a flat numpy array, straight from the bytes: no Python
    list in between, which for millions of elements costs seconds and gigabytes."""
    dt = getattr(np, t.dtype.numpy_name)
    if t.numel() == 0:
        return np.zeros(0, dtype=dt)
    bid, off, nbytes, skip = _read_range(t)
    data = get_runtime().read(bid, off, nbytes)
    storage = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32}[t.dtype.gpu_storage]
    raw = np.frombuffer(data, dtype=storage, count=t.numel(), offset=skip)
    return raw != 0 if t.dtype.name == "bool" else raw.astype(dt)


def read_memoryview(t):
    """Contiguous t's elements as a memoryview shaped like t (host.as_memoryview): no Python
    numbers are made, so a million floats cost one copy, not a list."""
    if t.numel() == 0:
        return host.as_memoryview(b"", 0, t.dtype, 0, t.shape)
    bid, off, nbytes, skip = _read_range(t)
    return host.as_memoryview(get_runtime().read(bid, off, nbytes), skip, t.dtype, t.numel(), t.shape)


async def read_memoryview_async(t):
    if t.numel() == 0:
        return host.as_memoryview(b"", 0, t.dtype, 0, t.shape)
    bid, off, nbytes, skip = _read_range(t)
    data = await get_runtime().read_async(bid, off, nbytes)
    return host.as_memoryview(data, skip, t.dtype, t.numel(), t.shape)


async def read_values_async(t):
    if t.numel() == 0:
        return []
    bid, off, nbytes, skip = _read_range(t)
    data = await get_runtime().read_async(bid, off, nbytes)
    return host.unpack(memoryview(data)[skip:], t.dtype, t.numel())
