"""F.scaled_dot_product_attention vs PyTorch, forward and gradients (q, k, v, float masks), on
both devices: the webgpu device runs the fused FlashAttention kernels (the composite where they
decline: dropout, a mask needing its gradient, head dims past 128), the cpu device the composite.
Shapes with L != S, E != Ev, sizes off the tiles, 1 and 0, broadcast batches, masks of each
kind (fully masked rows give 0, as PyTorch's CPU), causal, GQA, strided inputs, float16, a grid
past 65535 workgroups, and L = S = 4096 without an L x S buffer."""

import pytest
import torch
import torch.nn.functional as F

import torchweb
import torchweb.nn.functional as TF
from oracle import OUR_DTYPE, assert_close, check, fast_ours


@pytest.fixture(autouse=True)
def _fused_kernels_for_every_size(monkeypatch):
    # The webgpu device takes the composite below COMPOSITE_MAX_SCORES scores (faster there);
    # these tests' small sizes must still reach the fused kernels.
    from torchweb.backends.webgpu import attention
    monkeypatch.setattr(attention, "COMPOSITE_MAX_SCORES", 0)


def test_size_policy_takes_the_composite_for_small_score_matrices():
    from torchweb.backends.webgpu import attention
    assert attention.attention_fits(256, 256, 64, 64, batch=96)          # as the fixture sets it
    attention.COMPOSITE_MAX_SCORES = 8 << 20
    assert not attention.attention_fits(256, 256, 64, 64, batch=96)      # nanoGPT-sized: composite
    assert attention.attention_fits(1024, 1024, 64, 64, batch=96)        # 96M scores: fused
    assert not attention.attention_fits(1024, 1024, 200, 64, batch=96)   # head dim past 128


def _ours(t, device, grad=False):
    r = fast_ours(t.detach().contiguous(), device) if t.numel() else torchweb.zeros(
        tuple(t.shape), dtype=OUR_DTYPE[t.dtype], device=device)
    return r.requires_grad_(True) if grad else r


def _run(device, q, k, v, mask=None, mask_grad=False, rtol=2e-5, atol=2e-5, grad=True, **kw):
    """Forward and (with a random output gradient) the gradients of q, k, v (and a float mask)."""
    leaves = [q, k, v] + ([mask] if mask_grad else [])
    tq = [x.detach().clone().requires_grad_(grad) for x in leaves]
    tmask = tq[3] if mask_grad else mask
    ref = F.scaled_dot_product_attention(*tq[:3], attn_mask=tmask, **kw)
    ours = [_ours(x, device, grad) for x in leaves]
    omask = ours[3] if mask_grad else (_ours(mask, device) if mask is not None else None)
    got = TF.scaled_dot_product_attention(*ours[:3], attn_mask=omask, **kw)
    assert_close(got.detach(), ref.detach(), rtol=rtol, atol=atol)
    if not grad:
        return got
    g = torch.randn(ref.shape, generator=torch.Generator().manual_seed(7), dtype=ref.dtype)
    ref.backward(g)
    got.backward(_ours(g, device))
    for a, b in zip(ours, tq):
        assert_close(a.grad, b.grad, rtol=rtol * 5, atol=atol * 5)
    return got


def _rand(*shape, seed=0, scale=1.0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale


SHAPES = [   # (q, k, v)
    ((5, 8), (7, 8), (7, 6)),
    ((1, 4), (1, 4), (1, 4)),
    ((2, 3, 37, 8), (2, 3, 21, 8), (2, 3, 21, 5)),          # sizes off the tiles
    ((2, 17, 16), (2, 33, 16), (2, 33, 16)),
    ((3, 1, 9, 64), (1, 2, 9, 64), (3, 2, 9, 40)),           # broadcast batches
    ((1, 2, 11, 128), (1, 2, 13, 128), (1, 2, 13, 100)),     # head dims up to 128
    ((2, 3, 70), (2, 5, 70), (2, 5, 130)),                   # Ev past 128: the composite
]


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "x".join(map(str, s[0])) + "_" + "x".join(map(str, s[1])))
def test_shapes(device, shapes):
    sq, sk, sv = shapes
    _run(device, _rand(*sq, seed=1), _rand(*sk, seed=2), _rand(*sv, seed=3))


