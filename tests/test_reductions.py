"""Reductions, forward, against PyTorch: over one dim, a tuple of dims or everything, with and
without keepdim, on strided, empty and 0-d inputs, with ties, NaN and infinity; softmax and
log_softmax."""

import pytest
import torch

import torchweb
from oracle import LAYOUTS, assert_close, check, make, ours

SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4), (2, 3, 1, 4, 5), (0, 3), (300,), (7, 300), (1000, 3)]


def dims_for(shape):
    """The dim arguments worth trying on a tensor of `shape`."""
    n = len(shape)
    out = [None]
    if n >= 1:
        out += [0, -1]
    if n >= 2:
        out += [(0, -1), tuple(range(n))]
    if n >= 4:
        out += [(1, 3)]
    if n == 0:
        out += [0, -1, ()]
    return out


def cases():
    for shape in SHAPES:
        for dim in dims_for(shape):
            yield shape, dim


CASES = list(cases())
IDS = [f"{s}-{d}" for s, d in CASES]
# float32 sums in another order (a tree on the GPU, pairwise on PyTorch's CPU) differ by a few
# ulp of the sum of magnitudes: absolute 1e-4 covers sums of up to ~1000 terms of size ~3
SUM_TOL = {"rtol": 1e-5, "atol": 1e-4}


def _call(name, m, x, dim, keepdim, **kw):
    fn = getattr(m, name)
    if dim is None:
        return fn(x, **kw) if not keepdim else fn(x, dim=tuple(range(x.dim())), keepdim=True, **kw)
    return fn(x, dim, keepdim=keepdim, **kw)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "logsumexp"])
def test_float_reduction(device, name, case, keepdim):
    shape, dim = case
    if name == "logsumexp" and dim is None:
        dim = tuple(range(len(shape)))  # logsumexp needs dims
    lo, hi = (-1.2, 1.2) if name == "prod" else (-3, 3)
    x = make(shape, low=lo, high=hi)
    tol = {"rtol": 1e-4, "atol": 1e-5} if name == "prod" else SUM_TOL
    check(lambda m, a: _call(name, m, a, dim, keepdim), x, device=device, **tol)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "logsumexp", "var", "std",
                                  "argmax", "argmin", "all", "any"])
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_reduction_strided(device, name, layout):
    x = make((6, 10), low=-1.2, high=1.2)
    for dim in (0, 1, (0, 1)):
        if name in ("argmax", "argmin") and isinstance(dim, tuple):
            continue
        check(lambda m, a: getattr(m, name)(a, dim), x, device=device, layout=layout, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "logsumexp", "var", "std",
                                  "norm", "argmax", "max", "all"])
def test_reduction_permuted_5d(device, name):
    base = make((2, 3, 4, 5, 3), low=-1.2, high=1.2)
    # prod, argmax and max take one int dim (norm refuses 3 dims: 'fro' is a matrix norm there)
    dims = [1, -1, 3] if name in ("argmax", "max", "prod") else [1, (0, 2), (1, 3, 4), -1]
    for d in dims:
        check(lambda m, b: getattr(m, name)(b.permute(3, 1, 4, 0, 2)[:, ::2], dim=d), base,
              device=device, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "mean"])
def test_int_reduction(device, name, dtype):
    x = make((4, 6), dtype, low=-3, high=3)
    for dim in (None, 0, 1, (0, 1)):
        check(lambda m, a: _call(name, m, a, dim, False), x, device=device)
    check(lambda m, a: m.sum(a, dtype=torch.float32 if m is torch else torchweb.float32), x, device=device)


def test_sum_dtype_argument(device):
    x = make((3, 4))
    check(lambda m, a: a.sum(1, dtype=m.int32), x * 10, device=device)
    check(lambda m, a: a.sum(dtype=m.float16), x, device=device, rtol=1e-3, atol=1e-2)
    check(lambda m, a: m.mean(a, 0, dtype=m.float32), make((3, 4), torch.int64), device=device)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "logsumexp", "max", "min",
                                  "argmax", "argmin", "var", "std", "norm"])
def test_reduction_nan_inf(device, name):
    v = torch.tensor([[1.0, float("nan"), 2.0, -1.0],
                      [float("inf"), 1.0, 2.0, 3.0],
                      [float("-inf"), -2.0, float("inf"), 0.0],
                      [float("-inf"), float("-inf"), float("-inf"), float("-inf")],
                      [5.0, float("nan"), float("nan"), 5.0]])
    for dim in (0, 1, -1):
        check(lambda m, a: getattr(m, name)(a, dim), v, device=device)
    if name not in ("max", "min", "argmax", "argmin", "logsumexp"):
        check(lambda m, a: getattr(m, name)(a), v, device=device)
    if name in ("argmax", "argmin", "max", "min", "amax", "amin"):
        check(lambda m, a: getattr(m, name)(a), v, device=device)


