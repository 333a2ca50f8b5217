"""Gather and scatter ops (ops/index_ops.py) against PyTorch on both devices: forward on
several shapes, layouts, dtypes and the empty/0-d cases, backward for every differentiable op,
in-place forms, and PyTorch's exception types for bad input (on webgpu an index in a tensor is
checked by the kernel and raises at the next readback)."""

import warnings

import pytest
import torch

import torchweb
from oracle import assert_close, check, make, ours
from test_autograd_ops import NoGrad, run_case

warnings.filterwarnings("ignore", message=".*scatter.*deprecated")


def idx(*shape, high, low=0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g)


def perm_idx(rows, cols, n, dim=0, seed=0):
    """Indices without duplicates along dim (scatter without reduce is then defined)."""
    g = torch.Generator().manual_seed(seed)
    if dim == 0:
        return torch.stack([torch.randperm(n, generator=g)[:rows] for _ in range(cols)], 1)
    return torch.stack([torch.randperm(n, generator=g)[:cols] for _ in range(rows)], 0)


def read(fn):
    """fn, then a readback: GPU-side index errors surface there."""
    def run(m, *a):
        r = fn(m, *a)
        for t in (r if isinstance(r, tuple) else (r,)):
            t.tolist()
        return r
    return run


# -- gather ------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(device, dim, layout):
    x = make((4, 5))
    index = idx(3, 4, high=x.shape[dim])
    check(lambda m, a, i: m.gather(a, dim, i), x, index, device=device, layout=layout)


@pytest.mark.parametrize("dtype", [torch.float16, torch.int32, torch.int64, torch.bool, torch.uint8])
def test_gather_dtypes(device, dtype):
    if dtype is torch.float16 and device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("no shader-f16")
    x = make((3, 4), dtype=dtype, low=0, high=9)
    check(lambda m, a, i: a.gather(1, i), x, idx(3, 6, high=4), device=device)
    check(lambda m, a, i: a.gather(1, i.int()), x, idx(3, 6, high=4), device=device)


def test_gather_shapes(device):
    check(lambda m, a, i: m.gather(a, 0, i), make((5,)), torch.tensor(3), device=device)
    check(lambda m, a, i: m.gather(a, 0, i), make(()), torch.tensor(0), device=device)
    check(lambda m, a, i: m.gather(a, 2, i), make((2, 3, 4)), idx(2, 2, 7, high=4), device=device)
    check(lambda m, a, i: m.gather(a, 1, i), make((2, 3)), torch.zeros(2, 0, dtype=torch.long), device=device)
    check(lambda m, a, i: m.gather(a, 0, i), make((0, 3)), torch.zeros(0, 3, dtype=torch.long), device=device)


@pytest.mark.parametrize("bad", ["negative", "too_big", "float_index", "rank", "size"])
def test_gather_errors(device, bad):
    x = make((3, 4))
    i = {"negative": torch.tensor([[-1, 0]]), "too_big": torch.tensor([[0], [3]]), "float_index": torch.tensor([[0.0]]),
         "rank": torch.tensor([0]), "size": torch.zeros(2, 5, dtype=torch.long)}[bad]
    check(read(lambda m, a, i: m.gather(a, 0, i)), x, i, device=device)


def test_take_along_dim(device):
    x = make((3, 4))
    check(lambda m, a, i: m.take_along_dim(a, i, 1), x, torch.tensor([[2], [0], [-1]]), device=device)
    check(lambda m, a, i: m.take_along_dim(a, i, 0), x, torch.tensor([[2, 1, 0, 1]]), device=device)
    check(lambda m, a, i: m.take_along_dim(a, i), x, torch.tensor([11, 0, 2]), device=device)
    check(read(lambda m, a, i: m.take_along_dim(a, i)), x, torch.tensor([11, 0, -2]), device=device)
    check(lambda m, a, i: a.take_along_dim(i, dim=1), x, idx(1, 5, high=4), device=device)
    check(read(lambda m, a, i: m.take_along_dim(a, i, 1)), x, torch.tensor([[2]], dtype=torch.int32), device=device)


