"""The memory-bound fast paths (kernels/elementwise.py, fused.py, reduction.py, softmax.py FAST
knobs) against PyTorch: sizes around the vec4 width and the workgroup, offsets that break the
4-alignment (scalar units), non-contiguous views (the generic kernels), dtypes, 0-d and empty.
Each test runs under several knob settings (the shipped ones first); the elementwise fast path
is also held bit-equal to the generic kernel (same float32 ops). Pipelines record which path ran,
so a test that meant the fast path fails if it did not take it. Workgroups stay <= 256
(browsers' maxComputeInvocationsPerWorkgroup; conftest sets those limits)."""

import numpy as np
import pytest
import torch

import torchweb
from oracle import assert_close, fast_ours
from torchweb.backends.webgpu.runtime import get_runtime
from torchweb.backends.webgpu.kernels import elementwise as EW, reduction as RED, softmax as SM

SIZES = [1, 3, 4, 5, 255, 256, 257, 1023, 1024, 4097]
EW_KNOBS = [dict(vec=4, per=4, wg=256), dict(vec=1, per=1, wg=256), dict(vec=4, per=2, wg=128),
            dict(vec=1, per=3, wg=64)]


@pytest.fixture
def keys(monkeypatch):
    """The first element of every pipeline key used from here on (which kernel ran)."""
    rt = get_runtime()
    seen = []
    orig = rt.pipeline

    def pipeline(key, *a, **k):
        seen.append(key[0])
        return orig(key, *a, **k)
    monkeypatch.setattr(rt, "pipeline", pipeline)
    return seen


@pytest.fixture(params=range(len(EW_KNOBS)), ids=lambda i: "ew" + "_".join(f"{k}{v}" for k, v in EW_KNOBS[i].items()))
def ew_knobs(request, monkeypatch):
    monkeypatch.setitem(EW.FAST, "min", 0)   # the fast path at every size
    for k, v in EW_KNOBS[request.param].items():
        monkeypatch.setitem(EW.FAST, k, v)
    return EW_KNOBS[request.param]


def _w(t):
    return fast_ours(t, "webgpu")


def _gen(seed):
    return torch.Generator().manual_seed(seed)


# -- elementwise (eager: out= and in-place write through the elementwise kernel) -----------

@pytest.mark.parametrize("n", SIZES)
def test_add_out_and_inplace(ew_knobs, keys, n):
    g = _gen(n)
    a, b = torch.randn(n, generator=g), torch.randn(n, generator=g)
    wa, wb, wc = _w(a), _w(b), torchweb.empty(n, device="webgpu")
    torchweb.add(wa, wb, out=wc)
    assert_close(wc, a + b, rtol=0, atol=0)
    ia = torch.randint(-1000, 1000, (n,), dtype=torch.int32, generator=g)
    wia = _w(ia)
    wia.mul_(7)
    assert_close(wia, ia * 7, rtol=0, atol=0)
    if n >= 4:
        assert "ew_fast" in keys


@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.bool, torch.float16])
@pytest.mark.parametrize("n", [5, 257, 4097])
def test_dtypes(ew_knobs, keys, dtype, n):
    if dtype == torch.float16 and "shader-f16" not in get_runtime().features:
        pytest.skip("adapter without shader-f16")
    g = _gen(n)
    if dtype == torch.bool:
        a, b = torch.rand(n, generator=g) > 0.5, torch.rand(n, generator=g) > 0.5
        ref, got = a & b, _w(a) & _w(b)
    elif dtype == torch.float16:
        a, b = torch.randn(n, generator=g).half(), torch.randn(n, generator=g).half()
        ref, got = a * b + a, _w(a) * _w(b) + _w(a)
    else:
        hi = 200 if dtype == torch.uint8 else 30000
        a = torch.randint(0, hi, (n,), generator=g).to(dtype)
        b = torch.randint(0, hi, (n,), generator=g).to(dtype)
        ref, got = a * b + 3, _w(a) * _w(b) + 3
    assert_close(got, ref, rtol=1e-3 if dtype == torch.float16 else 0, atol=0)
    assert "ew_fast" in keys


def test_int64_range_error_in_fast_path(ew_knobs):
    a = _w(torch.full((1000,), 70000, dtype=torch.int64))
    with pytest.raises(RuntimeError):
        (a * a).tolist()


