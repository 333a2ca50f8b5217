"""linalg.ldl_factor(_ex) / ldl_solve (Bunch-Kaufman as LAPACK's sytrf: PyTorch's LD and pivots
exactly) and torch.svd_lowrank / pca_lowrank (torch._lowrank's algorithm; their random start is
torchweb's, so they are compared where the answer does not depend on it), on both devices."""

import pytest
import torch

import torchweb
from oracle import ours, theirs


def _sym(n, batch=(), seed=0):
    M = torch.randn(*batch, n, n, generator=torch.Generator().manual_seed(seed))
    return M + M.mT


@pytest.mark.parametrize("n,batch", [(1, ()), (2, ()), (3, ()), (5, (3,)), (17, ()), (40, (2,)), (101, ()), (257, ())])
def test_ldl_factor_matches_pytorch(device, n, batch):
    A = _sym(n, batch, seed=n)
    LD, piv, info = torchweb.linalg.ldl_factor_ex(ours(A, device))
    LDe, pive, infoe = torch.linalg.ldl_factor_ex(A)
    assert theirs(piv).tolist() == pive.tolist()     # (the same 1 x 1 and 2 x 2 choices and interchanges)
    assert theirs(info).tolist() == infoe.tolist()
    torch.testing.assert_close(theirs(LD), LDe, rtol=0, atol=1e-5 * max(1.0, LDe.abs().max().item()) * n ** 0.5)
    B = torch.randn(*batch, n, 3, generator=torch.Generator().manual_seed(1))
    X = torchweb.linalg.ldl_solve(LD, piv, ours(B, device))
    want = torch.linalg.solve(A.double(), B.double())
    assert ((theirs(X).double() - want).abs().max() / want.abs().max()).item() < 1e-3


def test_ldl_of_an_indefinite_matrix_uses_2x2_blocks(device):
    A = torch.tensor([[0., 1, 2], [1, 0, 3], [2, 3, 0]])
    LD, piv = torchweb.linalg.ldl_factor(ours(A, device))
    LDe, pive = torch.linalg.ldl_factor(A)
    assert theirs(piv).tolist() == pive.tolist() == [-3, -3, 3]
    torch.testing.assert_close(theirs(LD), LDe)
    X = torchweb.linalg.ldl_solve(LD, piv, ours(torch.eye(3), device))
    torch.testing.assert_close(theirs(X), torch.linalg.inv(A), rtol=1e-5, atol=1e-6)


def test_ldl_reads_only_the_lower_triangle_and_solves_broadcast(device):
    A = _sym(30, seed=2)
    junk = A + torch.triu(torch.full((30, 30), 7.0), 1)
    LD, piv = torchweb.linalg.ldl_factor(ours(junk, device))
    torch.testing.assert_close(theirs(LD), torch.linalg.ldl_factor(A).LD, rtol=0, atol=1e-4)
    B = torch.randn(4, 30, 2, generator=torch.Generator().manual_seed(3))
    X = torchweb.linalg.ldl_solve(LD, piv, ours(B, device))
    assert tuple(X.shape) == (4, 30, 2)
    torch.testing.assert_close(theirs(X), torch.linalg.solve(A, B), rtol=1e-3, atol=1e-4)


def test_ldl_singular_and_errors_as_pytorch(device):
    Z = torch.zeros(3, 3)
    LD, piv, info = torchweb.linalg.ldl_factor_ex(ours(Z, device))
    e = torch.linalg.ldl_factor_ex(Z)
    assert theirs(piv).tolist() == e.pivots.tolist() and int(info.item()) == int(e.info.item()) == 1
    with pytest.raises(RuntimeError, match="ldl_factor: Unknown error code: 1"):
        torchweb.linalg.ldl_factor(ours(Z, device))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are 2 by 3 matrices"):
        torchweb.linalg.ldl_factor(ours(torch.zeros(2, 3), device))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        torchweb.linalg.ldl_factor(ours(torch.zeros(3), device))
    LD, piv = torchweb.linalg.ldl_factor(ours(_sym(5), device))
    with pytest.raises(RuntimeError, match="each A matrix is 5 by 5 but each b matrix is 4 by 2"):
        torchweb.linalg.ldl_solve(LD, piv, ours(torch.zeros(4, 2), device))
    with pytest.raises(RuntimeError, match="Expected pivots to be integers. Got Float"):
        torchweb.linalg.ldl_solve(LD, piv.float(), ours(torch.zeros(5, 2), device))
    empty = torchweb.linalg.ldl_factor_ex(ours(torch.zeros(2, 0, 0), device))
    assert tuple(empty.LD.shape) == (2, 0, 0) and theirs(empty.info).tolist() == [0, 0]


