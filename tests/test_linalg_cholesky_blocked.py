"""linalg.cholesky past one block (ops/linalg_cholesky.py: the webgpu kernel of 32 x 32 blocks,
panels above it; the cpu device composes column by column), against PyTorch: factors, a
failure's order in any panel, batches, gradients."""

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
