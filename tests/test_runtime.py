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
    pool = BufferPool(lambda size: created.append(size) or len(created), destroyed.append, max_free_bytes=4096,
                      keep_working_set=False)
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


def test_pool_keeps_the_working_set_it_needs_again():
    """A step that holds more than max_free_bytes at once and frees it at its end gets the same
    buffers in the next step (none destroyed and made again); the bound is the peak of live
    bytes, and empty_cache-style forgetting brings back max_free_bytes."""
    created, destroyed = [], []
    pool = BufferPool(lambda size: created.append(size) or len(created), destroyed.append, max_free_bytes=4096)
    for step in range(3):
        held = [pool.acquire(2048) for _ in range(6)]     # 12 KiB live at once
        for bid, size in held:
            pool.release(bid, size)
        assert len(created) == 6 and not destroyed, (step, created, destroyed)
    assert pool.working_set == 6 * 2048 and pool.limit == 6 * 2048 and pool.free_bytes == 6 * 2048
    pool.forget_working_set()
    pool.trim(pool.limit)
    assert pool.free_bytes <= 4096 and len(destroyed) == 4


def test_pool_hands_out_the_lowest_free_id():
    """Whatever order buffers come back in, the same ones are handed out next: a training
    loop's steps then bind the same buffer combinations (bind groups are made once)."""
    created = []
    pool = BufferPool(lambda size: created.append(size) or len(created), lambda bid: None)
    first = [pool.acquire(1000)[0] for _ in range(4)]
    for order in ([3, 1, 0, 2], [2, 3, 0, 1]):
        for i in order:
            pool.release(first[i], rounded_size(1000))
        assert [pool.acquire(1000)[0] for _ in range(4)] == sorted(first)
    pool.release(first[2], rounded_size(1000))
    assert pool.take(first[2]) == rounded_size(1000) and pool.free_bytes == 0
    assert len(created) == 4


def test_training_steps_make_no_new_bind_groups():
    """After a few steps of a small MLP's training, a step makes no bind group (native driver)."""
    rt = get_runtime()
    drv = rt.driver
    if not hasattr(drv, "_create_bind_group"):
        pytest.skip("not the native driver")
    torchweb.manual_seed(0)
    model = torchweb.nn.Sequential(torchweb.nn.Linear(20, 32), torchweb.nn.ReLU(), torchweb.nn.Linear(32, 5))
    model = model.to("webgpu")
    opt = torchweb.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torchweb.randn(16, 20, device="webgpu"), torchweb.randint(0, 5, (16,), device="webgpu")

    def step():
        opt.zero_grad()
        torchweb.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        torchweb.webgpu.synchronize()
    made = []
    orig = drv._create_bind_group
    drv._create_bind_group = lambda *a: made.append(1) or orig(*a)
    try:
        for _ in range(6):
            step()
        made.clear()
        step()
        step()
    finally:
        del drv._create_bind_group
    assert not made, f"{len(made)} bind groups made in two steps"


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
    assert rt.pool.free_bytes <= rt.pool.limit


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
    # (past the binding limit a tensor is split: tests/test_binding_limit.py; past the largest
    # buffer it is refused)
    rt = get_runtime()
    n = rt.max_buffer // 4 + 1024
    with pytest.raises(RuntimeError, match="maxBufferSize"):
        torchweb.zeros(n)
    assert torchweb.ones(3).sum().item() == 3.0  # still usable


def test_adapter_info_and_limits_for_the_user():
    info = torchweb.webgpu.adapter_info()
    assert isinstance(info, dict) and info["description"]
    lim = torchweb.webgpu.limits()
    assert lim["max-compute-workgroups-per-dimension"] >= 65535
    assert torchweb.webgpu.is_available()
