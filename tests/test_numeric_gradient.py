"""torch.gradient (finite differences) against PyTorch: uniform spacing, per-dim spacing,
coordinates, edge orders 1 and 2, dim selection, integer input, backward and errors."""

import pytest
import torch

from oracle import check, make
from test_autograd_ops import NoGrad, run_case

CASES = {
    "default": lambda m, x, c: m.gradient(x),
    "edge2": lambda m, x, c: m.gradient(x, edge_order=2),
    "spacing": lambda m, x, c: m.gradient(x, spacing=0.5),
    "spacing_list": lambda m, x, c: m.gradient(x, spacing=[2.0, 0.5, 3]),
    "dim": lambda m, x, c: m.gradient(x, dim=1),
    "dims": lambda m, x, c: m.gradient(x, dim=[2, 0], spacing=[1.5, 2]),
    "coords": lambda m, x, c: m.gradient(x, spacing=[c], dim=1),
    "coords_edge2": lambda m, x, c: m.gradient(x, spacing=(c,), dim=-2, edge_order=2),
    "bad_edge": lambda m, x, c: m.gradient(x, edge_order=3),
    "bad_len": lambda m, x, c: m.gradient(x, spacing=[1.0, 2.0]),
    "too_short": lambda m, x, c: m.gradient(x[:, :2], dim=1, edge_order=2),
}


@pytest.mark.parametrize("name", CASES)
def test_gradient(device, name):
    x, c = make((3, 4, 5)), torch.tensor([0.0, 0.5, 2.0, 3.0])
    check(CASES[name], x, c, device=device, rtol=1e-4, atol=1e-5)
    check(CASES[name], make((3, 4, 5), dtype=torch.int64), c, device=device, rtol=1e-4, atol=1e-5)
    if not name.startswith("bad") and name != "too_short":
        run_case(device, lambda T, a, b: CASES[name](T, a, b), lambda: (make((3, 4, 5)), NoGrad(c)), rtol=1e-4)
