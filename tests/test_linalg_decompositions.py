"""torch.linalg's decompositions and solvers against PyTorch, forward and backward, on both
devices, batched: cholesky, solve_triangular, lu_factor / lu / lu_solve, solve, inv, det,
slogdet, qr, eigh, svd and their _ex forms; errors (shapes, dtypes, LinAlgError) as PyTorch's.

Inputs are seeded and well conditioned (a random matrix plus n I; X X^T + n I for a
positive-definite one). Tolerances (float32): values rtol 1e-4 / atol 1e-4, gradients
rtol 1e-3 / atol 1e-4. Eigenvectors and singular vectors are unique up to sign: ours are
aligned to PyTorch's column by column before comparing, and gradients are checked through
functions that do not depend on the signs."""

import warnings

import pytest
import torch

import torchweb
from oracle import assert_close, ours
from test_autograd_ops import run_case
from test_linalg_more import _quiet

VAL = {"rtol": 1e-4, "atol": 1e-4}
GRAD = {"rtol": 1e-3, "atol": 1e-4}


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def square(*shape, seed=0):
    """A well-conditioned batch of square matrices: randn + n I."""
    n = shape[-1]
    return torch.randn(*shape, generator=_gen(seed)) + n * torch.eye(n)


def spd(*shape, seed=0):
    """A batch of positive-definite matrices: X X^T + n I."""
    x = torch.randn(*shape, generator=_gen(seed))
    return x @ x.mT + shape[-1] * torch.eye(shape[-1])


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=_gen(seed))


def _forward(device, fn, *inputs, **tol):
    expected = fn(torch, *inputs)
    got = fn(torchweb, *[ours(t, device) for t in inputs])
    assert_close(got, expected, **(tol or VAL))
    return got


# -- values -----------------------------------------------------------------------------------------