@pytest.mark.parametrize("L,S", [(9, 9), (5, 13), (13, 5), (40, 40), (1, 1)])
def test_causal(device, L, S):
    _run(device, _rand(2, L, 16, seed=1), _rand(2, S, 16, seed=2), _rand(2, S, 8, seed=3), is_causal=True)


def test_scale(device):
    _run(device, _rand(4, 6, seed=1), _rand(9, 6, seed=2), _rand(9, 3, seed=3), scale=0.05)
    _run(device, _rand(4, 6, seed=1), _rand(9, 6, seed=2), _rand(9, 3, seed=3), scale=0.0)


def test_bool_masks(device):
    q, k, v = _rand(2, 3, 10, 8, seed=1), _rand(2, 3, 12, 8, seed=2), _rand(2, 3, 12, 4, seed=3)
    g = torch.Generator().manual_seed(4)
    for shape in [(10, 12), (1, 3, 10, 12), (2, 1, 1, 12), (2, 3, 10, 12)]:
        m = torch.rand(*shape, generator=g) > 0.4
        _run(device, q, k, v, mask=m)


def test_fully_masked_rows_give_zero(device):
    q, k, v = _rand(2, 6, 8, seed=1), _rand(2, 7, 8, seed=2), _rand(2, 7, 5, seed=3)
    m = torch.rand(2, 6, 7, generator=torch.Generator().manual_seed(5)) > 0.5
    m[0, 2] = False
    m[1, 5] = False
    got = _run(device, q, k, v, mask=m)
    assert got[0, 2].abs().sum().item() == 0
    f = torch.zeros(6, 7)
    f[3] = float("-inf")
    f[1, :3] = float("-inf")
    _run(device, q, k, v, mask=f)
    _run(device, q, k, v, mask=torch.zeros(2, 6, 7, dtype=torch.bool))


def test_float_masks(device):
    q, k, v = _rand(2, 9, 8, seed=1), _rand(2, 11, 8, seed=2), _rand(2, 11, 3, seed=3)
    _run(device, q, k, v, mask=_rand(9, 11, seed=4))
    _run(device, q, k, v, mask=_rand(2, 1, 11, seed=5))
    # the mask's own gradient (the composite on every device)
    _run(device, q, k, v, mask=_rand(9, 11, seed=6), mask_grad=True)


def test_mask_special_values(device):
    q, k, v = _rand(4, 8, seed=1), _rand(5, 8, seed=2), _rand(5, 3, seed=3)
    f = torch.zeros(4, 5)
    f[0, 1] = float("nan")
    f[2, 3] = float("inf")
    _run(device, q, k, v, mask=f, grad=False)


@pytest.mark.parametrize("heads", [(4, 2, 2), (4, 1, 4), (6, 3, 1), (2, 2, 2)])
def test_gqa(device, heads):
    hq, hk, hv = heads
    _run(device, _rand(2, hq, 7, 8, seed=1), _rand(2, hk, 9, 8, seed=2), _rand(1, hv, 9, 6, seed=3),
         enable_gqa=True)


def test_gqa_with_mask_and_causal(device):
    q, k, v = _rand(1, 4, 9, 8, seed=1), _rand(1, 2, 9, 8, seed=2), _rand(1, 2, 9, 8, seed=3)
    _run(device, q, k, v, enable_gqa=True, is_causal=True)
    _run(device, q, k, v, enable_gqa=True, mask=_rand(4, 9, 9, seed=4))