# -- randomized low-rank SVD ------------------------------------------------------------------------

@pytest.mark.parametrize("m,n,batch", [(50, 30, ()), (30, 50, ()), (40, 40, (2,))])
def test_svd_lowrank_recovers_a_low_rank_matrix(device, m, n, batch):
    g = torch.Generator().manual_seed(m)
    A = torch.randn(*batch, m, 4, generator=g) @ torch.randn(*batch, 4, n, generator=g)
    U, S, V = torchweb.svd_lowrank(ours(A, device), q=6)
    Ue, Se, Ve = torch.svd_lowrank(A, q=6)
    assert tuple(U.shape) == tuple(Ue.shape) and tuple(S.shape) == tuple(Se.shape) and tuple(V.shape) == tuple(Ve.shape)
    torch.testing.assert_close(theirs(S)[..., :4], Se[..., :4], rtol=1e-4, atol=1e-4)
    rec = theirs(U) @ torch.diag_embed(theirs(S)) @ theirs(V).mT
    torch.testing.assert_close(rec, A, rtol=0, atol=1e-4 * A.abs().max().item())
    # (the same subspace: the projector on the first 4 columns of U)
    P, Pe = theirs(U)[..., :4], Ue[..., :4]
    torch.testing.assert_close(P @ P.mT, Pe @ Pe.mT, rtol=0, atol=1e-4)


def test_svd_lowrank_with_m_subtracts_it(device):
    g = torch.Generator().manual_seed(5)
    L = torch.randn(30, 3, generator=g) @ torch.randn(3, 20, generator=g)
    M = torch.randn(1, 20, generator=g).expand(30, 20)
    U, S, V = torchweb.svd_lowrank(ours(L + M, device), q=5, M=ours(M.contiguous(), device))
    torch.testing.assert_close(theirs(S)[:3], torch.linalg.svdvals(L)[:3], rtol=1e-4, atol=1e-4)


def test_pca_lowrank_matches_pytorch(device):
    g = torch.Generator().manual_seed(6)
    A = torch.randn(60, 3, generator=g) @ torch.randn(3, 12, generator=g) + 5.0
    U, S, V = torchweb.pca_lowrank(ours(A, device))
    Ue, Se, Ve = torch.pca_lowrank(A)
    assert tuple(S.shape) == tuple(Se.shape) == (6,)
    torch.testing.assert_close(theirs(S)[:3], Se[:3], rtol=1e-4, atol=1e-4)
    Vo, Vt = theirs(V)[:, :3], Ve[:, :3]
    torch.testing.assert_close(Vo @ Vo.mT, Vt @ Vt.mT, rtol=0, atol=1e-4)
    with pytest.raises(ValueError, match=r"q\(=13\) must be non-negative integer and not greater than min\(m, n\)=12"):
        torchweb.pca_lowrank(ours(A, device), q=13)
    with pytest.raises(ValueError, match=r"niter\(=-1\) must be non-negative integer"):
        torchweb.pca_lowrank(ours(A, device), niter=-1)


def test_svd_lowrank_is_differentiable(device):
    # d(sum S)/dA = U V^T on a rank-q matrix (the q singular vectors found exactly)
    g = torch.Generator().manual_seed(7)
    A = torch.randn(20, 3, generator=g) @ torch.randn(3, 15, generator=g)
    Ao = ours(A, device, True)
    torchweb.svd_lowrank(Ao, q=3)[1].sum().backward()
    At = A.clone().requires_grad_()
    torch.linalg.svdvals(At)[:3].sum().backward()
    torch.testing.assert_close(theirs(Ao.grad), At.grad, rtol=1e-3, atol=1e-3)