# -- scatter ---------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_src(device, dim, layout):
    x, src = make((4, 5)), make((3, 6))
    index = perm_idx(3, 5, x.shape[dim], dim) if dim == 0 else perm_idx(3, 4, 5, dim)
    check(lambda m, a, i, s: m.scatter(a, dim, i, s), x, index, src, device=device, layout=layout)
    check(lambda m, a, i, s: a.clone().scatter_(dim, i, s), x, index, src, device=device, layout=layout)


def test_scatter_value_and_reduce(device):
    x, src = make((4, 5)), make((3, 5))
    i = idx(3, 5, high=4)
    check(lambda m, a, i: m.scatter(a, 0, i, 2.5), x, perm_idx(3, 5, 4), device=device)
    check(lambda m, a, i: a.scatter(0, i, value=-1), x, perm_idx(3, 5, 4), device=device)
    check(lambda m, a, i, s: m.scatter(a, 0, i, s, reduce="add"), x, i, src, device=device)
    check(lambda m, a, i, s: m.scatter(a, 0, i, s, reduce="multiply"), x, i, src, device=device)
    check(lambda m, a, i: a.clone().scatter_(0, i, 3.0, reduce="multiply"), x, i, device=device)
    check(lambda m, a, i: m.scatter(a, 0, i, 7), make((4, 5), torch.int64, -9, 9), perm_idx(3, 5, 4), device=device)
    check(lambda m, a, i: m.scatter(a, 0, i, 2.7), make((4, 5), torch.int64, -9, 9), perm_idx(3, 5, 4), device=device)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64, torch.uint8, torch.bool])
def test_scatter_add(device, dtype):
    if dtype is torch.float16 and device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("no shader-f16")
    x = make((4, 5), dtype, 0, 9)
    src = make((6, 5), dtype, 0, 9)
    i = idx(6, 5, high=4)
    check(lambda m, a, i, s: m.scatter_add(a, 0, i, s), x, i, src, device=device, rtol=1e-3, atol=1e-2)
    check(lambda m, a, i, s: a.scatter_add_(0, i, s), x, i, src, device=device, rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32])
def test_scatter_reduce(device, reduce, include_self, dtype):
    x = make((4, 3), dtype, -4, 4)
    src = make((5, 3), dtype, -4, 4)
    i = idx(5, 3, high=4, seed=3)
    check(lambda m, a, i, s: m.scatter_reduce(a, 0, i, s, reduce, include_self=include_self), x, i, src,
          device=device, rtol=1e-4)
    check(lambda m, a, i, s: a.scatter_reduce_(1, i.t()[:, :2] % 3, s.t()[:, :2], reduce, include_self=include_self),
          x.t().contiguous(), i, src, device=device, rtol=1e-4)


def test_scatter_reduce_special(device):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([1.0, nan, -inf, 4.0])
    src = torch.tensor([nan, 6.0, inf, 0.0, -0.0])
    i = torch.tensor([0, 0, 2, 3, 3])
    for r in ("sum", "prod", "amax", "amin"):
        check(lambda m, a, i, s: m.scatter_reduce(a, 0, i, s, r), x, i, src, device=device)
    check(lambda m, a, i, s: m.scatter_reduce(a, 0, i, s, "mean"), torch.tensor([-1, 2]), torch.tensor([0, 0]),
          torch.tensor([-3, 0]), device=device)   # integer means round down
    check(read(lambda m, a, i, s: m.scatter_reduce(a, 0, i, s, "mean")), torch.tensor([True]), torch.tensor([0]),
          torch.tensor([True]), device=device)


@pytest.mark.parametrize("bad", ["dtype", "oob", "negative", "src_small", "reduce", "index_dtype"])
def test_scatter_errors(device, bad):
    x = make((3, 4))
    i, s, fn = torch.tensor([[1, 2]]), make((1, 2)), lambda m, a, i, s: m.scatter(a, 0, i, s)
    if bad == "dtype":
        s = s.long()
    elif bad == "oob":
        i = torch.tensor([[3, 0]])
    elif bad == "negative":
        i = torch.tensor([[-1, 0]])
    elif bad == "src_small":
        s = make((1, 1))
    elif bad == "reduce":
        fn = lambda m, a, i, s: m.scatter(a, 0, i, s, reduce="max")  # noqa: E731
    else:
        i = i.float()
    check(read(fn), x, i, s, device=device)
    check(read(lambda m, a, i, s: m.scatter_add(a, 0, i, s)), x, i, s, device=device)
    check(read(lambda m, a, i, s: m.scatter_reduce(a, 0, i, s, "amax")), x, i, s, device=device)


