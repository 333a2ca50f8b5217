"""Scans (cumsum, cumprod, cummax, cummin, logcumsumexp) against PyTorch, forward and backward,
on both devices: rows of length 0, 1, 255/256/257, 1025, 5000 (split into chunks on webgpu),
strided and 0-d inputs, NaN, ties, -0.0, int dtypes and int64 past int32."""

import pytest
import torch

import torchweb
from oracle import assert_close, check, make, ours

OPS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
TOL = {"rtol": 1e-4, "atol": 1e-4}


def _call(name, m, x, dim):
    return getattr(m, name)(x, dim)


def _tol(name, n):
    if name == "cumsum":
        return {"rtol": 1e-4, "atol": 1e-3 if n > 1000 else 1e-4}
    return TOL


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("shape,dim", [((0,), 0), ((1,), 0), ((3, 255), 1), ((2, 256), -1), ((257, 2), 0),
                                       ((1025,), 0), ((5000,), 0), ((), 0), ((2, 0, 3), 1), ((2, 3, 4), 1)])
def test_scan_forward(device, name, shape, dim):
    lo, hi = ((0.9, 1.1) if name == "cumprod" else (-3, 3))
    x = make(shape, low=lo, high=hi)
    n = shape[dim] if shape else 1
    check(lambda m, a: _call(name, m, a, dim), x, device=device, **_tol(name, n))


@pytest.mark.parametrize("name", OPS)
def test_scan_special(device, name):
    x = make((4, 40), special=True, low=-2, high=2)
    x[1, :10] = 1.0         # ties
    x[2, 3] = -0.0
    x[2, 5] = 0.0
    x[3, 4] = float("nan")
    x[3, 9] = float("nan")
    check(lambda m, a: _call(name, m, a, 1), x, device=device, **TOL)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool])
def test_scan_int(device, name, dtype):
    x = make((3, 7), dtype=dtype, low=-4, high=4)
    check(lambda m, a: _call(name, m, a, 1), x, device=device)


def test_scan_dtype_argument(device):
    x = make((3, 6), dtype=torch.int32, low=-4, high=4)
    check(lambda m, a: m.cumsum(a, 1, dtype=m.float32), x, device=device)
    check(lambda m, a: m.cumprod(a, 0, dtype=m.int32), x, device=device)
    h = make((3, 6), dtype=torch.float16)
    check(lambda m, a: m.cumsum(a, 1), h, device=device, rtol=1e-3, atol=1e-3)
    check(lambda m, a: a.cumsum(dim=0), make((4, 5)), device=device)


def test_scan_strided(device):
    base = make((6, 9, 5))
    for name in OPS:
        check(lambda m, a: _call(name, m, a.permute(2, 0, 1)[:, ::2], 2), base, device=device, **TOL)
        check(lambda m, a: _call(name, m, a.transpose(0, 2), 1), base, device=device, **TOL)


@pytest.mark.parametrize("name", ["cumsum", "cummax"])
def test_scan_long_int(device, name):
    """Split rows (chunks) of int64, whose totals travel as 64-bit pairs."""
    x = make((2, 9000), dtype=torch.int64, low=-1000, high=1000)
    check(lambda m, a: _call(name, m, a, 1), x, device=device)


def test_int64_past_int32():
    """cumsum/cumprod outputs past int32 raise on webgpu (PyTorch would return them), even when
    32-bit arithmetic would wrap back into range."""
    cases = [("cumsum", [2 ** 31 - 1, 2 ** 31 - 1, -(2 ** 31 - 1)]), ("cumprod", [65536, 65536, 1]),
             ("cumsum", [2 ** 30] * 3 + [-(2 ** 30)] * 3)]
    for name, vals in cases:
        x = torchweb.tensor(vals, dtype=torchweb.int64, device="webgpu")
        with pytest.raises(torchweb.webgpu.Int64RangeError):
            getattr(torchweb, name)(x, 0).tolist()
    big = torchweb.tensor([2 ** 20] * 5000, dtype=torchweb.int64, device="webgpu")
    with pytest.raises(torchweb.webgpu.Int64RangeError):   # the split (chunked) path
        torchweb.cumsum(big, 0).tolist()
    # exact when every output fits although partial products wrap 64 bits like PyTorch
    x = torchweb.tensor([2 ** 31 - 1, -1, 1], dtype=torchweb.int64, device="webgpu")
    assert torchweb.cumsum(x, 0).tolist() == [2 ** 31 - 1, 2 ** 31 - 2, 2 ** 31 - 1]


def test_many_rows_grid(device):
    """More rows than 65535 workgroups in one dimension."""
    x = make((70000, 3))
    check(lambda m, a: m.cumsum(a, 1), x, device=device, **TOL)
    check(lambda m, a: m.cummax(a, 1), x, device=device, **TOL)


def test_scan_errors(device):
    x = make((3, 4))
    check(lambda m, a: m.cumsum(a, 2), x, device=device)
    check(lambda m, a: m.cummax(a, -3), x, device=device)
    check(lambda m, a: m.logcumsumexp(a, 0), make((3,), dtype=torch.int64), device=device)


def _grad(name, m, x, dim):
    r = _call(name, m, x, dim)
    return r[0] if isinstance(r, tuple) else r


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 6), 1), ((4, 3, 2), 0), ((1300,), 0), ((), 0)])
def test_scan_backward(device, name, shape, dim):
    lo, hi = ((0.5, 1.5) if name == "cumprod" else (-2, 2))
    x = make(shape, low=lo, high=hi)
    if name in ("cummax", "cummin") and x.numel() > 4:
        x.view(-1)[1] = x.view(-1)[0]   # a tie
    g = make(shape)
    xt = x.clone().requires_grad_(True)
    _grad(name, torch, xt, dim).backward(g)
    xo = ours(x, device, requires_grad=True)
    out = _grad(name, torchweb, xo, dim)
    out.backward(ours(g, device))
    assert out.grad_fn.name() == _grad(name, torch, x.clone().requires_grad_(True), dim).grad_fn.name()
    assert_close(xo.grad, xt.grad, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("zeros", [[2], [1, 4], [0, 0]])
def test_cumprod_backward_zeros(device, zeros):
    x = make((2, 6), low=0.5, high=1.5)
    for z in zeros:
        x[0, z] = 0.0
    x[1, 5] = 0.0
    g = make((2, 6))
    xt = x.clone().requires_grad_(True)
    torch.cumprod(xt, 1).backward(g)
    xo = ours(x, device, requires_grad=True)
    torchweb.cumprod(xo, 1).backward(ours(g, device))
    assert_close(xo.grad, xt.grad, rtol=1e-4, atol=1e-5)
