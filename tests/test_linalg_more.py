"""More linalg and layout ops (issue 7) against PyTorch, forward and backward: diag, diag_embed,
diagflat, block_diag, cartesian_prod, cross / linalg.cross, cdist (every p, both compute paths),
repeat_interleave with a tensor of repeats, trace, tensordot, inner, vdot, chain_matmul /
linalg.multi_dot, linalg.matrix_norm / linalg.norm; bad input raises PyTorch's exception types."""

import warnings

import pytest
import torch

from oracle import check, make
from test_autograd_ops import NoGrad, run_case

INF = float("inf")
TOL = {"rtol": 1e-5, "atol": 1e-5}

# name -> (fn(module, *tensors), input shapes)
CASES = {
    "diag_1d": (lambda m, x: m.diag(x), [(4,)]),
    "diag_1d_up": (lambda m, x: m.diag(x, 2), [(3,)]),
    "diag_1d_down": (lambda m, x: x.diag(-1), [(3,)]),
    "diag_2d": (lambda m, x: m.diag(x), [(3, 4)]),
    "diag_2d_up": (lambda m, x: m.diag(x, 1), [(3, 4)]),
    "diag_2d_down": (lambda m, x: m.diag(x, -2), [(3, 4)]),
    "diag_2d_far": (lambda m, x: m.diag(x, 5), [(3, 4)]),
    "diag_embed": (lambda m, x: m.diag_embed(x), [(2, 3)]),
    "diag_embed_off": (lambda m, x: m.diag_embed(x, 1, 0, 2), [(2, 3)]),
    "diag_embed_neg": (lambda m, x: x.diag_embed(-2, 2, 0), [(2, 3)]),
    "diagflat": (lambda m, x: m.diagflat(x), [(2, 2)]),
    "diagflat_off": (lambda m, x: x.diagflat(-1), [(3,)]),
    "block_diag": (lambda m, a, b, c: m.block_diag(a, b, c), [(2, 3), (), (3,)]),
    "block_diag_one": (lambda m, a: m.block_diag(a), [(2, 2)]),
    "cartesian_prod": (lambda m, a, b, c: m.cartesian_prod(a, b, c), [(2,), (3,), (2,)]),
    "cartesian_prod_one": (lambda m, a: m.cartesian_prod(a), [(3,)]),
    "cross": (lambda m, a, b: m.cross(a, b, dim=1), [(2, 3), (2, 3)]),
    "cross_bcast": (lambda m, a, b: m.linalg.cross(a, b), [(4, 3), (1, 3)]),
    "cross_dim0": (lambda m, a, b: a.cross(b, dim=0), [(3, 2), (3, 2)]),
    "trace": (lambda m, x: m.trace(x), [(3, 4)]),
    "tensordot": (lambda m, a, b: m.tensordot(a, b), [(2, 3, 4), (3, 4, 2)]),
    "tensordot_pairs": (lambda m, a, b: m.tensordot(a, b, dims=([0, 2], [2, 0])), [(2, 3, 4), (4, 2, 2)]),
    "tensordot_0": (lambda m, a, b: m.tensordot(a, b, dims=0), [(2, 3), (2,)]),
    "tensordot_list": (lambda m, a, b: m.tensordot(a, b, dims=[[1], [0]]), [(2, 3), (3, 2)]),
    "inner": (lambda m, a, b: m.inner(a, b), [(2, 3), (4, 3)]),
    "inner_scalar": (lambda m, a, b: a.inner(b), [(2, 3), ()]),
    "vdot": (lambda m, a, b: m.vdot(a, b), [(5,), (5,)]),
    "multi_dot": (lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4, 2)]),
    "multi_dot_vv": (lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4,)]),
    "matrix_norm_fro": (lambda m, x: m.linalg.matrix_norm(x), [(2, 3, 4)]),
    "matrix_norm_1": (lambda m, x: m.linalg.matrix_norm(x, 1), [(2, 3, 4)]),
    "matrix_norm_m1": (lambda m, x: m.linalg.matrix_norm(x, -1, keepdim=True), [(2, 3, 4)]),
    "matrix_norm_inf": (lambda m, x: m.linalg.matrix_norm(x, INF, dim=(0, 2)), [(2, 3, 4)]),
    "matrix_norm_minf": (lambda m, x: m.linalg.matrix_norm(x, -INF, dim=(2, 0), keepdim=True), [(2, 3, 4)]),
    "linalg_norm_2d": (lambda m, x: m.linalg.norm(x, 1), [(3, 4)]),
    "linalg_norm_dims": (lambda m, x: m.linalg.norm(x, INF, dim=(1, 2)), [(2, 3, 4)]),
    "linalg_norm_vec": (lambda m, x: m.linalg.norm(x, 3, dim=1), [(2, 3, 4)]),
    "vector_norm": (lambda m, x: m.linalg.vector_norm(x, 1, dim=(0, 1)), [(2, 3, 4)]),
}


