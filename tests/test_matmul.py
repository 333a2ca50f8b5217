"""mm, bmm, matmul (batch broadcasting, 1-D cases), addmm, linear, mv, dot, against PyTorch:
odd sizes around the 64x64 tile, transposed and strided operands, empty dims, integers."""

import pytest
import torch

import torchweb
from oracle import LAYOUTS, assert_close, check, make, ours, ours_layout

# float32 dot products of up to ~200 terms in another order: a few ulp of the sum of |terms|
TOL = {"rtol": 1e-5, "atol": 1e-4}

MM_SHAPES = [(1, 1, 1), (2, 3, 4), (7, 5, 3), (63, 64, 65), (65, 17, 130), (128, 64, 1), (1, 200, 3),
             (0, 3, 4), (3, 0, 4), (3, 4, 0)]


@pytest.mark.parametrize("mkn", MM_SHAPES, ids=str)
def test_mm(device, mkn):
    m, k, n = mkn
    a, b = make((m, k)), make((k, n))
    check(lambda M, x, y: M.mm(x, y), a, b, device=device, **TOL)
    check(lambda M, x, y: x @ y, a, b, device=device, **TOL)


@pytest.mark.parametrize("layouts", [(la, lb) for la in LAYOUTS for lb in LAYOUTS], ids=str)
def test_mm_strided(device, layouts):
    a, b = make((33, 20)), make((20, 70))
    x, y = ours_layout(a, device, layouts[0]), ours_layout(b, device, layouts[1])
    assert_close(torchweb.mm(x, y), torch.mm(a, b), **TOL)


def test_mm_of_views(device):
    a, b = make((10, 12)), make((12, 9))
    check(lambda M, x, y: x.t().t() @ y, a, b, device=device, **TOL)
    check(lambda M, x, y: y.t() @ x.t(), a, b, device=device, **TOL)
    check(lambda M, x, y: x[::2, 1:] @ y[1:, ::3], a, b, device=device, **TOL)
    check(lambda M, x, y: x[2:5] @ y, a, b, device=device, **TOL)
    check(lambda M, x: x[:, :1].expand(10, 12) @ x.t()[:, :4], a, device=device, **TOL)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float16], ids=str)
def test_mm_dtypes(device, dtype):
    a, b = make((9, 13), dtype, low=-5, high=5), make((13, 6), dtype, low=-5, high=5)
    tol = {"rtol": 2e-3, "atol": 2e-2} if dtype is torch.float16 else {}  # half: fp32 accumulate, one rounding
    check(lambda M, x, y: M.mm(x, y), a, b, device=device, **tol)


def test_mm_mixed_dtypes_refused(device):
    check(lambda M, x, y: M.mm(x, y), make((2, 3)), make((3, 2), torch.int64), device=device)
    check(lambda M, x, y: M.matmul(x, y), make((2, 3), torch.int32), make((3, 2)), device=device)


@pytest.mark.parametrize("shapes", [((3, 4, 5), (3, 5, 2)), ((1, 1, 1), (1, 1, 1)), ((5, 65, 3), (5, 3, 66)),
                                    ((0, 2, 3), (0, 3, 4)), ((2, 0, 3), (2, 3, 4))], ids=str)
def test_bmm(device, shapes):
    a, b = make(shapes[0]), make(shapes[1])
    check(lambda M, x, y: M.bmm(x, y), a, b, device=device, **TOL)
    check(lambda M, x, y: x.bmm(y), a, b, device=device, layout="transposed", **TOL)


MATMUL_SHAPES = [
    ((3,), (3,)), ((0,), (0,)), ((3,), (3, 4)), ((2, 3), (3,)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)),
    ((2, 3), (3, 4)), ((4, 2, 3), (3, 5)), ((2, 3), (4, 3, 5)), ((2, 1, 2, 3), (3, 3, 2)),
    ((2, 1, 4, 2, 3), (1, 3, 1, 3, 4)), ((1, 2, 3), (7, 3, 2)), ((6, 1, 7, 8), (5, 8, 9)),
    ((2, 0, 3), (3, 4)), ((2, 3, 0), (0, 4)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_broadcast(device, shapes):
    a, b = make(shapes[0]), make(shapes[1])
    check(lambda M, x, y: M.matmul(x, y), a, b, device=device, **TOL)
    check(lambda M, x, y: x @ y, a, b, device=device, layout="strided", **TOL)


def test_matmul_batch_strided(device):
    a, b = make((4, 6, 5)), make((5, 4, 3))
    check(lambda M, x, y: x.transpose(0, 1) @ y, a, b, device=device, **TOL)
    check(lambda M, x, y: x.permute(2, 0, 1)[:, ::2] @ y.transpose(0, 2)[..., :1, :], a, b, device=device, **TOL)


def test_matmul_bad_shapes(device):
    for sa, sb in [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3, 4), (5, 6)), ((2, 3), (4,)), ((), (3,)),
                   ((2, 3, 4), (3, 4, 5)), ((3, 2, 4), (2, 4, 1))]:
        check(lambda M, x, y: M.matmul(x, y), make(sa), make(sb), device=device, **TOL)
    check(lambda M, x, y: M.mm(x, y), make((2, 3, 1)), make((3, 1)), device=device)
    check(lambda M, x, y: M.bmm(x, y), make((2, 3)), make((3, 1)), device=device)
    check(lambda M, x, y: M.bmm(x, y), make((2, 2, 3)), make((3, 3, 1)), device=device)


