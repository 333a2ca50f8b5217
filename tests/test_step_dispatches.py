"""Fewer dispatches a training step (issue 21, item 2), each change checked against PyTorch:
layer norm's forward and input gradient as one kernel each (kernels/layer_norm.py; both the
workgroup and the thread-per-row form), a linear layer's weight gradient made in the weight's
layout and taken as .grad without a copy, where's gradient without a logical_not kernel, the
causal mask made once. And the count itself: a 6-layer nanoGPT step (bench/dispatch_census.py)
within its budget."""

import os
import sys

import pytest
import torch

import torchweb
from oracle import assert_close, fast_ours
from torchweb.backends.webgpu.kernels import reduction as RK

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))


def _rand(*shape, seed=0, scale=3.0, shift=0.5):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g) * scale + shift


LN_CASES = [((4, 7), (7,)), ((3, 5, 384), (384,)), ((2, 3, 4, 5), (4, 5)), ((2, 2000), (2000,)),
            ((1, 5000), (5000,)), ((6, 1), (1,)), ((2, 64), (64,)), ((3, 4097), (4097,))]


@pytest.mark.parametrize("few_barriers", [True, False])
@pytest.mark.parametrize("shape,ns", LN_CASES)
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_layer_norm_kernels_match_pytorch(monkeypatch, few_barriers, shape, ns, affine):
    monkeypatch.setitem(RK.FAST, "few_barriers", few_barriers)
    x = _rand(*shape)
    w = _rand(*ns, seed=1, scale=1.0, shift=1.0) if affine != "none" else None
    b = _rand(*ns, seed=2, scale=1.0) if affine == "both" else None
    g = _rand(*shape, seed=3, scale=1.0, shift=0.0)
    ts = [t.clone().requires_grad_() for t in (x, w, b) if t is not None]
    ref = torch.nn.functional.layer_norm(ts[0], ns, *(ts[1:] + [None] * (3 - len(ts))))
    ref.backward(g)
    us = [fast_ours(t, "webgpu").requires_grad_() for t in (x, w, b) if t is not None]
    out = torchweb.nn.functional.layer_norm(us[0], ns, *(us[1:] + [None] * (3 - len(us))))
    out.backward(fast_ours(g, "webgpu"))
    # one row of N: x - mean is 0 and the gradients cancel to rounding (rstd = 1/sqrt(eps))
    atol = 1e-4 if ns == (1,) else 1e-5
    assert_close(out, ref.detach(), rtol=1e-5, atol=atol)
    for u, t in zip(us, ts):
        assert_close(u.grad, t.grad, rtol=1e-4, atol=atol)
    with torchweb.no_grad():
        assert_close(torchweb.nn.functional.layer_norm(us[0], ns, *(us[1:] + [None] * (3 - len(us)))),
                     ref.detach(), rtol=1e-5, atol=atol)


def test_layer_norm_special_values_as_pytorch():
    x = torch.tensor([[1.0, float("nan"), 2.0, 3.0], [1.0, float("inf"), 2.0, 3.0],
                      [5.0, 5.0, 5.0, 5.0], [1e30, -1e30, 1e30, -1e30]])
    ref = torch.nn.functional.layer_norm(x, (4,))
    assert_close(torchweb.nn.functional.layer_norm(fast_ours(x, "webgpu"), (4,)), ref, equal_nan=True)


def test_layer_norm_is_one_dispatch_each_way(dispatches):
    x = fast_ours(_rand(8, 384), "webgpu").requires_grad_()
    ln = torchweb.nn.LayerNorm(384).to("webgpu").requires_grad_(False)
    torchweb.webgpu.synchronize()
    dispatches[0] = 0
    y = ln(x)
    torchweb.webgpu.synchronize()
    assert dispatches[0] == 1
    g = fast_ours(_rand(8, 384, seed=5), "webgpu")
    torchweb.webgpu.synchronize()
    dispatches[0] = 0
    (dx,) = torchweb.autograd.grad(y, x, g)
    torchweb.webgpu.synchronize()
    assert dispatches[0] == 1   # (dx: the weight and bias need no gradient here)