FORWARD = {
    "cholesky": (lambda m, a: m.linalg.cholesky(a), [spd(2, 4, 4)]),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(a, upper=True), [spd(3, 3, seed=1)]),
    "cholesky_1x1": (lambda m, a: m.linalg.cholesky(a), [spd(1, 1, seed=2)]),
    "cholesky_empty_batch": (lambda m, a: m.linalg.cholesky(a), [torch.zeros(0, 3, 3)]),
    "cholesky_ex": (lambda m, a: tuple(m.linalg.cholesky_ex(a)), [spd(2, 3, 3, seed=3)]),
    "solve_triangular_upper": (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
                               [square(2, 4, 4), rand(2, 4, 3)]),
    "solve_triangular_lower_right": (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, left=False),
                                     [square(4, 4, seed=1), rand(2, 3, 4)]),
    "solve_triangular_unit": (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
                              [square(3, 3, seed=2), rand(3, 2)]),
    "solve_triangular_blocked": (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False),
                                 [square(2, 21, 21, seed=3), rand(2, 21, 3)]),   # (blocked past 16 rows)
    "solve_triangular_blocked_upper_unit": (lambda m, a, b: m.linalg.solve_triangular(a / 21, b, upper=True, unitriangular=True),
                                            [square(40, 40, seed=4), rand(40, 2)]),
    "inv_blocked": (lambda m, a: m.linalg.inv(a), [square(2, 24, 24, seed=5)]),
    "lu_factor": (lambda m, a: tuple(m.linalg.lu_factor(a)), [rand(2, 5, 5, seed=4)]),
    "lu_factor_tall": (lambda m, a: tuple(m.linalg.lu_factor(a)), [rand(5, 3, seed=5)]),
    "lu_factor_wide": (lambda m, a: tuple(m.linalg.lu_factor(a)), [rand(2, 3, 5, seed=6)]),
    "lu_factor_blocked": (lambda m, a: tuple(m.linalg.lu_factor(a)), [square(2, 70, 70, seed=7)]),   # (past 64)
    "lu_factor_blocked_tall": (lambda m, a: tuple(m.linalg.lu_factor(a)), [rand(100, 66, seed=8) + torch.eye(100, 66)]),
    "lu_factor_blocked_wide": (lambda m, a: tuple(m.linalg.lu_factor(a)), [rand(66, 90, seed=9) + torch.eye(66, 90)]),
    "solve_blocked_lu": (lambda m, a, b: m.linalg.solve(a, b), [square(80, 80, seed=10), rand(80, 3)]),
    "lu": (lambda m, a: tuple(m.linalg.lu(a)), [rand(2, 4, 4, seed=7)]),
    "lu_tall": (lambda m, a: tuple(m.linalg.lu(a)), [rand(5, 3, seed=8)]),
    "lu_solve": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b), [square(2, 4, 4, seed=9), rand(2, 4, 2)]),
    "lu_solve_adjoint": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, adjoint=True),
                         [square(3, 3, seed=10), rand(3, 2)]),
    "lu_solve_right": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, left=False),
                       [square(3, 3, seed=11), rand(2, 3)]),
    "lu_unpack": (lambda m, a: tuple(m.lu_unpack(*m.linalg.lu_factor(a))), [rand(2, 4, 4, seed=12)]),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), [square(2, 4, 4, seed=13), rand(2, 4, 3)]),
    "solve_vector": (lambda m, a, b: m.linalg.solve(a, b), [square(2, 4, 4, seed=14), rand(2, 4)]),
    "solve_broadcast": (lambda m, a, b: m.linalg.solve(a, b), [square(4, 4, seed=15), rand(3, 4, 2)]),
    "solve_left_false": (lambda m, a, b: m.linalg.solve(a, b, left=False), [square(3, 3, seed=16), rand(2, 3)]),
    "solve_ex": (lambda m, a, b: tuple(m.linalg.solve_ex(a, b)), [square(2, 3, 3, seed=17), rand(2, 3, 1)]),
    "inv": (lambda m, a: m.linalg.inv(a), [square(2, 4, 4, seed=18)]),
    "inv_1x1": (lambda m, a: m.linalg.inv(a), [square(1, 1, seed=19)]),
    "inv_ex": (lambda m, a: tuple(m.linalg.inv_ex(a)), [square(3, 3, seed=20)]),
    "inv_ex_singular": (lambda m, a: m.linalg.inv_ex(a).info, [torch.tensor([[[1., 2.], [2., 4.]], [[1., 0.], [0., 1.]]])]),
    "det": (lambda m, a: m.linalg.det(a), [rand(3, 4, 4, seed=21)]),
    "det_singular": (lambda m, a: m.linalg.det(a), [torch.tensor([[1., 2.], [2., 4.]])]),
    "det_empty": (lambda m, a: m.linalg.det(a), [torch.zeros(2, 0, 0)]),
    "slogdet": (lambda m, a: tuple(m.linalg.slogdet(a)), [rand(3, 4, 4, seed=22)]),
    "slogdet_singular": (lambda m, a: tuple(m.linalg.slogdet(a)), [torch.zeros(2, 2)]),
    "logdet": (lambda m, a: m.logdet(a), [rand(4, 3, 3, seed=23)]),
    "qr": (lambda m, a: tuple(m.linalg.qr(a)), [rand(2, 4, 4, seed=24)]),
    "qr_tall": (lambda m, a: tuple(m.linalg.qr(a)), [rand(2, 5, 3, seed=25)]),
    "qr_wide": (lambda m, a: tuple(m.linalg.qr(a)), [rand(3, 5, seed=26)]),
    "qr_complete": (lambda m, a: tuple(m.linalg.qr(a, mode="complete")), [rand(5, 3, seed=27)]),
    "qr_r": (lambda m, a: m.linalg.qr(a, mode="r")[1], [rand(5, 3, seed=28)]),
    "qr_triangular": (lambda m, a: tuple(m.linalg.qr(a)), [torch.eye(3) * 2]),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a), [rand(3, 5, 5, seed=29)]),
    "eigvalsh_upper": (lambda m, a: m.linalg.eigvalsh(a, UPLO="U"), [rand(4, 4, seed=30)]),
    "eigvalsh_1x1": (lambda m, a: m.linalg.eigvalsh(a), [rand(2, 1, 1, seed=31)]),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), [rand(2, 5, 3, seed=32)]),
    "svdvals_wide": (lambda m, a: m.linalg.svdvals(a), [rand(3, 6, seed=33)]),
    "svdvals_rank1": (lambda m, a: m.linalg.svdvals(a), [torch.ones(3, 4)]),
    "pinv": (lambda m, a: m.linalg.pinv(a), [rand(2, 5, 3, seed=34)]),
    "pinv_rank_deficient": (lambda m, a: m.linalg.pinv(a), [torch.ones(3, 3)]),
    "pinv_hermitian": (lambda m, a: m.linalg.pinv(a, hermitian=True), [spd(3, 3, seed=35)]),
    "pinverse": (lambda m, a: m.pinverse(a), [rand(4, 3, seed=36)]),
    "matrix_rank": (lambda m, a: m.linalg.matrix_rank(a), [torch.stack([torch.ones(3, 3), torch.eye(3)])]),
    "matrix_rank_tol": (lambda m, a: m.linalg.matrix_rank(a, atol=1.0, rtol=0.0), [rand(2, 4, 5, seed=37)]),
    "matrix_rank_hermitian": (lambda m, a: m.linalg.matrix_rank(a, hermitian=True), [spd(3, 3, seed=38)]),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [rand(2, 5, 3, seed=39), rand(2, 5, 2)]),
    "lstsq_fields": (lambda m, a, b: tuple(m.linalg.lstsq(a, b))[1:], [rand(2, 5, 3, seed=40), rand(2, 5, 2)]),
    "lstsq_gelsd": (lambda m, a, b: tuple(m.linalg.lstsq(a, b, driver="gelsd")), [rand(5, 3, seed=41), rand(5, 2)]),
    "lstsq_rank_deficient": (lambda m, a, b: tuple(m.linalg.lstsq(a, b, driver="gelsd"))[::2],
                             [torch.ones(4, 3), rand(4, 2, seed=42)]),
    "lstsq_wide": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [rand(3, 5, seed=43), rand(3, 2)]),
    "cond": (lambda m, a: m.linalg.cond(a), [square(2, 3, 3, seed=44)]),
    "cond_fro": (lambda m, a: m.linalg.cond(a, "fro"), [square(3, 3, seed=45)]),
    "cond_inf_singular": (lambda m, a: m.linalg.cond(a, float("inf")), [torch.ones(3, 3)]),
    "matrix_power": (lambda m, a: m.linalg.matrix_power(a, 5), [rand(2, 3, 3, seed=46) / 2]),
    "matrix_power_neg": (lambda m, a: m.linalg.matrix_power(a, -2), [square(3, 3, seed=47)]),
    "matrix_power_0": (lambda m, a: m.matrix_power(a, 0), [rand(2, 3, 3, seed=48)]),
    "matrix_power_int": (lambda m, a: m.linalg.matrix_power(a, 3), [torch.tensor([[1, 2], [3, 4]])]),
    "matrix_exp": (lambda m, a: m.linalg.matrix_exp(a), [rand(2, 4, 4, seed=49)]),
    "matrix_exp_big": (lambda m, a: m.matrix_exp(a), [rand(3, 3, seed=50) * 4]),
    "householder_product": (lambda m, a, t: m.linalg.householder_product(a, t), [rand(5, 3, seed=51), rand(2, seed=52)]),
    "householder_from_geqrf": (lambda m, a, t: m.linalg.householder_product(a, t), list(torch.geqrf(rand(4, 3, seed=53)))),
    "vander": (lambda m, x: m.linalg.vander(x), [rand(2, 4, seed=54)]),
    "vander_n": (lambda m, x: m.linalg.vander(x, N=3), [rand(4, seed=55)]),
    "tensorinv": (lambda m, a: m.linalg.tensorinv(a, ind=1), [square(4, 4, seed=56).reshape(4, 2, 2)]),
    "tensorsolve": (lambda m, a, b: m.linalg.tensorsolve(a, b), [square(6, 6, seed=57).reshape(2, 3, 6), rand(2, 3)]),
    "diagonal": (lambda m, a: m.linalg.diagonal(a, offset=1), [rand(2, 3, 4, seed=58)]),
    # the torch.* and Tensor.* forms
    "torch_det": (lambda m, a: a.det(), [rand(2, 3, 3, seed=59)]),
    "torch_inverse": (lambda m, a: m.inverse(a), [square(3, 3, seed=60)]),
    "torch_slogdet": (lambda m, a: tuple(a.slogdet()), [rand(3, 3, seed=61)]),
    "torch_cholesky_solve": (lambda m, b, a: m.cholesky_solve(b, m.linalg.cholesky(a)), [rand(2, 3, 2), spd(2, 3, 3, seed=62)]),
    "torch_cholesky_solve_upper": (lambda m, b, a: b.cholesky_solve(m.linalg.cholesky(a, upper=True), upper=True),
                                   [rand(3, 2, seed=63), spd(3, 3, seed=64)]),
    "torch_cholesky_inverse": (lambda m, a: m.cholesky_inverse(m.linalg.cholesky(a)), [spd(4, 4, seed=65)]),
    "torch_triangular_solve": (lambda m, b, a: tuple(m.triangular_solve(b, a)), [rand(3, 2, seed=66), square(3, 3, seed=67)]),
    "torch_triangular_solve_t": (lambda m, b, a: tuple(b.triangular_solve(a, upper=False, transpose=True)),
                                 [rand(2, 3, 2, seed=68), square(2, 3, 3, seed=69)]),
    "torch_lu": (lambda m, a: tuple(m.lu(a, get_infos=True)), [rand(2, 3, 3, seed=70)]),
    "torch_lu_solve": (lambda m, b, a: m.lu_solve(b, *m.linalg.lu_factor(a)), [rand(3, 2, seed=71), square(3, 3, seed=72)]),
    "torch_qr": (lambda m, a: tuple(a.qr()), [rand(4, 3, seed=73)]),
    "torch_qr_complete": (lambda m, a: tuple(m.qr(a, some=False)), [rand(4, 3, seed=74)]),
    "torch_svd_no_uv": (lambda m, a: tuple(m.svd(a, compute_uv=False)), [rand(4, 3, seed=75)]),
    "torch_matrix_exp": (lambda m, a: a.matrix_exp(), [rand(3, 3, seed=76)]),
    "torch_geqrf": (lambda m, a: tuple(m.geqrf(a)), [rand(2, 5, 3, seed=79)]),
    "torch_geqrf_wide": (lambda m, a: tuple(a.geqrf()), [rand(3, 5, seed=80)]),
    "torch_geqrf_triangular": (lambda m, a: tuple(m.geqrf(a)), [torch.eye(3) * 2]),
    "torch_orgqr": (lambda m, a, t: m.orgqr(a, t), list(torch.geqrf(rand(5, 3, seed=81)))),
    "torch_ormqr": (lambda m, a, t, b: m.ormqr(a, t, b), list(torch.geqrf(rand(4, 3, seed=82))) + [rand(4, 2)]),
    "torch_ormqr_t_right": (lambda m, a, t, b: a.ormqr(t, b, left=False, transpose=True),
                            list(torch.geqrf(rand(4, 3, seed=83))) + [rand(2, 4)]),
    "torch_nuclear_norm": (lambda m, a: m.nuclear_norm(a), [rand(2, 3, seed=77)]),
    "torch_nuclear_norm_dim": (lambda m, a: m.nuclear_norm(a, dim=(0, 2), keepdim=True), [rand(2, 3, 4, seed=78)]),
}


