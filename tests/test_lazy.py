"""Lazy elementwise fusion (torchweb/lazy) keeps PyTorch's eager semantics: these
check the hazards it must handle, against values computed eagerly (TORCHWEB's cpu device or
plain arithmetic)."""

import gc

import pytest
import torch

import torchweb as tw
from torchweb.lazy import graph
from torchweb.backends.webgpu.runtime import get_runtime

from oracle import assert_close, make, ours


def _pending(t):
    return t._storage.pending is not None


def test_chain_is_pending_until_read_and_fused_into_one_kernel(monkeypatch):
    x = tw.randn(1000, device="webgpu")
    x.sum().item()
    rt = get_runtime()
    calls = []
    real = rt.record   # (every kernel's dispatch: a[0] its row's head, [1] the pipeline id)
    monkeypatch.setattr(rt, "record", lambda *a: (calls.append(a[0][1]), real(*a))[1])
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
    # (the entries of dead readers are dropped in bulk, every 64 added: lazy/graph.py prune)
    assert len(w._storage.readers or ()) < 64
    assert graph.group_count() < 64


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


# -- the recording fast paths (ops/elementwise.py Plan, binary/unary; lazy/record.py Template) ----------
# Each signature is planned once and its plan reused: every case runs twice (planned, then
# cached), through the operators and through torch functions.

_OPS = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
        lambda a, b: b + a, lambda a, b: b * a, lambda a, b: b - a, lambda a, b: b / a]


def _operand(kind):
    if kind[0] == "py":
        return kind[1], kind[1]
    _, dtype, shape = kind
    t = make(shape, dtype, low=1, high=4) if dtype is not torch.bool else make(shape) > 0
    return ours(t, "webgpu"), t


@pytest.mark.parametrize("left", [(None, torch.float32, (2, 3)), (None, torch.int64, (2, 3)),
                                  (None, torch.bool, (3,)), (None, torch.float32, ())])
@pytest.mark.parametrize("right", [("py", 2), ("py", 0.5), ("py", True),
                                   (None, torch.float32, ()), (None, torch.int64, ()),
                                   (None, torch.int32, (3,)), (None, torch.float32, (2, 1)),
                                   (None, torch.bool, (2, 3))])
def test_promotion_and_broadcasting_of_recorded_ops(left, right):
    x, tx = _operand(left)
    for _ in range(2):
        for k, f in enumerate(_OPS):
            y, ty = _operand(right)
            try:
                want = f(tx, ty)
            except RuntimeError as e:   # (bool - bool and the like: the same error)
                with pytest.raises(RuntimeError, match=str(e).split(".")[0][:40]):
                    f(x, y)
                continue
            got = f(x, y)
            # a chain over the result, fused with it where it is float32
            assert_close(got, want, rtol=1e-5, atol=1e-5)
            assert_close((got * 2 - 1).abs(), (want * 2 - 1).abs(), rtol=1e-5, atol=1e-5)


def test_unary_and_functions_take_the_same_plans():
    a = make((4, 5))
    x = ours(a, "webgpu")
    for _ in range(2):
        assert_close(tw.exp(-x).neg().abs(), torch.exp(-a).neg().abs())
        assert_close(tw.add(x, 1.5) * tw.mul(x, x), torch.add(a, 1.5) * torch.mul(a, a))
        assert_close(tw.relu(x - 0.5).sqrt(), torch.relu(a - 0.5).sqrt())
        assert_close(tw.where(x > 0, x, 0.25) + 1, torch.where(a > 0, a, 0.25) + 1)


