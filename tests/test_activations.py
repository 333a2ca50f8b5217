"""Activations (nn.functional) and blends (lerp, addcmul, addcdiv) against PyTorch: forward on
ranges that reach every branch (kinks, NaN, infinities, overflow), backward including the
kinks, in-place forms, bad input; the random ones (rrelu training, gumbel_softmax) by their
properties."""

import math

import pytest
import torch

import torchweb
import torchweb.nn.functional  # noqa: F401
from oracle import check, make, ours
from test_autograd_ops import run_case

INF, NAN = math.inf, math.nan
TOL = {"rtol": 2e-6, "atol": 1e-6}
EDGES = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 6.0, 0.5, -0.5, 20.0, 25.0, -25.0, 100.0, -100.0, 1e-7]


def F(m):
    return m.nn.functional


ACTS = {  # name: call
    "softplus": lambda m, x: F(m).softplus(x),
    "softplus_beta": lambda m, x: F(m).softplus(x, beta=2.0, threshold=5.0),
    "softplus_beta_small": lambda m, x: F(m).softplus(x, beta=0.5),
    "mish": lambda m, x: F(m).mish(x),
    "elu": lambda m, x: F(m).elu(x),
    "elu_alpha": lambda m, x: F(m).elu(x, alpha=0.5),
    "selu": lambda m, x: F(m).selu(x),
    "selu_torch": lambda m, x: m.selu(x),
    "celu": lambda m, x: F(m).celu(x, alpha=2.0),
    "leaky_relu": lambda m, x: F(m).leaky_relu(x),
    "leaky_relu_slope": lambda m, x: F(m).leaky_relu(x, negative_slope=0.2),
    "hardtanh": lambda m, x: F(m).hardtanh(x),
    "hardtanh_bounds": lambda m, x: F(m).hardtanh(x, min_val=-0.5, max_val=3.0),
    "relu6": lambda m, x: F(m).relu6(x),
    "hardswish": lambda m, x: F(m).hardswish(x),
    "hardsigmoid": lambda m, x: F(m).hardsigmoid(x),
    "softsign": lambda m, x: F(m).softsign(x),
    "tanhshrink": lambda m, x: F(m).tanhshrink(x),
    "softshrink": lambda m, x: F(m).softshrink(x),
    "softshrink_lambd": lambda m, x: F(m).softshrink(x, 1.0),
    "hardshrink": lambda m, x: F(m).hardshrink(x),
    "hardshrink_method": lambda m, x: x.hardshrink(1.0),
    "threshold": lambda m, x: F(m).threshold(x, 0.5, -2.0),
    "threshold_torch": lambda m, x: m.threshold(x, 0.5, -2.0),
    "glu": lambda m, x: F(m).glu(x.reshape(-1, 2)),
    "glu_dim0": lambda m, x: F(m).glu(x.reshape(2, -1), 0),
    "rrelu_eval": lambda m, x: F(m).rrelu(x),
    "logsigmoid": lambda m, x: F(m).logsigmoid(x),
    "softmin": lambda m, x: F(m).softmin(x.reshape(2, -1), dim=1),
    "softmin_dim0": lambda m, x: F(m).softmin(x.reshape(2, -1), 0),
}


@pytest.mark.parametrize("name", ACTS)
def test_forward_edges(device, name):
    x = torch.tensor(EDGES)
    if name.startswith("softmin"):
        x = x[3:]  # a row with NaN/inf is NaN: checked with the grads below
    check(ACTS[name], x, device=device, **TOL)


@pytest.mark.parametrize("name", ACTS)
def test_forward_random(device, name):
    for shape in [(4, 6), (2, 3, 4)]:
        check(ACTS[name], make(shape, low=-8, high=8), device=device, **TOL)
    check(ACTS[name], make((6, 4), low=-8, high=8).t(), device=device, **TOL)


@pytest.mark.parametrize("name", [n for n in ACTS if not n.startswith(("glu", "softmin"))])
def test_empty_and_0d(device, name):
    check(ACTS[name], make((0, 3)), device=device, **TOL)
    check(ACTS[name], make(()), device=device, **TOL)


