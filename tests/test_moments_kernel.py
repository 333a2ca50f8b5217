"""var / std / var_mean / std_mean through the webgpu device's one-kernel path
(backends/webgpu/kernels/moments.py), compared with PyTorch: row lengths across the kernel's
variants (a thread per row, scalar and vec4 workgroups, registers or not), many rows (a folded
grid), dim tuples, keepdim, corrections, special values, large magnitudes, constant and empty
rows, float16 and gradients. The cpu device runs the composite, held to the same results."""

import pytest
import torch

import torchweb
from oracle import assert_close, fast_ours, ours
from torchweb.backends.webgpu.runtime import get_runtime

# PyTorch warns when correction >= the sample count (and answers inf/NaN, as we must)
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")
TOL = {"rtol": 1e-5, "atol": 1e-5}
inf, nan = float("inf"), float("nan")


def _rand(*shape, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g) * scale + 0.5


def _both(fn, x, device, tol=TOL, mine=None):
    """fn(module, tensor) with torch on x and with torchweb on a copy of x on device."""
    mine = fast_ours(x, device) if mine is None else mine
    assert_close(fn(torchweb, mine), fn(torch, x), **tol, equal_nan=True)


ROWS = [1, 2, 3, 4, 7, 63, 64, 65, 100, 255, 256, 301, 1000, 1024, 2051, 4096, 5000]


@pytest.mark.parametrize("row", ROWS)
def test_row_lengths(device, row):
    x = _rand(5, row, seed=1)
    for correction in (0, 1, 2):
        for keepdim in (False, True):
            _both(lambda m, a: m.var(a, 1, correction=correction, keepdim=keepdim), x, device)
            _both(lambda m, a: m.std(a, -1, correction=correction, keepdim=keepdim), x, device)
    _both(lambda m, a: m.var_mean(a, 1), x, device)
    _both(lambda m, a: m.std_mean(a, 1, unbiased=False), x, device)
    _both(lambda m, a: a.var(1, unbiased=False), x, device)


@pytest.mark.parametrize("shape", [(70000, 3), (66000, 68), (300, 257), (2, 70000)])
def test_many_rows_and_long_rows(device, shape):
    # (66000, 68): more workgroups than a grid dimension holds; (2, 70000): declined to the composite
    x = _rand(*shape, seed=2)
    _both(lambda m, a: m.var_mean(a, -1), x, device, {"rtol": 1e-4, "atol": 1e-5})
    _both(lambda m, a: m.std(a, -1), x, device, {"rtol": 1e-4, "atol": 1e-5})


# few long rows go in chunks (kernels/moments.py SPLIT_MIN, CHUNK), merged by a second kernel
@pytest.mark.parametrize("shape", [(1, 65536), (3, 100003), (2, 70001), (1, 300000)])
def test_chunked_rows(device, shape):
    x = _rand(*shape, seed=12)
    tol = {"rtol": 1e-4, "atol": 1e-5}
    for correction in (0, 1):
        _both(lambda m, a: m.var_mean(a, -1, correction=correction), x, device, tol)
        _both(lambda m, a: m.std_mean(a, -1, correction=correction, keepdim=True), x, device, tol)
    _both(lambda m, a: m.var(a), x, device, tol)
    _both(lambda m, a: m.std(a[:, 1:]), x, device, tol)   # rows at an odd offset


def test_chunked_special_values(device):
    x = _rand(9, 70000, seed=13)
    x[0, 40000] = nan
    x[1, 30000] = inf              # an infinity in a middle chunk: mean NaN
    x[2, -1] = -inf                # the last element, alone: mean -inf
    x[3, 5], x[3, -1] = inf, inf
    x[4] = 3e38                    # constant: var 0 exactly
    x[5, :35000] *= 1e30           # chunks of very different scales
    x[6, 35000:] *= 1e-30
    x[7] = 1e-3
    x[7, 69999] = 2e-3
    x[8, :] = -2.5
    for correction in (0, 1, 70000, 70001):
        _both(lambda m, a: m.var(a, 1, correction=correction), x, device, {"rtol": 1e-4, "atol": 0.0})
        _both(lambda m, a: m.std(a, 1, correction=correction), x, device, {"rtol": 1e-4, "atol": 0.0})
    if device == "webgpu":   # the composite's mean is NaN for every row with an infinity
        _both(lambda m, a: m.var_mean(a, 1), x, device, {"rtol": 1e-4, "atol": 0.0})