@pytest.mark.parametrize("name", FORWARD)
def test_forward(device, name):
    fn, inputs = FORWARD[name]
    _forward(device, _quiet(fn), *inputs)


def _align(V, Vt, dim=-2):
    """V's vectors (columns for dim=-2, rows for dim=-1) with the signs that match Vt's."""
    s = torch.sign((V * Vt).sum(dim, keepdim=True))
    return V * torch.where(s == 0, 1.0, s)


def _theirs(t):
    return torch.tensor(t.tolist()).reshape(tuple(t.shape))


@pytest.mark.parametrize("shape,uplo", [((3, 5, 5), "L"), ((4, 4), "U"), ((7, 7), "L"), ((2, 1, 1), "L")])
def test_eigh(device, shape, uplo):
    a = rand(*shape, seed=80)
    w, V = torch.linalg.eigh(a, UPLO=uplo)
    gw, gV = torchweb.linalg.eigh(ours(a, device), UPLO=uplo)
    assert_close(gw, w, **VAL)
    torch.testing.assert_close(_align(_theirs(gV), V), V, **VAL)


@pytest.mark.parametrize("shape,full", [((2, 5, 3), False), ((5, 3), True), ((3, 6), False), ((2, 4, 6), True),
                                        ((4, 4), False), ((1, 1), True)])
