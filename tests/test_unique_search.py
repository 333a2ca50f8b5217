"""searchsorted, bucketize, unique, unique_consecutive, bincount, histc and histogram against
PyTorch on both devices: NaN, -0.0, ties, int/float16/mixed dtypes, sorters, N-D sequences,
empty, 0-d and strided inputs, PyTorch's exception types on bad input, no gradients, and one
case past 65535 workgroups for the search and bincount kernels."""

import pytest
import torch

import torchweb
from oracle import assert_close, check, fast_ours, make, ours

NAN = float("nan")


def _sorted(shape, dtype=torch.float32, low=-3, high=3):
    return make(shape, dtype=dtype, low=low, high=high).sort(dim=-1).values


# -- searchsorted / bucketize ---------------------------------------------------------------

@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("seq_shape,val_shape", [((7,), (5,)), ((7,), (3, 4)), ((1,), (6,)), ((2, 3, 9), (2, 3, 4)),
                                                 ((300,), (2, 70)), ((5,), ()), ((4,), (0,)), ((2, 6), (2, 0))])
def test_searchsorted(device, seq_shape, val_shape, right):
    seq = _sorted(seq_shape)
    vals = make(val_shape, low=-4, high=4)
    check(lambda m, s, v: m.searchsorted(s, v, right=right), seq, vals, device=device)
    check(lambda m, s, v: m.searchsorted(s, v, side="right" if right else "left", out_int32=True), seq, vals,
          device=device)


def test_searchsorted_ties_nan(device):
    seq = torch.tensor([1.0, 2.0, 2.0, 2.0, 3.0, NAN, NAN])
    vals = torch.tensor([2.0, NAN, 0.0, 5.0, -0.0, 3.0, 1.0, float("inf"), -float("inf")])
    for right in (False, True):
        check(lambda m, s, v: m.searchsorted(s, v, right=right), seq, vals, device=device)
    zeros = torch.tensor([-1.0, -0.0, 0.0, 0.0, 1.0])
    check(lambda m, s, v: m.searchsorted(s, v), zeros, torch.tensor([0.0, -0.0]), device=device)
    check(lambda m, s, v: m.searchsorted(s, v, right=True), zeros, torch.tensor([0.0, -0.0]), device=device)


@pytest.mark.parametrize("sdt,vdt", [(torch.int64, torch.int64), (torch.int32, torch.int64), (torch.int64, torch.float32),
                                     (torch.float32, torch.int32), (torch.uint8, torch.uint8), (torch.float16, torch.float16),
                                     (torch.float16, torch.float32), (torch.uint8, torch.int32)])
def test_searchsorted_dtypes(device, sdt, vdt):
    seq = _sorted((2, 12), sdt, low=0, high=9)
    vals = make((2, 5), vdt, low=0, high=9)
    check(lambda m, s, v: m.searchsorted(s, v), seq, vals, device=device)
    check(lambda m, s, v: m.searchsorted(s, v, right=True), seq, vals, device=device)


def test_searchsorted_strided_scalar_sorter(device):
    base = make((9, 8))
    seq = base.sort(dim=0).values
    # non-contiguous sequence (a transposed view) and values
    check(lambda m, s, v: m.searchsorted(s.t(), v.t()[:, ::2]), seq, make((8, 9)), device=device)
    check(lambda m, s: m.searchsorted(s[:, 0], 0.5), seq, device=device)
    check(lambda m, s: m.searchsorted(s[:, 0], 0.5, right=True), seq, device=device)
    check(lambda m, s, v: m.searchsorted(s[:, 0], v), seq, torch.tensor(0.25), device=device)
    unsorted = make((3, 10))
    sorter = unsorted.argsort(dim=-1)
    vals = make((3, 4))
    for right in (False, True):
        check(lambda m, s, v, o: m.searchsorted(s, v, right=right, sorter=o), unsorted, vals, sorter, device=device)
    check(lambda m, s, v, o: m.searchsorted(s, v, sorter=o), unsorted[0], vals, sorter[0], device=device)