def test_chunked_float16(device):
    if device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("adapter lacks shader-f16")
    x = (_rand(2, 80000, seed=14) * 100).half()
    want_v, want_m = torch.var_mean(x.float(), 1)
    got_v, got_m = torchweb.var_mean(fast_ours(x, device), 1)
    assert_close(got_v, want_v.half(), rtol=2e-3, atol=2e-3)
    assert_close(got_m, want_m.half(), rtol=2e-3, atol=2e-3)


DIMS = [None, 0, 1, -1, (0, 2), (1, 2), (0, 1), (2, 0), (0, 1, 2), ()]


@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_dims_3d(device, dim):
    x = _rand(4, 5, 6, seed=3)
    for keepdim in (False, True):
        if dim is None and keepdim:
            continue   # PyTorch has no var(x, keepdim=True) without dim
        kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
        for correction in (0, 1, 2):
            _both(lambda m, a: m.var(a, correction=correction, **kw), x, device)
            _both(lambda m, a: m.std_mean(a, correction=correction, **kw), x, device)
        _both(lambda m, a: m.var_mean(a, unbiased=False, **kw), x, device)


@pytest.mark.parametrize("layout", ["transposed", "strided", "offset"])
def test_strided_inputs(device, layout):
    base = _rand(40, 36, seed=4)
    if layout == "transposed":
        x, mine = base.t(), fast_ours(base, device).t()
    elif layout == "strided":   # every other column: rows not contiguous
        x, mine = base[:, ::2], fast_ours(base, device)[:, ::2]
    else:                       # rows contiguous, at an odd offset
        x, mine = base[1:, 3:35], fast_ours(base, device)[1:, 3:35]
    for dim in (0, 1, None, (0, 1)):
        _both(lambda m, a: m.var_mean(a, dim) if dim is not None else m.var_mean(a), x, device, mine=mine)
        _both(lambda m, a: m.std(a, dim, correction=0) if dim is not None else m.std(a), x, device, mine=mine)


def test_python_forms(device):
    x = _rand(6, 9, seed=5)
    _both(lambda m, a: a.var(), x, device)
    _both(lambda m, a: a.var(False), x, device)
    _both(lambda m, a: a.std(1, True, True), x, device)
    _both(lambda m, a: m.var(a, 0, unbiased=True), x, device)
    _both(lambda m, a: m.var(a, (0, 1), correction=0.5), x, device)
    _both(lambda m, a: m.std(a, 1, correction=3), x, device)


def _special_rows(row):
    """Rows of length row (>= 4) holding NaN and infinities at telling places."""
    x = _rand(10, row, seed=6)
    x[0, 2] = nan
    x[1, 1] = inf
    x[2, -1] = inf               # a last, lone infinity: PyTorch's mean is inf
    x[3, -1] = -inf
    x[4, 0], x[4, -1] = inf, -inf
    x[5, 1], x[5, 2] = -inf, -inf
    x[6, 0], x[6, -1] = nan, inf
    x[7, 1], x[7, -1] = inf, inf
    x[8] = inf
    return x


@pytest.mark.parametrize("row", [4, 5, 64, 300, 301, 5000])
def test_nan_and_inf(device, row):
    x = _special_rows(row)
    for correction in (0, 1):
        _both(lambda m, a: m.var(a, 1, correction=correction), x, device)
        _both(lambda m, a: m.std(a, 1, correction=correction), x, device)
    got_var, got_mean = torchweb.var_mean(fast_ours(x, device), 1)
    want_var, want_mean = torch.var_mean(x, 1)
    assert_close(got_var, want_var, equal_nan=True)
    if device == "webgpu":   # the composite's mean is NaN for every row with an infinity
        assert_close(got_mean, want_mean, equal_nan=True)
        assert_close(torchweb.std_mean(fast_ours(x, device), 1)[1], want_mean, equal_nan=True)