@pytest.mark.parametrize("n", [5, 257, 4097])
def test_unaligned_and_noncontiguous(ew_knobs, keys, n):
    g = _gen(n + 1)
    base = torch.randn(2 * n + 3, generator=g)
    wb = _w(base)
    for sl in (slice(1, n + 1), slice(3, n + 3), slice(4, n + 4)):     # offsets 1, 3, 4
        c = torchweb.empty(n, device="webgpu")
        torchweb.mul(wb[sl], wb[sl.start + 1:sl.stop + 1], out=c)
        assert_close(c, base[sl] * base[sl.start + 1:sl.stop + 1], rtol=0, atol=0)
    c = torchweb.empty(n + 2, device="webgpu")
    torchweb.sub(wb[::2], 1.5, out=c)                                   # strided: generic
    assert_close(c, base[::2] - 1.5, rtol=0, atol=0)
    m = torch.randn(n, 6, generator=g)
    wm = _w(m)
    out = torchweb.empty(6, n, device="webgpu")
    torchweb.add(wm.t(), wm.t(), out=out)                               # transposed: generic
    assert_close(out, m.t() + m.t(), rtol=0, atol=0)
    # a shifted overlap with out's own buffer keeps the generic kernel's order
    x = torch.arange(n + 1, dtype=torch.float32)
    wx = _w(x)
    wx[1:].copy_(wx[:-1] * 1.0)
    xr = x.clone()
    xr[1:] = x[:-1] * 1.0
    assert_close(wx, xr, rtol=0, atol=0)


def test_fast_equals_generic_bitwise(monkeypatch):
    """The same float32 ops in both kernels: the same bits, transcendental ones included."""
    monkeypatch.setitem(EW.FAST, "min", 0)
    x = _w(torch.randn(4099, generator=_gen(7)) * 5)
    res = {}
    for vec in (0, 4, 1):
        monkeypatch.setitem(EW.FAST, "vec", vec)
        outs = []
        for fn in ("sigmoid", "exp", "tanh", "log1p", "sin"):
            o = torchweb.empty(4099, device="webgpu")
            getattr(torchweb, fn)(x.abs() if fn == "log1p" else x, out=o)
            outs.append(np.asarray(o.numpy()))
        res[vec] = outs
    for vec in (4, 1):
        for a, b in zip(res[0], res[vec]):
            assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


def test_zero_d_and_empty(ew_knobs):
    a = _w(torch.tensor(2.5))
    assert_close(a * 3.0 + a, torch.tensor(2.5) * 3.0 + 2.5)
    e = _w(torch.empty(0))
    c = torchweb.empty(0, device="webgpu")
    torchweb.add(e, e, out=c)
    assert c.shape == (0,) and (e * 2 + 1).shape == (0,)


# -- fused (lazy) chains ----------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
def test_fused_chain(ew_knobs, keys, n):
    g = _gen(n + 2)
    x, a, b = (torch.randn(n, generator=g) for _ in range(3))
    wx, wa, wb = _w(x), _w(a), _w(b)
    assert_close((wx * wa + wb) * 0.5 - wx, (x * a + b) * 0.5 - x, rtol=1e-6, atol=1e-6)
    if n >= 4:
        assert "fused_fast" in keys


@pytest.mark.parametrize("n", [5, 257, 4097])
def test_fused_unaligned_broadcast_strided(ew_knobs, n):
    g = _gen(n + 3)
    base = torch.randn(n + 8, generator=g)
    wb = _w(base)
    for off in (1, 2, 3, 4):
        assert_close(wb[off:off + n] * 2.0 + wb[:n], base[off:off + n] * 2.0 + base[:n], rtol=1e-6, atol=1e-6)
    m, row = torch.randn(7, n, generator=g), torch.randn(n, generator=g)
    assert_close(_w(m) * _w(row) + 1.0, m * row + 1.0, rtol=1e-6, atol=1e-6)      # broadcast
    assert_close(_w(m).t() * 2.0 + 1.0, m.t() * 2.0 + 1.0, rtol=1e-6, atol=1e-6)  # strided
    i = torch.randint(-50, 50, (n,), dtype=torch.int32, generator=g)
    assert_close(_w(i) * 0.5 + _w(base[:n]), i * 0.5 + base[:n], rtol=1e-6, atol=1e-6)


# -- reductions -------------------------------------------------------------------------------

RED_KNOBS = [dict(vec=4, wg=256, col_rows=8, short=64, fit=1, col_fill=128),
             dict(vec=1, wg=256, col_rows=4, short=0, fit=1, col_fill=0),
             dict(vec=4, wg=128, col_rows=32, short=255, fit=0, col_fill=128),
             dict(vec=4, wg=64, col_rows=16, short=64, fit=0, col_fill=0)]