def test_searchsorted_empty_sequence(device):
    check(lambda m, s, v: m.searchsorted(s, v), torch.zeros(0), make((3,)), device=device)
    check(lambda m, s, v: m.searchsorted(s, v), torch.zeros(2, 0), make((2, 3)), device=device)


def test_bucketize(device):
    b = torch.tensor([-1.0, 0.0, 0.5, 2.0])
    x = torch.tensor([[-2.0, -1.0, 0.2], [NAN, 2.0, 9.0]])
    for right in (False, True):
        check(lambda m, a, bb: m.bucketize(a, bb, right=right), x, b, device=device)
    check(lambda m, a, bb: m.bucketize(a, bb, out_int32=True), x, b, device=device)
    check(lambda m, bb: m.bucketize(0.3, bb), b, device=device)
    check(lambda m, a, bb: m.bucketize(a, bb), torch.tensor(0.7), b, device=device)
    check(lambda m, a, bb: m.bucketize(a, bb), make((4, 5), torch.int64), torch.tensor([-1, 1, 2]), device=device)


def test_search_errors(device):
    s2 = _sorted((2, 3))
    check(lambda m, s, v: m.searchsorted(s, v), s2, make((2,)), device=device)
    check(lambda m, s, v: m.searchsorted(s, v), s2, make((3, 2)), device=device)
    check(lambda m, s: m.searchsorted(s, 1.0), s2, device=device)
    check(lambda m, s, v: m.searchsorted(s, v), torch.tensor(3.0), make((2,)), device=device)
    check(lambda m, s, v: m.searchsorted(s, v, side="middle"), s2[0], make((2,)), device=device)
    check(lambda m, s, v: m.searchsorted(s, v, side="left", right=True), s2[0], make((2,)), device=device)
    check(lambda m, s, v: m.searchsorted(s, v), torch.tensor([False, True]), torch.tensor([True]), device=device)
    check(lambda m, s, v, o: m.searchsorted(s, v, sorter=o), s2[0], make((2,)), torch.tensor([0, 1]), device=device)
    check(lambda m, s, v, o: m.searchsorted(s, v, sorter=o), s2[0], make((2,)), torch.tensor([0.0, 1, 2]),
          device=device)
    check(lambda m, a, b: m.bucketize(a, b), make((3,)), s2, device=device)


def test_searchsorted_sorter_out_of_range(device):
    """Any sorter entry outside [0, M) raises (on webgpu at the next readback)."""
    s = ours(torch.tensor([3.0, 1.0, 2.0]), device)
    with pytest.raises(RuntimeError):
        torchweb.searchsorted(s, ours(torch.tensor([2.0]), device), sorter=ours(torch.tensor([1, 2, 7]), device)).tolist()
    # the device stays usable
    assert torchweb.searchsorted(s, ours(torch.tensor([2.5]), device)).tolist() == [3]


# -- unique / unique_consecutive ------------------------------------------------------------

def _ties(shape, dtype=torch.float32):
    x = make(shape, dtype=torch.int64, low=-3, high=3).to(dtype)
    if dtype.is_floating_point and x.numel() > 6:
        flat = x.view(-1)
        flat[1] = NAN
        flat[4] = NAN
        flat[2] = -0.0
        flat[5] = 0.0
    return x


