"""The WebGPU runtime: pool bounds, buffers released with tensors, flushing, in-place bindings."""

import gc

import pytest
import torch

import torchweb
from torchweb.backends.webgpu.pool import BufferPool, rounded_size
from torchweb.backends.webgpu.runtime import FLUSH_DISPATCHES, get_runtime
from oracle import assert_close, ours


def test_rounded_size_steps():
    assert rounded_size(1) == 256
    for n in (257, 1000, 4096, 5000, 123457, 10 ** 7):
        r = rounded_size(n)
        assert n <= r <= n * 1.25 + 256


def test_pool_is_bounded_and_reuses():
    created, destroyed = [], []
    pool = BufferPool(lambda size: created.append(size) or len(created), destroyed.append, max_free_bytes=4096)
    a, sa = pool.acquire(1000)
    pool.release(a, sa)
    b, sb = pool.acquire(900)           # same rounded size: reused, nothing created
    assert b == a and len(created) == 1
    pool.release(b, sb)
    ids = [pool.acquire(2048) for _ in range(4)]
    for bid, size in ids:
        pool.release(bid, size)
    assert pool.free_bytes <= 4096       # the rest was destroyed, oldest first
    assert destroyed and destroyed[0] == a


def test_buffers_return_when_tensors_die():
    rt = get_runtime()
    gc.collect()
    before = rt.pool.live_bytes
    xs = [torchweb.randn(1000) for _ in range(10)]
    assert rt.pool.live_bytes >= before + 10 * 4000
    del xs
    gc.collect()
    assert rt.pool.live_bytes == before


def test_long_loop_keeps_memory_flat():
    rt = get_runtime()
    x = torchweb.randn(256, 64)
    w = torchweb.randn(64, 64)
    for _ in range(5):
        x = (x @ w).tanh()
    x.sum().item()      # x's values written: a pending x would still hold its inputs
    gc.collect()
    base = rt.pool.live_bytes
    for _ in range(300):
        x = (x @ w).tanh() * 0.5 + x * 0.5
    x.sum().item()
    gc.collect()
    assert rt.pool.live_bytes == base
    assert rt.pool.free_bytes <= rt.pool.max_free_bytes


def test_many_ops_between_reads_cross_flush_threshold():
    t = torch.zeros(7)
    x = ours(t, "webgpu")
    for i in range(FLUSH_DISPATCHES + 50):
        x = x + 1
        t = t + 1
    assert_close(x, t)


def test_inplace_reads_and_writes_one_binding():
    t = torch.arange(12.0).reshape(3, 4)
    x = ours(t, "webgpu")
    x.mul_(x)            # the same buffer as input and output: one read_write binding
    x.add_(x[0])         # a broadcast view of itself
    t.mul_(t)
    t.add_(t[0].clone())
    assert_close(x, t)


def test_upload_after_recorded_reads_keeps_order():
    # a buffer freed while recorded work still reads it is reused for an upload:
    # the driver must keep the upload after that work.
    a = torchweb.tensor([1.0, 2.0, 3.0])
    b = a * 2
    del a
    c = torchweb.tensor([10.0, 20.0, 30.0])
    assert b.tolist() == [2.0, 4.0, 6.0]
    assert c.tolist() == [10.0, 20.0, 30.0]


def test_too_large_tensor_refused_clearly():
    rt = get_runtime()
    n = rt.max_binding // 4 + 1024
    with pytest.raises(RuntimeError, match="maxStorageBufferBindingSize"):
        torchweb.zeros(n)
    assert torchweb.ones(3).sum().item() == 3.0  # still usable


def test_adapter_info_and_limits_for_the_user():
    info = torchweb.webgpu.adapter_info()
    assert isinstance(info, dict) and info["description"]
    lim = torchweb.webgpu.limits()
    assert lim["max-compute-workgroups-per-dimension"] >= 65535
    assert torchweb.webgpu.is_available()
