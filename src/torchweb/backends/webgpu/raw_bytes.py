"""A storage's bytes as the GPU holds them (serialization converts them to a file's format)."""

from .runtime import get_runtime


def _range(storage):
    elem = 2 if storage.dtype.gpu_storage == "f16" else 4
    n = storage.numel * elem
    return n, (n + 3) & ~3   # reads are 4-byte aligned (odd-length float16 storages)


def read_storage_bytes(storage):
    """Every element of a GPU storage, in its GPU storage format (f32/f16/i32/u32), as bytes."""
    n, padded = _range(storage)
    if n == 0:
        return b""
    return bytes(memoryview(get_runtime().read(storage.buffer_for_read(), 0, padded))[:n])


async def read_storage_bytes_async(storage):
    n, padded = _range(storage)
    if n == 0:
        return b""
    return bytes(memoryview(await get_runtime().read_async(storage.buffer_for_read(), 0, padded))[:n])