def test_svd(device, shape, full):
    a = rand(*shape, seed=81)
    U, S, Vh = torch.linalg.svd(a, full_matrices=full)
    gU, gS, gVh = torchweb.linalg.svd(ours(a, device), full_matrices=full)
    assert_close(gS, S, **VAL)
    k = S.shape[-1]
    ours_U, ours_Vh = _theirs(gU), _theirs(gVh)
    assert ours_U.shape == U.shape and ours_Vh.shape == Vh.shape
    s = torch.sign((ours_U[..., :, :k] * U[..., :, :k]).sum(-2, keepdim=True))
    torch.testing.assert_close(ours_U[..., :, :k] * s, U[..., :, :k], **VAL)
    torch.testing.assert_close(ours_Vh[..., :k, :] * s.mT, Vh[..., :k, :], **VAL)
    # the completed columns (full_matrices) are orthonormal and orthogonal to the others
    uu, vv = ours_U.mT @ ours_U, ours_Vh @ ours_Vh.mT
    torch.testing.assert_close(uu, torch.eye(uu.shape[-1]).expand(uu.shape), **VAL)
    torch.testing.assert_close(vv, torch.eye(vv.shape[-1]).expand(vv.shape), **VAL)


def test_svd_rank_deficient(device):
    a = torch.ones(2, 4, 3)
    U, S, Vh = torchweb.linalg.svd(ours(a, device))
    torch.testing.assert_close(_theirs(S), torch.linalg.svdvals(a), **VAL)
    u = _theirs(U)
    torch.testing.assert_close(u.mT @ u, torch.eye(4).expand(2, 4, 4), **VAL)
    torch.testing.assert_close(u[..., :, :3] * _theirs(S).unsqueeze(-2) @ _theirs(Vh), a, **VAL)