def test_scatter_add_int64_past_int32(device):
    x = torch.tensor([2**31 - 1, 5])
    i, s = torch.tensor([0, 0, 1]), torch.tensor([1, -3, 2])
    if device == "webgpu":   # PyTorch's 2**31 - 3 fits only after the -3: exact 64-bit sums
        assert_close(torchweb.scatter_add(ours(x, device), 0, ours(i, device), ours(s, device)),
                     torch.scatter_add(x, 0, i, s))
        with pytest.raises(torchweb.webgpu.Int64RangeError):
            torchweb.scatter_add(ours(x, device), 0, ours(i[:1], device), ours(s[:1], device)).tolist()
    else:
        check(lambda m, a, i, s: m.scatter_add(a, 0, i, s), x, i[:1], s[:1], device=device)


def test_scatter_add_many_duplicates_and_big_grid(device):
    """One 2^24 + 3-element scatter (a grid past 65535 workgroups) into 7 slots: every add of a
    CAS loop must land (integers, so the sum is exact whatever the order)."""
    n = (1 << 24) + 3
    i = torch.arange(n) % 7
    s = torch.ones(n, dtype=torch.int32)
    got = torchweb.zeros(7, dtype=torchweb.int32, device=device).scatter_add_(
        0, torchweb.arange(n, device=device) % 7, torchweb.ones(n, dtype=torchweb.int32, device=device))
    assert got.tolist() == torch.zeros(7, dtype=torch.int32).scatter_add_(0, i, s).tolist()
    f = torchweb.zeros(7, device=device).scatter_add_(0, torchweb.arange(70000, device=device) % 7,
                                                      torchweb.ones(70000, device=device))
    assert f.tolist() == [10000.0] * 7


# -- index_select, take, put ----------------------------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_index_select(device, layout):
    x = make((4, 5))
    for d, i in ((0, torch.tensor([3, 0, 0, 2])), (1, torch.tensor([4, 1], dtype=torch.int32)), (-1, torch.tensor(2)),
                 (0, torch.zeros(0, dtype=torch.long))):
        check(lambda m, a, i: m.index_select(a, d, i), x, i, device=device, layout=layout)
    check(read(lambda m, a, i: m.index_select(a, 0, i)), x, torch.tensor([4]), device=device)
    check(read(lambda m, a, i: m.index_select(a, 0, i)), x, torch.tensor([-1]), device=device)
    check(read(lambda m, a, i: m.index_select(a, 0, i)), x, torch.tensor([[1]]), device=device)


def test_take_and_put(device):
    x = make((3, 4))
    check(lambda m, a, i: m.take(a, i), x, torch.tensor([[0, -1], [11, 5]]), device=device)
    check(lambda m, a, i: m.take(a, i), x, torch.tensor(7), device=device, layout="transposed")
    check(read(lambda m, a, i: m.take(a, i)), x, torch.tensor([12]), device=device)
    check(read(lambda m, a, i: m.take(a, i)), x, torch.tensor([1], dtype=torch.int32), device=device)
    i, s = torch.tensor([0, 5, -1]), torch.tensor([1.0, 2.0, 3.0])
    check(lambda m, a, i, s: a.clone().put_(i, s), x, i, s, device=device)
    check(lambda m, a, i, s: m.put(a, i, s, accumulate=True), x, torch.tensor([0, 0, -1]), s, device=device)
    check(lambda m, a, i, s: a.put_(i, s), x, i, s, device=device, layout="transposed")
    check(read(lambda m, a, i, s: a.put_(i, s)), x, torch.tensor([0, 12, 1]), s, device=device)
    check(read(lambda m, a, i, s: a.put_(i, s)), x, torch.tensor([0, 1]), s, device=device)
    check(read(lambda m, a, i, s: a.put_(i, s)), x, i, s.long(), device=device)


