"""Reductions and softmax as SwiftShader runs them (kernels/reduction.py few_barriers): a thread
per output for rows up to SOFTWARE_SHORT long, no workgroup trees and no column kernel, forced
on here (lavapipe) and compared with PyTorch: row lengths around the limits, many and few
outputs, reductions over leading dims (strided rows), several dims, keepdim, the arg and logical
kinds, integers, special values, float16, and the split of very long rows, which stays."""

import pytest
import torch

import torchweb
from oracle import assert_close, fast_ours
from torchweb.backends.webgpu.kernels import reduction as RK

inf, nan = float("inf"), float("nan")
ROWS = [1, 3, 64, 65, 257, 1000, 4096, 4097, 9000]


@pytest.fixture(autouse=True)
def few_barriers(monkeypatch):
    monkeypatch.setitem(RK.FAST, "few_barriers", True)


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g) * 3.0 + 0.5


def _same(fn, x, rtol=1e-5, atol=1e-5):
    assert_close(fn(fast_ours(x, "webgpu")), fn(x), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("row", ROWS)
def test_rows(row):
    x = _rand(7, row)
    for fn in ("sum", "mean", "amax", "amin", "prod", "argmax", "argmin"):
        rtol = 1e-3 if fn == "prod" else 1e-5
        _same(lambda a: getattr(a, fn)(-1), x if fn != "prod" else x / 3.0 + 1.0, rtol=rtol, atol=1e-4)
    for fn in ("softmax", "log_softmax"):
        _same(lambda a: getattr(a, fn)(-1), x, atol=1e-6)


@pytest.mark.parametrize("shape", [(65, 128), (300, 5), (4097, 3), (8, 33, 9)], ids=str)
def test_leading_dims(shape):
    """Sums down columns (the GPU's column kernel's case) and over several dims."""
    x = _rand(*shape)
    _same(lambda a: a.sum(0), x, atol=1e-4)
    _same(lambda a: a.mean(0, keepdim=True), x)
    _same(lambda a: a.amax(0), x)
    _same(lambda a: a.softmax(0), x, atol=1e-6)
    if len(shape) == 3:
        _same(lambda a: a.sum((0, 2)), x, atol=1e-4)
        _same(lambda a: a.log_softmax(1), x, atol=1e-5)


def test_many_outputs_and_whole():
    _same(lambda a: a.sum(-1), _rand(3000, 65), atol=1e-4)
    _same(lambda a: a.sum(), _rand(70000), rtol=1e-4, atol=1e-2)   # split in two passes
    _same(lambda a: a.amax(), _rand(70000))


def test_integers_and_logical():
    g = torch.Generator().manual_seed(1)
    x = torch.randint(-50, 50, (9, 1000), generator=g)
    _same(lambda a: a.sum(-1), x)
    _same(lambda a: a.amax(-1), x)
    _same(lambda a: (a > 0).any(-1), x)
    _same(lambda a: (a > -49).all(-1), x)


def test_special_values_and_half():
    x = _rand(5, 65)
    x[0, 3], x[1, 10], x[2, 64], x[3] = nan, inf, -inf, -inf
    for fn in ("sum", "amax", "amin", "argmax"):
        _same(lambda a: getattr(a, fn)(-1), x)
    _same(lambda a: a.softmax(-1), x, atol=1e-6)
    h = _rand(6, 100).half()
    _same(lambda a: a.sum(-1), h, rtol=1e-2, atol=1e-1)
    _same(lambda a: a.softmax(-1), h, rtol=1e-2, atol=1e-3)


def test_gradients_through_softmax_and_sum():
    x = _rand(16, 65)
    w = _rand(16, 65, seed=5)
    xt = x.clone().requires_grad_()
    (xt.log_softmax(-1) * w).sum(-1).mean().backward()
    mine = fast_ours(x, "webgpu").requires_grad_()
    (mine.log_softmax(-1) * fast_ours(w, "webgpu")).sum(-1).mean().backward()
    assert_close(mine.grad, xt.grad, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("row", [1, 2, 65, 256, 257, 4097])
def test_moments_and_layer_norm(row):
    """var/std/var_mean (kernels/moments.py) and layer_norm's statistics: a thread per row up
    to moments.SOFTWARE_SHORT, workgroups past it."""
    x = _rand(6, row)
    _same(lambda a: a.var(-1), x, rtol=1e-4, atol=1e-4)
    _same(lambda a: a.std(-1, correction=0), x, rtol=1e-4, atol=1e-4)
    _same(lambda a: torch.var_mean(a, -1) if isinstance(a, torch.Tensor) else torchweb.var_mean(a, -1), x,
          rtol=1e-4, atol=1e-4)
    F = torchweb.nn.functional
    _same(lambda a: (torch.nn.functional if isinstance(a, torch.Tensor) else F).layer_norm(a, (row,)), x,
          rtol=1e-4, atol=1e-4)


def test_default_is_by_adapter(monkeypatch):
    from torchweb.backends.webgpu.runtime import get_runtime
    monkeypatch.setitem(RK.FAST, "few_barriers", None)
    rt = get_runtime()
    info = torchweb.webgpu.adapter_info()
    assert RK.few_barriers(rt) == any("swiftshader" in str(v).lower() for v in info.values())