def _check_unique(x, device, **kw):
    """unique(x, return_inverse=True, return_counts=True, **kw) as PyTorch's, except which of
    the (distinct) NaN slots each NaN's inverse names: PyTorch's order of NaNs is unspecified
    (its sort is not stable for long inputs), so those are compared as a set."""
    ev, ei, ec = torch.unique(x, return_inverse=True, return_counts=True, **kw)
    v, i, c = torchweb.unique(ours(x, device), return_inverse=True, return_counts=True, **kw)
    assert_close(v, ev)
    assert_close(c, ec)
    gi = torch.tensor(i.tolist(), dtype=torch.int64).reshape(ei.shape)
    nan = x.isnan() if x.dtype.is_floating_point else torch.zeros(x.shape, dtype=torch.bool)
    assert torch.equal(gi[~nan], ei[~nan])
    assert sorted(gi[nan].tolist()) == sorted(ei[nan].tolist())


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 5), (2, 0, 3), (), (1500,)])
def test_unique(device, shape):
    x = _ties(shape)
    check(lambda m, a: m.unique(a), x, device=device)
    _check_unique(x, device)
    check(lambda m, a: m.unique(a, sorted=False, return_counts=True), x, device=device)
    check(lambda m, a: a.unique(return_inverse=True), x.nan_to_num(9.0), device=device)
    check(lambda m, a: m.unique_consecutive(a, return_inverse=True, return_counts=True), x, device=device)
    check(lambda m, a: a.unique_consecutive(return_counts=True), x, device=device)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool, torch.float16])
def test_unique_dtypes(device, dtype):
    x = _ties((4, 9), dtype) if dtype not in (torch.bool, torch.uint8) else make((4, 9), dtype=dtype, low=0, high=3)
    _check_unique(x, device)
    check(lambda m, a: m.unique_consecutive(a.sort(dim=1).values, return_inverse=True, return_counts=True), x,
          device=device)


def test_unique_strided_and_consecutive_runs(device):
    base = _ties((6, 8))
    check(lambda m, a: m.unique(a.t()[::2], return_inverse=True, return_counts=True), base.nan_to_num(5.0),
          device=device)
    runs = torch.tensor([1.0, 1.0, NAN, NAN, 2.0, -0.0, 0.0, 0.0, 1.0, 1.0])
    check(lambda m, a: m.unique_consecutive(a, return_inverse=True, return_counts=True), runs, device=device)
    check(lambda m, a: m.unique_consecutive(a[1::2], return_counts=True), runs, device=device)
    check(lambda m, a: m.unique(a, return_inverse=True, return_counts=True), torch.tensor([0.0, -0.0, 0.0]),
          device=device)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dim(device, dim):
    x = torch.tensor([[1, 2, 1, 2], [3, 1, 3, 1], [1, 2, 1, 2], [0, 5, 0, 7]])
    check(lambda m, a: m.unique(a, dim=dim, return_inverse=True, return_counts=True), x, device=device)
    check(lambda m, a: m.unique_consecutive(a, dim=dim, return_inverse=True, return_counts=True), x, device=device)
    y = make((3, 6, 2), torch.int64, low=0, high=1)
    check(lambda m, a: m.unique(a, dim=dim, return_inverse=True, return_counts=True), y, device=device)
    f = torch.tensor([[1.0, -0.0], [1.0, 0.0], [-2.0, 3.0]])
    check(lambda m, a: m.unique(a, dim=0, return_inverse=True, return_counts=True), f, device=device)


def test_unique_dim_edge(device):
    check(lambda m, a: m.unique(a, dim=0, return_inverse=True, return_counts=True), torch.zeros(0, 2), device=device)
    check(lambda m, a: m.unique(a, dim=0), torch.zeros(2, 0), device=device)
    check(lambda m, a: m.unique(a, dim=0), torch.tensor(1.0), device=device)
    check(lambda m, a: m.unique(a, dim=2), torch.zeros(2, 2), device=device)


def test_unique_no_grad(device):
    x = ours(torch.tensor([1.0, 2.0, 1.0]), device, requires_grad=True)
    u = torchweb.unique(x)
    assert u.requires_grad and type(u.grad_fn).__name__ != "NoneType"
    with pytest.raises(NotImplementedError):
        u.sum().backward()
    c = torchweb.unique_consecutive(x)
    with pytest.raises(NotImplementedError):
        c.sum().backward()
    assert torchweb.unique(x.detach()).requires_grad is False


