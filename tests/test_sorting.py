"""Sorting (sort, argsort, msort, topk, kthvalue, median, nanmedian, mode) against PyTorch,
forward and backward, on both devices: rows of length 0, 1, 255/256/257, 1025, 5000 (merged in
global passes on webgpu), ties, NaN, -0.0 vs 0.0, int dtypes, strided and 0-d inputs."""

import pytest
import torch

import torchweb
from oracle import assert_close, check, make, ours

SHAPES = [((0,), 0), ((1,), 0), ((3, 255), 1), ((2, 256), -1), ((257, 2), 0), ((1025,), 0),
          ((5000,), 0), ((), 0), ((2, 0, 3), 1), ((2, 3, 4), 1)]


def _ties(shape, dtype=torch.float32):
    """Values with many ties (a few distinct ones), NaN, -0.0 and 0.0 for floats."""
    x = make(shape, dtype=torch.int64, low=-3, high=3).to(dtype)
    if dtype.is_floating_point and x.numel() > 6:
        flat = x.view(-1)
        flat[1] = float("nan")
        flat[4] = float("nan")
        flat[2] = -0.0
        flat[5] = 0.0
    return x


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_sort(device, shape, dim, descending):
    for x in (make(shape), _ties(shape)):
        check(lambda m, a: m.sort(a, dim=dim, descending=descending, stable=True), x, device=device)
        check(lambda m, a: m.argsort(a, dim=dim, descending=descending, stable=True), x, device=device)
    # stable=False: PyTorch's order of ties is unspecified (and not stable for long rows)
    check(lambda m, a: m.sort(a, dim, descending).values, make(shape), device=device)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool, torch.float16])
def test_sort_dtypes(device, dtype):
    x = _ties((3, 40), dtype) if dtype is not torch.bool else make((3, 40), dtype=dtype)
    for desc in (False, True):
        check(lambda m, a: m.sort(a, dim=1, descending=desc, stable=True), x, device=device)
    check(lambda m, a: m.sort(a, dim=0, stable=True), _ties((1500, 2), dtype) if dtype is not torch.bool
          else make((1500, 2), dtype=dtype), device=device)


def test_sort_strided_msort(device):
    base = make((6, 9, 5))
    check(lambda m, a: m.sort(a.permute(2, 0, 1)[:, ::2], 2), base, device=device)
    check(lambda m, a: m.sort(a.transpose(0, 2), 1, descending=True), base, device=device)
    check(lambda m, a: m.msort(a[:, 1]), base, device=device)
    check(lambda m, a: a.sort(dim=0).values, base, device=device)


def test_sort_many_rows(device):
    """More rows than 65535 workgroups in one dimension."""
    x = make((70000, 3))
    check(lambda m, a: m.sort(a, 1), x, device=device)


def test_sort_long_rows(device):
    x = _ties((3, 3000))
    check(lambda m, a: m.sort(a, dim=1, descending=True, stable=True), x, device=device)
    check(lambda m, a: m.sort(a, dim=1, stable=True), make((2, 2049), dtype=torch.int32, low=-50, high=50), device=device)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("shape,dim,k", [((10,), 0, 3), ((3, 300), 1, 5), ((1200, 2), 0, 7), ((), 0, 1),
                                         ((4, 5), 1, 0), ((4, 5), 1, 5)])
def test_topk(device, shape, dim, k, largest):
    x = make(shape)    # distinct values: which tie PyTorch picks is unspecified
    check(lambda m, a: m.topk(a, k, dim, largest=largest), x, device=device)


def test_topk_nan_ties(device):
    x = torch.tensor([1.0, float("nan"), 3.0, 3.0, -1.0])
    v, i = torchweb.topk(ours(x, device), 3)
    ev, _ = torch.topk(x, 3)
    assert_close(v, ev)
    assert_close(torchweb.gather(ours(x, device), 0, i) if hasattr(torchweb, "gather") else v, ev)


