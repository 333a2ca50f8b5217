"""Fused kernels' plans (kernels/fused.py): a realized expression seen before (same structure,
shape, leaf layouts and bindings) reuses its dispatches; its scalars are packed each call.
Every case against PyTorch."""

import torch

import torchweb
from oracle import assert_close
from torchweb.backends.webgpu.kernels import fused as FU


def _w(t):
    return torchweb.tensor(t.tolist(), device="webgpu")


def test_same_expression_new_scalars_each_call():
    a, b = torch.randn(37, 5), torch.randn(37, 5)
    x, y = _w(a), _w(b)
    for k in range(5):
        s = 0.5 + k
        assert_close(x * s + y * (1 - s), a * s + b * (1 - s))


def test_same_structure_and_shape_other_layouts_other_plans():
    # one shape, one expression, the leaf read in four layouts: transposed, offset, strided
    a = torch.randn(16, 16)
    x = _w(a)
    before = len(FU._PLANS.plans)
    views = [lambda t: t, lambda t: t.t(), lambda t: t[8:, :], lambda t: t[::2, :]]
    got = [(v(x)[:8, :8] * 2 + 1) for v in views] + [(x[:8, :8] * 2 + 1)]
    want = [(v(a)[:8, :8] * 2 + 1) for v in views] + [(a[:8, :8] * 2 + 1)]
    for g, w in zip(got, want):
        assert_close(g, w)
    # four layouts of one shape, four plans (the last call reuses the first's)
    assert len(FU._PLANS.plans) - before == 4


def test_aliased_and_repeated_leaves():
    a = torch.randn(300)
    x = _w(a)
    y = x * x + x        # one buffer read through one binding
    z = x[1:] * x[:-1]   # one buffer, two layouts
    for _ in range(2):
        assert_close(y, a * a + a)
        assert_close(z, a[1:] * a[:-1])
        y, z = x * x + x, x[1:] * x[:-1]


def test_in_place_writes_through_the_same_plan():
    a, b = torch.randn(64, 4), torch.randn(64, 4)
    x, y = _w(a), _w(b)
    for k in range(3):
        x.mul_(2.0 + k).add_(y)
        a.mul_(2.0 + k).add_(b)
        assert_close(x, a)
