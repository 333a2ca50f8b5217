"""nn.utils.parametrizations.orthogonal (built on torch.linalg) against PyTorch: the parametrized
weight and its gradient for each map, with and without the dynamic trivialization, square,
tall and wide weights; bad arguments raise PyTorch's errors."""

import pytest
import torch

import torchweb
from oracle import assert_close, ours, theirs

TOL = {"rtol": 1e-4, "atol": 1e-4}


def _pair(shape, seed, device):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(*shape, generator=g)
    t = torch.nn.Linear(shape[-1], shape[-2], bias=False)
    m = torchweb.nn.Linear(shape[-1], shape[-2], bias=False, device=device)
    with torch.no_grad():
        t.weight.copy_(w)
    with torchweb.no_grad():
        m.weight.copy_(ours(w, device))
    return t, m


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("trivialization", [True, False])
def test_square_weight_as_pytorch(device, orthogonal_map, trivialization):
    t, m = _pair((4, 4), 1, device)
    if not trivialization and orthogonal_map != "householder":
        t.weight.data = torch.eye(4)    # (no right_inverse there: the weight is the map's input)
        m.weight.data = torchweb.eye(4, device=device)
    torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map=orthogonal_map, use_trivialization=trivialization)
    torchweb.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map,
                                                  use_trivialization=trivialization)
    assert_close(m.weight, t.weight.detach(), **TOL)
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    t(x).square().sum().backward()
    m(ours(x, device)).square().sum().backward()
    assert_close(m.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, **TOL)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_rectangular_weight_is_orthonormal(device, shape):
    """(The trivialization completes a tall Q with random columns: PyTorch's draw differs, so
    the value is checked by its property.)"""
    _, m = _pair(shape, 3, device)
    torchweb.nn.utils.parametrizations.orthogonal(m)
    W = theirs(m.weight.detach())
    gram = W.mT @ W if shape[0] >= shape[1] else W @ W.mT
    torch.testing.assert_close(gram, torch.eye(min(shape)), **TOL)


def test_householder_without_trivialization_rectangular(device):
    t, m = _pair((5, 3), 4, device)
    torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map="householder", use_trivialization=False)
    torchweb.nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder", use_trivialization=False)
    assert_close(m.weight, t.weight.detach(), **TOL)


def test_errors_as_pytorch():
    for fn in (lambda M, nn: M.orthogonal(nn.Linear(3, 3), orthogonal_map="qr"),
               lambda M, nn: M.orthogonal(nn.Linear(3, 3), name="nope"),
               lambda M, nn: M.orthogonal(nn.Linear(3, 3), name="bias")):
        with pytest.raises(ValueError) as expected:
            fn(torch.nn.utils.parametrizations, torch.nn)
        with pytest.raises(ValueError) as got:
            fn(torchweb.nn.utils.parametrizations, torchweb.nn)
        if "Module" not in str(expected.value):
            assert str(got.value) == str(expected.value)