# -- index_add, index_copy, index_fill -----------------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_index_add_copy_fill(device, layout):
    x = make((4, 5))
    check(lambda m, a, i, s: a.index_add_(1, i, s, alpha=2), x, torch.tensor([0, 0, 4]), make((4, 3)), device=device, layout=layout)
    check(lambda m, a, i, s: m.index_add(a, 0, i, s), x, torch.tensor([3, 3], dtype=torch.int32), make((2, 5)), device=device, layout=layout)
    check(lambda m, a, i, s: a.index_copy_(0, i, s), x, torch.tensor([2, 0]), make((2, 5)), device=device, layout=layout)
    check(lambda m, a, i, s: m.index_copy(a, 1, i, s), x, torch.tensor([4, 1, 2]), make((4, 3)), device=device, layout=layout)
    check(lambda m, a, i: a.index_fill_(1, i, -1.5), x, torch.tensor([0, -1]), device=device, layout=layout)
    check(lambda m, a, i, v: m.index_fill(a, 0, i, v), x, torch.tensor([2]), torch.tensor(7.0), device=device, layout=layout)
    check(lambda m, a, i, s: a.index_add_(0, i, s, alpha=2.5), make((3,), torch.int64, -5, 5),
          torch.tensor([0, 0]), torch.tensor([3, 1]), device=device)
    check(lambda m, a, i, s: a.index_add_(0, i, s), make(()), torch.tensor([0]), make(()), device=device)


@pytest.mark.parametrize("bad", ["oob", "negative", "dtype", "count", "index_dtype"])
def test_index_add_copy_fill_errors(device, bad):
    x = make((3, 4))
    i, s = torch.tensor([0, 2]), make((2, 4))
    if bad == "oob":
        i = torch.tensor([0, 3])
    elif bad == "negative":
        i = torch.tensor([0, -1])
    elif bad == "dtype":
        s = s.long()
    elif bad == "count":
        s = make((3, 4))
    else:
        i = i.int()
    check(read(lambda m, a, i, s: a.index_add_(0, i, s)), x, i, s, device=device)
    check(read(lambda m, a, i, s: a.index_copy_(0, i, s)), x, i, s, device=device)
    check(read(lambda m, a, i: a.index_fill_(0, i, 2.0)), x, i, device=device)
    check(read(lambda m, a, i: a.index_fill_(0, i, m.tensor([2.0]))), x, i, device=device)


# -- masks ---------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_nonzero(device, layout):
    nan = float("nan")
    for x in (torch.tensor([[0.0, 1.0, -0.0], [nan, 0.0, 2.0]]), make((3, 4, 2), torch.int64, -1, 1),
              make((5, 3), torch.bool), torch.zeros(0, 3), torch.tensor(3.0), torch.tensor(0)):
        check(lambda m, a: m.nonzero(a), x, device=device, layout=layout)
        check(lambda m, a: a.nonzero(as_tuple=True), x, device=device, layout=layout)
        check(lambda m, a: m.argwhere(a), x, device=device, layout=layout)
    r = torchweb.nonzero(torchweb.tensor([[0, 1], [1, 1]], device=device))
    assert r.stride() == torch.nonzero(torch.tensor([[0, 1], [1, 1]])).stride()


def test_nonzero_big(device):
    """Past 65535 workgroups: the running count and the compaction over 2^24 + 5 elements."""
    n = (1 << 24) + 5
    got = torchweb.nonzero(torchweb.arange(n, device=device) % 1000000 == 7)
    assert got.reshape(-1).tolist() == list(range(7, n, 1000000))