def test_layer_norm_double_backward_still_composes():
    x = _rand(3, 6).requires_grad_()
    w = _rand(6, seed=1).requires_grad_()
    y = torch.nn.functional.layer_norm(x, (6,), w)
    (gx,) = torch.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    gx.sum().backward()
    ux, uw = fast_ours(x.detach(), "webgpu").requires_grad_(), fast_ours(w.detach(), "webgpu").requires_grad_()
    uy = torchweb.nn.functional.layer_norm(ux, (6,), uw)
    (ugx,) = torchweb.autograd.grad(uy.pow(2).sum(), ux, create_graph=True)
    ugx.sum().backward()
    assert_close(ugx, gx.detach(), rtol=1e-4, atol=1e-4)
    assert_close(ux.grad, x.grad, rtol=1e-3, atol=1e-3)
    assert_close(uw.grad, w.grad, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("few_barriers", [True, False])
def test_layer_norm_takes_a_residual_sum_in(monkeypatch, dispatches, few_barriers):
    # x = a + b pending (a residual connection): the layer norm kernel adds as it reads and
    # writes x too (one dispatch for both), x then read by the next residual as PyTorch's
    monkeypatch.setitem(RK.FAST, "few_barriers", few_barriers)
    a, b, w = _rand(3, 5, 64), _rand(3, 5, 64, seed=1), _rand(64, seed=2, scale=1.0, shift=1.0)
    ta, tb, tw_ = (t.clone().requires_grad_() for t in (a, b, w))
    tx = ta + tb
    ty = torch.nn.functional.layer_norm(tx, (64,), tw_)
    (ty * 3 + ty.pow(2) + tx).sum().backward()   # (the output's gradient: a pending sum too)
    ua, ub, uw = (fast_ours(t, "webgpu").requires_grad_() for t in (a, b, w))
    torchweb.webgpu.synchronize()
    dispatches[0] = 0
    ux = ua + ub
    uy = torchweb.nn.functional.layer_norm(ux, (64,), uw)
    torchweb.webgpu.synchronize()
    assert dispatches[0] == 1
    assert_close(ux, tx.detach())
    assert_close(uy, ty.detach(), rtol=1e-5, atol=1e-5)
    (uy * 3 + uy.pow(2) + ux).sum().backward()
    for u, t in ((ua, ta), (ub, tb), (uw, tw_)):
        assert_close(u.grad, t.grad, rtol=1e-4, atol=1e-4)


def test_cross_entropy_target_check_on_the_gpu_raises_as_pytorch():
    logits = fast_ours(_rand(6, 5), "webgpu")
    good = torchweb.tensor([0, 4, -100, 2, 1, 3], device="webgpu")
    torchweb.webgpu.synchronize()
    loss = torchweb.nn.functional.cross_entropy(logits, good)
    ref = torch.nn.functional.cross_entropy(_rand(6, 5), torch.tensor([0, 4, -100, 2, 1, 3]))
    assert_close(loss, ref)
    bad = torchweb.tensor([0, 5, 1, 2, 1, 3], device="webgpu")
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        torchweb.nn.functional.cross_entropy(logits, bad).item()
    negative = torchweb.tensor([0, -1, 1, 2, 1, 3], device="webgpu")
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        torchweb.nn.functional.cross_entropy(logits, negative).item()
    assert float(torchweb.nn.functional.cross_entropy(logits, good)) == pytest.approx(float(ref), rel=1e-5)


@pytest.mark.parametrize("device", ["cpu", "webgpu"])
def test_linear_weight_grad_is_taken_and_accumulates(device):
    torch.manual_seed(0)
    ref = torch.nn.Linear(8, 5, bias=False)
    lin = torchweb.nn.Linear(8, 5, bias=False).to(device)
    lin.weight.data.copy_(fast_ours(ref.weight.detach(), device))
    x = _rand(3, 4, 8)
    for _ in range(2):   # the first backward sets .grad, the second adds into it in place
        ref(x).pow(2).sum().backward()
        lin(fast_ours(x, device)).pow(2).sum().backward()
        assert lin.weight.grad.is_contiguous()
        assert_close(lin.weight.grad, ref.weight.grad, rtol=1e-5, atol=1e-5)


def test_linear_weight_grad_needs_no_copy(dispatches):
    lin = torchweb.nn.Linear(64, 32, bias=False).to("webgpu")
    x = fast_ours(_rand(16, 64), "webgpu")
    y = lin(x)
    g = fast_ours(_rand(16, 32, seed=4), "webgpu")
    torchweb.webgpu.synchronize()
    dispatches[0] = 0
    y.backward(g)
    torchweb.webgpu.synchronize()
    assert dispatches[0] == 1   # the weight gradient's matmul: no copy into .grad


def test_linear_weight_grad_with_a_hook_keeps_its_gradient():
    # a hook on the weight may keep the gradient it sees: .grad is then a copy
    lin = torchweb.nn.Linear(4, 3, bias=False).to("webgpu")
    seen = []
    lin.weight.register_hook(lambda g: seen.append(g))
    lin(fast_ours(_rand(2, 4), "webgpu")).sum().backward()
    lin.weight.grad.mul_(0)
    assert float(seen[0].abs().sum()) > 0


@pytest.mark.parametrize("device", ["cpu", "webgpu"])
def test_where_gradients_both_branches(device):
    c = torch.tensor([[True, False, True], [False, False, True]])
    a, b = _rand(2, 3).requires_grad_(), _rand(2, 3, seed=1).requires_grad_()
    torch.where(c, a, b).mul(_rand(2, 3, seed=2)).sum().backward()
    ua, ub = fast_ours(a.detach(), device).requires_grad_(), fast_ours(b.detach(), device).requires_grad_()
    torchweb.where(fast_ours(c, device), ua, ub).mul(fast_ours(_rand(2, 3, seed=2), device)).sum().backward()
    assert_close(ua.grad, a.grad)
    assert_close(ub.grad, b.grad)


def test_causal_attention_reuses_its_mask(dispatches):
    q = fast_ours(_rand(2, 2, 16, 8), "webgpu")
    torchweb.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    torchweb.webgpu.synchronize()
    dispatches[0] = 0
    out = torchweb.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    torchweb.webgpu.synchronize()
    second = dispatches[0]
    tq = _rand(2, 2, 16, 8)
    assert_close(out, torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, is_causal=True),
                 rtol=1e-5, atol=1e-5)
    assert second <= 4   # q k^T, the masked scaling, softmax, @ v: no mask kernels


