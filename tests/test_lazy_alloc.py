"""A pending (lazy) storage takes its GPU buffer from the pool only when realized
(backends/webgpu/storage.py): intermediates fused into a consumer never take one, a realized
storage gives its buffer back once, and memory_allocated() still counts every live tensor."""

import gc

import torch

import torchweb as tw
from torchweb.backends.webgpu.pool import rounded_size
from torchweb.backends.webgpu.runtime import get_runtime

from oracle import assert_close, make, ours


def _count_acquires(monkeypatch):
    pool = get_runtime().pool
    acquired = []
    real = pool.acquire
    monkeypatch.setattr(pool, "acquire", lambda nbytes: acquired.append(nbytes) or real(nbytes))
    return acquired


def test_fused_intermediates_take_no_buffer(monkeypatch):
    a = make((1000,))
    x = ours(a, "webgpu")
    x.sum().item()
    acquired = _count_acquires(monkeypatch)
    y = ((x * 2.0 + 1.0) * 3.0).exp()     # four ops, one fused kernel
    assert acquired == []                  # nothing is allocated while pending
    assert_close(y, ((a * 2.0 + 1.0) * 3.0).exp(), rtol=1e-5, atol=1e-5)
    assert acquired == [4000]              # y's buffer only, when its kernel ran


def test_pending_storage_that_dies_frees_nothing(monkeypatch):
    x = ours(make((500,)), "webgpu")
    x.sum().item()
    rt = get_runtime()
    gc.collect()
    live, free = rt.pool._live, rt.pool.free_bytes
    released = []
    real = rt.pool.release
    monkeypatch.setattr(rt.pool, "release", lambda bid, size: released.append(bid) or real(bid, size))
    y = x * 2.0 + 1.0
    del y
    gc.collect()
    assert released == [] and (rt.pool._live, rt.pool.free_bytes) == (live, free)


def test_realized_storage_frees_its_buffer_once(monkeypatch):
    a = make((300,))
    x = ours(a, "webgpu")
    rt = get_runtime()
    gc.collect()
    live = rt.pool._live
    released = []
    real = rt.pool.release
    monkeypatch.setattr(rt.pool, "release", lambda bid, size: released.append(bid) or real(bid, size))
    y = x * 3.0
    assert_close(y, a * 3.0)
    assert rt.pool._live == live + rounded_size(1200)
    bid = y._storage._buffer_id
    del y
    gc.collect()
    assert released == [bid]
    assert rt.pool._live == live
    free_ids = [b for ids in rt.pool._free.values() for b in ids]
    assert len(free_ids) == len(set(free_ids))   # no buffer in the free lists twice


def test_memory_allocated_counts_pending_tensors():
    x = ours(make((2000,)), "webgpu")
    x.sum().item()
    gc.collect()
    before = tw.webgpu.memory_allocated()
    y = x * 2.0                            # pending: no buffer yet, but a live tensor
    assert y._storage.pending is not None
    pending_bytes = tw.webgpu.memory_allocated() - before
    y.sum().item()                         # realized: the buffer is taken now
    assert y._storage.pending is None
    assert tw.webgpu.memory_allocated() - before == pending_bytes == rounded_size(8000)
    del y
    gc.collect()
    assert tw.webgpu.memory_allocated() == before


def test_buffer_id_read_directly_allocates_and_keeps_values():
    a = make((64,))
    x = ours(a, "webgpu")
    y = x + 1.0
    bid = y._storage._buffer_id            # a direct read (capture.py, optimizers) gets a buffer
    assert bid == y._storage._buffer_id and y._storage.size >= 256
    assert_close(y, a + 1.0)               # and the pending values still land in it


def test_long_pending_loop_keeps_pool_bounded():
    rt = get_runtime()
    h = tw.zeros(2048, device="webgpu")
    h.sum().item()
    tw.webgpu.synchronize()
    gc.collect()
    live = rt.pool._live
    for _ in range(300):
        h = h * 0.5 + 1.0
    tw.webgpu.synchronize()
    gc.collect()
    assert rt.pool._live == live
    assert rt.pool.free_bytes <= rt.pool.limit
    want = torch.zeros(2048)
    for _ in range(300):
        want = want * 0.5 + 1.0
    assert_close(h, want)