def test_single_infinity(device):
    for v in ([inf], [-inf], [nan], [2.0, inf], [inf, 2.0]):
        x = torch.tensor(v)
        _both(lambda m, a: m.var(a), x, device)
        _both(lambda m, a: m.std(a, correction=0), x, device)
        if device == "webgpu":
            _both(lambda m, a: m.var_mean(a, 0), x, device)


def _flushes_subnormals():
    return (torchweb.tensor([1e-44], device="webgpu") * 2.0).tolist()[0] == 0.0


@pytest.mark.parametrize("row", [3, 300, 1001])
def test_large_and_small_magnitudes(device, row):
    x = _rand(6, row, seed=7, scale=1.0)
    x[0] *= 1e30           # var past float32 (inf), std and mean finite
    x[1] *= 1e-30          # var underflows, std doesn't
    x[2] = 3e38            # constant, near the top of float32
    x[3, ::2] = 3e38
    x[3, 1::2] = -1e38     # (a mean far from 0: PyTorch's Welford leaves 1e20 of error at 0)
    x[4] *= 1e19
    # subnormal; WGSL lets an adapter flush subnormals to zero in arithmetic (NVIDIA's does):
    # there the row holds the smallest normal values instead
    x[5, :] = 1e-37 if device == "webgpu" and _flushes_subnormals() else 1e-44
    tol = {"rtol": 1e-5, "atol": 0.0}
    for correction in (0, 1):
        _both(lambda m, a: m.var(a, 1, correction=correction), x, device, tol)
        _both(lambda m, a: m.std_mean(a, 1, correction=correction), x, device, tol)
    _both(lambda m, a: m.var_mean(a, 1), x[:5], device, tol)


def test_constant_rows(device):
    x = torch.full((4, 300), 7.25)
    x[1] = -1e-3
    x[2] = 0.0
    x[3] = 1e30
    for row in (300, 5):
        _both(lambda m, a: m.var_mean(a, 1), x[:, :row], device, {"rtol": 0.0, "atol": 0.0})
        _both(lambda m, a: m.std(a, 1), x[:, :row], device, {"rtol": 0.0, "atol": 0.0})


@pytest.mark.parametrize("shape, dim", [((0, 5), 1), ((5, 0), 1), ((3, 0), None), ((0,), 0), ((2, 0, 3), (0, 2)),
                                        ((4, 1), 1), ((4, 2), 1), ((), None), ((), 0)])
def test_empty_and_too_few(device, shape, dim):
    x = _rand(*shape, seed=8) if shape else torch.tensor(1.5)
    for correction in (0, 1, 2, 3):
        _both(lambda m, a: m.var(a, dim, correction=correction), x, device)
        _both(lambda m, a: m.std_mean(a, dim, correction=correction), x, device)


def test_float16(device):
    if device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("adapter lacks shader-f16")
    x = _rand(6, 1000, seed=9).half()
    x[0] *= 1000   # squares past float16's range: accumulated in float
    tol = {"rtol": 2e-3, "atol": 2e-3}
    for dim in (1, 0, None, (0, 1)):
        want_v, want_m = torch.var_mean(x.float(), dim)
        got_v, got_m = torchweb.var_mean(fast_ours(x, device), dim)
        assert_close(got_v, want_v.half(), **tol)
        assert_close(got_m, want_m.half(), **tol)
        assert_close(torchweb.std(fast_ours(x, device), dim, correction=0), x.float().std(dim, correction=0).half(), **tol)


GRAD_CASES = [
    ("var", (5, 300), {"dim": 1}),
    ("var", (5, 7), {"dim": 0, "keepdim": True}),
    ("var", (3, 4, 5), {"dim": (0, 2), "correction": 0}),
    ("var", (6, 5), {}),
    ("std", (5, 300), {"dim": 1}),
    ("std", (3, 4, 5), {"dim": (1, 2), "keepdim": True, "correction": 2}),
    ("std", (4, 9), {}),
    ("var_mean", (5, 64), {"dim": 1}),
    ("var_mean", (3, 4, 5), {"dim": (0, 1), "correction": 0}),
    ("std_mean", (5, 300), {"dim": -1}),
    ("std_mean", (4, 6), {}),
]