@pytest.mark.parametrize("shape,dim,k", [((7,), 0, 3), ((3, 257), 1, 100), ((5, 4), 0, 5), ((), 0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(device, shape, dim, k, keepdim):
    check(lambda m, a: m.kthvalue(a, k, dim, keepdim), make(shape), device=device)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median(device, name):
    for x in (make((7, 9)), make((6, 4))):
        check(lambda m, a: getattr(m, name)(a), x, device=device)
        check(lambda m, a: getattr(m, name)(a, 1), x, device=device)
        check(lambda m, a: getattr(m, name)(a, 0, keepdim=True), x, device=device)
    n = float("nan")
    x = torch.tensor([[3.0, n, 1.0, n, 2.0], [n, n, n, n, n], [1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 4.0, 3.0, 0.0]])
    check(lambda m, a: getattr(m, name)(a, 1), x, device=device)
    check(lambda m, a: getattr(m, name)(a[0]), x, device=device)
    check(lambda m, a: getattr(m, name)(a[2:]), x, device=device)
    check(lambda m, a: getattr(m, name)(a, 0), torch.tensor(3.0), device=device)
    check(lambda m, a: getattr(m, name)(a, 0), make((5,), dtype=torch.int32, low=-9, high=9), device=device)
    check(lambda m, a: getattr(m, name)(a), torch.zeros(0), device=device)


def _check_mode(x, device, dim=-1, keepdim=False):
    """mode's values as PyTorch's; its index is wherever PyTorch's unstable sort put the value,
    so ours is checked to point at the value."""
    ev = torch.mode(x, dim, keepdim).values
    v, i = torchweb.mode(ours(x, device), dim, keepdim)
    assert_close(v, ev)
    picked = torch.take_along_dim(x, torch.tensor(i.tolist()).reshape(ev.shape) if keepdim or x.dim() == 0
                                  else torch.tensor(i.tolist()).unsqueeze(dim), dim if x.dim() else None)
    assert torch.equal(picked.reshape(ev.shape), ev)


def test_mode(device):
    x = torch.tensor([[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0], [7.0, 6.0, 5.0, 4.0, 3.0]])
    check(lambda m, a: m.mode(a, 1), x, device=device)
    _check_mode(x, device, 0, keepdim=True)
    _check_mode(make((4, 30), dtype=torch.int64, low=0, high=5), device)
    _check_mode(make((3, 300), dtype=torch.int32, low=-9, high=9), device, 1)
    check(lambda m, a: m.mode(a, 0), torch.tensor(2.0), device=device)


def test_sorting_errors(device):
    x = make((3, 4))
    check(lambda m, a: m.sort(a, 2), x, device=device)
    check(lambda m, a: m.topk(a, 5), x, device=device)
    check(lambda m, a: m.topk(a, -1), x, device=device)
    check(lambda m, a: m.kthvalue(a, 0), x, device=device)
    check(lambda m, a: m.kthvalue(a, 5, 1), x, device=device)
    check(lambda m, a: m.median(a, 1), make((2, 0)), device=device)
    check(lambda m, a: m.mode(a, 1), make((2, 0)), device=device)


def _first(r):
    return r[0] if isinstance(r, tuple) else r


_OPS = [
    lambda m, a: m.sort(a, 1, descending=True),
    lambda m, a: m.sort(a, 0),
    lambda m, a: m.msort(a),
    lambda m, a: m.topk(a, 2, 1),
    lambda m, a: m.kthvalue(a, 2, 0),
    lambda m, a: m.median(a, 1),
    lambda m, a: m.median(a),
    lambda m, a: m.nanmedian(a, 0, keepdim=True),
    lambda m, a: m.nanmedian(a),
    lambda m, a: m.mode(a, 1),
]


@pytest.mark.parametrize("op", _OPS, ids=["sort", "sort0", "msort", "topk", "kthvalue", "median_dim", "median", "nanmedian_dim", "nanmedian",
        "mode"])
def test_sorting_backward(device, op):
    x = make((4, 5))
    if op not in (_OPS[3], _OPS[9]):   # which tie topk and mode pick is unspecified
        x[1, 2] = x[1, 3]
    g = make(tuple(_first(op(torch, x)).shape))
    xt = x.clone().requires_grad_(True)
    et = _first(op(torch, xt))
    et.backward(g)
    xo = ours(x, device, requires_grad=True)
    out = _first(op(torchweb, xo))
    out.backward(ours(g, device))
    assert out.grad_fn.name() == et.grad_fn.name()
    assert_close(xo.grad, xt.grad, rtol=1e-4, atol=1e-5)


def test_sort_backward_long(device):
    # distinct values: with ties PyTorch's default (unstable) sort may route a gradient to either
    x = (torch.randperm(3000, generator=torch.Generator().manual_seed(5)).float() / 500 - 3).reshape(2, 1500)
    g = make((2, 1500))
    xt = x.clone().requires_grad_(True)
    torch.sort(xt, 1)[0].backward(g)
    xo = ours(x, device, requires_grad=True)
    torchweb.sort(xo, 1)[0].backward(ours(g, device))
    assert_close(xo.grad, xt.grad)