def test_masked(device):
    x = make((3, 4))
    m = make((3, 4), torch.bool)
    check(lambda m_, a, k: m_.masked_select(a, k), x, m, device=device, layout="transposed")
    check(lambda m_, a, k: m_.masked_select(a, k), x, m[0], device=device)
    check(lambda m_, a, k: m_.masked_select(a, k), x[0], m, device=device)
    check(lambda m_, a, k: a.masked_fill(k, 2.5), x, m, device=device, layout="strided")
    check(lambda m_, a, k: a.masked_fill(k, float("nan")), x, m[1], device=device)
    check(lambda m_, a, k, v: a.masked_fill(k, v), x, m, torch.tensor(-1.0), device=device)
    check(lambda m_, a, k: a.masked_fill_(k, 3), x, m, device=device, layout="transposed")
    check(lambda m_, a, k: a.masked_fill(k, 3.7), make((3, 4), torch.int64), m, device=device)
    check(lambda m_, a, k: a.masked_fill(k, 2.0), x[0], m, device=device)
    check(lambda m_, a, k, s: a.masked_scatter(k, s), x, m, make((12,)), device=device)
    check(lambda m_, a, k, s: a.masked_scatter_(k, s), x, m[1], make((3, 5)), device=device, layout="transposed")
    check(lambda m_, a, k, s: a.masked_scatter(k, s), x[0], m, make((12,)), device=device)


@pytest.mark.parametrize("bad", ["mask_dtype", "value_dim", "short_source", "source_dtype", "bcast"])
def test_masked_errors(device, bad):
    x, m, s = make((3, 4)), make((3, 4), torch.bool), make((12,))
    v = 1.0
    if bad == "mask_dtype":
        m = m.to(torch.uint8)
    elif bad == "value_dim":
        v = torch.tensor([1.0])
    elif bad == "short_source":
        m, s = torch.ones(3, 4, dtype=torch.bool), make((5,))
    elif bad == "source_dtype":
        s = s.long()
    else:
        m = torch.ones(2, 3, 4, dtype=torch.bool)
    check(read(lambda m_, a, k, s: a.masked_scatter(k, s)), x, m, s, device=device)
    if isinstance(v, torch.Tensor):
        check(read(lambda m_, a, k, v: a.masked_fill_(k, v)), x, m, v, device=device)
    else:
        check(read(lambda m_, a, k: a.masked_fill_(k, v)), x, m, device=device)
    if bad != "bcast":
        check(read(lambda m_, a, k: m_.masked_select(a, k)), x, m, device=device)


# -- gradients -------------------------------------------------------------------------------
I = NoGrad  # noqa: E741  (an index input)
GRADS = {
    "gather": (lambda m, x: m.gather(x, 1, m.tensor([[0, 0, 3], [2, 1, 1]]).to(x.device)), lambda: [torch.randn(2, 4)]),
    "take_along_dim": (lambda m, x, i: m.take_along_dim(x, i, 1), lambda: [torch.randn(3, 4), I(torch.tensor([[0], [-1], [2]]))]),
    "take_along_dim_flat": (lambda m, x, i: m.take_along_dim(x, i), lambda: [torch.randn(3, 4), I(torch.tensor([0, 0, 11]))]),
    "scatter_src": (lambda m, x, i, s: m.scatter(x, 0, i, s), lambda: [torch.randn(4, 3), I(perm_idx(2, 3, 4)), torch.randn(2, 3)]),
    "scatter_value": (lambda m, x, i: m.scatter(x, 1, i, 2.0), lambda: [torch.randn(3, 4), I(perm_idx(3, 2, 4, dim=1))]),
    "scatter_add": (lambda m, x, i, s: m.scatter_add(x, 0, i, s), lambda: [torch.randn(4, 3), I(idx(5, 3, high=4)), torch.randn(5, 3)]),
    "index_select": (lambda m, x, i: m.index_select(x, 1, i), lambda: [torch.randn(3, 4), I(torch.tensor([3, 3, 0]))]),
    "take": (lambda m, x, i: m.take(x, i), lambda: [torch.randn(3, 4), I(torch.tensor([[0, 0], [-1, 5]]))]),
    "put": (lambda m, x, i, s: m.put(x, i, s), lambda: [torch.randn(3, 4), I(torch.tensor([0, 5, -1])), torch.randn(3)]),
    "put_acc": (lambda m, x, i, s: m.put(x, i, s, accumulate=True), lambda: [torch.randn(3, 4), I(torch.tensor([0, 0, -1])), torch.randn(3)]),
    "index_add": (lambda m, x, i, s: m.index_add(x, 0, i, s, alpha=-2), lambda: [torch.randn(3, 4), I(torch.tensor([2, 2])), torch.randn(2, 4)]),
    "index_copy": (lambda m, x, i, s: m.index_copy(x, 1, i, s), lambda: [torch.randn(3, 4), I(torch.tensor([3, 0])), torch.randn(3, 2)]),
    "index_fill": (lambda m, x, i: m.index_fill(x, 1, i, 2.0), lambda: [torch.randn(3, 4), I(torch.tensor([3, -4]))]),
    "index_fill_tensor": (lambda m, x, i, v: m.index_fill(x, 1, i, v), lambda: [torch.randn(3, 4), I(torch.tensor([1])), torch.randn(())]),
    "masked_fill": (lambda m, x, k: m.masked_fill(x, k, 2.0), lambda: [torch.randn(3, 4), I(torch.randn(4) > 0)]),
    "masked_fill_tensor": (lambda m, x, k, v: m.masked_fill(x, k, v), lambda: [torch.randn(4), I(torch.randn(3, 4) > 0), torch.randn(())]),
    "masked_select": (lambda m, x, k: m.masked_select(x, k), lambda: [torch.randn(4), I(torch.randn(3, 4) > 0)]),
    "masked_scatter": (lambda m, x, k, s: m.masked_scatter(x, k, s), lambda: [torch.randn(3, 4), I(torch.randn(3, 4) > 0), torch.randn(15)]),
    "inplace_chain": (lambda m, x, i, s: (x * 1).scatter_add_(0, i, s).index_fill_(1, m.tensor([0]).to(x.device), 0.0) * 2,
                      lambda: [torch.randn(4, 3), I(idx(5, 3, high=4)), torch.randn(5, 3)]),
}


