"""The blocked triangular solve (trsm_block, 32 rows a dispatch) and its users (solve_triangular,
solve, lu_solve, cholesky_solve, inv), and the blocked Householder QR (qr_panel: geqr2 + larft of
32 columns a dispatch) with geqrf / householder_product / ormqr, against PyTorch on both devices:
sizes across block edges, batches, strided operands, ill-conditioned matrices, gradients,
errors."""

import pytest
import torch

import torchweb
from oracle import ours, theirs


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _rel(got, want):
    return ((theirs(got).double() - want.double()).abs().max() / want.double().abs().max().clamp_min(1e-30)).item()


# -- triangular solves ------------------------------------------------------------------------------

@pytest.mark.parametrize("n,k,batch", [(1, 1, ()), (7, 3, ()), (32, 5, (2,)), (33, 1, ()), (65, 40, ()),
                                       (100, 7, (2, 1)), (257, 9, ())])
@pytest.mark.parametrize("upper,unit", [(False, False), (True, False), (False, True), (True, True)])
def test_solve_triangular_matches_pytorch(device, n, k, batch, upper, unit):
    A = _rand(*batch, n, n, seed=n) + 4 * torch.eye(n)
    B = _rand(*batch, n, k, seed=k)
    X = torchweb.linalg.solve_triangular(ours(A, device), ours(B, device), upper=upper, unitriangular=unit)
    want = torch.linalg.solve_triangular(A.double(), B.double(), upper=upper, unitriangular=unit)
    assert _rel(X, want) < 2e-5


@pytest.mark.parametrize("n", [5, 40, 70])
def test_right_side_and_strided_operands(device, n):
    # A read through a transpose, B a column slice of a wider matrix: the kernel reads them in place
    A = _rand(n, n, seed=1) + 4 * torch.eye(n)
    W = _rand(3, n + 5, seed=2)
    At, Wt = ours(A, device).mT, ours(W, device)[:, 2:2 + n]
    X = torchweb.linalg.solve_triangular(At, Wt, upper=True, left=False)
    want = torch.linalg.solve_triangular(A.double().mT, W[:, 2:2 + n].double(), upper=True, left=False)
    assert _rel(X, want) < 2e-5
    X = torchweb.linalg.solve_triangular(At, ours(W, device).mT[2:2 + n], upper=False)
    want = torch.linalg.solve_triangular(A.double().mT, W.double().mT[2:2 + n], upper=False)
    assert _rel(X, want) < 2e-5


def test_batch_broadcast_between_a_and_b(device):
    A = _rand(1, 45, 45, seed=3) + 5 * torch.eye(45)
    B = _rand(3, 45, 2, seed=4)
    X = torchweb.linalg.solve_triangular(ours(A, device), ours(B, device), upper=False)
    assert tuple(X.shape) == (3, 45, 2)
    assert _rel(X, torch.linalg.solve_triangular(A.double(), B.double(), upper=False)) < 2e-5


@pytest.mark.parametrize("n", [1, 7, 33, 65, 129, 600])
def test_solve_inv_lu_solve_match_pytorch(device, n):
    A = _rand(n, n, seed=n) + 3 * n ** 0.5 * torch.eye(n)   # (well conditioned at every size)
    B = _rand(n, 4, seed=n + 1)
    want = torch.linalg.solve(A.double(), B.double())
    Ao, Bo = ours(A, device), ours(B, device)
    assert _rel(torchweb.linalg.solve(Ao, Bo), want) < 5e-5
    LU, piv = torchweb.linalg.lu_factor(Ao)
    assert _rel(torchweb.linalg.lu_solve(LU, piv, Bo), want) < 5e-5
    want_t = torch.linalg.solve(A.double().mT, B.double())
    assert _rel(torchweb.linalg.lu_solve(LU, piv, Bo, adjoint=True), want_t) < 5e-5
    if n <= 129:
        assert _rel(torchweb.linalg.inv(Ao), torch.linalg.inv(A.double())) < 5e-5


