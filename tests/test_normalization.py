"""Normalization composites (ops/composite/normalization.py) against PyTorch: forward on both
devices, gradients of input, weight and bias, running statistics updated in place, bad input."""

import pytest
import torch

import torchweb
import torchweb.nn.functional  # noqa: F401
from oracle import assert_close, check, make, ours
from test_autograd_ops import NoGrad, run_case

TOL = {"rtol": 1e-4, "atol": 1e-5}


def F(m):
    return m.nn.functional


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("shape,ns", [((3, 5), (5,)), ((2, 3, 4), (3, 4)), ((4,), (4,)), ((0, 3), (3,)),
                                      ((2, 700), (700,))])
def test_layer_norm_forward(device, shape, ns, layout):
    x = make(shape)
    check(lambda m, a: F(m).layer_norm(a, ns), x, device=device, layout=layout, **TOL)
    w, b = make(ns), make(ns)
    check(lambda m, a, w, b: F(m).layer_norm(a, ns, w, b, eps=1e-3), x, w, b, device=device, **TOL)
    check(lambda m, a, w: m.layer_norm(a, ns, w), x, w, device=device, **TOL)


@pytest.mark.parametrize("shape,ns", [((3, 5), (5,)), ((2, 3, 4), (3, 4)), ((0, 3), (3,))])
def test_rms_norm_forward(device, shape, ns):
    x, w = make(shape), make(ns)
    check(lambda m, a: F(m).rms_norm(a, ns), x, device=device, **TOL)
    check(lambda m, a, w: F(m).rms_norm(a, ns, w, eps=1e-4), x, w, device=device, **TOL)
    check(lambda m, a, w: m.rms_norm(a, list(ns), w), x, w, device=device, **TOL)


@pytest.mark.parametrize("shape,groups", [((2, 6, 4), 3), ((2, 6), 2), ((3, 4, 2, 3), 4), ((1, 4, 5), 1),
                                          ((0, 4, 2), 2)])
def test_group_norm_forward(device, shape, groups):
    x, w, b = make(shape), make(shape[1:2]), make(shape[1:2])
    check(lambda m, a: F(m).group_norm(a, groups), x, device=device, **TOL)
    check(lambda m, a, w, b: F(m).group_norm(a, groups, w, b, 1e-3), x, w, b, device=device, **TOL)
    check(lambda m, a, w, b: m.group_norm(a, groups, w, b), x, w, b, device=device, **TOL)


def _bn(m, x, rm, rv, w, b, training, momentum):
    out = F(m).batch_norm(x, rm, rv, w, b, training=training, momentum=momentum, eps=1e-4)
    return out, rm, rv


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 2, 4), (0, 3)])
def test_batch_norm_forward_and_running_stats(device, shape, training):
    if training and shape[0] == 0:
        pytest.skip("covered by test_batch_norm_empty")
    x = make(shape)
    rm, rv = make((3,)), make((3,), low=0.5, high=2.0)
    w, b = make((3,)), make((3,))
    check(lambda m, *a: _bn(m, *a, training, 0.3), x, rm, rv, w, b, device=device, **TOL)
    check(lambda m, a, rm, rv: _bn(m, a, rm, rv, None, None, training, 0.1), x, rm, rv, device=device, **TOL)
    if training:  # no running statistics
        check(lambda m, a: F(m).batch_norm(a, None, None, training=True), x, device=device, **TOL)
    # torch.batch_norm: ATen's argument order
    check(lambda m, a, w, b, rm, rv: (m.batch_norm(a, w, b, rm, rv, training, 0.2, 1e-5, False), rm, rv),
          x, w, b, rm, rv, device=device, **TOL)