def _grads(m, name, x, kw, weights):
    a = x.detach().clone().requires_grad_(True) if m is torch else x
    outs = getattr(m, name)(a, **kw)
    outs = outs if isinstance(outs, tuple) else (outs,)
    loss = None
    for o, w in zip(outs, weights):
        term = (o * (m.tensor(w.tolist(), device=o.device) if m is torchweb else w)).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    return a.grad


@pytest.mark.parametrize("name, shape, kw", GRAD_CASES, ids=[f"{n}-{s}-{k}" for n, s, k in GRAD_CASES])
def test_gradients(device, name, shape, kw):
    x = _rand(*shape, seed=10)
    outs = getattr(torch, name)(x, **kw)
    outs = outs if isinstance(outs, tuple) else (outs,)
    weights = [_rand(*o.shape, seed=11 + k) if o.dim() else torch.tensor(0.7 + k) for k, o in enumerate(outs)]
    mine = ours(x, device, requires_grad=True)
    assert_close(_grads(torchweb, name, mine, kw, weights), _grads(torch, name, x, kw, weights), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["std", "std_mean", "var"])
def test_gradient_of_constant_row(device, name):
    x = torch.full((3, 50), 2.5)
    x[1] = torch.arange(50.0)
    mine = ours(x, device, requires_grad=True)
    weights = [torch.ones(3), torch.full((3,), 0.5)]
    assert_close(_grads(torchweb, name, mine, {"dim": 1}, weights), _grads(torch, name, x, {"dim": 1}, weights))


@pytest.mark.parametrize("kw", [{"correction": 2}, {"correction": 3}, {"dim": 0, "correction": 2},
                                {"dim": 0, "correction": 3}], ids=str)
def test_gradient_with_too_few_samples(device, kw):
    # PyTorch: dim=None gives inf (NaN where x is its mean); a dim gives 2 / (n - correction), unclamped
    x = torch.tensor([1.0, 3.0, 2.0])[:2]
    for name in ("var", "std"):
        mine = ours(x, device, requires_grad=True)
        assert_close(_grads(torchweb, name, mine, kw, [torch.tensor(1.0)]), _grads(torch, name, x, kw, [torch.tensor(1.0)]),
                     equal_nan=True)
    same = torch.tensor([4.0, 4.0])
    mine = ours(same, device, requires_grad=True)
    assert_close(_grads(torchweb, "var", mine, kw, [torch.tensor(1.0)]), _grads(torch, "var", same, kw, [torch.tensor(1.0)]),
                 equal_nan=True)


def test_grad_fn_names():
    x = torchweb.randn(4, 5, device="webgpu", requires_grad=True)
    assert x.var(1).grad_fn.name() == "VarBackward0"
    assert x.std().grad_fn.name() == "StdBackward0"
    assert torchweb.var_mean(x, 1)[0].grad_fn.name() == "VarMeanBackward0"
    assert torchweb.std_mean(x, 0)[1].grad_fn.name() == "StdMeanBackward0"


def _dispatches(monkeypatch, fn):
    rt = get_runtime()
    calls = []
    real = rt.record   # (every kernel's dispatch: a[0] its row's head, [1] the pipeline id)
    monkeypatch.setattr(rt, "record", lambda *a: (calls.append(a[0][1]), real(*a))[1])
    fn()
    monkeypatch.setattr(rt, "record", real)
    return len(calls)


def test_one_dispatch(monkeypatch):
    x = torchweb.randn(64, 300, device="webgpu")
    x.sum().item()
    assert _dispatches(monkeypatch, lambda: x.var(1)) == 1
    assert _dispatches(monkeypatch, lambda: torchweb.std_mean(x, -1, keepdim=True)) == 1
    assert _dispatches(monkeypatch, lambda: x.var()) == 1
    assert _dispatches(monkeypatch, lambda: x.var(0)) == 2   # a contiguous copy of the columns, then the kernel
    big = torchweb.randn(300, 1000, device="webgpu")
    assert _dispatches(monkeypatch, lambda: torchweb.var_mean(big)) == 2   # chunks, then their merge
