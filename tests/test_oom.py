"""Out of memory on the webgpu device (issue 22, item 3): torch.OutOfMemoryError with the sizes,
the device usable after, the pool freed and the creation tried again once, empty_cache.

Three ways in: a size past the adapter's maxBufferSize (refused before any GPU call), the
native driver's test hook (creations fail as a device out of memory would), and a real one:
lavapipe's memory is the process's, so a subprocess under an address-space limit runs out."""

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import torchweb
from torchweb.backends.webgpu.errors import format_size
from torchweb.backends.webgpu import runtime
from torchweb.backends.webgpu.runtime import get_runtime
from oracle import assert_close


def _fresh_pool():
    gc.collect()
    torchweb.webgpu.empty_cache()


def test_sizes_in_pytorchs_units():
    assert [format_size(n) for n in (1024, 1536, 1 << 20, 3 << 29, 1 << 42)] == [
        "1024 bytes", "1.50 KiB", "1024.00 KiB", "1.50 GiB", "4096.00 GiB"]


def test_the_class_is_pytorchs_shape():
    assert issubclass(torchweb.OutOfMemoryError, RuntimeError)
    assert torchweb.cuda.OutOfMemoryError is torchweb.OutOfMemoryError   # as torch.cuda's is torch's
    assert torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
    assert torchweb.webgpu.OutOfMemoryError is torchweb.OutOfMemoryError


def test_past_the_largest_buffer():
    rt = get_runtime()
    n = 1 << 40   # 4 TiB of float32: past any adapter's maxBufferSize
    with pytest.raises(torchweb.OutOfMemoryError) as info:
        torchweb.empty(n, device="webgpu")
    msg = str(info.value)
    assert msg.startswith("WebGPU out of memory. Tried to allocate 4096.00 GiB")   # PyTorch's units
    assert f"largest buffer is {format_size(rt.max_buffer)} (maxBufferSize)" in msg
    # the device is usable after, and agrees with PyTorch
    x = np.arange(6, dtype=np.float32)
    assert_close(torchweb.tensor(x, device="webgpu").mul(2).sum(), torch.tensor(x).mul(2).sum())


def _a_flush_that_fails():
    """(runtime, a computed tensor, b = ones * 3 recorded) with the next flush's creation and
    its retry after freeing the pool set to fail."""
    _fresh_pool()
    rt = get_runtime()
    a = torchweb.arange(1000, dtype=torchweb.float32, device="webgpu")
    rt.flush()
    rt.driver.fail_next_creations = 2
    return rt, a, torchweb.ones(300_000, device="webgpu") * 3


def test_device_out_of_memory_raised_and_device_usable_after():
    rt, a, b = _a_flush_that_fails()
    with pytest.raises(torchweb.OutOfMemoryError) as info:
        b.sum().item()
    msg = str(info.value)
    assert "Tried to allocate" in msg and "Not enough memory left" in msg
    assert "did not run" in msg and "allocated by torchweb" in msg
    del b
    # earlier tensors keep their values; new ones (the failed ids included, made again) work
    assert_close(a.sum(), torch.arange(1000, dtype=torch.float32).sum())
    for _ in range(3):
        c = torchweb.ones(300_000, device="webgpu") * 2
        assert_close(c.sum(), torch.ones(300_000).mul(2).sum())
    assert rt.driver.fail_next_creations == 0


def test_a_tensor_the_failure_left_unwritten_raises_when_read():
    """The ops recorded after the failed creation did not run: reading a tensor one of them
    would have written (or one computed from it later) raises, naming the out of memory,
    instead of returning a blank buffer's zeros; a tensor computed before keeps its values and
    the mark goes with the tensor."""
    rt, a, b = _a_flush_that_fails()
    with pytest.raises(torchweb.OutOfMemoryError):
        torchweb.webgpu.synchronize()
    assert rt.unwritten, "nothing marked unwritten"
    for victim in (b, b + 1, (b * 2).sum(), b[:10].clone()):   # computed later from b: too
        with pytest.raises(RuntimeError, match="never computed: an earlier out of memory") as info:
            victim.tolist()
        assert not isinstance(info.value, torchweb.OutOfMemoryError)
        assert "WebGPU out of memory. Tried to allocate" in str(info.value)
    assert_close(a * 2, torch.arange(1000, dtype=torch.float32) * 2)   # unmarked: reads fine
    del b, victim, info
    gc.collect()
    c = torchweb.ones(300_000, device="webgpu") * 3   # (the pool may hand out the same buffers)
    assert_close(c.sum(), torch.ones(300_000).mul(3).sum())
    assert rt.unwritten == {}   # the marks went with the tensors (their buffers back in the pool)


def test_big_buffer_out_of_memory_raised_at_the_op(monkeypatch):
    """A buffer of CREATE_NOW_BYTES or more is made at the op that needs it: out of memory
    raises there, before anything of the op is recorded, and nothing recorded is lost."""
    _fresh_pool()
    monkeypatch.setattr(runtime, "FLUSH_AFTER_S", 60.0)   # what is recorded stays so until then
    rt = get_runtime()
    n = runtime.CREATE_NOW_BYTES // 4
    a = torchweb.arange(100, dtype=torchweb.float32, device="webgpu")
    torchweb.webgpu.synchronize()
    small = a * 3                  # pending, and the dispatch below recorded, not yet flushed
    b = a.cumsum(0)
    flushes = rt.flushes
    rt.driver.fail_next_creations = 2   # the big creation and its retry (not the stream's)
    monkeypatch.setattr(rt.driver, "fail_min_bytes", runtime.CREATE_NOW_BYTES)
    with pytest.raises(torchweb.OutOfMemoryError) as info:
        torchweb.tensor(np.ones(n, np.float32), device="webgpu")   # the upload needs its buffer
    msg = str(info.value)
    assert f"Tried to allocate {format_size(runtime.CREATE_NOW_BYTES)}" in msg
    assert "tried again" in msg and "did not run" not in msg
    assert rt.flushes > flushes   # the recorded work was flushed before the retry
    assert_close(small.sum(), torch.arange(100, dtype=torch.float32).mul(3).sum())
    assert_close(b, torch.arange(100, dtype=torch.float32).cumsum(0))
    assert_close(torchweb.tensor(np.ones(n, np.float32), device="webgpu").sum(), torch.ones(n).sum())