def test_batch_norm_empty(device):
    check(lambda m, a, rm, rv: _bn(m, a, rm, rv, None, None, True, 0.1), make((0, 3)), make((3,)),
          make((3,), low=0.5), device=device)


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 2, 4)])
def test_instance_norm_forward(device, shape, use_input_stats):
    x = make(shape)
    rm, rv, w, b = make((3,)), make((3,), low=0.5, high=2.0), make((3,)), make((3,))
    check(lambda m, a, rm, rv, w, b: (F(m).instance_norm(a, rm, rv, w, b, use_input_stats, 0.25, 1e-4), rm, rv),
          x, rm, rv, w, b, device=device, **TOL)
    if use_input_stats:
        check(lambda m, a: F(m).instance_norm(a), x, device=device, **TOL)
    check(lambda m, a, w, b, rm, rv: (m.instance_norm(a, w, b, rm, rv, use_input_stats, 0.1, 1e-5, False), rm, rv),
          x, w, b, rm, rv, device=device, **TOL)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("shape", [(2, 4, 3), (1, 6, 2, 3), (2, 3, 2, 2, 2)])
def test_local_response_norm_forward(device, shape, size):
    check(lambda m, a: F(m).local_response_norm(a, size, alpha=0.1, beta=0.6, k=1.5), make(shape), device=device,
          **TOL)


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, -1), (3.0, 0), (float("inf"), 1)])
def test_normalize_forward(device, p, dim):
    x = make((3, 4))
    x[1] = 0.0
    check(lambda m, a: F(m).normalize(a, p=p, dim=dim), x, device=device, **TOL)
    check(lambda m, a: F(m).normalize(a, p=p, dim=dim), x, device=device, layout="transposed", **TOL)


def test_running_stats_are_updated_in_place(device):
    rm, rv = torchweb.zeros(3, device=device), torchweb.ones(3, device=device)
    x = ours(make((5, 3)), device)
    before = (rm._storage, rv._storage)
    F(torchweb).batch_norm(x, rm, rv, training=True)
    assert (rm._storage, rv._storage) == before
    assert rm._version > 0 and rv._version > 0


# -- gradients -------------------------------------------------------------------------------
def rn(*s):
    return torch.randn(s)