@pytest.fixture(params=range(len(RED_KNOBS)), ids=lambda i: "red" + "_".join(f"{k}{v}" for k, v in RED_KNOBS[i].items()))
def red_knobs(request, monkeypatch):
    for k, v in RED_KNOBS[request.param].items():
        monkeypatch.setitem(RED.FAST, k, v)
    return RED_KNOBS[request.param]


def _sum_close(got, x, ref, dim):
    """A float32 sum in another order: within 1e-5 of the sum of |x| along dim."""
    scale = x.abs().double().sum(dim) if dim is not None else x.abs().double().sum()
    err = (torch.from_numpy(np.asarray(got.numpy(), dtype=np.float64)) - ref.double()).abs()
    assert bool((err <= 1e-5 * scale + 1e-30).all()), float((err / scale).max())


@pytest.mark.parametrize("cols", [1, 3, 4, 5, 255, 256, 257, 1023, 4097, 70000])
def test_row_reductions(red_knobs, cols):
    g = _gen(cols)
    x = torch.randn(3, cols, generator=g)
    wx = _w(x)
    _sum_close(wx.sum(1), x, x.sum(1), 1)
    _sum_close(wx.mean(1) * cols, x, x.mean(1) * cols, 1)
    for fn in ("amax", "amin", "argmax"):
        assert_close(getattr(wx, fn)(1), getattr(x, fn)(1), rtol=0, atol=0)
    p = x.clamp(0.9, 1.1)
    assert_close(_w(p).prod(1), p.prod(1), rtol=1e-4, atol=0)
    i = torch.randint(-1000, 1000, (3, cols), dtype=torch.int32, generator=g)
    wi = _w(i)
    assert_close(wi.sum(1), i.sum(1), rtol=0, atol=0)                    # int64, exact
    assert_close(wi.amax(1), i.amax(1), rtol=0, atol=0)
    assert_close(wi.sum(1, dtype=torchweb.int32), i.sum(1, dtype=torch.int32), rtol=0, atol=0)
    b = x > 0.3
    assert_close(_w(b).all(1), b.all(1)) and assert_close(_w(b).any(1), b.any(1))


@pytest.mark.parametrize("n", [4, 5, 1023, 65536, 300001, 1 << 20])
def test_full_reductions(red_knobs, n):
    g = _gen(n)
    x = torch.randn(n, generator=g)
    wx = _w(x)
    _sum_close(wx.sum(), x, x.sum(), None)
    assert_close(wx.amax(), x.amax(), rtol=0, atol=0)
    assert_close(wx.argmin(), x.argmin(), rtol=0, atol=0)
    i = torch.randint(-100, 100, (n,), dtype=torch.int32, generator=g)
    assert_close(_w(i).sum(), i.sum(), rtol=0, atol=0)
    for off in (1, 2, 4):                                                # unaligned starts
        _sum_close(wx[off:].sum(), x[off:], x[off:].sum(), None)


@pytest.mark.parametrize("shape", [(1, 32), (3, 33), (17, 64), (255, 257), (1023, 40), (4097, 33), (2, 3, 70)])
def test_column_reductions(red_knobs, keys, shape):
    g = _gen(sum(shape))
    x = torch.randn(*shape, generator=g)
    x[0, 0] = float("nan")
    wx = _w(x)
    for fn in ("sum", "mean", "amax", "amin"):
        got, ref = getattr(wx, fn)(0), getattr(x, fn)(0)
        assert_close(got.isnan(), ref.isnan())
        mask = ~ref.isnan()
        if fn in ("sum", "mean"):
            k = shape[0] if fn == "mean" else 1
            scale = x.abs().double().nansum(0)[mask] / k
            err = (torch.from_numpy(np.asarray(got.numpy(), dtype=np.float64))[mask] - ref.double()[mask]).abs()
            assert bool((err <= 1e-5 * scale + 1e-30).all())
        else:
            assert_close(got[_w(mask)], ref[mask], rtol=0, atol=0)
    b = x > 0.5
    assert_close(_w(b).all(0), b.all(0))
    assert_close(_w(b).any(0), b.any(0))
    i = torch.randint(-9, 9, shape, dtype=torch.int32, generator=g)
    assert_close(_w(i).amin(0), i.amin(0), rtol=0, atol=0)
    assert_close(_w(i).sum(0), i.sum(0), rtol=0, atol=0)
    assert_close(wx[:, 1:].sum(0).isnan(), x[:, 1:].sum(0).isnan())     # unaligned view
    if RED.FAST["col_rows"]:
        assert "red_cols" in keys