def test_recorded_ops_with_requires_grad():
    a, b = make((3, 4)), make((4,))
    x, w = ours(a, "webgpu", requires_grad=True), ours(b, "webgpu", requires_grad=True)
    ta, tb = a.clone().requires_grad_(), b.clone().requires_grad_()
    for _ in range(2):
        got = ((x * 2 + w) * x - 1.5 / (w.abs() + 1)).sum()
        want = ((ta * 2 + tb) * ta - 1.5 / (tb.abs() + 1)).sum()
        got.backward()
        want.backward()
    assert_close(x.grad, ta.grad, rtol=1e-5, atol=1e-5)
    assert_close(w.grad, tb.grad, rtol=1e-5, atol=1e-5)
    with tw.no_grad():
        y = x * 3 + w
    assert not y.requires_grad and _pending(y)


def test_writes_after_reads_by_chains_and_pairs():
    x = tw.tensor([1.0, 2.0], device="webgpu")
    y = x * 2                    # pending
    z = y * 3                    # takes y's expression
    w = y + y                    # y written now (taken already): w reads y's buffer
    y.add_(1)                    # w and z were recorded over the old y
    assert w.tolist() == [4.0, 8.0] and z.tolist() == [6.0, 12.0]
    b = tw.full((3,), 0.5, device="webgpu")
    h = tw.zeros(3, device="webgpu")
    want_b, want_h = 0.5, 0.0
    for _ in range(6):
        h = h + b                # a chain sharing its inputs' registration
        b.mul_(2)                # h (and what it took in) run first, on the old b
        want_h, want_b = want_h + want_b, want_b * 2
    assert h.tolist() == [want_h] * 3
    v = tw.ones(3, device="webgpu")
    u = v * 2 + 1                # pending over v
    q = u + v                    # pair over a chain and its own input
    v.zero_()
    assert q.tolist() == [4.0] * 3 and u.tolist() == [3.0] * 3


def test_numbers_past_float32_and_special_values_in_fused_kernels():
    a = torch.tensor([1.0, -2.0, 0.0])
    x = ours(a, "webgpu")
    for f in (lambda t: t * 1e300, lambda t: (t + float("inf")) * 0.5, lambda t: t * -3.5e38,
              lambda t: (t + 1) * True + False, lambda t: t / 3.4028235677973366e38 * 2.0 ** 127):
        assert_close((f(x) - 1).abs(), (f(a) - 1).abs())


def test_wide_expressions_and_ops_of_three_operands():
    ts = [make((5,)) for _ in range(9)]
    xs = [ours(t, "webgpu") for t in ts]
    acc, want = xs[0] * 1, ts[0] * 1
    for x, t in zip(xs[1:], ts[1:]):
        acc, want = acc + x, want + t      # past MAX_LEAF_BUFFERS inputs: the op runs at once
    assert_close(acc, want)
    c = ts[0] > 0
    a, b = xs[1] * 2, xs[2] + 1            # both taken into where's expression
    assert_close(tw.where(ours(c, "webgpu"), a, b) * 3, torch.where(c, ts[1] * 2, ts[2] + 1) * 3)
    assert_close(tw.where(ours(c, "webgpu"), 0.5, xs[3] - 1), torch.where(c, 0.5, ts[3] - 1))
    assert_close(tw.add(xs[4] * 2, xs[5] / 3, alpha=2.5) - 1, torch.add(ts[4] * 2, ts[5] / 3, alpha=2.5) - 1)
    assert_close(tw.clamp(xs[6] * 3, -1.5, 2.0) + 1, torch.clamp(ts[6] * 3, -1.5, 2.0) + 1)


def test_many_pending_readers_of_one_buffer_then_a_write():
    w = tw.tensor([1.0, 2.0, 3.0], device="webgpu")
    outs = [w * (i + 1) for i in range(300)]   # all pending and alive: the registries stay bounded
    dead = [w + i for i in range(300)]
    del dead
    w.add_(1)                                  # every live reader runs first, on the old w
    assert all(o.tolist() == [1.0 * (i + 1), 2.0 * (i + 1), 3.0 * (i + 1)] for i, o in enumerate(outs))
    assert len(w._storage.readers or ()) == 0 and graph.group_count() <= 2 * 300 + 64