def test_torch_svd_returns_v(device):
    a = rand(4, 3, seed=82)
    U, S, V = torch.svd(a)
    gU, gS, gV = torchweb.svd(ours(a, device))
    assert_close(gS, S, **VAL)
    s = torch.sign((_theirs(gU) * U).sum(-2, keepdim=True))
    torch.testing.assert_close(_theirs(gV) * s, V, **VAL)


# -- gradients ---------------------------------------------------------------------------------------

def _gram(V):
    return V * V   # (elementwise: the same for either sign of a column)


BACKWARD = {
    "cholesky": (lambda m, a: m.linalg.cholesky(a @ a.mT + 3 * m.eye(3, device=a.device)), lambda: (rand(2, 3, 3, seed=90),)),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(a @ a.mT + 3 * m.eye(3, device=a.device), upper=True), lambda: (rand(3, 3, seed=91),)),
    "solve_triangular": (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
                         lambda: (square(2, 3, 3, seed=92), rand(2, 3, 2))),
    "solve_triangular_unit_right": (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, left=False,
                                                                             unitriangular=True),
                                    lambda: (square(3, 3, seed=93), rand(2, 3))),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), lambda: (square(2, 3, 3, seed=94), rand(2, 3, 2))),
    "solve_broadcast_vector": (lambda m, a, b: m.linalg.solve(a, b), lambda: (square(2, 3, 3, seed=95), rand(3))),
    "inv": (lambda m, a: m.linalg.inv(a), lambda: (square(2, 3, 3, seed=96),)),
    "solve_blocked": (lambda m, a, b: m.linalg.solve(a, b), lambda: (square(20, 20, seed=96), rand(20, 2))),
    "det": (lambda m, a: m.linalg.det(a), lambda: (rand(3, 3, 3, seed=97),)),
    "det_singular": (lambda m, a: m.linalg.det(a), lambda: (torch.tensor([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]]),)),
    "slogdet": (lambda m, a: m.linalg.slogdet(a).logabsdet, lambda: (rand(2, 3, 3, seed=98),)),
    "logdet": (lambda m, a: m.logdet(a @ a.mT + m.eye(3, device=a.device)), lambda: (rand(3, 3, seed=99),)),
    "lu": (lambda m, a: m.linalg.lu(a)[1:], lambda: (rand(2, 3, 3, seed=100),)),
    "lu_tall": (lambda m, a: m.linalg.lu(a)[1:], lambda: (rand(4, 2, seed=101),)),
    "lu_wide": (lambda m, a: m.linalg.lu(a)[1:], lambda: (rand(2, 4, seed=102),)),
    "lu_solve": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b), lambda: (square(3, 3, seed=103), rand(3, 2))),
    "qr": (lambda m, a: m.linalg.qr(a), lambda: (rand(2, 4, 3, seed=104),)),
    "qr_square": (lambda m, a: m.linalg.qr(a), lambda: (rand(3, 3, seed=105),)),
    "qr_wide": (lambda m, a: m.linalg.qr(a), lambda: (rand(2, 3, 5, seed=106),)),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a), lambda: (rand(2, 4, 4, seed=107),)),
    "eigh_vectors": (lambda m, a: _gram(m.linalg.eigh(a).eigenvectors), lambda: (rand(4, 4, seed=108),)),
    "eigh_reconstruct": (lambda m, a: (lambda w, V: (V * w.unsqueeze(-2)) @ V.mT)(*m.linalg.eigh(a, UPLO="U")),
                         lambda: (rand(2, 3, 3, seed=109),)),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), lambda: (rand(2, 4, 3, seed=110),)),
    "svd_vectors": (lambda m, a: (lambda U, S, Vh: (_gram(U), _gram(Vh)))(*m.linalg.svd(a, full_matrices=False)),
                    lambda: (rand(4, 3, seed=111),)),
    "svd_wide": (lambda m, a: (lambda U, S, Vh: (U * S.unsqueeze(-2)) @ Vh[..., :, :2])(*m.linalg.svd(a, full_matrices=False)),
                 lambda: (rand(2, 3, 5, seed=112),)),
    "pinv": (lambda m, a: m.linalg.pinv(a), lambda: (rand(4, 3, seed=113),)),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b).solution, lambda: (rand(5, 3, seed=114), rand(5, 2))),
    "matrix_exp": (lambda m, a: m.linalg.matrix_exp(a), lambda: (rand(3, 3, seed=115),)),
    "matrix_power": (lambda m, a: m.linalg.matrix_power(a, -3), lambda: (square(3, 3, seed=116),)),
    "cholesky_inverse": (lambda m, a: m.cholesky_inverse(m.linalg.cholesky(a @ a.mT + 3 * m.eye(3, device=a.device))),
                         lambda: (rand(3, 3, seed=117),)),
    "householder_product": (lambda m, a, t: m.linalg.householder_product(a, t), lambda: (rand(4, 3, seed=118), rand(3))),
    "ormqr": (lambda m, a, t, b: m.ormqr(a, t, b, transpose=True), lambda: (rand(4, 3, seed=84), rand(3), rand(4, 2))),
    "torch_svd": (lambda m, a: (lambda U, S, V: (U * S.unsqueeze(-2)) @ V.mT)(*m.svd(a)), lambda: (rand(4, 3, seed=119),)),
}