def _quiet(fn):
    def run(*a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*a)
    return run


@pytest.mark.parametrize("name", CASES)
def test_forward(device, name):
    fn, shapes = CASES[name]
    check(_quiet(fn), *[make(s) for s in shapes], device=device, **TOL)


@pytest.mark.parametrize("name", CASES)
def test_backward(device, name):
    fn, shapes = CASES[name]
    run_case(device, _quiet(fn), lambda: tuple(torch.randn(s) for s in shapes))


def test_layouts_dtypes_special(device):
    for layout in ("transposed", "strided"):
        check(lambda m, x: m.diag(x, 1), make((3, 4)), device=device, layout=layout)
        check(lambda m, x: m.diag_embed(x, -1), make((2, 3)), device=device, layout=layout)
        check(lambda m, a, b: m.cross(a, b, dim=0), make((3, 4)), make((3, 4)), device=device, layout=layout)
        check(lambda m, a, b: m.cdist(a, b), make((3, 4)), make((5, 4)), device=device, layout=layout, **TOL)
    check(lambda m, x: m.diag(x), make((4,), special=True), device=device)  # NaN/inf stay on the diagonal
    check(lambda m, x: m.diag_embed(x, 1), make((5,), special=True), device=device)
    check(lambda m, x: m.diag(x), make((3,), dtype=torch.int64), device=device)
    check(lambda m, x: m.diag(x, -1), make((3,), dtype=torch.bool), device=device)
    check(lambda m, x: m.trace(x), make((3, 3), dtype=torch.int32), device=device)
    check(lambda m, a, b: m.block_diag(a, b), make((2,), dtype=torch.int64), make((1, 2)), device=device)
    check(lambda m, a, b: m.tensordot(a, b, 1), make((2, 3), dtype=torch.int64), make((3,), dtype=torch.int64),
          device=device)
    check(lambda m, x: m.diag(x), make((0,)), device=device)
    check(lambda m, x: m.diag(x, 1), make((0, 3)), device=device)
    check(lambda m: m.block_diag(), device=device)
    check(lambda m, x: m.diagflat(x), make(()), device=device)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, INF])
def test_cdist(device, p):
    a, b = make((2, 4, 3)), make((2, 5, 3))
    check(lambda m, x, y: m.cdist(x, y, p=p), a, b, device=device, **TOL)
    check(lambda m, x, y: m.cdist(x, y, p=p), make((2, 1, 4, 3)), make((3, 5, 3)), device=device, **TOL)
    if p != 0:
        run_case(device, lambda T, x, y: T.cdist(x, y, p=p), lambda: (torch.randn(3, 4), torch.randn(2, 4)))


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                  "donot_use_mm_for_euclid_dist"])
def test_cdist_compute_modes(device, mode):
    """PyTorch's matmul expansion (above 25 rows on either side by default) and the direct norm
    round differently: the same path gives the same numbers, duplicated rows included."""
    g = torch.Generator().manual_seed(5)
    a = torch.randn(30, 4, generator=g) * 10
    b = torch.cat([a[:3], torch.randn(4, 4, generator=g) * 10])
    c = torch.randn(6, 4, generator=g) * 10
    for x1 in (a, a[:5]):
        check(lambda m, x, y: m.cdist(x, y, compute_mode=mode), x1, c, device=device, rtol=1e-5, atol=1e-4)
        # duplicated rows: 0 on the direct path; the expansion's rounding (about sqrt(eps) * |a|)
        # where it is used
        direct = mode == "donot_use_mm_for_euclid_dist" or (mode != "use_mm_for_euclid_dist" and len(x1) <= 25)
        check(lambda m, x, y: m.cdist(x, y, compute_mode=mode), x1, b, device=device, rtol=1e-5,
              atol=1e-5 if direct else 2e-2)
    run_case(device, lambda T, x, y: T.cdist(x, y, compute_mode=mode),
             lambda: (torch.randn(27, 3), torch.randn(4, 3)), rtol=1e-3, atol=1e-4)


