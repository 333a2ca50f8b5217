"""The torch.* math long tail (issue 18) against PyTorch, forward, backward and errors: nansum,
nanmean, quantile, nanquantile, count_nonzero, aminmax, diff, cov, corrcoef, dist, isin."""

import warnings

import pytest
import torch

import torchweb
from oracle import assert_close, check, make, ours
from test_autograd_ops import run_case


def _with_nan(shape):
    t = make(shape)
    flat = t.reshape(-1)
    flat[1] = float("nan")
    flat[-2] = float("nan")
    return flat.reshape(shape)


NAN_CASES = {
    "nansum": lambda m, x: m.nansum(x),
    "nansum_dim": lambda m, x: m.nansum(x, 1),
    "nansum_keep": lambda m, x: x.nansum((0, 2), keepdim=True),
    "nanmean": lambda m, x: m.nanmean(x),
    "nanmean_dim": lambda m, x: x.nanmean(-1, keepdim=True),
    "nanmean_tuple": lambda m, x: m.nanmean(x, (0, 1)),
}


@pytest.mark.parametrize("name", NAN_CASES)
def test_nan_reductions(device, name):
    check(NAN_CASES[name], _with_nan((3, 4, 5)), device=device)
    check(NAN_CASES[name], make((3, 4, 5)).permute(2, 0, 1), device=device, atol=1e-4)


@pytest.mark.parametrize("name", NAN_CASES)
def test_nan_reductions_backward(device, name):
    run_case(device, lambda T, x: NAN_CASES[name](T, x), lambda: (_with_nan((3, 4, 5)),))


def test_nan_reductions_dtypes_and_errors(device):
    for dt in (torch.int64, torch.int32, torch.uint8, torch.bool):
        check(lambda m, x: m.nansum(x, 0), make((3, 4), dtype=dt), device=device)
        check(lambda m, x: m.nanmean(x), make((3, 4), dtype=dt), device=device)    # RuntimeError
    check(lambda m, x: m.nansum(x, dtype=m.float32), make((3, 4), dtype=torch.int64), device=device)
    check(lambda m, x: m.nanmean(x), torch.full((2, 3), float("nan")), device=device)
    check(lambda m, x: m.nanmean(x, 1), torch.zeros(2, 0), device=device)
    check(lambda m, x: m.nansum(x), torch.tensor(float("nan")), device=device)
    x = _with_nan((3, 4))
    o = ours(torch.zeros(4), device)
    r = torchweb.nansum(ours(x, device), 0, out=o)
    assert r is o
    assert_close(o, torch.nansum(x, 0))


INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile(device, fn, interpolation):
    x = _with_nan((4, 7))
    clean = make((4, 7))
    q = torch.tensor([0.0, 0.25, 0.5, 0.9, 1.0])
    k = dict(interpolation=interpolation)
    for inp in (x, clean):
        check(lambda m, t: getattr(m, fn)(t, 0.3, **k), inp, device=device)
        check(lambda m, t, q: getattr(m, fn)(t, q, dim=1, **k), inp, q, device=device)
        check(lambda m, t, q: getattr(t, fn)(q, 0, True, **k), inp, q, device=device)
        check(lambda m, t, q: getattr(m, fn)(t, q, keepdim=True, **k), inp, q, device=device)
        check(lambda m, t: getattr(m, fn)(t, 0.5, -1, True, **k), inp, device=device)
        check(lambda m, t, q: getattr(m, fn)(t, q, dim=0, **k), inp, torch.tensor(0.4), device=device)
    check(lambda m, t: getattr(m, fn)(t, 0.5, **k), torch.full((3,), float("nan")), device=device)
    check(lambda m, t: getattr(m, fn)(t, 0.7, dim=0, **k), torch.tensor(2.5), device=device)
    check(lambda m, t: getattr(m, fn)(t, 0.7, keepdim=True, **k), torch.tensor(2.5), device=device)


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_backward(device, fn):
    q = torch.tensor([0.1, 0.5, 0.8])
    for interp in INTERPOLATIONS:
        run_case(device, lambda T, x: getattr(T, fn)(x, T.tensor(q.tolist()).to(x.device), dim=1, interpolation=interp),
                 lambda: (make((3, 6)),))
    run_case(device, lambda T, x: getattr(T, fn)(x, 0.35), lambda: (make((3, 6)),))