# -- bincount / histc / histogram -----------------------------------------------------------

@pytest.mark.parametrize("minlength", [0, 3, 12])
def test_bincount(device, minlength):
    x = make((40,), torch.int64, low=0, high=7)
    w = make((40,))
    check(lambda m, a: m.bincount(a, minlength=minlength), x, device=device)
    check(lambda m, a, ww: m.bincount(a, ww, minlength), x, w, device=device)
    check(lambda m, a, ww: a.bincount(weights=ww), x, w, device=device)


def test_bincount_dtypes_edge(device):
    check(lambda m, a: m.bincount(a), make((30,), torch.int32, low=0, high=5), device=device)
    check(lambda m, a: m.bincount(a), make((30,), torch.uint8, low=0, high=5), device=device)
    check(lambda m, a: m.bincount(a[::3]), make((30,), torch.int64, low=0, high=5), device=device)
    check(lambda m, a: m.bincount(a), torch.zeros(0, dtype=torch.int64), device=device)
    check(lambda m, a: m.bincount(a, minlength=4), torch.zeros(0, dtype=torch.int64), device=device)
    check(lambda m, a, w: m.bincount(a, w, 3), torch.zeros(0, dtype=torch.int64), torch.zeros(0), device=device)
    check(lambda m, a: m.bincount(a), torch.tensor([5]), device=device)
    # float16 and integer weights: float32 sums here (PyTorch: float64, which WebGPU lacks)
    x, w = torch.tensor([0, 2, 2, 1]), torch.tensor([0.5, 1.5, 2.0, 1.0])
    got = torchweb.bincount(ours(x, device), ours(w.half(), device))
    assert_close(got, torch.bincount(x, w.half()).float())
    got = torchweb.bincount(ours(x, device), ours(torch.tensor([1, 2, 3, 4]), device))
    assert_close(got, torch.bincount(x, torch.tensor([1, 2, 3, 4])).float())


def test_bincount_errors(device):
    check(lambda m, a: m.bincount(a), torch.tensor([1, -3]), device=device)
    check(lambda m, a: m.bincount(a), torch.tensor([[1, 3]]), device=device)
    check(lambda m, a: m.bincount(a), torch.tensor(2), device=device)
    check(lambda m, a: m.bincount(a), torch.tensor([1.0, 3.0]), device=device)
    check(lambda m, a: m.bincount(a), torch.tensor([True, False]), device=device)
    check(lambda m, a, w: m.bincount(a, w), torch.tensor([1, 3]), torch.tensor([1.0, 2.0, 3.0]), device=device)
    check(lambda m, a: m.bincount(a, minlength=-1), torch.tensor([1, 3]), device=device)


def test_bincount_no_grad(device):
    w = ours(torch.tensor([1.0, 2.0]), device, requires_grad=True)
    r = torchweb.bincount(ours(torch.tensor([1, 0]), device), w)
    assert r.requires_grad
    with pytest.raises(RuntimeError):
        r.sum().backward()


@pytest.mark.parametrize("bins,lo,hi", [(4, 0, 3), (100, 0, 0), (7, -1.5, 2.25), (3, 1, 1), (1, -10, 10)])
def test_histc(device, bins, lo, hi):
    x = make((50,), low=-3, high=3)
    check(lambda m, a: m.histc(a, bins=bins, min=lo, max=hi), x, device=device)
    check(lambda m, a: a.histc(bins, lo, hi), x.reshape(5, 10).t(), device=device)
    edges = torch.tensor([0.0, 1.0, 2.0, 3.0, NAN, -0.0, 3.0000002, -1e-8])
    check(lambda m, a: m.histc(a, bins=3, min=0, max=3), edges, device=device)