def test_strided_inputs(device):
    # (B, L, H, E) projections seen as (B, H, L, E), q k v slices of one packed tensor
    qkv = _rand(2, 11, 3, 2, 8, seed=1)
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ours = _ours(qkv, device)
    oq, ok, ov = (ours[:, :, i].transpose(1, 2) for i in range(3))
    assert not oq.is_contiguous()
    assert_close(TF.scaled_dot_product_attention(oq, ok, ov, is_causal=True), ref, rtol=2e-5, atol=2e-5)
    # gradients through strided leaves
    x = _rand(2, 8, 5, seed=2)
    _run(device, x.transpose(-1, -2)[..., :4, :], _rand(2, 6, 8, seed=3), _rand(2, 6, 4, seed=4))
    leaf = _rand(2, 6, 12, seed=5)
    tl = leaf.clone().requires_grad_(True)
    ol = _ours(leaf, device, True)
    r = F.scaled_dot_product_attention(tl[..., ::2], tl[..., 1::2], tl[..., 1::3][..., :4], scale=0.5)
    o = TF.scaled_dot_product_attention(ol[..., ::2], ol[..., 1::2], ol[..., 1::3][..., :4], scale=0.5)
    assert_close(o, r.detach(), rtol=2e-5, atol=2e-5)
    r.sum().backward()
    o.sum().backward()
    assert_close(ol.grad, tl.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shapes", [((3, 4), (0, 4), (0, 2)), ((0, 4), (3, 4), (3, 2)),
                                    ((3, 0), (5, 0), (5, 2)), ((3, 4), (5, 4), (5, 0)),
                                    ((0, 3, 4), (0, 5, 4), (0, 5, 2))])
def test_empty(device, shapes):
    sq, sk, sv = shapes
    _run(device, _rand(*sq, seed=1), _rand(*sk, seed=2), _rand(*sv, seed=3))


def test_float16(device):
    if device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("adapter lacks shader-f16")
    q, k, v = (_rand(2, 9, 16, seed=s).half() for s in (1, 2, 3))
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    got = TF.scaled_dot_product_attention(_ours(q, device), _ours(k, device), _ours(v, device), is_causal=True)
    assert got.dtype is torchweb.float16
    assert_close(got, ref.half(), rtol=2e-3, atol=2e-3)
    m = _rand(9, 9, seed=4).half()
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    got = TF.scaled_dot_product_attention(_ours(q, device), _ours(k, device), _ours(v, device),
                                          attn_mask=_ours(m, device))
    assert_close(got, ref, rtol=3e-3, atol=3e-3)
    tq = [x.clone().requires_grad_(True) for x in (q.float(), k.float(), v.float())]
    F.scaled_dot_product_attention(*tq).sum().backward()
    ours = [_ours(x, device, True) for x in (q, k, v)]
    TF.scaled_dot_product_attention(*ours).sum().backward()
    for a, b in zip(ours, tq):
        assert a.grad.dtype is torchweb.float16
        assert_close(a.grad, b.grad.half(), rtol=5e-3, atol=5e-3)


def test_dropout(device):
    torchweb.manual_seed(0)
    L, S = 64, 50
    q = torchweb.zeros(2, L, 4, device=device)
    k = torchweb.zeros(2, S, 4, device=device)
    v = torchweb.eye(S, device=device).expand(2, S, S)
    p = 0.3
    out = TF.scaled_dot_product_attention(q, k, v, dropout_p=p).numpy()
    # out[i, j] = attn / (1 - p) or 0, attn uniform 1 / S
    kept = out != 0
    assert abs(kept.mean() - (1 - p)) < 0.03
    assert abs(out[kept] - 1 / (S * (1 - p))).max() < 1e-6
    assert abs(out.sum(-1).mean() - 1) < 0.03
    # p = 0: the identity of no dropout; the seed repeats the draw
    x = [fast_ours(_rand(3, 5, 4, seed=s), device) for s in (1, 2, 3)]
    assert_close(TF.scaled_dot_product_attention(*x, dropout_p=0.0),
                 F.scaled_dot_product_attention(*(torch.from_numpy(t.numpy()) for t in x)))
    torchweb.manual_seed(3)
    a = TF.scaled_dot_product_attention(*x, dropout_p=0.5).numpy()
    torchweb.manual_seed(3)
    b = TF.scaled_dot_product_attention(*x, dropout_p=0.5).numpy()
    assert (a == b).all()
    # the gradient goes through the kept weights: d(out.sum())/dv = (kept attn).sum(rows)
    vv = fast_ours(torch.eye(S).expand(1, S, S).contiguous(), device).requires_grad_(True)
    torchweb.manual_seed(5)
    o = TF.scaled_dot_product_attention(q[:1], k[:1], vv, dropout_p=p)
    o.sum().backward()
    w = o.detach().numpy()[0]      # the dropped attention itself (v is the identity)
    assert abs(vv.grad.numpy()[0] - w.sum(0)[:, None]).max() < 1e-5