def test_quantile_errors_and_out(device):
    x = make((3, 4))
    bad = {
        "empty": lambda m, t: m.quantile(t[:0], 0.5),
        "q_range": lambda m, t: m.quantile(t, 1.5),
        "q_tensor_range": lambda m, t: m.quantile(t, m.tensor([0.5, -0.1])),
        "q_2d": lambda m, t: m.quantile(t, m.tensor([[0.5]])),
        "q_dtype": lambda m, t: m.quantile(t, m.tensor([0.5], dtype=m.float16)),
        "int_input": lambda m, t: m.quantile(t.long(), 0.5),
        "interp": lambda m, t: m.nanquantile(t, 0.5, interpolation="cubic"),
    }
    for f in bad.values():
        check(f, x, device=device)
    o = ours(torch.zeros(2, 3), device)
    r = torchweb.quantile(ours(x, device), torchweb.tensor([0.2, 0.6], device=device), 1, out=o)
    assert r is o
    assert_close(o, torch.quantile(x, torch.tensor([0.2, 0.6]), 1))


COUNT_CASES = {
    "all": lambda m, x: m.count_nonzero(x),
    "dim": lambda m, x: m.count_nonzero(x, 1),
    "neg_dim": lambda m, x: x.count_nonzero(dim=-1),
    "tuple": lambda m, x: m.count_nonzero(x, (0, 2)),
    "list": lambda m, x: m.count_nonzero(x, dim=[2, 1]),
    "empty_tuple": lambda m, x: m.count_nonzero(x, ()),
    "dup": lambda m, x: m.count_nonzero(x, (0, -3)),
    "bad_dim": lambda m, x: m.count_nonzero(x, 3),
}


@pytest.mark.parametrize("name", COUNT_CASES)
def test_count_nonzero(device, name):
    for dt in (torch.float32, torch.int64, torch.bool, torch.uint8):
        check(COUNT_CASES[name], make((3, 4, 2), dtype=dt, low=-1, high=1), device=device)
    check(COUNT_CASES[name], torch.zeros(3, 0, 2), device=device)
    check(lambda m, x: m.count_nonzero(x), torch.tensor(True), device=device)
    check(lambda m, x: m.count_nonzero(x, 0), torch.tensor(2.0), device=device)


AMINMAX_CASES = {
    "all": lambda m, x: m.aminmax(x),
    "dim": lambda m, x: m.aminmax(x, dim=1),
    "keep": lambda m, x: x.aminmax(dim=-1, keepdim=True),
    "all_keep": lambda m, x: m.aminmax(x, keepdim=True),
}


@pytest.mark.parametrize("name", AMINMAX_CASES)
def test_aminmax(device, name):
    for dt in (torch.float32, torch.int64, torch.bool, torch.uint8, torch.int32):
        check(AMINMAX_CASES[name], make((3, 4), dtype=dt), device=device)
    check(AMINMAX_CASES[name], make((5, 2), special=True), device=device)
    run_case(device, lambda T, x: AMINMAX_CASES[name](T, x), lambda: (make((3, 4)),))


def test_aminmax_named_tuple_empty_and_zero_dim(device):
    x = make((3, 4))
    r = torchweb.aminmax(ours(x, device), dim=0)
    e = torch.aminmax(x, dim=0)
    assert type(r).__name__ == "aminmax" and r._fields == ("min", "max")
    assert_close(r.min, e.min)
    assert_close(r.max, e.max)
    check(lambda m, t: m.aminmax(t), torch.zeros(0), device=device)
    check(lambda m, t: m.aminmax(t, dim=1), torch.zeros(2, 0), device=device)
    check(lambda m, t: m.aminmax(t, dim=0), torch.zeros(2, 0), device=device)
    check(lambda m, t: m.aminmax(t, dim=0), torch.tensor(3.0), device=device)
    check(lambda m, t: m.aminmax(t), torch.tensor(-3.0), device=device)
    lo, hi = ours(torch.zeros(4), device), ours(torch.zeros(4), device)
    r = torchweb.aminmax(ours(x, device), dim=0, out=(lo, hi))
    assert r[0] is lo and r[1] is hi
    assert_close(hi, e.max)


