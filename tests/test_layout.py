"""Shape and layout ops (issue 7) against PyTorch, forward and backward: flip, fliplr, flipud,
rot90, roll, repeat, tile, repeat_interleave, tril, triu, diagonal (a view), outer/ger, addmv,
addr, baddbmm, addbmm, kron, meshgrid, atleast_*d, column_stack, dstack."""

import pytest
import torch

from oracle import check, make, ours
from test_autograd_ops import run_case

CASES = {
    "flip": lambda m, x: m.flip(x, (0, 2)),
    "flip_neg": lambda m, x: x.flip(-1),
    "fliplr": lambda m, x: m.fliplr(x),
    "flipud": lambda m, x: m.flipud(x),
    "rot90": lambda m, x: m.rot90(x),
    "rot90_k2": lambda m, x: m.rot90(x, 2, (1, 2)),
    "rot90_k3": lambda m, x: m.rot90(x, -1, (0, 2)),
    "roll": lambda m, x: m.roll(x, 1, 0),
    "roll_multi": lambda m, x: m.roll(x, (2, -1), (1, 2)),
    "roll_flat": lambda m, x: m.roll(x, 5),
    "repeat": lambda m, x: x.repeat(2, 1, 3),
    "repeat_more": lambda m, x: x.repeat(2, 1, 1, 2),
    "tile": lambda m, x: m.tile(x, (2, 1)),
    "repeat_interleave": lambda m, x: m.repeat_interleave(x, 2),
    "repeat_interleave_dim": lambda m, x: x.repeat_interleave(3, dim=1),
    "tril": lambda m, x: m.tril(x),
    "tril_diag": lambda m, x: m.tril(x, -1),
    "triu": lambda m, x: m.triu(x, 1),
    "triu_method": lambda m, x: x.triu(-2),
    "diagonal": lambda m, x: m.diagonal(x),
    "diagonal_off": lambda m, x: x.diagonal(1, 1, 2),
    "diagonal_neg": lambda m, x: m.diagonal(x, -1, -1, 0),
    "kron": lambda m, x: m.kron(x.contiguous(), x[0, :2].contiguous()),  # PyTorch refuses some strided inputs
    "atleast_3d": lambda m, x: m.atleast_3d(x[0, 0]),
    "atleast_2d": lambda m, x: m.atleast_2d(x[0, 0, 0]),
    "column_stack": lambda m, x: m.column_stack([x[0, 0], x[1, 1]]),
    "dstack": lambda m, x: m.dstack([x[0], x[1]]),
}


@pytest.mark.parametrize("name", CASES)
def test_forward(device, name):
    check(CASES[name], make((2, 3, 4)), device=device)
    check(CASES[name], make((4, 3, 2)).permute(2, 1, 0), device=device)


@pytest.mark.parametrize("name", CASES)
def test_backward(device, name):
    run_case(device, lambda T, x: CASES[name](T, x), lambda: (torch.randn(2, 3, 4),))


def test_int_and_empty(device):
    for name in ("flip", "roll", "repeat", "tril", "diagonal", "repeat_interleave"):
        check(CASES[name], make((2, 3, 4), dtype=torch.int64), device=device)
        check(CASES[name], make((2, 0, 4)), device=device)


def test_diagonal_is_a_view(device):
    x = ours(torch.zeros(3, 3), device)
    x.diagonal().fill_(1.0) if hasattr(x, "fill_") else None
    assert x.tolist() == torch.eye(3).tolist()


def test_products(device):
    a, v, w = make((3, 4)), make((4,)), make((3,))
    check(lambda m, x, y: m.outer(x, y), w, v, device=device)
    check(lambda m, x, y: m.ger(x, y), w, v, device=device)
    check(lambda m, i, x, y: m.addmv(i, x, y, beta=0.5, alpha=2), w, a, v, device=device, rtol=1e-5)
    check(lambda m, i, x, y: m.addr(i, x, y), a, w, v, device=device)
    check(lambda m, i, x, y: m.addr(i, x, y, beta=0), torch.full((3, 4), float("nan")), w, v, device=device)
    b1, b2 = make((2, 3, 4)), make((2, 4, 5))
    check(lambda m, i, x, y: m.baddbmm(i, x, y, alpha=0.5), make((3, 5)), b1, b2, device=device, rtol=1e-5, atol=1e-5)
    check(lambda m, i, x, y: m.addbmm(i, x, y), make((3, 5)), b1, b2, device=device, rtol=1e-5, atol=1e-5)
    run_case(device, lambda T, i, x, y: T.addmv(i, x, y), lambda: (torch.randn(3), torch.randn(3, 4), torch.randn(4)))
    run_case(device, lambda T, i, x, y: T.baddbmm(i, x, y, beta=2), lambda: (torch.randn(3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5)))
    run_case(device, lambda T, i, x, y: T.addbmm(i, x, y), lambda: (torch.randn(3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5)))
    run_case(device, lambda T, x, y: T.outer(x, y), lambda: (torch.randn(3), torch.randn(4)))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(device, indexing):
    check(lambda m, a, b, c: m.meshgrid(a, b, c, indexing=indexing), make((2,)), make((3,)), make((4,)), device=device)
    run_case(device, lambda T, a, b: T.meshgrid(a, b, indexing=indexing), lambda: (torch.randn(2), torch.randn(3)))


BAD = {
    "flip_dup": lambda m, x: m.flip(x, (0, 0)),
    "fliplr_1d": lambda m, x: m.fliplr(x[0, 0]),
    "rot90_same": lambda m, x: m.rot90(x, 1, (0, 0)),
    "roll_mismatch": lambda m, x: m.roll(x, (1, 2), 0),
    "repeat_few": lambda m, x: x.repeat(2, 2),
    "tril_1d": lambda m, x: m.tril(x[0, 0]),
    "diagonal_same": lambda m, x: m.diagonal(x, 0, 1, 1),
    "outer_2d": lambda m, x: m.outer(x[0], x[0, 0]),
    "meshgrid_2d": lambda m, x: m.meshgrid(x[0], indexing="ij"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input(device, name):
    check(BAD[name], make((2, 3, 4)), device=device)