def test_histc_edge(device):
    check(lambda m, a: m.histc(a, bins=4), torch.tensor([2.0, 2.0]), device=device)
    check(lambda m, a: m.histc(a, bins=4), torch.zeros(0), device=device)
    check(lambda m, a: m.histc(a, bins=3), torch.tensor(2.0), device=device)
    check(lambda m, a: m.histc(a, bins=5, min=-2, max=2), make((33,)).half(), device=device)
    x = ours(torch.tensor([1.0, 2.0]), device, requires_grad=True)
    assert torchweb.histc(x, bins=3).requires_grad is False


def test_histc_errors(device):
    check(lambda m, a: m.histc(a), torch.tensor([1, 2, 3]), device=device)
    check(lambda m, a: m.histc(a, bins=0), torch.tensor([1.0, 2.0]), device=device)
    check(lambda m, a: m.histc(a, bins=3, min=3, max=1), torch.tensor([1.0, 2.0]), device=device)
    check(lambda m, a: m.histc(a, bins=3), torch.tensor([1.0, NAN, 3.0]), device=device)
    check(lambda m, a: m.histc(a, bins=3), torch.tensor([1.0, float("inf")]), device=device)
    check(lambda m, a: m.histc(a, bins=3, min=0, max=float("inf")), torch.tensor([1.0]), device=device)


def test_histogram(device):
    x = make((60,), low=-2, high=2)
    check(lambda m, a: m.histogram(a, 5), x, device=device)
    check(lambda m, a: m.histogram(a, 7, range=(-1.0, 1.5)), x, device=device)
    check(lambda m, a, w: m.histogram(a, 4, weight=w), x, make((60,), low=0, high=1), device=device)
    check(lambda m, a: m.histogram(a, 6, density=True), x, device=device)
    check(lambda m, a, b: m.histogram(a, b), x, torch.tensor([-2.0, -0.5, 0.0, 0.1, 3.0]), device=device)
    check(lambda m, a, b: a.histogram(b, density=True), x, torch.tensor([-1.0, 0.0, 1.0]), device=device)
    check(lambda m, a: m.histogram(a, 3), torch.tensor([1.0, 1.0]), device=device)
    check(lambda m, a: m.histogram(a, 3), torch.zeros(0), device=device)


def test_histogram_errors(device):
    x = make((6,))
    check(lambda m, a: m.histogram(a, 3), x.half(), device=device)
    check(lambda m, a, w: m.histogram(a, 3, weight=w), x, torch.arange(6), device=device)
    check(lambda m, a, b: m.histogram(a, b), x, torch.tensor([0, 1, 2]), device=device)
    check(lambda m, a: m.histogram(a, 3, range=(2.0, 1.0)), x, device=device)
    check(lambda m, a: m.histogram(a, 0), x, device=device)
    check(lambda m, a: m.histogram(a, 3), torch.tensor([1.0, NAN]), device=device)


def test_large(device):
    """Past 65535 workgroups of 256 threads: the search and bincount kernels."""
    if device == "cpu":
        pytest.skip("the grid limit is the webgpu kernels'")
    n = 65535 * 256 + 300
    g = torch.Generator().manual_seed(7)
    x = torch.randint(0, 5, (n,), generator=g, dtype=torch.int32)
    xo = fast_ours(x, device)
    assert_close(torchweb.bincount(xo), torch.bincount(x))
    seq = torch.tensor([0, 1, 1, 3], dtype=torch.int32)
    r = torchweb.searchsorted(ours(seq, device), xo, out_int32=True)
    e = torch.searchsorted(seq, x, out_int32=True)
    assert torch.equal(torch.from_numpy(r.numpy()), e)
    # unique_consecutive: flags, a split cumsum, the compaction scatter and counts
    runs = x.sort().values
    v, i, c = torchweb.unique_consecutive(fast_ours(runs, device), return_inverse=True, return_counts=True)
    ev, ei, ec = torch.unique_consecutive(runs, return_inverse=True, return_counts=True)
    assert_close(v, ev)
    assert_close(c, ec)
    assert torch.equal(torch.from_numpy(i.numpy()), ei)