# -- max / min with indices ----------------------------------------------------------------------
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (2, 1, 3, 1, 4), (7, 300), (300, 2), ()], ids=str)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim(device, name, shape, keepdim):
    x = make(shape)
    for dim in ([0, -1] if shape else [0]):
        check(lambda m, a: getattr(m, name)(a, dim, keepdim=keepdim), x, device=device)
        check(lambda m, a: getattr(a, name)(dim=dim, keepdim=keepdim), x, device=device, layout="transposed")


TIE_CASES = [(n, d) for n in ("max", "min", "argmax", "argmin")
             for d in (torch.float32, torch.int64, torch.int32, torch.uint8, torch.bool, torch.float16)
             if not (d is torch.bool and n.startswith("arg"))]  # no bool argmax: see below


@pytest.mark.parametrize("name,dtype", TIE_CASES, ids=str)
def test_ties_take_first_index(device, name, dtype):
    # few distinct values: many ties, and PyTorch returns the first index of the extreme
    x = make((6, 40), dtype, low=0, high=2)
    if dtype.is_floating_point:
        x = x.round()
    for dim in (0, 1, -1):
        check(lambda m, a: getattr(m, name)(a, dim), x, device=device)
    if name in ("argmax", "argmin"):
        check(lambda m, a: getattr(m, name)(a), x, device=device)
        check(lambda m, a: getattr(m, name)(a, 1, keepdim=True), x, device=device)
        check(lambda m, a: getattr(m, name)(a, keepdim=True), x, device=device)


def test_argmax_bool_refused(device):
    x = make((3, 4), torch.bool)
    check(lambda m, a: m.argmax(a, 1), x, device=device)


def test_max_min_whole_and_binary(device):
    x, y = make((3, 4)), make((4,))
    check(lambda m, a: a.max(), x, device=device)
    check(lambda m, a: m.min(a), x, device=device)
    check(lambda m, a, b: m.max(a, b), x, y, device=device)
    check(lambda m, a, b: a.min(b), x, y, device=device)


def test_max_min_empty(device):
    e = make((0, 3))
    check(lambda m, a: m.max(a), e, device=device)          # refused: no identity
    check(lambda m, a: m.max(a, 0), e, device=device)       # refused: reducing an empty dim
    check(lambda m, a: m.max(a, 1), e, device=device)       # fine: (0,) values and indices
    check(lambda m, a: m.argmax(a, 1), e, device=device)
    check(lambda m, a: m.argmin(a), e, device=device)
    check(lambda m, a: m.amax(a, 1), e, device=device)
    check(lambda m, a: m.amax(a, 0), e, device=device)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_argmax_argmin(device, case):
    shape, dim = case
    if isinstance(dim, tuple):
        return check(lambda m, a: m.argmax(a, dim), make(shape), device=device)  # refused by both
    x = make(shape)
    for keepdim in (False, True):
        check(lambda m, a: m.argmax(a, dim, keepdim=keepdim), x, device=device)
        check(lambda m, a: m.argmin(a, dim, keepdim=keepdim), x, device=device)


# -- var / std -------------------------------------------------------------------------------------
# PyTorch warns when correction >= the sample count (and answers inf/NaN, as we must)
DOF_WARNING = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")


@DOF_WARNING
@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std(device, name, case):
    shape, dim = case
    x = make(shape)
    for correction in (0, 1, 2):
        for keepdim in (False, True):
            check(lambda m, a: getattr(m, name)(a, dim, correction=correction, keepdim=keepdim), x,
                  device=device, **SUM_TOL)
    check(lambda m, a: getattr(m, name)(a, dim, unbiased=False), x, device=device, **SUM_TOL)
    check(lambda m, a: getattr(a, name)(dim), x, device=device, **SUM_TOL)


def test_var_std_forms(device):
    x = make((4, 5))
    check(lambda m, a: a.var(), x, device=device)
    check(lambda m, a: a.var(False), x, device=device)
    check(lambda m, a: a.std(1, True, True), x, device=device)
    check(lambda m, a: m.var(a, 0, unbiased=True), x, device=device)
    check(lambda m, a: m.std(a, correction=0), x, device=device)
    check(lambda m, a: m.var_mean(a, 1), x, device=device)
    check(lambda m, a: m.std_mean(a, (0, 1), correction=2), x, device=device)
    check(lambda m, a: m.var(a, 1), make((4, 5), torch.int64), device=device)  # refused


@DOF_WARNING
def test_var_more_correction_than_samples(device):
    x = make((3, 2))
    for c in (1, 2, 3):
        check(lambda m, a: m.var(a, 1, correction=c), x, device=device)
        check(lambda m, a: m.std(a, 0, correction=c), x, device=device)


