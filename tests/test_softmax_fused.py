"""softmax / log_softmax through the webgpu device's fused kernel (one workgroup per row),
compared with PyTorch: long rows (the last shape, few rows past 65536, is declined to the
composite), many rows (a folded grid), other dims, strided inputs, special values, float16.
The cpu device runs the composite, held to the same results."""

import pytest
import torch

import torchweb
from oracle import assert_close, fast_ours

FNS = ["softmax", "log_softmax"]


def _check(x, device, dim, fn, rtol=1e-5, atol=1e-6, ours=None):
    ours = fast_ours(x, device) if ours is None else ours
    assert_close(getattr(ours, fn)(dim), getattr(x, fn)(dim), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("shape", [(3, 300), (2, 5000), (70000, 3), (2, 70000)])
def test_long_and_many_rows(device, fn, shape):
    g = torch.Generator().manual_seed(sum(shape))
    _check(torch.randn(*shape, generator=g) * 4, device, -1, fn)


@pytest.mark.parametrize("fn", FNS)
def test_other_dim_and_transposed(device, fn):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(5, 4, 300, generator=g)
    _check(x, device, 0, fn)
    _check(x, device, 1, fn)
    t = torch.randn(300, 7, generator=g)
    _check(t.t(), device, -1, fn, ours=fast_ours(t, device).t())


@pytest.mark.parametrize("fn", FNS)
def test_special_values(device, fn):
    inf, nan = float("inf"), float("nan")
    x = torch.randn(6, 300)
    x[0, 5] = -inf
    x[0, 200] = -inf
    x[1] = -inf
    x[2, 7] = nan
    x[3, 9] = inf
    x[4, :3] = torch.tensor([inf, -inf, nan])
    _check(x, device, -1, fn)
    _check(x[:, :4], device, -1, fn)  # short rows too


@pytest.mark.parametrize("fn", FNS)
def test_float16(device, fn):
    if device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("adapter lacks shader-f16")
    g = torch.Generator().manual_seed(5)
    x = (torch.randn(4, 1000, generator=g) * 3).half()
    ours = fast_ours(x, device)
    expected = getattr(x.float(), fn)(-1).half()
    assert_close(getattr(ours, fn)(-1), expected, rtol=2e-3, atol=2e-3)


def test_webgpu_uses_the_fused_kernel(monkeypatch):
    from torchweb.backends.webgpu.kernels import softmax as sm_kernel
    calls = []
    real = sm_kernel.run
    monkeypatch.setattr(sm_kernel, "run", lambda *a: calls.append(a) or real(*a))
    x = torch.randn(3, 4, 5)
    y = fast_ours(x, "webgpu").softmax(1)
    assert len(calls) == 1 and y.is_contiguous()  # the composite's layout
    assert_close(y, x.softmax(1))