GRAD_CASES = {
    "layer_norm": (lambda T, x, w, b: F(T).layer_norm(x, (4,), w, b), lambda: (rn(3, 4), rn(4), rn(4))),
    "layer_norm_2d": (lambda T, x, w, b: F(T).layer_norm(x, (3, 4), w, b, 1e-3), lambda: (rn(2, 3, 4), rn(3, 4), rn(3, 4))),
    "layer_norm_noaffine": (lambda T, x: F(T).layer_norm(x, (5,)), lambda: (rn(2, 3, 5),)),
    # (its own backward, composite/layer_norm_grad.py: no batch dims, weight only, a frozen input)
    "layer_norm_no_batch": (lambda T, x, w, b: F(T).layer_norm(x, (6,), w, b), lambda: (rn(6), rn(6), rn(6))),
    "layer_norm_weight_only": (lambda T, x, w: F(T).layer_norm(x, (4,), w), lambda: (rn(2, 5, 4) * 3 + 1, rn(4))),
    "layer_norm_frozen_input": (lambda T, x, w, b: F(T).layer_norm(x, (2, 4), w, b),
                                lambda: (NoGrad(rn(3, 2, 4)), rn(2, 4), rn(2, 4))),
    "rms_norm": (lambda T, x, w: F(T).rms_norm(x, (4,), w), lambda: (rn(3, 4), rn(4))),
    "group_norm": (lambda T, x, w, b: F(T).group_norm(x, 2, w, b), lambda: (rn(2, 4, 3), rn(4), rn(4))),
    "batch_norm_train": (lambda T, x, rm, rv, w, b: F(T).batch_norm(x, rm, rv, w, b, training=True),
                         lambda: (rn(4, 3, 2), NoGrad(rn(3)), NoGrad(torch.rand(3) + 0.5), rn(3), rn(3))),
    "batch_norm_eval": (lambda T, x, rm, rv, w, b: F(T).batch_norm(x, rm, rv, w, b, training=False),
                        lambda: (rn(4, 3), NoGrad(rn(3)), NoGrad(torch.rand(3) + 0.5), rn(3), rn(3))),
    "instance_norm": (lambda T, x, w, b: F(T).instance_norm(x, weight=w, bias=b), lambda: (rn(2, 3, 5), rn(3), rn(3))),
    "local_response_norm": (lambda T, x: F(T).local_response_norm(x, 3, 0.5), lambda: (rn(2, 5, 3),)),
    "normalize": (lambda T, x: F(T).normalize(x, dim=1), lambda: (rn(3, 4),)),
    "normalize_p1": (lambda T, x: F(T).normalize(x, p=1.0, dim=0), lambda: (rn(3, 4),)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_normalization_backward(device, name):
    fn, inputs = GRAD_CASES[name]
    run_case(device, fn, inputs, rtol=1e-4, atol=1e-4)


# -- bad input -------------------------------------------------------------------------------
BAD = [
    lambda m: F(m).layer_norm(m.ones(2, 4), [3]),
    lambda m: F(m).layer_norm(m.ones(2, 4), [4], m.ones(3)),
    lambda m: F(m).layer_norm(m.ones(2, 4), [4], None, m.ones(3)),
    lambda m: F(m).layer_norm(m.ones(2, 4), []),
    lambda m: F(m).layer_norm(m.ones(2, 4), 4),
    lambda m: F(m).layer_norm(m.ones(2, 4, dtype=m.int32), [4]),
    lambda m: F(m).rms_norm(m.ones(2, 4), [3]),
    lambda m: F(m).group_norm(m.ones(2, 6, 4), 4),
    lambda m: F(m).group_norm(m.ones(2, 6, 4), 3, m.ones(5)),
    lambda m: F(m).group_norm(m.ones(6), 3),
    lambda m: F(m).batch_norm(m.ones(1, 3), m.zeros(3), m.ones(3), training=True),
    lambda m: F(m).batch_norm(m.ones(4, 3), None, None, training=False),
    lambda m: F(m).batch_norm(m.ones(4, 3), m.zeros(4), m.ones(3), training=True),
    lambda m: F(m).batch_norm(m.ones(4, 3), m.zeros(3), m.ones(3), m.ones(4)),
    lambda m: F(m).batch_norm(m.ones(4, 3), m.zeros(3), m.ones(3), training=True, momentum=None),
    lambda m: F(m).instance_norm(m.ones(2, 3, 1)),
    lambda m: F(m).instance_norm(m.ones(2, 3, 4), use_input_stats=False),
    lambda m: F(m).instance_norm(m.ones(2, 3, 4), m.zeros(2), m.ones(3)),
    lambda m: F(m).local_response_norm(m.ones(2, 3), 2),
    lambda m: F(m).normalize(m.ones(2, 3, dtype=m.int32)),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_normalization_bad_input(device, i):
    fn = BAD[i]
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with _default(device):
        with pytest.raises(type(theirs.value)) as mine:
            fn(torchweb)
    if isinstance(theirs.value, (RuntimeError, ValueError)) and "dimensionality" not in str(theirs.value):
        assert str(mine.value) == str(theirs.value)


class _default:
    def __init__(self, device):
        self.device = device

    def __enter__(self):
        self.old = torchweb.get_default_device()
        torchweb.set_default_device(self.device)

    def __exit__(self, *a):
        torchweb.set_default_device(self.old)


def test_layer_norm_large(device):
    # 70000 rows: the normalization's elementwise kernels cross 65535 workgroups
    x = torch.randn(70000, 8)
    got = F(torchweb).layer_norm(torchweb.tensor(x.numpy(), device=device), (8,))
    assert_close(got, torch.nn.functional.layer_norm(x, (8,)), **TOL)