@pytest.mark.parametrize("name", ACTS)
def test_backward(device, name):
    def mk():
        x = torch.randn(4, 6) * 4
        flat = x.view(-1)
        flat[:8] = torch.tensor([0.0, 1.0, -1.0, 3.0, -3.0, 6.0, 0.5, -0.5])  # the kinks
        return (x,)
    run_case(device, lambda T, x: ACTS[name](T, x), mk)


INPLACE = {
    "elu": lambda m, x: F(m).elu(x, inplace=True),
    "elu_": lambda m, x: F(m).elu_(x),
    "selu": lambda m, x: F(m).selu(x, inplace=True),
    "celu_": lambda m, x: F(m).celu_(x),
    "leaky_relu": lambda m, x: F(m).leaky_relu(x, 0.1, inplace=True),
    "leaky_relu_": lambda m, x: F(m).leaky_relu_(x, 0.1),
    "hardtanh_": lambda m, x: F(m).hardtanh_(x),
    "relu6": lambda m, x: F(m).relu6(x, inplace=True),
    "hardswish": lambda m, x: F(m).hardswish(x, inplace=True),
    "hardsigmoid": lambda m, x: F(m).hardsigmoid(x, inplace=True),
    "threshold_": lambda m, x: F(m).threshold_(x, 0.0, 5.0),
    "mish": lambda m, x: F(m).mish(x, inplace=True),
    "rrelu_": lambda m, x: F(m).rrelu_(x),
}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace(device, name):
    def fn(m, x):
        y = x * 1
        r = INPLACE[name](m, y)
        return r, y
    check(fn, make((3, 4), low=-5, high=5), device=device, **TOL)
    run_case(device, lambda T, x: INPLACE[name](T, x * 1), lambda: (torch.randn(3, 4) * 3,))


def test_prelu(device):
    x = make((2, 3, 4), low=-3, high=3)
    for w in (torch.tensor([0.25]), torch.tensor([0.1, -0.2, 0.3]), torch.tensor(0.2)):
        check(lambda m, a, b: F(m).prelu(a, b), x, w, device=device, **TOL)
        check(lambda m, a, b: m.prelu(a, b), x, w, device=device, **TOL)
        run_case(device, lambda T, a, b: F(T).prelu(a, b), lambda: (torch.randn(2, 3, 4), w.clone()))
    check(lambda m, a, b: F(m).prelu(a, b), x, torch.tensor([0.1, 0.2]), device=device)
    check(lambda m, a, b: F(m).prelu(a, b), make((5,)), torch.tensor([0.1]), device=device, **TOL)