@pytest.mark.parametrize("shape", [(512, 64), (5, 63), (700, 65), (3, 4, 9)])
def test_short_row_reductions(red_knobs, shape):
    """Rows up to FAST["short"] long over few outputs: a thread per output (no barriers)."""
    g = _gen(sum(shape))
    x = torch.randn(*shape, generator=g)
    wx = _w(x)
    _sum_close(wx.sum(-1), x, x.sum(-1), -1)
    for fn in ("amax", "argmax", "argmin"):
        assert_close(getattr(wx, fn)(-1), getattr(x, fn)(-1), rtol=0, atol=0)
    i = torch.randint(-1000, 1000, shape, dtype=torch.int32, generator=g)
    assert_close(_w(i).sum(-1), i.sum(-1), rtol=0, atol=0)
    b = x > 0.3
    assert_close(_w(b).any(-1), b.any(-1))


def test_reduction_zero_d_and_empty(red_knobs):
    assert_close(_w(torch.tensor(3.5)).sum(), torch.tensor(3.5))
    e = torch.empty(0, 5)
    assert_close(_w(e).sum(0), e.sum(0))
    assert_close(_w(e).sum(1), e.sum(1))


# -- softmax ----------------------------------------------------------------------------------

SM_KNOBS = [dict(vec=4, cache=1, wg=256, short=64, fit=1, keep_exp=1),
            dict(vec=4, cache=0, wg=256, short=0, fit=0, keep_exp=1),
            dict(vec=4, cache=1, wg=128, short=256, fit=0, keep_exp=0),
            dict(vec=0, cache=0, wg=256, short=0, fit=1, keep_exp=1)]


@pytest.fixture(params=range(len(SM_KNOBS)), ids=lambda i: "sm" + "_".join(f"{k}{v}" for k, v in SM_KNOBS[i].items()))
def sm_knobs(request, monkeypatch):
    for k, v in SM_KNOBS[request.param].items():
        monkeypatch.setitem(SM.FAST, k, v)
    return SM_KNOBS[request.param]


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("cols", [1, 3, 4, 5, 128, 255, 256, 512, 1020, 1024, 4096, 8192, 12000])
def test_softmax_rows(sm_knobs, keys, fn, cols):
    g = _gen(cols)
    x = torch.randn(3, cols, generator=g) * 4
    wx = _w(x)
    assert_close(getattr(wx, fn)(-1), getattr(x, fn)(-1), rtol=1e-5, atol=1e-6)
    if cols > 4:
        assert_close(getattr(wx[:, 4:], fn)(-1), getattr(x[:, 4:], fn)(-1), rtol=1e-5, atol=1e-6)
        assert_close(getattr(wx[:, 1:], fn)(-1), getattr(x[:, 1:], fn)(-1), rtol=1e-5, atol=1e-6)
    assert_close(getattr(wx.t(), fn)(-1), getattr(x.t(), fn)(-1), rtol=1e-5, atol=1e-6)
    if SM.FAST["vec"] and cols % 4 == 0 and cols > SM.FAST["short"]:
        assert "softmax_vec" in keys


@pytest.mark.parametrize("shape", [(2048, 16), (5, 64), (3, 65), (4, 3, 7)])
def test_softmax_short_rows(sm_knobs, shape):
    """Rows up to FAST["short"] long: a thread per row (no barriers)."""
    x = torch.randn(*shape, generator=_gen(sum(shape))) * 4
    wx = _w(x)
    for fn in ("softmax", "log_softmax"):
        assert_close(getattr(wx, fn)(-1), getattr(x, fn)(-1), rtol=1e-5, atol=1e-6)
        assert_close(getattr(wx.transpose(0, -1), fn)(-1), getattr(x.transpose(0, -1), fn)(-1), rtol=1e-5, atol=1e-6)


def test_softmax_special_values(sm_knobs):
    x = torch.randn(4, 8)
    x[0, 2] = float("inf")
    x[1, :] = -float("inf")
    x[2, 3] = float("nan")
    x[3, 1] = -float("inf")
    for fn in ("softmax", "log_softmax"):
        assert_close(getattr(_w(x), fn)(-1), getattr(x, fn)(-1), equal_nan=True)