def test_retry_after_freeing_the_pool_succeeds():
    _fresh_pool()
    rt = get_runtime()
    cached = [torchweb.ones(50_000, device="webgpu") + i for i in range(4)]
    torchweb.webgpu.synchronize()   # (written: the pending sums take their buffers)
    del cached
    gc.collect()
    reserved = torchweb.webgpu.memory_reserved()
    assert reserved > torchweb.webgpu.memory_allocated()   # the pool holds the freed buffers
    free_before = rt.pool.free_bytes
    assert free_before >= 4 * 200_000
    rt.driver.fail_next_creations = 1    # the first try fails; the pool is freed; the retry works
    x = torchweb.full((700_000,), 2.0, device="webgpu")
    assert_close(x.sum(), torch.full((700_000,), 2.0).sum())   # no error: the retry made it
    # the pool's free buffers were given back for it (what is free now: the sum's temporaries)
    assert rt.pool.free_bytes < free_before // 8


def test_retry_keeps_free_buffers_the_rest_of_the_flush_reads(monkeypatch):
    """The retry destroys the pool's free buffers, but not those that rows after the failed
    creation, in the same flush, still bind (x here: read by a sum recorded after, then freed)."""
    _fresh_pool()
    rt = get_runtime()
    monkeypatch.setattr(runtime, "FLUSH_AFTER_S", 60.0)   # one flush, at the end
    x = torchweb.full((50_000,), 5.0, device="webgpu")
    torchweb.webgpu.synchronize()
    rt.driver.fail_next_creations = 1
    flushes = rt.flushes
    s = torchweb.full((700_000,), 1.0, device="webgpu").sum()   # new buffers: CREATE rows
    t = x.sum()
    del x
    gc.collect()
    assert rt.pool.free_bytes >= 200_000   # x's buffer, free in the pool while the rows bind it
    rt.flush()
    assert rt.flushes == flushes + 1 and rt.driver.fail_next_creations == 0
    assert_close(s, torch.full((700_000,), 1.0).sum())
    assert_close(t, torch.full((50_000,), 5.0).sum())


def test_empty_cache_frees_the_pool():
    _fresh_pool()
    keep = torchweb.ones(1000, device="webgpu")
    tmp = [torchweb.ones(100_000, device="webgpu") * i for i in range(3)]
    torchweb.webgpu.synchronize()
    allocated = torchweb.webgpu.memory_allocated()
    del tmp
    gc.collect()
    assert torchweb.webgpu.memory_reserved() >= allocated   # freed into the pool, not given back
    assert torchweb.webgpu.memory_allocated() < allocated
    torchweb.webgpu.empty_cache()
    assert torchweb.webgpu.memory_reserved() == torchweb.webgpu.memory_allocated()
    assert keep.sum().item() == 1000.0


_REAL = textwrap.dedent("""
    import gc, resource, sys
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import torchweb
    kept, caught = [], None
    for i in range(64):     # bounded: 64 x 128 MiB
        try:
            kept.append(torchweb.empty(32 << 20, device="webgpu"))
            torchweb.webgpu.synchronize()   # the flush creates the buffer
        except torchweb.OutOfMemoryError as e:
            caught = e
            break
    assert caught is not None, "no out of memory under the limit"
    print("CAUGHT", len(kept), type(caught).__name__, isinstance(caught, RuntimeError))
    print("MESSAGE", str(caught))
    del kept, caught   # (the exception's traceback holds the frame that made the last tensor)
    gc.collect()       # (...in a cycle)
    torchweb.webgpu.empty_cache()
    print("RESERVED", torchweb.webgpu.memory_reserved())
    x = torchweb.arange(10, dtype=torchweb.float32, device="webgpu")
    print("AFTER", (x * 2).sum().item())
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS: lavapipe's memory is the process's")
def test_real_out_of_memory_on_lavapipe():
    """A device that really runs out: lavapipe allocates buffers in the process, so an
    address-space limit runs it out of memory; the creation fails, the exception says so,
    and after freeing the device computes again."""
    if "lvp" not in os.environ.get("VK_ICD_FILENAMES", ""):
        pytest.skip("needs lavapipe (conftest picks it)")
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    env = dict(os.environ, PYTHONPATH=src)
    r = subprocess.run([sys.executable, "-c", _REAL, str(4 << 30)], env=env, capture_output=True,
                       text=True, timeout=300)
    out = r.stdout
    assert r.returncode == 0, out + r.stderr[-3000:]
    caught = next(line for line in out.splitlines() if line.startswith("CAUGHT")).split()
    assert caught[2:] == ["OutOfMemoryError", "True"] and 1 <= int(caught[1]) < 64
    assert "Tried to allocate 128.00 MiB: the device reported: In wgpuDeviceCreateBuffer: Not enough memory" in out
    reserved = int(next(line for line in out.splitlines() if line.startswith("RESERVED")).split()[1])
    assert reserved < 1 << 20   # empty_cache gave the ~3 GiB back
    assert "AFTER 90.0" in out