@pytest.mark.parametrize("n,batch", [(3, ()), (40, (2,)), (97, ())])
def test_cholesky_solve_matches_pytorch(device, n, batch):
    M = _rand(*batch, n, n, seed=n)
    A = M @ M.mT / n + torch.eye(n)
    B = _rand(*batch, n, 3, seed=5)
    for upper in (False, True):
        L = torch.linalg.cholesky(A, upper=upper)
        X = torchweb.cholesky_solve(ours(B, device), ours(L, device), upper=upper)
        assert _rel(X, torch.cholesky_solve(B.double(), L.double(), upper=upper)) < 5e-5


def test_ill_conditioned_solve_is_as_accurate_as_pytorchs(device):
    # cond ~1e5: the float32 error grows alike for both (each compared with float64's answer)
    n = 90
    Q, _ = torch.linalg.qr(_rand(n, n, seed=6))
    A = Q @ torch.diag(torch.logspace(0, -5, n)) @ Q.mT
    B = _rand(n, 2, seed=7)
    exact = torch.linalg.solve(A.double(), B.double())
    theirs_err = (torch.linalg.solve(A, B).double() - exact).abs().max().item()
    ours_err = (theirs(torchweb.linalg.solve(ours(A, device), ours(B, device))).double() - exact).abs().max().item()
    assert ours_err < 20 * theirs_err + 1e-6


def test_singular_raises_as_pytorch(device):
    A = torch.ones(40, 40)
    with pytest.raises(torchweb.linalg.LinAlgError, match="The solver failed because the input matrix is singular"):
        torchweb.linalg.solve(ours(A, device), ours(torch.ones(40, 1), device))
    X, info = torchweb.linalg.solve_ex(ours(A, device), ours(torch.ones(40, 1), device))
    assert int(info.item()) == int(torch.linalg.solve_ex(A, torch.ones(40, 1)).info.item()) != 0


@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_gradients_match_pytorch(device, left):
    n = 45
    A = _rand(n, n, seed=8) + 4 * torch.eye(n)
    B = _rand(n, 3, seed=9) if left else _rand(3, n, seed=9)
    At, Bt = A.clone().requires_grad_(), B.clone().requires_grad_()
    w = _rand(*B.shape, seed=10)
    (torch.linalg.solve_triangular(At, Bt, upper=True, left=left) * w).sum().backward()
    Ao, Bo = ours(A, device, True), ours(B, device, True)
    (torchweb.linalg.solve_triangular(Ao, Bo, upper=True, left=left) * ours(w, device)).sum().backward()
    torch.testing.assert_close(theirs(Ao.grad), At.grad, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(theirs(Bo.grad), Bt.grad, rtol=1e-3, atol=1e-4)


def test_solve_gradient_matches_pytorch(device):
    n = 70
    A = _rand(n, n, seed=11) + 3 * n ** 0.5 * torch.eye(n)
    B = _rand(n, 2, seed=12)
    At, Bt = A.clone().requires_grad_(), B.clone().requires_grad_()
    torch.linalg.solve(At, Bt).square().sum().backward()
    Ao, Bo = ours(A, device, True), ours(B, device, True)
    torchweb.linalg.solve(Ao, Bo).square().sum().backward()
    torch.testing.assert_close(theirs(Ao.grad), At.grad, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(theirs(Bo.grad), Bt.grad, rtol=1e-3, atol=1e-4)


# -- QR ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m,n,batch", [(1, 1, ()), (5, 3, ()), (3, 5, ()), (33, 33, (2,)), (100, 37, ()),
                                       (37, 100, ()), (257, 129, ()), (600, 600, ())])
