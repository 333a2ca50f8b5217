"""A leaf's first gradient taken as it is, without a copy, where nothing else holds it
(autograd/engine.py, as PyTorch's AccumulateGrad steals an unshared gradient), and copied
wherever it is shared: every case checks values against PyTorch and that writing one .grad in
place changes nothing else."""

import pytest
import torch

import torchweb
from oracle import assert_close, ours


def _pair(shape=(3, 4), seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(*shape, generator=g)
    return t.clone().requires_grad_(), ours(t, "webgpu", requires_grad=True)


def _copies(fn):
    """How many copy kernels fn's work runs on the webgpu device."""
    from torchweb.backends.webgpu.runtime import get_runtime
    rt = get_runtime()
    torchweb.webgpu.synchronize()
    names = {}
    count = [0]
    orig = rt.record   # (every kernel's dispatch: head[1] the pipeline id)

    def record(head, *a, **k):
        pid = head[1]
        if not names or pid not in names:
            names.update({v: k for k, v in rt._pipelines.items()})
        key = names.get(pid)
        if isinstance(key, tuple) and key and key[0] in ("fused", "fused_fast") and "'copy'" in repr(key[1])[:40]:
            count[0] += 1
        return orig(head, *a, **k)
    rt.record = record
    try:
        fn()
        torchweb.webgpu.synchronize()
    finally:
        del rt.record
    return count[0]


def test_matmul_weight_gradient_is_taken_without_a_copy():
    xt, x = _pair((5, 3))
    wt, w = _pair((3, 4), 1)
    (xt @ wt).sum().backward()
    n = _copies(lambda: (x @ w).sum().backward())
    assert_close(w.grad, wt.grad)
    assert_close(x.grad, xt.grad)
    assert n == 0, f"{n} copy kernels"
    w.grad.add_(1.0)   # the taken gradient is w's alone
    assert_close(x.grad, xt.grad)


def test_one_gradient_given_to_two_leaves_is_copied():
    at, a = _pair()
    bt, b = _pair(seed=2)
    (at + bt).sum().backward()
    (a + b).sum().backward()   # AddBackward gives the same tensor to both
    assert_close(a.grad, at.grad)
    a.grad.add_(5.0)
    assert_close(b.grad, bt.grad)


def test_sum_of_paths_and_second_backward_accumulate():
    at, a = _pair()
    for _ in range(2):
        (at * at + at * 3).sum().backward()
        (a * a + a * 3).sum().backward()
    assert_close(a.grad, at.grad, rtol=1e-5, atol=1e-5)


def test_incoming_gradient_passed_through_is_copied():
    at, a = _pair()
    gt = torch.ones(3, 4) * 2
    g = torchweb.ones(3, 4, device="webgpu") * 2
    (at + 0).backward(gt)
    (a + 0).backward(g)   # the user's gradient flows on unchanged: a.grad must not be it
    assert_close(a.grad, at.grad)
    a.grad.add_(1.0)
    assert g.tolist() == gt.tolist()


def test_retained_views_hooks_and_user_functions():
    at, a = _pair()
    stash = []
    a.register_hook(lambda g: stash.append(g))
    yt = at * 2
    yt.retain_grad()
    (yt * 3).sum().backward()
    y = a * 2
    y.retain_grad()
    (y * 3).sum().backward()
    assert_close(a.grad, at.grad)
    assert_close(y.grad, yt.grad)
    a.grad.add_(1.0)
    assert_close(stash[0], at.grad)   # the hook's tensor was not taken as a.grad

    saved = []

    class Keep(torchweb.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            r = g * 4
            saved.append(r)
            return r
    bt, b = _pair(seed=3)
    Keep.apply(b).sum().backward()
    b.grad.add_(1.0)
    assert saved[0].tolist() == [[4.0] * 4] * 3   # a user Function's result was copied


def test_broadcast_and_dtype_gradients():
    wt, w = _pair((4,))
    xt, x = _pair((3, 4), 5)
    (xt * wt).sum().backward()
    (x * w).sum().backward()   # w's gradient summed down from (3, 4): a fresh tensor
    assert_close(w.grad, wt.grad, rtol=1e-5, atol=1e-5)
    w.grad.zero_()
    assert_close(x.grad, xt.grad)