def test_repeat_interleave_tensor(device):
    x = make((3, 2))
    r = torch.tensor([1, 0, 3])
    check(lambda m, a, k: m.repeat_interleave(a, k, dim=0), x, r, device=device)
    check(lambda m, a, k: a.repeat_interleave(k, dim=1), x, torch.tensor([2, 1], dtype=torch.int32), device=device)
    check(lambda m, a, k: m.repeat_interleave(a, k), x, torch.tensor([1, 2, 0, 1, 1, 2]), device=device)
    check(lambda m, a, k: m.repeat_interleave(a, k, dim=0), x, torch.tensor([2]), device=device)
    check(lambda m, a, k: m.repeat_interleave(a, k, dim=0, output_size=4), x, r, device=device)
    check(lambda m, k: m.repeat_interleave(k), r, device=device)
    run_case(device, lambda T, a, k: T.repeat_interleave(a, k, dim=0),
             lambda: (torch.randn(3, 2), NoGrad(torch.tensor([2, 0, 1]))))


def test_cross_default_dim_warns(device):
    import torchweb
    from oracle import ours
    a, b = make((3, 3)), make((3, 3))
    with pytest.warns(UserWarning, match="deprecated"):
        got = torchweb.cross(ours(a, device), ours(b, device))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, x, y: m.cross(x, y), make((2, 3, 3)), make((2, 3, 3)), device=device, **TOL)
        check(lambda m, x, y: m.cross(x, y), make((4, 3)), make((3,)), device=device)  # dim -1 when ranks differ
    assert got.shape == (3, 3)


def test_chain_matmul(device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, a, b, c: m.chain_matmul(a, b, c), make((2, 3)), make((3, 4)), make((4, 2)), device=device, **TOL)
        check(lambda m, a: m.chain_matmul(a), make((2, 3)), device=device)
        check(lambda m, a, b: m.chain_matmul(a, b), make((2, 3)), make((3,)), device=device)
        run_case(device, _quiet(lambda T, a, b, c: T.chain_matmul(a, b, c)),
                 lambda: (torch.randn(2, 3), torch.randn(3, 4), torch.randn(4, 2)))


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_matrix_norms_of_singular_values(device, ord):
    """'nuc', 2 and -2 through the SVD (ops/linalg_spectral.py), forward and backward."""
    check(lambda m, a: m.linalg.matrix_norm(a, ord), make((2, 3, 4)), device=device, rtol=1e-4, atol=1e-4)
    check(lambda m, a: m.linalg.matrix_norm(a, ord, dim=(2, 0), keepdim=True), make((3, 2, 4)), device=device,
          rtol=1e-4, atol=1e-4)
    check(lambda m, a: m.linalg.norm(a, ord), make((3, 3)), device=device, rtol=1e-4, atol=1e-4)
    run_case(device, lambda T, a: T.linalg.matrix_norm(a, ord), lambda: (torch.randn(2, 4, 3),), rtol=1e-3, atol=1e-4)