def test_qr_matches_pytorch(device, m, n, batch):
    A = _rand(*batch, m, n, seed=m + n)
    k = min(m, n)
    Q, R = torchweb.linalg.qr(ours(A, device))
    Qe, Re = torch.linalg.qr(A)
    tol = 2e-5 * max(1, k) ** 0.5
    # (LAPACK's signs: Q and R themselves are PyTorch's)
    torch.testing.assert_close(theirs(R), Re, rtol=0, atol=tol * Re.abs().max().item())
    torch.testing.assert_close(theirs(Q), Qe, rtol=0, atol=tol)
    torch.testing.assert_close(theirs(Q) @ theirs(R), A, rtol=0, atol=tol * A.abs().max().item())
    if m * n <= 100 * 100:
        Qc, Rc = torchweb.linalg.qr(ours(A, device), mode="complete")
        Qce, Rce = torch.linalg.qr(A, mode="complete")
        torch.testing.assert_close(theirs(Qc), Qce, rtol=0, atol=tol)
        torch.testing.assert_close(theirs(Rc), Rce, rtol=0, atol=tol * Re.abs().max().item())
        Q0, Rr = torchweb.linalg.qr(ours(A, device), mode="r")
        assert Q0.numel() == 0 and tuple(Rr.shape) == tuple(Re.shape)


def test_qr_of_columns_already_reduced(device):
    # zero columns and columns already zero below the diagonal: no reflector (tau 0), as geqrf
    A = torch.triu(_rand(40, 36, seed=13))
    A[:, 3] = 0
    A[:, 34] = 0
    Q, R = torchweb.linalg.qr(ours(A, device))
    Qe, Re = torch.linalg.qr(A)
    torch.testing.assert_close(theirs(Q), Qe, rtol=0, atol=1e-5)
    torch.testing.assert_close(theirs(R), Re, rtol=0, atol=1e-5)
    a, tau = torchweb.geqrf(ours(A, device))
    torch.testing.assert_close(theirs(tau), torch.geqrf(A)[1], rtol=0, atol=1e-6)


@pytest.mark.parametrize("m,n", [(40, 40), (70, 35), (20, 45)])
def test_qr_gradient_matches_pytorch(device, m, n):
    A = _rand(m, n, seed=14)
    wq, wr = _rand(m, min(m, n), seed=15), _rand(min(m, n), n, seed=16)
    At = A.clone().requires_grad_()
    Q, R = torch.linalg.qr(At)
    ((Q * wq).sum() + (R * wr).sum()).backward()
    Ao = ours(A, device, True)
    Q, R = torchweb.linalg.qr(Ao)
    ((Q * ours(wq, device)).sum() + (R * ours(wr, device)).sum()).backward()
    torch.testing.assert_close(theirs(Ao.grad), At.grad, rtol=1e-3, atol=2e-4)


@pytest.mark.parametrize("m,n,batch", [(9, 4, ()), (70, 40, ()), (100, 100, (2,))])
def test_geqrf_householder_product_ormqr_match_pytorch(device, m, n, batch):
    A = _rand(*batch, m, n, seed=17)
    a, tau = torchweb.geqrf(ours(A, device))
    ae, taue = torch.geqrf(A)
    torch.testing.assert_close(theirs(a), ae, rtol=0, atol=3e-5 * ae.abs().max().item())
    torch.testing.assert_close(theirs(tau), taue, rtol=0, atol=3e-5)
    ao, to = ours(ae, device), ours(taue, device)
    torch.testing.assert_close(theirs(torchweb.linalg.householder_product(ao, to)),
                               torch.linalg.householder_product(ae, taue), rtol=0, atol=3e-5)
    C = _rand(*batch, m, 3, seed=18)
    for left, trans in [(True, False), (True, True), (False, False), (False, True)]:
        Cx = C if left else C.mT
        got = torchweb.ormqr(ao, to, ours(Cx, device), left=left, transpose=trans)
        torch.testing.assert_close(theirs(got), torch.ormqr(ae, taue, Cx, left=left, transpose=trans),
                                   rtol=0, atol=3e-5 * max(1, m) ** 0.5)