@pytest.mark.parametrize("name", BACKWARD)
def test_backward(device, name):
    fn, make_inputs = BACKWARD[name]
    run_case(device, _quiet(fn), make_inputs, **GRAD)


DOUBLE = {
    "cholesky": (lambda m, a: m.linalg.cholesky(a @ a.mT + 3 * m.eye(3, device=a.device)), rand(3, 3, seed=120)),
    "solve": (lambda m, a: m.linalg.solve(a, a.sum(-1)), square(3, 3, seed=121)),
    "inv": (lambda m, a: m.linalg.inv(a), square(3, 3, seed=122)),
    "det": (lambda m, a: m.linalg.det(a), rand(3, 3, seed=123)),
    "slogdet": (lambda m, a: m.linalg.slogdet(a).logabsdet, rand(3, 3, seed=124)),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a), rand(3, 3, seed=125)),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), rand(4, 3, seed=126)),
    "qr": (lambda m, a: m.linalg.qr(a).R, rand(4, 3, seed=127)),
}


@pytest.mark.parametrize("name", DOUBLE)
def test_double_backward(device, name):
    """The gradient of (d loss / dA) . W, loss = sum(fn(A) * G): second derivatives as PyTorch's."""
    fn, a = DOUBLE[name]
    out = fn(torch, a)
    G, W = torch.randn(out.shape, generator=_gen(1)), torch.randn(a.shape, generator=_gen(2))
    results = []
    for m, conv in ((torch, lambda t: t), (torchweb, lambda t: ours(t, device))):
        x = conv(a).clone().requires_grad_(True) if m is torch else ours(a, device, requires_grad=True)
        (g,) = m.autograd.grad((fn(m, x) * conv(G)).sum(), x, create_graph=True)
        (h,) = m.autograd.grad((g * conv(W)).sum(), x)
        results.append(h)
    assert_close(results[1], results[0], rtol=1e-3, atol=1e-3)


# -- errors ------------------------------------------------------------------------------------------