@pytest.mark.parametrize("name", GRADS)
def test_gradients(device, name):
    fn, inputs = GRADS[name]
    run_case(device, fn, inputs)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients(device, reduce, include_self):
    def inputs():
        x = torch.tensor([[1.0, 0.0, 2.0], [3.0, -1.0, 0.5], [2.0, 2.0, 0.0], [0.5, 4.0, 1.0]])
        s = torch.tensor([[2.0, 0.0, 0.0], [1.0, 4.0, 0.0], [2.0, 4.0, 3.0]])   # ties, zeros
        return [x, I(torch.tensor([[0, 1, 2], [0, 1, 2], [3, 1, 2]])), s]
    run_case(device, lambda m, x, i, s: m.scatter_reduce(x, 0, i, s, reduce, include_self=include_self), inputs)


def test_scatter_reduce_legacy_has_no_gradient(device):
    x = torchweb.randn(3, 2, device=device, requires_grad=True)
    y = torchweb.scatter(x, 0, torchweb.tensor([[0, 1]], device=device), 2.0, reduce="multiply")
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()


def test_inplace_checks(device):
    leaf = torchweb.randn(3, 4, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.index_fill_(1, torchweb.tensor([0], device=device), 0.0)
    base = torchweb.randn(3, 4, device=device, requires_grad=True)
    y = base * 1
    y[1].masked_fill_(torchweb.tensor([True, False, True, False], device=device), 5.0)
    y.sum().backward()
    t = torch.ones(3, 4)
    t[1, 0] = t[1, 2] = 0
    assert base.grad.tolist() == t.tolist()
    assert y.grad_fn.name() == "torch::autograd::CopySlices"


def test_node_names(device):
    x = torchweb.randn(3, 4, device=device, requires_grad=True)
    i = torchweb.tensor([[0, 1, 2, 0]], device=device)
    names = {
        "GatherBackward0": torchweb.gather(x, 0, i), "ScatterBackward0": x.scatter(0, i, x[:1]),
        "ScatterBackward1": x.scatter(0, i, 1.0), "ScatterAddBackward0": x.scatter_add(0, i, x[:1]),
        "ScatterReduceBackward0": x.scatter_reduce(0, i, x[:1], "amax"),
        "IndexSelectBackward0": x.index_select(0, i[0]), "TakeBackward0": x.take(i),
        "MaskedSelectBackward0": x.masked_select(x > 0), "MaskedFillBackward0": x.masked_fill(x > 0, 1.0),
        "IndexFillBackward0": x.index_fill(0, i[0], 1.0), "PutBackward0": x.put(i, x[:1]),
    }
    for name, y in names.items():
        assert y.grad_fn.name() == name