def test_householder_product_gradient_matches_pytorch(device):
    ae, taue = torch.geqrf(_rand(50, 40, seed=19))
    w = _rand(50, 40, seed=20)
    at, tt = ae.clone().requires_grad_(), taue.clone().requires_grad_()
    (torch.linalg.householder_product(at, tt) * w).sum().backward()
    ao, to = ours(ae, device, True), ours(taue, device, True)
    (torchweb.linalg.householder_product(ao, to) * ours(w, device)).sum().backward()
    torch.testing.assert_close(theirs(ao.grad), at.grad, rtol=1e-3, atol=2e-4)
    torch.testing.assert_close(theirs(to.grad), tt.grad, rtol=1e-3, atol=2e-4)


@pytest.mark.parametrize("m,n,batch", [(6, 3, ()), (3, 6, ()), (70, 40, (2,)), (40, 70, ())])
def test_lstsq_gels_goes_through_qr_as_pytorchs(device, m, n, batch):
    A, B = _rand(*batch, m, n, seed=21), _rand(*batch, m, 2, seed=22)
    got = torchweb.linalg.lstsq(ours(A, device), ours(B, device), driver="gels")
    want = torch.linalg.lstsq(A, B, driver="gels")
    torch.testing.assert_close(theirs(got.solution), want.solution, rtol=1e-3, atol=1e-4)
    assert tuple(got.rank.shape) == (0,) and got.rank.dtype.name == "int64" and got.singular_values.numel() == 0
    torch.testing.assert_close(theirs(got.residuals), want.residuals, rtol=1e-3, atol=1e-4)
    At, Bt = A.clone().requires_grad_(), B.clone().requires_grad_()
    torch.linalg.lstsq(At, Bt, driver="gels").solution.square().sum().backward()
    Ao, Bo = ours(A, device, True), ours(B, device, True)
    torchweb.linalg.lstsq(Ao, Bo, driver="gels").solution.square().sum().backward()
    torch.testing.assert_close(theirs(Ao.grad), At.grad, rtol=1e-3, atol=2e-4)
    torch.testing.assert_close(theirs(Bo.grad), Bt.grad, rtol=1e-3, atol=2e-4)


def test_qr_second_derivative_matches_pytorch(device):
    A = _rand(40, 35, seed=23)
    At = A.clone().requires_grad_()
    Q, R = torch.linalg.qr(At)
    g, = torch.autograd.grad(Q.sum() + R.square().sum(), At, create_graph=True)
    gg, = torch.autograd.grad(g.square().sum(), At)
    Ao = ours(A, device, True)
    Q, R = torchweb.linalg.qr(Ao)
    g, = torchweb.autograd.grad(Q.sum() + R.square().sum(), Ao, create_graph=True)
    gg2, = torchweb.autograd.grad(g.square().sum(), Ao)
    torch.testing.assert_close(theirs(gg2), gg, rtol=1e-3, atol=1e-3 * gg.abs().max().item())


def test_qr_of_an_ill_conditioned_matrix(device):
    # cond 1e6: Householder stays backward stable (Q R = A, Q orthonormal) as LAPACK's
    n = 70
    U, _ = torch.linalg.qr(_rand(n, n, seed=24))
    V, _ = torch.linalg.qr(_rand(n, n, seed=25))
    A = U @ torch.diag(torch.logspace(0, -6, n)) @ V.mT
    Q, R = torchweb.linalg.qr(ours(A, device))
    Qt, Rt = theirs(Q), theirs(R)
    torch.testing.assert_close(Qt @ Rt, A, rtol=0, atol=2e-6)
    torch.testing.assert_close(Qt.mT @ Qt, torch.eye(n), rtol=0, atol=2e-5)
    torch.testing.assert_close(Rt.diagonal().abs(), torch.linalg.qr(A).R.diagonal().abs(), rtol=0, atol=2e-6)