def test_mv_dot(device):
    check(lambda M, x, y: M.mv(x, y), make((5, 7)), make((7,)), device=device, **TOL)
    check(lambda M, x, y: x.mv(y), make((5, 7)), make((7,)), device=device, layout="transposed", **TOL)
    check(lambda M, x, y: M.dot(x, y), make((9,)), make((9,)), device=device, **TOL)
    check(lambda M, x, y: M.dot(x, y), make((9,), torch.int64), make((9,), torch.int64), device=device)
    check(lambda M, x, y: M.dot(x, y), make((9,)), make((8,)), device=device)


@pytest.mark.parametrize("ab", [(1, 1), (0.5, 2.0), (0, 1), (1, 0), (-1, 3)], ids=str)
@pytest.mark.parametrize("inp", [(4, 5), (5,), (1, 5), (4, 1), ()], ids=str)
def test_addmm(device, ab, inp):
    beta, alpha = ab
    i, a, b = make(inp), make((4, 3)), make((3, 5))
    check(lambda M, c, x, y: M.addmm(c, x, y, beta=beta, alpha=alpha), i, a, b, device=device, **TOL)
    check(lambda M, c, x, y: c.addmm(x, y, beta=beta, alpha=alpha) if c.dim() == 2 else M.addmm(c, x, y),
          i, a, b, device=device, **TOL)


def test_addmm_beta_zero_ignores_nan(device):
    i = torch.full((2, 2), float("nan"))
    check(lambda M, c, x, y: M.addmm(c, x, y, beta=0), i, make((2, 3)), make((3, 2)), device=device, **TOL)


@pytest.mark.parametrize("shapes", [((5, 3), (4, 3), (4,)), ((2, 5, 3), (4, 3), None), ((3,), (4, 3), (4,)),
                                    ((2, 3, 5, 3), (7, 3), (7,)), ((0, 3), (4, 3), (4,)), ((5, 3), (3,), None),
                                    ((5, 3), (3,), ())], ids=str)
def test_linear(device, shapes):
    import torch.nn.functional as TF
    import torchweb.nn.functional as F  # torchweb.nn.functional.linear, as PyTorch users call it
    x, w = make(shapes[0]), make(shapes[1])
    b = make(shapes[2]) if shapes[2] is not None else None
    args = (x, w) if b is None else (x, w, b)
    check(lambda M, *a: (TF if M is torch else F).linear(*a), *args, device=device, **TOL)


def test_linear_shape_mismatch(device):
    import torch.nn.functional as TF
    import torchweb.nn.functional as F
    check(lambda M, x, w: (TF if M is torch else F).linear(x, w), make((5, 3)), make((4, 2)), device=device)


def test_matmul_nan_inf(device):
    a = torch.tensor([[1.0, float("nan")], [float("inf"), 1.0], [0.0, 1.0]])
    b = torch.tensor([[1.0, 0.0], [2.0, float("-inf")]])
    check(lambda M, x, y: x @ y, a, b, device=device)


def test_matmul_common_case_path(device):
    """matmul's common-case path (ops/linalg._matmul_fast): a batch folded into the rows of one
    product from a view with an offset, equal batches, and both under autograd (which takes the
    general path for the fold), against PyTorch's values and gradients."""
    big, w, bb = make((3, 4, 5, 6)), make((6, 7)), make((4, 6, 2))
    check(lambda M, x, y: x[1] @ y, big, w, device=device, **TOL)
    check(lambda M, x, y: x[2, 1:3] @ y, big, w, device=device, **TOL)
    check(lambda M, x, y: x[1] @ y, big, bb, device=device, **TOL)
    for other in (w, bb):
        x, y = ours(big, device, requires_grad=True), ours(other, device, requires_grad=True)
        tx, ty = big.clone().requires_grad_(), other.clone().requires_grad_()
        out = x[1] @ y
        tout = tx[1] @ ty
        assert_close(out, tout, **TOL)
        assert out.grad_fn is not None
        (out * out).sum().backward()
        (tout * tout).sum().backward()
        assert_close(x.grad, tx.grad, rtol=1e-4, atol=1e-3)
        assert_close(y.grad, ty.grad, rtol=1e-4, atol=1e-3)
    with torchweb.no_grad():
        x = ours(big, device, requires_grad=True)
        assert (x[1] @ ours(w, device)).grad_fn is None