def test_grid_past_65535_workgroups(device):
    if device != "webgpu":
        pytest.skip("the webgpu grid")
    _run(device, _rand(70000, 1, 4, seed=1), _rand(70000, 2, 4, seed=2), _rand(70000, 2, 3, seed=3))


def test_long_sequence_without_scores_buffer(device):
    if device != "webgpu":
        pytest.skip("the fused kernels' memory")
    L = S = 4096
    q, k, v = _rand(1, L, 8, seed=1), _rand(1, S, 8, seed=2), _rand(1, S, 8, seed=3)
    ours = [_ours(x, device, True) for x in (q, k, v)]
    torchweb.webgpu.synchronize()
    pool = torchweb.backends.webgpu.runtime.get_runtime().pool
    pool.peak_bytes = pool.live_bytes      # measure this test's peak only
    base = pool.live_bytes
    out = TF.scaled_dot_product_attention(*ours, is_causal=True)
    out.backward(torchweb.ones_like(out))
    torchweb.webgpu.synchronize()
    assert pool.peak_bytes - base < L * S * 4 // 16       # an L x S float32 buffer is 64 MiB
    tq = [x.clone().requires_grad_(True) for x in (q, k, v)]
    ref = F.scaled_dot_product_attention(*tq, is_causal=True)
    ref.backward(torch.ones_like(ref))
    assert_close(out.detach(), ref.detach(), rtol=1e-4, atol=1e-5)
    for a, b in zip(ours, tq):
        assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-4)


def _sdpa(m, *args, **kw):
    return m.nn.functional.scaled_dot_product_attention(*args, **kw)


BAD = [
    (((2, 4), (3, 5), (3, 2)), {}),                                         # E mismatch
    (((2, 4), (3, 4), (4, 2)), {}),                                         # S mismatch
    (((4,), (3, 4), (3, 2)), {}),                                           # 1-d
    (((2, 4), (3, 4), (3, 2)), {"mask": (3, 3)}),                           # mask not broadcastable
    (((3, 4), (5, 4), (5, 2)), {"mask": (2, 3, 5)}),                        # mask grows the batch
    (((2, 4), (3, 4), (3, 2)), {"mask": (2, 3), "is_causal": True}),        # both
    (((1, 4, 2, 4), (1, 3, 3, 4), (1, 3, 3, 2)), {"enable_gqa": True}),     # heads not divisible
    (((1, 4, 2, 4), (1, 2, 3, 4), (1, 2, 3, 2)), {}),                       # heads without gqa
    (((3, 4), (5, 4), (5, 2)), {"enable_gqa": True}),                       # gqa on 2-d
    (((2, 4), (3, 4), (3, 2)), {"dropout_p": 1.5}),
    (((2, 4, 5, 4), (1, 3, 4), (3, 3, 2)), {}),                             # batch not broadcastable
]


@pytest.mark.parametrize("case", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input(device, case):
    shapes, kw = case
    kw = dict(kw)
    args = [_rand(*s, seed=i) for i, s in enumerate(shapes)]
    if "mask" in kw:
        kw["attn_mask"] = torch.ones(*kw.pop("mask"), dtype=torch.bool)
    mask = kw.pop("attn_mask", None)
    check(lambda m, q, k, v, msk: _sdpa(m, q, k, v, attn_mask=msk, **kw), *args, mask, device=device)


def test_bad_dtypes(device):
    q, k, v = _rand(2, 4), _rand(3, 4), _rand(3, 2)
    check(lambda m, q, k, v, msk: _sdpa(m, q, k, v, attn_mask=msk), q, k, v, torch.ones(2, 3, dtype=torch.int64),
          device=device)
    check(lambda m, q, k, v: _sdpa(m, q, k, v), q, k.half(), v, device=device)
    check(lambda m, q, k, v: _sdpa(m, q, k, v), q.long(), k.long(), v.long(), device=device)