BAD = {
    "diag_3d": (lambda m, x: m.diag(x), [(2, 2, 2)]),
    "diag_0d": (lambda m, x: m.diag(x), [()]),
    "diag_embed_same": (lambda m, x: m.diag_embed(x, 0, 1, 1), [(2, 3)]),
    "block_diag_3d": (lambda m, x: m.block_diag(x), [(2, 2, 2)]),
    "cartesian_2d": (lambda m, x: m.cartesian_prod(x), [(2, 2)]),
    "cross_no3": (lambda m, a, b: m.linalg.cross(a, b), [(3, 2), (3, 2)]),
    "cross_ranks": (lambda m, a, b: m.linalg.cross(a, b), [(4, 3), (3,)]),
    "cross_bcast": (lambda m, a, b: m.cross(a, b, dim=1), [(2, 3), (3, 3)]),
    "cdist_1d": (lambda m, a, b: m.cdist(a, b), [(3,), (3,)]),
    "cdist_cols": (lambda m, a, b: m.cdist(a, b), [(2, 3), (2, 4)]),
    "cdist_neg_p": (lambda m, a, b: m.cdist(a, b, p=-1), [(2, 3), (2, 3)]),
    "cdist_mode": (lambda m, a, b: m.cdist(a, b, compute_mode="foo"), [(2, 3), (2, 3)]),
    "cdist_batch": (lambda m, a, b: m.cdist(a, b), [(2, 2, 3), (3, 2, 3)]),
    "trace_1d": (lambda m, x: m.trace(x), [(3,)]),
    "tensordot_neg": (lambda m, a, b: m.tensordot(a, b, dims=-1), [(2, 3), (3,)]),
    "tensordot_size": (lambda m, a, b: m.tensordot(a, b, dims=([1], [0])), [(2, 3), (4, 2)]),
    "tensordot_len": (lambda m, a, b: m.tensordot(a, b, dims=([0, 1], [1])), [(2, 3), (3, 2)]),
    "inner_size": (lambda m, a, b: m.inner(a, b), [(2, 3), (4,)]),
    "vdot_2d": (lambda m, a, b: m.vdot(a, b), [(3, 1), (3,)]),
    "vdot_size": (lambda m, a, b: m.vdot(a, b), [(3,), (4,)]),
    "multi_dot_one": (lambda m, a: m.linalg.multi_dot([a]), [(3, 3)]),
    "multi_dot_3d": (lambda m, a, b: m.linalg.multi_dot([a, b]), [(3, 3), (3, 3, 3)]),
    "multi_dot_size": (lambda m, a, b: m.linalg.multi_dot([a, b]), [(3, 2), (3, 3)]),
    "chain_matmul_1d": (lambda m, a, b: m.chain_matmul(a, b), [(3,), (3, 3)]),
    "matrix_norm_1d": (lambda m, x: m.linalg.matrix_norm(x, 1), [(3,)]),
    "matrix_norm_ord": (lambda m, x: m.linalg.matrix_norm(x, 3), [(3, 3)]),
    "linalg_norm_3d": (lambda m, x: m.linalg.norm(x, 1), [(2, 2, 2)]),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input(device, name):
    fn, shapes = BAD[name]
    check(_quiet(fn), *[make(s) for s in shapes], device=device)


def test_bad_input_dtypes(device):
    check(lambda m, a, b: m.cdist(a, b), make((2, 3), dtype=torch.int64), make((2, 3), dtype=torch.int64), device=device)
    check(lambda m, x: m.linalg.matrix_norm(x), make((2, 3), dtype=torch.int64), device=device)
    x = make((3, 2))
    check(lambda m, a, k: m.repeat_interleave(a, k, dim=0), x, torch.tensor([1, 2]), device=device)
    check(lambda m, a, k: m.repeat_interleave(a, k, dim=0), x, torch.tensor([1, -2, 1]), device=device)
    check(lambda m, a, k: m.repeat_interleave(a, k, dim=0), x, torch.tensor([[1, 2, 1]]), device=device)
    check(lambda m, a, k: m.repeat_interleave(a, k, dim=0), x, torch.tensor([1.0, 2, 1]), device=device)
    check(lambda m, a, k: m.repeat_interleave(a, k, dim=0, output_size=3), x, torch.tensor([1, 2, 1]), device=device)
    check(lambda m, k: m.repeat_interleave(k), torch.tensor([[1, 2], [0, 1]]), device=device)