@pytest.mark.parametrize("device", ["cpu", "webgpu"])
def test_cat_of_pending_copies_matches_pytorch(device):
    # q/k/v's gradients reach the split's cat as pending copies (a transpose's reshape): read
    # from their sources directly, whether the source or the destination takes the other's shape
    x = _rand(2, 6, 4, 5)
    parts = [x.transpose(1, 2).reshape(2, 4, 30), x.reshape(2, 4, 6, 5).reshape(2, 4, 30), x[:, :, :2].reshape(2, 4, 15)]
    ux = fast_ours(x, device)
    ours = [ux.transpose(1, 2).reshape(2, 4, 30), ux.reshape(2, 4, 6, 5).reshape(2, 4, 30),
            ux[:, :, :2].reshape(2, 4, 15)]
    assert_close(torchweb.cat(ours, -1), torch.cat(parts, -1))
    out = torchweb.zeros(2, 4, 30, device=device)
    out[:, :, 5:].copy_(ours[0][:, :, 5:])
    expected = torch.zeros(2, 4, 30)
    expected[:, :, 5:].copy_(parts[0][:, :, 5:])
    assert_close(out, expected)


def test_split_backward_through_head_reshapes_matches_pytorch():
    qkv = fast_ours(_rand(2, 8, 24), "webgpu").requires_grad_()
    q, k, v = qkv.split(8, dim=2)
    heads = [t.view(2, 8, 2, 4).transpose(1, 2) for t in (q, k, v)]
    loss = sum((h * (i + 1)).exp().sum() for i, h in enumerate(heads))
    t = _rand(2, 8, 24).requires_grad_()
    tq, tk, tv = t.split(8, dim=2)
    sum((h.view(2, 8, 2, 4).transpose(1, 2) * (i + 1)).exp().sum() for i, h in enumerate((tq, tk, tv))).backward()
    loss.backward()
    assert_close(qkv.grad, t.grad, rtol=1e-5, atol=1e-5)


# The step's budget: 519 dispatches before this work (bench/dispatch_census.py), the issue's
# target <= 300. It fails when a change adds kernels to the step.
NANOGPT_6L_BUDGET = 280   # (256 with the matmul epilogues, off by default: backends/webgpu/backend.py)


def test_nanogpt_step_dispatch_budget():
    import dispatch_census
    from workloads import _gpt_step
    torchweb.manual_seed(0)
    step = _gpt_step(torchweb, "webgpu", False, dict(n_layer=6, n_head=6, n_embd=384, block_size=16, batch=1))
    counts = dispatch_census.census(step)
    assert sum(counts.values()) <= NANOGPT_6L_BUDGET, counts.most_common(12)


def test_paired_updates_match_pytorch_and_halve_kernels(dispatches):
    # six parameters of two shapes: AdamW runs them as pairs of one shape (three kernels, not six)
    torch.manual_seed(0)
    ref = [torch.randn(8, 4, requires_grad=True) for _ in range(3)] + [torch.randn(5, requires_grad=True) for _ in range(3)]
    ours = [fast_ours(t.detach(), "webgpu").requires_grad_() for t in ref]
    ropt, uopt = torch.optim.AdamW(ref, lr=0.1), torchweb.optim.AdamW(ours, lr=0.1)
    for step in range(3):
        for ts, opt in ((ref, ropt), (ours, uopt)):
            opt.zero_grad()
            sum((t * (i + 1 + step)).sin().sum() for i, t in enumerate(ts)).backward()
            if opt is uopt:
                torchweb.webgpu.synchronize()
                dispatches[0] = 0
            opt.step()
        torchweb.webgpu.synchronize()
        assert dispatches[0] == 4   # (8x4: a pair and one alone; 5: a pair and one alone)
        for u, t in zip(ours, ref):
            assert_close(u, t.detach(), rtol=1e-5, atol=1e-6)


def test_compiled_step_records_no_more_kernels_than_eager(dispatches):
    # the capture holds the storages it saw: gradients are still taken as .grad without copies,
    # and the optimizer's kernels paired, so the replayed program is the eager step's
    from workloads import _gpt_step
    torchweb.manual_seed(0)
    step = _gpt_step(torchweb, "webgpu", False, dict(n_layer=2, n_head=2, n_embd=32, block_size=8, batch=2))
    compiled = torchweb.compile(step)
    counts = []
    for _ in range(3):
        torchweb.webgpu.synchronize()
        dispatches[0] = 0
        compiled()
        torchweb.webgpu.synchronize()
        counts.append(dispatches[0])
    assert compiled.compile_stats["captures"] == 1
    torchweb.webgpu.synchronize()
    dispatches[0] = 0
    step()
    torchweb.webgpu.synchronize()
    assert counts[-1] <= dispatches[0] + 1, (counts, dispatches[0])
