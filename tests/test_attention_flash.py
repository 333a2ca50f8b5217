"""The register-tiled attention kernels (kernels/attention_flash.py) against PyTorch: which inputs
reach them (float32, no mask, head dims up to 64) and which go to kernels/attention.py's (masks,
float16, wider heads), blocks of 64 rows with sizes off them, causal with L != S, nanoGPT's
strided q, k, v (one projection split and transposed), and the earlier kernels still right where
FLASH is off. test_attention.py runs the rest of the cases through both."""

import pytest
import torch

import torchweb
import torchweb.nn.functional as TF
from oracle import assert_close, fast_ours
from test_attention import _rand, _run


@pytest.fixture(autouse=True)
def _fused_kernels_for_every_size(monkeypatch):
    from torchweb.backends.webgpu import attention
    monkeypatch.setattr(attention, "COMPOSITE_MAX_SCORES", 0)


@pytest.fixture
def kernels_run(monkeypatch):
    """The names of the kernel families each attention call dispatched ("flash", "old")."""
    from torchweb.backends.webgpu import attention
    ran = []
    for mod, name in ((attention._flash, "flash"), (attention._attn, "old")):
        for fn in ("forward", "backward"):
            orig = getattr(mod, fn)

            def wrapped(*a, _orig=orig, _name=name, **kw):
                ran.append(_name)
                return _orig(*a, **kw)
            monkeypatch.setattr(mod, fn, wrapped)
    return ran


@pytest.mark.parametrize("L,S,E,Ev", [(130, 130, 64, 64), (64, 64, 32, 32), (65, 200, 48, 40),
                                      (150, 70, 64, 16), (1, 97, 8, 64)])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_against_pytorch(device, kernels_run, L, S, E, Ev, causal):
    _run(device, _rand(2, L, E, seed=1), _rand(2, S, E, seed=2), _rand(2, S, Ev, seed=3), is_causal=causal)
    if device == "webgpu":
        assert kernels_run == ["flash", "flash"]


def test_nanogpt_strided_heads(device, kernels_run):
    # q, k, v split from one projection [B, T, 3C] and viewed [B, H, T, D]: strided, offset views
    B, T, H, D = 2, 100, 3, 64
    x = _rand(B, T, 3 * H * D, seed=4)
    g = _rand(B, H, T, D, seed=5)
    tx = x.clone().requires_grad_(True)
    heads = [t.view(B, T, H, D).transpose(1, 2) for t in tx.split(H * D, dim=2)]
    ref = torch.nn.functional.scaled_dot_product_attention(*heads, is_causal=True)
    ref.backward(g)
    ox = fast_ours(x, device).requires_grad_(True)
    oheads = [t.view(B, T, H, D).transpose(1, 2) for t in ox.split(H * D, dim=2)]
    got = TF.scaled_dot_product_attention(*oheads, is_causal=True)
    got.backward(fast_ours(g, device))
    assert_close(got.detach(), ref.detach(), rtol=2e-5, atol=2e-5)
    assert_close(ox.grad, tx.grad, rtol=1e-4, atol=1e-4)
    if device == "webgpu":
        assert kernels_run == ["flash", "flash"]


def test_inference_forward_alone(device, kernels_run):
    with torchweb.no_grad():
        _run(device, _rand(3, 70, 32, seed=1), _rand(3, 70, 32, seed=2), _rand(3, 70, 32, seed=3),
             grad=False, is_causal=True)
    if device == "webgpu":
        assert kernels_run == ["flash"]


@pytest.mark.parametrize("case", ["bool_mask", "float_mask", "float16", "head_128"])
def test_others_take_the_earlier_kernels(device, kernels_run, case):
    L, S, E = 20, 30, 128 if case == "head_128" else 16
    q, k, v = _rand(2, L, E, seed=1), _rand(2, S, E, seed=2), _rand(2, S, E, seed=3)
    kw, tol = {}, 2e-5
    if case == "bool_mask":
        kw["mask"] = _rand(L, S, seed=6) > -0.5
    elif case == "float_mask":
        kw["mask"] = _rand(L, S, seed=6)
    elif case == "float16":
        q, k, v, tol = q.half(), k.half(), v.half(), 2e-3
    _run(device, q, k, v, rtol=tol, atol=tol, **kw)
    if device == "webgpu":
        assert kernels_run == ["old", "old"]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_earlier_kernels_without_flash(device, kernels_run, monkeypatch, causal):
    from torchweb.backends.webgpu import attention
    monkeypatch.setattr(attention, "FLASH", False)
    _run(device, _rand(2, 37, 24, seed=1), _rand(2, 45, 24, seed=2), _rand(2, 45, 20, seed=3), is_causal=causal)
    if device == "webgpu":
        assert kernels_run == ["old", "old"]


def test_fits():
    from torchweb.backends.webgpu.kernels import attention_flash as K
    assert K.fits(256, 256, 64, 64, False, "float32")
    assert not K.fits(256, 256, 64, 64, True, "float32")     # masks: the earlier kernels
    assert not K.fits(256, 256, 64, 64, False, "float16")
    assert not K.fits(256, 256, 80, 64, False, "float32")    # head dims past 64