ERRORS = {
    "cholesky_vector": lambda m: m.linalg.cholesky(m.ones(3)),
    "cholesky_nonsquare": lambda m: m.linalg.cholesky(m.ones(2, 3)),
    "cholesky_int": lambda m: m.linalg.cholesky(m.ones(3, 3, dtype=m.int64)),
    "inv_nonsquare": lambda m: m.linalg.inv(m.ones(2, 3)),
    "inv_int": lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.int64)),
    "det_vector": lambda m: m.linalg.det(m.ones(3)),
    "slogdet_nonsquare": lambda m: m.linalg.slogdet(m.ones(2, 3)),
    "solve_nonsquare": lambda m: m.linalg.solve(m.ones(2, 3), m.ones(2)),
    "solve_int": lambda m: m.linalg.solve(m.ones(2, 2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    "solve_shapes": lambda m: m.linalg.solve(m.eye(3), m.ones(2, 2)),
    "qr_vector": lambda m: m.linalg.qr(m.ones(3)),
    "qr_int": lambda m: m.linalg.qr(m.ones(3, 3, dtype=m.int64)),
    "qr_mode": lambda m: m.linalg.qr(m.ones(3, 3), mode="full"),
    "eigh_nonsquare": lambda m: m.linalg.eigh(m.ones(2, 3)),
    "eigh_uplo": lambda m: m.linalg.eigh(m.eye(2), UPLO="X"),
    "svd_vector": lambda m: m.linalg.svd(m.ones(3)),
    "svd_int": lambda m: m.linalg.svd(m.ones(3, 3, dtype=m.int64)),
    "solve_triangular_nonsquare": lambda m: m.linalg.solve_triangular(m.ones(2, 3), m.ones(2, 2), upper=True),
    "lu_factor_vector": lambda m: m.linalg.lu_factor(m.ones(3)),
    "matrix_power_float_n": lambda m: m.linalg.matrix_power(m.eye(2), 2.5),
    "matrix_exp_nonsquare": lambda m: m.linalg.matrix_exp(m.ones(2, 3)),
    "pinv_int": lambda m: m.linalg.pinv(m.ones(3, 3, dtype=m.int64)),
    "householder_wide": lambda m: m.linalg.householder_product(m.ones(2, 3), m.ones(2)),
    "vander_n1": lambda m: m.linalg.vander(m.ones(3), N=1),
    "cond_nonsquare_1": lambda m: m.linalg.cond(m.ones(2, 3), 1),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_pytorch(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(torchweb)
    assert str(got.value) == str(expected.value)


SINGULAR = {
    "cholesky": (lambda m, a: m.linalg.cholesky(a), torch.tensor([[1., 2.], [2., 1.]])),
    "cholesky_batch": (lambda m, a: m.linalg.cholesky(a), torch.stack([torch.eye(2), torch.tensor([[1., 2.], [2., 1.]])])),
    "cholesky_ex_check": (lambda m, a: m.linalg.cholesky_ex(a, check_errors=True), torch.tensor([[-1., 0.], [0., 1.]])),
    "torch_cholesky": (lambda m, a: m.cholesky(a), torch.tensor([[1., 2.], [2., 1.]])),
    "inv": (lambda m, a: m.linalg.inv(a), torch.zeros(2, 2)),
    "inv_batch": (lambda m, a: m.linalg.inv(a), torch.stack([torch.eye(2), torch.zeros(2, 2)])),
    "inverse": (lambda m, a: m.inverse(a), torch.tensor([[1., 2.], [2., 4.]])),
    "solve": (lambda m, a: m.linalg.solve(a, m.ones(2, device=a.device)), torch.zeros(2, 2)),
}


@pytest.mark.parametrize("name", SINGULAR)
def test_singular_raises_linalg_error(device, name):
    fn, a = SINGULAR[name]
    with pytest.raises(torch.linalg.LinAlgError) as expected:
        _quiet(fn)(torch, a)
    with pytest.raises(torchweb.linalg.LinAlgError) as got:
        _quiet(fn)(torchweb, ours(a, device))
    assert isinstance(got.value, RuntimeError)
    assert str(got.value) == str(expected.value)


def test_lu_factor_singular_raises(device):
    a = torch.zeros(2, 2)
    with pytest.raises(RuntimeError) as expected:
        torch.linalg.lu_factor(a)
    with pytest.raises(RuntimeError) as got:
        torchweb.linalg.lu_factor(ours(a, device))
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("fn", [lambda m, a: m.linalg.cholesky_ex(a).info, lambda m, a: m.linalg.lu_factor_ex(a).info,
                                lambda m, a: m.linalg.solve_ex(a, a).info, lambda m, a: m.linalg.inv_ex(a).info])
def test_ex_forms_return_info(device, fn):
    a = torch.stack([torch.eye(3), torch.tensor([[1., 2., 0.], [2., 1., 0.], [0., 0., 0.]]), torch.zeros(3, 3)])
    assert_close(fn(torchweb, ours(a, device)), fn(torch, a))


def test_eig_refuses_naming_complex():
    with pytest.raises(NotImplementedError, match="complex"):
        torchweb.linalg.eig(torchweb.eye(2))
    with pytest.raises(NotImplementedError, match="complex"):
        torchweb.linalg.eigvals(torchweb.eye(2))


def test_qr_backward_refusals_as_pytorch():
    for mode, shape in (("r", (3, 3)), ("complete", (4, 3))):
        for m in (torch, torchweb):
            a = m.ones(*shape).requires_grad_(True) + m.eye(*shape)
            with pytest.raises(RuntimeError, match="qr|QR"):
                m.linalg.qr(a, mode=mode)[1].sum().backward()


def test_linalg_error_is_a_runtime_error():
    assert issubclass(torchweb.linalg.LinAlgError, RuntimeError)
    with pytest.raises(AttributeError, match="not implemented by torchweb"):
        torchweb.linalg.no_such_routine


OUT_CASES = {   # name -> (fn(module, A, out), number of results, which results to compare)
    "inv": (lambda m, x, out: m.linalg.inv(x, out=out), 1, None),
    "pinv": (lambda m, x, out: m.linalg.pinv(x, out=out), 1, None),
    "inverse": (lambda m, x, out: m.inverse(x, out=out), 1, None),
    "qr": (lambda m, x, out: m.linalg.qr(x, out=out), 2, (0, 1)),
    "slogdet": (lambda m, x, out: m.linalg.slogdet(x, out=out), 2, (0, 1)),
    "eigh": (lambda m, x, out: m.linalg.eigh(x, out=out), 2, (0,)),   # (eigenvectors: up to sign)
}


@pytest.mark.parametrize("name", OUT_CASES)
def test_out_arguments(device, name):
    """out= as PyTorch's: a tensor for one result, a tuple for several, resized to fit."""
    fn, n_out, compare = OUT_CASES[name]
    a = square(3, 3, seed=130)
    results = []
    for m, x in ((torch, a), (torchweb, ours(a, device))):
        out = m.empty(0, device=x.device) if n_out == 1 else tuple(m.empty(0, device=x.device) for _ in range(n_out))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(m, x, out)
        assert (r is out) if n_out == 1 else all(p is q for p, q in zip(r, out))
        results.append(r if compare is None else tuple(r[i] for i in compare))
    assert_close(results[1], results[0], **VAL)


def _every_form(m):
    """name -> fn(x) for each function of this file, called with one bad input."""
    return {
        "cholesky": lambda x: m.linalg.cholesky(x), "inv": lambda x: m.linalg.inv(x), "det": lambda x: m.linalg.det(x),
        "slogdet": lambda x: m.linalg.slogdet(x), "solve": lambda x: m.linalg.solve(x, x),
        "lu_factor": lambda x: m.linalg.lu_factor(x), "lu": lambda x: m.linalg.lu(x), "qr": lambda x: m.linalg.qr(x),
        "eigh": lambda x: m.linalg.eigh(x), "eigvalsh": lambda x: m.linalg.eigvalsh(x), "svd": lambda x: m.linalg.svd(x),
        "svdvals": lambda x: m.linalg.svdvals(x), "pinv": lambda x: m.linalg.pinv(x),
        "matrix_rank": lambda x: m.linalg.matrix_rank(x), "lstsq": lambda x: m.linalg.lstsq(x, x),
        "matrix_exp": lambda x: m.linalg.matrix_exp(x), "matrix_power": lambda x: m.linalg.matrix_power(x, 2),
        "solve_triangular": lambda x: m.linalg.solve_triangular(x, x, upper=True), "cond": lambda x: m.linalg.cond(x),
        "householder_product": lambda x: m.linalg.householder_product(x, x[..., 0]),
        "inverse": lambda x: m.inverse(x), "logdet": lambda x: m.logdet(x), "torch_det": lambda x: m.det(x),
        "torch_slogdet": lambda x: m.slogdet(x), "torch_svd": lambda x: m.svd(x), "torch_qr": lambda x: m.qr(x),
        "torch_cholesky": lambda x: m.cholesky(x), "geqrf": lambda x: m.geqrf(x),
        "cholesky_solve": lambda x: m.cholesky_solve(x, x), "cholesky_inverse": lambda x: m.cholesky_inverse(x),
        "triangular_solve": lambda x: m.triangular_solve(x, x), "pinverse": lambda x: m.pinverse(x),
        "torch_matrix_exp": lambda x: m.matrix_exp(x), "torch_lu": lambda x: m.lu(x),
    }


BAD_INPUTS = {"vector": lambda m: m.ones(3), "nonsquare": lambda m: m.ones(2, 3),
              "int64": lambda m: m.ones(3, 3, dtype=m.int64), "float16": lambda m: m.eye(3, dtype=m.float16)}


@pytest.mark.parametrize("kind", BAD_INPUTS)
@pytest.mark.parametrize("name", sorted(_every_form(torch)))
def test_shape_and_dtype_errors_as_pytorch(name, kind):
    """Each function on a vector, a non-square matrix, an int64 and a float16 matrix: PyTorch's
    exception type and message, or a result where PyTorch gives one (float16 results are not
    compared: torchweb's linalg is float32, so it refuses them where PyTorch computes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _every_form(torch)[name](BAD_INPUTS[kind](torch))
            expected = None
        except Exception as e:
            expected = e
        if expected is None:
            if kind != "float16":
                _every_form(torchweb)[name](BAD_INPUTS[kind](torchweb))
            return
        with pytest.raises(type(expected)) as got:
            _every_form(torchweb)[name](BAD_INPUTS[kind](torchweb))
    assert str(got.value).split("\n")[0] == str(expected).split("\n")[0]


@pytest.mark.parametrize("name", ["eigvalsh", "svdvals"])
def test_spectrum_at_float32_precision(device, name):
    """At n = 128 the Jacobi methods' values are within 3e-6 of float64's, relative to the
    largest (LAPACK's float32 ~1e-6; rounding every entry in every round's dense rotation
    matmuls gave 2e-5 / 1.2e-5)."""
    a = rand(128, 128, seed=140)
    a = a + a.mT if name == "eigvalsh" else a
    fn = getattr(torch.linalg, name)
    want = fn(a.double())
    got = torch.tensor(getattr(torchweb.linalg, name)(ours(a, device)).tolist(), dtype=torch.float64)
    assert ((got - want).abs().max() / want.abs().max()).item() < 3e-6
