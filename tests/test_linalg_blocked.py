"""Cholesky and LU by panels of 32 columns (webgpu: kernels/cholesky.py and kernels/lu_panel.py,
one dispatch a panel; the cpu device composes column by column), against PyTorch: factors,
pivots, a failure's order in any panel, batches, tall and wide matrices, gradients."""

import pytest
import torch

import torchweb
from oracle import ours, theirs


def _spd(n, batch=(), seed=0):
    g = torch.Generator().manual_seed(seed)
    M = torch.randn(*batch, n, n, generator=g)
    return M @ M.mT / n + torch.eye(n)


@pytest.mark.parametrize("n,batch", [(1, ()), (31, ()), (32, (2,)), (33, ()), (64, ()), (70, (3,)), (129, ())])
def test_factor_matches_pytorch(device, n, batch):
    A = _spd(n, batch, seed=n)
    L = torchweb.linalg.cholesky(ours(A, device))
    expected = torch.linalg.cholesky(A.double()).float()
    torch.testing.assert_close(theirs(L), expected, rtol=1e-4, atol=2e-5)
    U = torchweb.linalg.cholesky(ours(A, device), upper=True)
    torch.testing.assert_close(theirs(U), expected.mT, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("bad", [3, 31, 32, 40, 65])
def test_info_is_the_first_failing_order_in_any_panel(device, bad):
    A = _spd(70, seed=1)
    A[bad, bad] = -100.0
    L, info = torchweb.linalg.cholesky_ex(ours(A, device))
    t_info = torch.linalg.cholesky_ex(A).info
    assert int(info.item()) == int(t_info.item()) == bad + 1
    with pytest.raises(torchweb.linalg.LinAlgError, match=f"leading minor of order {bad + 1} is not"):
        torchweb.linalg.cholesky(ours(A, device))


def test_a_batch_reports_each_matrix(device):
    A = _spd(40, (3,), seed=2)
    A[1, 35, 35] = -5.0
    _, info = torchweb.linalg.cholesky_ex(ours(A, device))
    assert theirs(info).tolist() == torch.linalg.cholesky_ex(A).info.tolist()


def test_gradient_past_one_block(device):
    A = _spd(45, seed=3)
    w = torch.linspace(-1, 1, 45 * 45).reshape(45, 45)
    At = A.clone().requires_grad_()
    (torch.linalg.cholesky(At) * w).sum().backward()
    Ao = ours(A, device).requires_grad_()
    (torchweb.linalg.cholesky(Ao) * ours(w, device)).sum().backward()
    torch.testing.assert_close(theirs(Ao.grad), At.grad, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("m,n,batch", [(5, 5, ()), (32, 32, (2,)), (33, 33, ()), (70, 70, (2,)), (100, 60, ()),
                                       (60, 100, ()), (129, 129, ())])
def test_lu_factor_matches_pytorch(device, m, n, batch):
    g = torch.Generator().manual_seed(m * n)
    A = torch.randn(*batch, m, n, generator=g)
    LU, pivots = torchweb.linalg.lu_factor(ours(A, device))
    t_LU, t_pivots = torch.linalg.lu_factor(A.double())
    assert theirs(pivots).tolist() == t_pivots.tolist()
    scale = t_LU.abs().amax()
    torch.testing.assert_close(theirs(LU).double() / scale, t_LU / scale, rtol=0, atol=1e-4)


def test_lu_of_a_singular_matrix_and_a_solve(device):
    g = torch.Generator().manual_seed(7)
    S = torch.randn(40, 40, generator=g)
    S[:, 33] = 0.0
    _, _, info = torchweb.linalg.lu_factor_ex(ours(S, device))
    assert int(info.item()) == int(torch.linalg.lu_factor_ex(S).info.item())
    A, B = torch.randn(80, 80, generator=g) + 8 * torch.eye(80), torch.randn(80, 3, generator=g)
    X = torchweb.linalg.solve(ours(A, device), ours(B, device))
    torch.testing.assert_close(theirs(X), torch.linalg.solve(A.double(), B.double()).float(), rtol=1e-4, atol=1e-5)