# -- all / any -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64, torch.uint8, torch.int32], ids=str)
@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any(device, name, dtype):
    for shape in [(), (0,), (5,), (3, 4), (2, 3, 4), (0, 3), (7, 300)]:
        x = make(shape, dtype, low=0, high=1)
        if dtype.is_floating_point and x.numel():
            x = x.round()
            x.view(-1)[0] = float("nan")   # NaN is true
        for dim in dims_for(shape):
            if isinstance(dim, tuple) and not dim:
                continue
            check(lambda m, a: getattr(m, name)(a) if dim is None else getattr(m, name)(a, dim), x, device=device)
        if shape:
            check(lambda m, a: getattr(a, name)(-1, keepdim=True), x, device=device)
    ones = torch.ones(3, 4, dtype=dtype)
    check(lambda m, a: getattr(m, name)(a, 1), ones, device=device)
    check(lambda m, a: getattr(m, name)(a, 1), torch.zeros(3, 4, dtype=dtype), device=device)


# -- norm ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [2, 1, float("inf"), float("-inf"), "fro", 3, 0, 0.5])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_norm(device, p, dim):
    x = make((4, 5), special=False)
    x[0, 0] = 0.0
    if p == "fro" and dim in (0, 1, -1):
        dim = (dim, dim + 1) if dim == 0 else dim
    for keepdim in (False, True):
        check(lambda m, a: m.norm(a, p, dim, keepdim), x, device=device, rtol=2e-5, atol=1e-5)
    check(lambda m, a: a.norm(p=p, dim=dim), x, device=device, layout="transposed", rtol=2e-5, atol=1e-5)


def test_norm_cases(device):
    check(lambda m, a: a.norm(), make((3, 4, 5)), device=device)
    check(lambda m, a: a.norm(), torch.zeros(3), device=device)
    check(lambda m, a: a.norm(), make((0,)), device=device)
    check(lambda m, a: a.norm(), torch.tensor(-3.0), device=device)
    check(lambda m, a: a.norm(1), torch.tensor([float("inf"), 1.0]), device=device)
    check(lambda m, a: a.norm(float("inf")), torch.tensor([float("nan"), 1.0]), device=device)
    check(lambda m, a: a.norm(), torch.tensor([1e20, 1e20]), device=device)  # no overflow to inf? as torch
    check(lambda m, a: a.norm(), make((3,), torch.int64), device=device)     # refused


# -- logsumexp -------------------------------------------------------------------------------------
def test_logsumexp_cases(device):
    inf = float("inf")
    v = torch.tensor([[0.0, -inf, 1.0], [-inf, -inf, -inf], [inf, 1.0, 2.0], [inf, -inf, 0.0],
                      [100.0, 100.0, 50.0], [-100.0, -101.0, -102.0]])
    for dim in (0, 1, (0, 1)):
        check(lambda m, a: m.logsumexp(a, dim), v, device=device)
        check(lambda m, a: m.logsumexp(a, dim, keepdim=True), v, device=device)
    check(lambda m, a: m.logsumexp(a, 1), make((0, 3)), device=device)
    check(lambda m, a: m.logsumexp(a, 0), make((0, 3)), device=device)
    check(lambda m, a: m.logsumexp(a, 1), make((2, 3), torch.int64), device=device)


# -- softmax ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (2, 3, 1, 4, 5), (7, 300), (0, 3), ()], ids=str)
def test_softmax(device, name, shape):
    x = make(shape, low=-10, high=10)
    for dim in ([0, -1] if shape else [0]):
        check(lambda m, a: getattr(m, name)(a, dim), x, device=device, rtol=1e-5, atol=1e-6)
        check(lambda m, a: getattr(a, name)(dim), x, device=device, layout="transposed", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_special(device, name):
    inf = float("inf")
    v = torch.tensor([[0.0, -inf, 1.0], [-inf, -inf, -inf], [inf, 1.0, 2.0], [1000.0, 0.0, -1000.0],
                      [float("nan"), 1.0, 2.0], [88.0, 89.0, 90.0]])
    check(lambda m, a: getattr(m, name)(a, 1), v, device=device, atol=1e-6)
    check(lambda m, a: getattr(m, name)(a, 0), v, device=device, atol=1e-6)
    check(lambda m, a: getattr(m, name)(a, 1, dtype=m.float32), make((3, 4), torch.int64), device=device)
    check(lambda m, a: getattr(m, name)(a, 1), make((3, 4), torch.int64), device=device)  # refused
    check(lambda m, a: getattr(m, name)(a, 1), make((3, 4), torch.float16), device=device, rtol=1e-3, atol=1e-3)
