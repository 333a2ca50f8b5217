"""torchweb.webgpu: the user's view of the WebGPU device."""

from ._errors import OutOfMemoryError  # noqa: F401  (torch.cuda.OutOfMemoryError's counterpart)
from .backends.cpu_arrays import view
from .backends.webgpu import is_available as _avail
from .backends.webgpu.host import shaped, view_format
from .backends.webgpu.runtime import _runtime, get_runtime, in_browser, reset_runtime


def is_available():
    return _avail()


def adapter_info():
    """The adapter's vendor, architecture, device and description, as the driver reports them."""
    return dict(get_runtime().driver.adapter_info)


def limits():
    d = get_runtime().driver
    names = ("max-storage-buffer-binding-size", "max-buffer-size", "max-storage-buffers-per-shader-stage",
             "max-compute-workgroups-per-dimension", "max-compute-workgroup-storage-size",
             "max-compute-invocations-per-workgroup")
    return {n: d.limit(n) for n in names}


def features():
    return sorted(get_runtime().features)


def synchronize():
    """Submit every recorded op and wait until the GPU has run them."""
    get_runtime().synchronize()


async def synchronize_async():
    await get_runtime().synchronize_async()


def memory_allocated():
    """Bytes of GPU buffers held by live tensors."""
    return get_runtime().pool.live_bytes


def memory_reserved():
    """Bytes held by live tensors plus the pool's free buffers."""
    p = get_runtime().pool
    return p.live_bytes + p.free_bytes


def max_memory_allocated():
    return get_runtime().pool.peak_bytes


def empty_cache():
    """Destroy the pool's free buffers (and stop keeping a working set of the size of the
    program's peak so far: the pool keeps what it needs from here on)."""
    rt = get_runtime()
    rt.pool.trim(0)
    rt.pool.forget_working_set()
    rt.flush()


async def init_async():
    """Start WebGPU in the browser (adapter and device requests are async there); call once,
    e.g. `await torchweb.webgpu.init_async()`, where JSPI cannot block (no run_sync)."""
    if not in_browser():
        get_runtime()
        return adapter_info()
    from .backends.webgpu.driver_browser import init_async as _init  # deferred: driver choice (the browser's)
    return await _init()


def reset():
    """Start a new WebGPU device: after a DeviceLostError, or to drop everything the device
    holds. Tensors of the old device raise DeviceLostError when touched (make them again, e.g.
    load the weights again). Returns the new adapter's info. In a page that cannot block, use
    `await torchweb.webgpu.reset_async()`."""
    reset_runtime()
    if in_browser():
        from .backends.webgpu.driver_browser import can_block  # deferred: driver choice (the browser's)
        if not can_block():
            return None   # (the next use, or `await init_async()`, starts it)
    return adapter_info()


async def reset_async():
    reset_runtime()
    return await init_async()


def _destroy_device():
    """Test hook: destroy the current device as a GPU loss would (WebGPU's device.destroy()).
    The next op that reaches the GPU raises DeviceLostError."""
    rt = _runtime[0]
    if rt is not None and rt.lost is None:
        rt.flush()
        rt.driver.destroy_device()


def to_memoryview(tensor):
    """The tensor's values as a memoryview shaped like it (format 'f' float32, 'e' float16,
    'i' int32, 'q' int64, 'B' uint8, '?' bool), without making a Python number per element:
    the fast readback where numpy is missing (Pyodide here). Blocks like `.tolist()`; in a
    host that cannot block, use `await to_memoryview_async(t)`. `memoryview(t)` does the same
    on Python 3.12+ (Pyodide included). An empty tensor gives an empty flat view."""
    t = tensor.detach().contiguous()
    if t.device.type == "cpu":
        fmt = view_format(t.dtype)   # a copy: the tensor may change after
        return shaped(view(t).astype({"e": "float16", "f": "float32"}.get(fmt, view(t).dtype)).tobytes(),
                      fmt, t.shape, t.numel())
    from .backends.webgpu.transfer import read_memoryview  # deferred: driver choice (the webgpu backend needs one)
    return read_memoryview(t)


async def to_memoryview_async(tensor):
    t = tensor.detach().contiguous()
    if t.device.type == "cpu":
        return to_memoryview(t)
    from .backends.webgpu.transfer import read_memoryview_async  # deferred: driver choice (the webgpu backend needs one)
    return await read_memoryview_async(t)


from .backends.webgpu.errors import DeviceLostError, Int64RangeError  # noqa: E402,F401  (raised at readback)
