"""Lazy elementwise fusion (backends/webgpu/lazy.py) keeps PyTorch's eager semantics: these
check the hazards it must handle, against values computed eagerly (TORCHWEB's cpu device or
plain arithmetic)."""

import gc

import pytest
import torch

import torchweb as tw
from torchweb.backends.webgpu import lazy
from torchweb.backends.webgpu.runtime import get_runtime

from oracle import assert_close, ours


def _pending(t):
    return t._storage.pending is not None


def test_chain_is_pending_until_read_and_fused_into_one_kernel(monkeypatch):
    x = tw.randn(1000, device="webgpu")
    x.sum().item()
    rt = get_runtime()
    calls = []
    real = rt.dispatch
    monkeypatch.setattr(rt, "dispatch", lambda *a: (calls.append(a[0]), real(*a))[1])
    y = x
    for _ in range(20):
        y = y * 1.01 + 0.01            # 40 ops, within one expression's bound
    assert _pending(y) and calls == []
    values = y.tolist()
    assert len(calls) == 1             # one fused kernel (the readback copies, no dispatch)
    want = x.cpu()
    for _ in range(20):
        want = want * 1.01 + 0.01
    assert_close(tw.tensor(values), torch.tensor(want.tolist()), rtol=1e-6, atol=1e-6)


def test_write_after_deferred_read_sees_old_values():
    a = tw.tensor([1.0, 2.0, 3.0], device="webgpu")
    b = a * 10 + 1                 # pending, reads a
    a.add_(100)                    # in place: b must be computed from the old a
    c = a[:2] * 2                  # pending through a view
    a.zero_()
    assert b.tolist() == [11.0, 21.0, 31.0]
    assert c.tolist() == [202.0, 204.0]


def test_deep_dag_is_computed_once_per_node():
    x = tw.tensor([0.5, -1.0, 2.0, 3.0], device="webgpu")
    y = x
    for _ in range(30):
        y = y * 1.01 + y * 0.01    # every node read twice
    got = y.tolist()
    assert got == pytest.approx([v * 1.02 ** 30 for v in (0.5, -1.0, 2.0, 3.0)], rel=1e-5)


def test_unread_results_leave_no_registry_entries():
    w = tw.randn(64, device="webgpu")
    w.sum().item()
    for _ in range(500):
        w * 2                          # dies unread
    gc.collect()
    # (the entries of dead readers are dropped in bulk, every 64 added: lazy._prune)
    assert len([r for r in (w._storage.readers or {}).values() if r() is None]) < 64
    assert len(lazy._pending) < 10


def test_loop_without_readback_keeps_memory_flat():
    rt = get_runtime()
    h = tw.zeros(4096, device="webgpu")
    h.sum().item()
    for _ in range(5):
        h = h * 0.5 + 1.0
    tw.webgpu.synchronize()
    gc.collect()
    base = rt.pool.live_bytes
    for _ in range(400):
        h = h * 0.5 + 1.0              # never read: pending chains must not build up
    tw.webgpu.synchronize()
    gc.collect()
    assert rt.pool.live_bytes == base
    assert h[0].item() == pytest.approx(2.0)


def test_synchronize_runs_pending_work():
    x = tw.ones(8, device="webgpu")
    y = x * 3
    assert _pending(y)
    tw.webgpu.synchronize()
    assert not _pending(y)
    assert y.tolist() == [3.0] * 8


def test_checked_and_non_float32_ops_stay_eager():
    i = tw.tensor([7, 8], device="webgpu")
    q = i // tw.tensor([2, 0], device="webgpu")    # integer division: checked on the GPU
    assert not _pending(q)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        q.tolist()
    h = tw.ones(4, dtype=tw.float16, device="webgpu") if "shader-f16" in get_runtime().features else None
    if h is not None:
        assert not _pending(h * 2)


def test_fused_results_match_eager_on_broadcasts_and_views(device):
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(5, 4, generator=g), torch.randn(4, generator=g)
    x, y = ours(a, device), ours(b, device)
    got = ((x * y).exp() - x.t().t() / (y.abs() + 1)).tanh() * 2 + x[:, :1]
    want = ((a * b).exp() - a / (b.abs() + 1)).tanh() * 2 + a[:, :1]
    assert_close(got, want, rtol=1e-5, atol=1e-6)