BAD = {
    "softshrink_neg": lambda m, x: F(m).softshrink(x, -0.5),
    "glu_odd": lambda m, x: F(m).glu(x.reshape(3, 4)[:, :3]),
    "glu_0d": lambda m, x: F(m).glu(x.sum()),
    "hardtanh_minmax": lambda m, x: F(m).hardtanh(x, 2.0, 1.0),
    "elu_int": lambda m, x: F(m).elu(x.long()),
    "softplus_int": lambda m, x: F(m).softplus(x.long()),
    "leaky_int": lambda m, x: F(m).leaky_relu(x.long()),
    "logsigmoid_int": lambda m, x: F(m).logsigmoid(x.long()),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input(device, name):
    check(BAD[name], make((12,)), device=device)


def test_rrelu_training(device):
    torchweb.manual_seed(3)
    x = ours(torch.linspace(-4, 4, 400), device)
    y = torchweb.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    xs, ys = torch.tensor(x.tolist()), torch.tensor(y.tolist())
    neg = xs < 0
    slopes = ys[neg] / xs[neg]
    assert (slopes >= 0.1 - 1e-6).all() and (slopes <= 0.3 + 1e-6).all() and slopes.std() > 0.02
    assert torch.equal(ys[~neg], xs[~neg])
    torchweb.manual_seed(3)
    y2 = torchweb.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    assert y2.tolist() == y.tolist()


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax(device, hard):
    torchweb.manual_seed(0)
    logits = ours(torch.randn(50, 5), device, requires_grad=True)
    y = torchweb.nn.functional.gumbel_softmax(logits, tau=0.5, hard=hard)
    t = torch.tensor(y.tolist())
    assert torch.allclose(t.sum(1), torch.ones(50), atol=1e-5)
    if hard:
        assert ((t == 0) | (t == 1)).all()
    (y * ours(torch.randn(50, 5), device)).sum().backward()
    g = torch.tensor(logits.grad.tolist())
    assert torch.isfinite(g).all() and torch.allclose(g.sum(1), torch.zeros(50), atol=1e-4)
    torchweb.manual_seed(0)
    y2 = torchweb.nn.functional.gumbel_softmax(logits.detach(), tau=0.5, hard=hard)
    assert y2.tolist() == y.tolist()
    # the noise has the Gumbel distribution's mean (Euler's gamma) and variance (pi^2 / 6)
    torchweb.manual_seed(1)
    z = torchweb.nn.functional.gumbel_softmax(ours(torch.zeros(20000, 2), device), tau=1.0)
    p = torch.tensor(z.tolist())[:, 0]
    assert abs(p.mean().item() - 0.5) < 0.02


# -- blends -----------------------------------------------------------------------------------
def test_lerp(device):
    a, b = make((3, 4)), make((3, 4))
    for w in (0.0, 0.3, 0.5, 1.0, 1.7, -0.4):
        check(lambda m, x, y: m.lerp(x, y, w), a, b, device=device, **TOL)
        check(lambda m, x, y: x.lerp(y, w), a, b, device=device, **TOL)
        check(lambda m, x, y: x.clone().lerp_(y, w), a, b, device=device, **TOL)
    wt = torch.tensor([0.0, 0.2, 0.5, 0.7, 1.0, 2.0, -1.0, 0.49, 0.51, 0.9, 0.1, 1.5]).reshape(3, 4)
    check(lambda m, x, y, z: m.lerp(x, y, z), a, b, wt, device=device, **TOL)
    check(lambda m, x, y, z: m.lerp(x, y, z), a, make((4,)), make((3, 1), low=0, high=1), device=device, **TOL)
    check(lambda m, x, y: m.lerp(x, y, 0.5), a, make((4,), dtype=torch.float16), device=device)
    check(lambda m, x, y: m.lerp(x, y, 0.5), make((3,), dtype=torch.int64), make((3,), dtype=torch.int64), device=device)
    check(lambda m, x, y: m.lerp(x, y, 2.0), torch.tensor([INF, NAN, 1e30]), torch.tensor([1.0, 2.0, -1e30]),
          device=device, **TOL)
    run_case(device, lambda T, x, y: T.lerp(x, y, 0.3), lambda: (torch.randn(3, 4), torch.randn(4)))
    run_case(device, lambda T, x, y: T.lerp(x, y, 0.8), lambda: (torch.randn(3, 4), torch.randn(4)))
    run_case(device, lambda T, x, y, z: T.lerp(x, y, z), lambda: (torch.randn(3, 4), torch.randn(3, 4), torch.rand(3, 4) * 1.4 - 0.2))


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addc(device, name):
    a, b, c = make((3, 4)), make((3, 1)), make((4,), nonzero=True)
    for kw in ({}, {"value": 0.5}, {"value": -2}):
        check(lambda m, x, y, z: getattr(m, name)(x, y, z, **kw), a, b, c, device=device, **TOL)
        check(lambda m, x, y, z: getattr(x, name)(y, z, **kw), a, b, c, device=device, **TOL)
        check(lambda m, x, y, z: getattr(x.clone(), name + "_")(y, z, **kw), a, b, c, device=device, **TOL)
        run_case(device, lambda T, x, y, z: getattr(T, name)(x, y, z, **kw), lambda: (torch.randn(3, 4), torch.randn(3, 1), torch.rand(4) + 0.5))
    ints = [make((3,), dtype=torch.int64, nonzero=True) for _ in range(3)]
    check(lambda m, x, y, z: getattr(m, name)(x, y, z), *ints, device=device)
    check(lambda m, x, y, z: getattr(m, name)(x, y, z, value=2), *ints, device=device)