DIFF_CASES = {
    "default": lambda m, x: m.diff(x),
    "n2": lambda m, x: m.diff(x, 2),
    "dim0": lambda m, x: x.diff(dim=0),
    "n0": lambda m, x: m.diff(x, 0),
    "n_big": lambda m, x: m.diff(x, n=7, dim=1),
    "prepend": lambda m, x: m.diff(x, 1, -1, x[..., :2]),
    "append": lambda m, x: m.diff(x, 2, dim=0, append=x[:1]),
    "both": lambda m, x: m.diff(x, dim=1, prepend=x[:, :1], append=x[:, -2:]),
}


@pytest.mark.parametrize("name", DIFF_CASES)
def test_diff(device, name):
    for dt in (torch.float32, torch.int64, torch.bool, torch.uint8):
        check(DIFF_CASES[name], make((3, 4, 5), dtype=dt), device=device)
    check(DIFF_CASES[name], make((5, 4, 3)).permute(2, 1, 0), device=device)
    run_case(device, lambda T, x: DIFF_CASES[name](T, x), lambda: (make((3, 4, 5)),))


def test_diff_errors_and_promotion(device):
    x = make((2, 3))
    check(lambda m, t: m.diff(t[0, 0]), x, device=device)
    check(lambda m, t: m.diff(t, -1), x, device=device)
    check(lambda m, t: m.diff(t, prepend=t[0]), x, device=device)
    check(lambda m, t: m.diff(t, dim=0, prepend=t[:, :2]), x, device=device)
    check(lambda m, t: m.diff(t, prepend=m.tensor(0.0)), x, device=device)
    check(lambda m, t: m.diff(t, dim=2), x, device=device)
    check(lambda m, t: m.diff(t.to(m.uint8), prepend=t[:, :1]), make((2, 3), low=0, high=9), device=device)
    check(lambda m, t: m.diff(t, 1, 0), torch.zeros(0, 3), device=device)


COV_CASES = {
    "cov": lambda m, x: m.cov(x),
    "cov_1d": lambda m, x: m.cov(x[0]),
    "cov_corr0": lambda m, x: x.cov(correction=0),
    "cov_corr2": lambda m, x: m.cov(x, correction=2),
    "corrcoef": lambda m, x: m.corrcoef(x),
    "corrcoef_1d": lambda m, x: x[1].corrcoef(),
}


@pytest.mark.parametrize("name", COV_CASES)
def test_cov_corrcoef(device, name):
    check(COV_CASES[name], make((3, 6)), device=device, atol=1e-5, rtol=1e-4)
    check(COV_CASES[name], make((6, 3)).t(), device=device, atol=1e-5, rtol=1e-4)
    check(COV_CASES[name], make((3, 6), dtype=torch.int64), device=device, atol=1e-5, rtol=1e-4)
    run_case(device, lambda T, x: COV_CASES[name](T, x), lambda: (make((3, 6)),))


def test_cov_weights(device):
    x = make((3, 5))
    fw = torch.tensor([1, 2, 0, 3, 1])
    aw = torch.tensor([0.5, 1.0, 2.0, 0.1, 1.5])
    cases = [
        lambda m, t, f, a: m.cov(t, fweights=f),
        lambda m, t, f, a: m.cov(t, aweights=a),
        lambda m, t, f, a: m.cov(t, fweights=f, aweights=a),
        lambda m, t, f, a: m.cov(t, correction=0, fweights=f, aweights=a),
        lambda m, t, f, a: m.cov(t[1], correction=3, aweights=a),
    ]
    for c in cases:
        check(c, x, fw, aw, device=device, rtol=1e-4)
        run_case(device, lambda T, t, a: c(T, t, T.tensor(fw.tolist()).to(t.device), a), lambda: (x, aw), rtol=1e-3)


