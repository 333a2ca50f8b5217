"""Second derivatives (create_graph=True) through the math long tail's composites, compared with
PyTorch: they are written from differentiable ops, so double backward comes from those."""

import pytest
import torch

from test_higher_order import both, second_order, values

CASES = {
    "quantile": (lambda T, x: T.quantile(x * x, 0.3, dim=1), [(4, 6)]),
    "nanmean": (lambda T, x: T.nanmean(x * x, 0), [(4, 6)]),
    "cov": (lambda T, x: T.cov(x), [(3, 6)]),
    "corrcoef": (lambda T, x: T.corrcoef(x), [(3, 6)]),
    "diff": (lambda T, x: T.diff(x * x, 2, 1), [(3, 6)]),
    "trapezoid": (lambda T, y, x: T.trapezoid(y * y, x), [(3, 6), (6,)]),
    "cumulative_trapezoid": (lambda T, y: T.cumulative_trapezoid(y.exp(), dx=0.5), [(3, 6)]),
    "renorm": (lambda T, x: T.renorm(x, 2, 0, 0.5), [(3, 6)]),
    "dist": (lambda T, x, y: T.dist(x, y, 3), [(3, 6), (3, 6)]),
    "slice_scatter": (lambda T, x, s: T.slice_scatter(x * x, s.exp(), 1, 1, 3), [(3, 6), (3, 2)]),
    "frexp": (lambda T, x: T.frexp(x * x).mantissa * x, [(3, 6)]),
    "ldexp": (lambda T, x: T.ldexp(x * x, T.tensor(2.0).to(x.device)), [(3, 6)]),
    "gradient": (lambda T, x: T.gradient(x * x, edge_order=2)[1], [(3, 6)]),
}


@pytest.mark.parametrize("name", CASES)
def test_second_order(device, name):
    f, shapes = CASES[name]
    inputs = [values(s, 1.0, 0.5) + 0.1 * i for i, s in enumerate(shapes)]
    if name == "trapezoid":
        inputs[1] = torch.cumsum(inputs[1].abs() + 0.2, 0)
    both(second_order(f, *inputs), device, rtol=2e-3, atol=2e-3)


def test_igamma_second_order_in_x(device):
    def scenario(T, dev):
        from test_higher_order import leaf
        a = leaf(T, dev, values((5,), 0.5, 2.0), False)
        x = leaf(T, dev, values((5,), 0.5, 1.5))
        g, = T.autograd.grad(T.igamma(a, x).sum(), [x], create_graph=True)
        h, = T.autograd.grad((g * g).sum(), [x])
        return [g, h]
    both(scenario, device, rtol=1e-3, atol=1e-4)