def test_cov_errors(device):
    x = make((2, 3))
    bad = [
        lambda m, t: m.cov(t.bool()),
        lambda m, t: m.cov(t.reshape(1, 2, 3)),
        lambda m, t: m.cov(t, fweights=m.tensor([1.0, 2.0, 3.0])),
        lambda m, t: m.cov(t, fweights=m.tensor([1, -2, 3])),
        lambda m, t: m.cov(t, fweights=m.tensor([[1, 2, 3]])),
        lambda m, t: m.cov(t, aweights=m.tensor([1, 2, 3])),
        lambda m, t: m.cov(t, aweights=m.tensor([0.0, 0.0, 0.0])),
        lambda m, t: m.cov(t, aweights=m.tensor([0.0, 1.0])),
        lambda m, t: m.cov(t, aweights=m.tensor([-1.0, 1.0, 1.0])),
    ]
    for b in bad:
        check(b, x, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, t: m.cov(t), torch.tensor([1.0]), device=device)       # degrees of freedom <= 0
        check(lambda m, t: m.cov(t), torch.zeros(2, 0), device=device)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        torchweb.cov(ours(x, device), correction=3)
    check(lambda m, t: m.corrcoef(t), torch.tensor([[1.0, 2.0, 4.0], [2.0, 2.0, 2.0]]), device=device)


def test_dist(device):
    a, b = make((3, 4)), make((4,))
    for p in (2, 1, 0, 3.5, float("inf"), float("-inf")):
        check(lambda m, x, y: m.dist(x, y, p), a, b, device=device, rtol=1e-4)
        check(lambda m, x, y: x.dist(y, p=p), a, b, device=device, rtol=1e-4)
    run_case(device, lambda T, x, y: T.dist(x, y), lambda: (make((3, 4)), make((3, 4))))
    run_case(device, lambda T, x, y: T.dist(x, y, 3), lambda: (make((3, 4)), make((3, 4))), rtol=1e-3)
    check(lambda m, x, y: m.dist(x, y), a, make((5,)), device=device)


ISIN_CASES = {
    "tensors": lambda m, e, t: m.isin(e, t),
    "invert": lambda m, e, t: m.isin(e, t, invert=True),
    "unique": lambda m, e, t: m.isin(elements=e, test_elements=t, assume_unique=False),
    "scalar_test": lambda m, e, t: m.isin(e, 2),
    "scalar_elem": lambda m, e, t: m.isin(2, t),
    "scalar_elem_invert": lambda m, e, t: m.isin(-7, t, invert=True),
    "both_scalar": lambda m, e, t: m.isin(2, 3),
    "bool": lambda m, e, t: m.isin(e > 0, t),
    "empty_test": lambda m, e, t: m.isin(e, t[:0]),
    "empty_elem": lambda m, e, t: m.isin(e[:0], t),
}


@pytest.mark.parametrize("name", ISIN_CASES)
def test_isin(device, name):
    for dt in (torch.int64, torch.float32, torch.uint8, torch.int32):
        check(ISIN_CASES[name], make((3, 5), dtype=dt, low=0, high=6), make((4,), dtype=dt, low=0, high=6),
              device=device)
    check(ISIN_CASES[name], make((3, 5), dtype=torch.int64, low=0, high=6), make((2, 2), low=0, high=6).round(),
          device=device)


def test_isin_large_takes_the_sorted_path(device):
    e = make((3000,), dtype=torch.int64, low=-3000, high=3000)
    t = make((2000,), dtype=torch.int64, low=-3000, high=3000)
    check(lambda m, a, b: m.isin(a, b), e, t, device=device)
    check(lambda m, a, b: m.isin(a, b, invert=True), e.reshape(30, 100), t.float(), device=device)
    nan = torch.tensor([float("nan"), 1.0] * 1500)
    check(lambda m, a, b: m.isin(a, b), nan, torch.cat([nan, torch.arange(3000.0)]), device=device)


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cummax_cummin_out(device, fn):
    x = make((3, 4), special=True)
    v, i = ours(torch.zeros(3, 4), device), ours(torch.zeros(3, 4, dtype=torch.int64), device)
    r = getattr(torchweb, fn)(ours(x, device), 1, out=(v, i))
    assert r[0] is v and r[1] is i and type(r).__name__ == fn
    e = getattr(torch, fn)(x, 1)
    assert_close(v, e.values)
    assert_close(i, e.indices)


def test_logcumsumexp_out(device):
    x = make((3, 4))
    o = ours(torch.zeros(3, 4), device)
    assert torchweb.logcumsumexp(ours(x, device), 0, out=o) is o
    assert_close(o, torch.logcumsumexp(x, 0))
