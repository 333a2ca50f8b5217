"""The activation modules (nn/modules/activation.py) against PyTorch's: every class in
torch.nn.modules.activation.__all__ (MultiheadAttention is tested with the attention modules),
forward and backward on both devices, in-place variants really in place, repr text,
parameters/state_dict keys, PReLU's init, RReLU's random slopes in training, bad arguments."""

import warnings

import pytest
import torch

import torchweb
from nn_act_loss_helpers import check_ctor_error, check_forward_error, pair
from oracle import assert_close, make, ours, theirs

# Names of torch.nn.modules.activation.__all__ tested elsewhere, with the reason.
ELSEWHERE = {"MultiheadAttention": "an attention layer: tests/test_nn_attention_modules.py"}

X = (2, 3, 4)

# name -> list of (build(nn), input shape); each entry one variant
CASES = {
    "Threshold": [(lambda nn: nn.Threshold(0.1, 20.0), X), (lambda nn: nn.Threshold(-0.5, -2, inplace=True), X)],
    "ReLU": [(lambda nn: nn.ReLU(), X), (lambda nn: nn.ReLU(inplace=True), X)],
    "RReLU": [(lambda nn: nn.RReLU(), X), (lambda nn: nn.RReLU(0.1, 0.3, inplace=True), X)],
    "Hardtanh": [(lambda nn: nn.Hardtanh(), X), (lambda nn: nn.Hardtanh(-2.0, 1.5, inplace=True), X)],
    "ReLU6": [(lambda nn: nn.ReLU6(), (3, 5)), (lambda nn: nn.ReLU6(inplace=True), (3, 5))],
    "Sigmoid": [(lambda nn: nn.Sigmoid(), X)],
    "Hardsigmoid": [(lambda nn: nn.Hardsigmoid(), X), (lambda nn: nn.Hardsigmoid(inplace=True), X)],
    "Tanh": [(lambda nn: nn.Tanh(), X)],
    "SiLU": [(lambda nn: nn.SiLU(), X), (lambda nn: nn.SiLU(inplace=True), X)],
    "Mish": [(lambda nn: nn.Mish(), X), (lambda nn: nn.Mish(inplace=True), X)],
    "Hardswish": [(lambda nn: nn.Hardswish(), X), (lambda nn: nn.Hardswish(inplace=True), X)],
    "ELU": [(lambda nn: nn.ELU(), X), (lambda nn: nn.ELU(alpha=0.5, inplace=True), X)],
    "CELU": [(lambda nn: nn.CELU(), X), (lambda nn: nn.CELU(alpha=2.0, inplace=True), X)],
    "SELU": [(lambda nn: nn.SELU(), X), (lambda nn: nn.SELU(inplace=True), X)],
    "GLU": [(lambda nn: nn.GLU(), X), (lambda nn: nn.GLU(dim=0), (4, 3))],
    "GELU": [(lambda nn: nn.GELU(), X), (lambda nn: nn.GELU(approximate="tanh"), X)],
    "Hardshrink": [(lambda nn: nn.Hardshrink(), X), (lambda nn: nn.Hardshrink(lambd=1.2), X)],
    "LeakyReLU": [(lambda nn: nn.LeakyReLU(), X), (lambda nn: nn.LeakyReLU(0.2, inplace=True), X)],
    "LogSigmoid": [(lambda nn: nn.LogSigmoid(), X)],
    "Softplus": [(lambda nn: nn.Softplus(), X), (lambda nn: nn.Softplus(beta=2.0, threshold=1.5), X)],
    "Softshrink": [(lambda nn: nn.Softshrink(), X), (lambda nn: nn.Softshrink(0.9), X)],
    "PReLU": [(lambda nn: nn.PReLU(), X), (lambda nn: nn.PReLU(3, init=0.1), X), (lambda nn: nn.PReLU(), (5,))],
    "Softsign": [(lambda nn: nn.Softsign(), X)],
    "Tanhshrink": [(lambda nn: nn.Tanhshrink(), X)],
    "Softmin": [(lambda nn: nn.Softmin(dim=1), X), (lambda nn: nn.Softmin(-1), (5,))],
    "Softmax": [(lambda nn: nn.Softmax(dim=1), X), (lambda nn: nn.Softmax(dim=-1), (3, 5))],
    "Softmax2d": [(lambda nn: nn.Softmax2d(), (2, 3, 2, 2)), (lambda nn: nn.Softmax2d(), (3, 2, 2))],
    "LogSoftmax": [(lambda nn: nn.LogSoftmax(dim=1), X), (lambda nn: nn.LogSoftmax(0), (5,))],
}

NAMES = [n for n in torch.nn.modules.activation.__all__ if n not in ELSEWHERE]
VARIANTS = [(n, i) for n in NAMES for i in range(len(CASES.get(n, [None])))]


def test_every_activation_module_exists():
    missing = [n for n in torch.nn.modules.activation.__all__ if not hasattr(torchweb.nn, n) and n not in ELSEWHERE]
    assert not missing, f"torch.nn activation modules missing in torchweb.nn: {missing}"
    for n in NAMES:
        assert getattr(torchweb.nn, n).__module__ == "torchweb.nn"


def _build(name, i):
    assert name in CASES, f"no test case for nn.{name}"
    return CASES[name][i]


@pytest.mark.parametrize("name,i", VARIANTS, ids=[f"{n}-{i}" for n, i in VARIANTS])
def test_forward_backward(name, i, device):
    build, shape = _build(name, i)
    mine, ref = pair(build, device)          # repr and state_dict keys equal to PyTorch's
    mine.eval()
    ref.eval()                               # RReLU: fixed slope (training is tested below)
    assert [k for k, _ in mine.named_parameters()] == [k for k, _ in ref.named_parameters()]
    assert [k for k, _ in mine.named_buffers()] == [k for k, _ in ref.named_buffers()]
    x = make(shape)
    inplace = getattr(ref, "inplace", False)
    tx = x.clone().requires_grad_(True)
    wx = ours(x, device, requires_grad=True)
    # in place needs a non-leaf input: y = x * 1
    ty = tx * 1.0 if inplace else tx
    wy = wx * 1.0 if inplace else wx
    expected = ref(ty)
    got = mine(wy)
    assert_close(got, expected, rtol=1e-4, atol=1e-5)
    if inplace:
        assert expected is ty
        assert got is wy, "inplace=True must return the input tensor itself"
        assert_close(wy, expected, rtol=1e-4, atol=1e-5)
    up = make(tuple(expected.shape))
    expected.backward(up)
    got.backward(ours(up, device))
    assert_close(wx.grad, tx.grad, rtol=1e-4, atol=1e-5)
    for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
        assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["ReLU", "LeakyReLU", "ELU", "Hardtanh", "SiLU", "Threshold"])
def test_inplace_writes_input(name, device):
    build = [b for b, _ in CASES[name] if getattr(b(torch.nn), "inplace", False)][0]
    m = build(torchweb.nn)
    x = ours(make(X), device)
    before = x.clone()
    out = m(x)
    assert out is x
    assert_close(x, build(torch.nn)(theirs(before)), rtol=1e-5, atol=1e-6)


def test_prelu_parameter(device):
    m = torchweb.nn.PReLU(num_parameters=4, init=0.3, device=device)
    ref = torch.nn.PReLU(num_parameters=4, init=0.3)
    assert m.weight.device.type == device and m.weight.requires_grad
    assert_close(m.weight, ref.weight.detach())
    assert list(m.state_dict()) == ["weight"] and m.num_parameters == 4 and m.init == 0.3
    assert_close(torchweb.nn.PReLU().weight, torch.nn.PReLU().weight.detach())
    m.weight.data.fill_(0.0)
    m.reset_parameters()
    assert m.weight.tolist() == pytest.approx([0.3] * 4)
    # float16 factory kwargs
    h = torchweb.nn.PReLU(2, dtype=torchweb.float16)
    assert h.weight.dtype == torchweb.float16


def test_rrelu_training(device):
    lower, upper = 0.1, 0.3
    m = torchweb.nn.RReLU(lower, upper)
    assert m.training
    x = ours(make((4000,), low=-2, high=2), device, requires_grad=True)
    torchweb.manual_seed(3)
    y = m(x)
    xs, ys = x.tolist(), y.tolist()
    slopes = [b / a for a, b in zip(xs, ys) if a < -1e-3]
    assert all(lower - 1e-5 <= s <= upper + 1e-5 for s in slopes)
    assert all(b == a for a, b in zip(xs, ys) if a >= 0)
    assert abs(sum(slopes) / len(slopes) - (lower + upper) / 2) < 0.01     # uniform on [lower, upper]
    assert max(slopes) - min(slopes) > 0.9 * (upper - lower)
    y.sum().backward()
    g = x.grad.tolist()
    for a, b, gi in zip(xs, ys, g):
        if a < -1e-3:
            assert gi == pytest.approx(b / a, rel=1e-4)
        elif a > 0:
            assert gi == 1.0
    torchweb.manual_seed(3)
    assert m(x).tolist() == ys                          # seeded: repeatable
    m.eval()
    assert_close(m(x), torch.nn.RReLU(lower, upper).eval()(torch.tensor(xs)), rtol=1e-5, atol=1e-6)


def test_rrelu_training_inplace(device):
    m = torchweb.nn.RReLU(inplace=True)
    x = ours(make((50,)), device)
    neg = [v < 0 for v in x.tolist()]
    before = x.tolist()
    assert m(x) is x
    for a, b, n in zip(before, x.tolist(), neg):
        assert (1 / 8 - 1e-5 <= b / a <= 1 / 3 + 1e-5) if n else a == b


def test_repr_defaults():
    for name in NAMES:
        for build, _ in CASES[name]:
            assert repr(build(torchweb.nn)) == repr(build(torch.nn))
    for name in ["ReLU", "Sigmoid", "Tanh", "SELU", "GELU", "Softmax", "LogSoftmax", "Softmin", "Softmax2d",
                 "ELU", "CELU", "Hardtanh", "ReLU6", "RReLU", "LeakyReLU", "Softplus", "Hardshrink", "Softshrink",
                 "PReLU", "GLU", "Hardswish", "Hardsigmoid", "SiLU", "Mish", "Softsign", "Tanhshrink", "LogSigmoid"]:
        assert repr(getattr(torchweb.nn, name)()) == repr(getattr(torch.nn, name)()), name


def test_attributes_and_constants():
    for name in NAMES:
        for build, _ in CASES[name]:
            a, b = build(torchweb.nn), build(torch.nn)
            assert getattr(type(a), "__constants__", []) == getattr(type(b), "__constants__", []), name
            for k in getattr(type(b), "__constants__", []):
                assert getattr(a, k) == getattr(b, k), (name, k)


def test_hardtanh_arguments():
    check_ctor_error(lambda nn: nn.Hardtanh(1.0, 1.0))
    check_ctor_error(lambda nn: nn.Hardtanh(2.0, -1.0))
    with pytest.warns(FutureWarning, match="min_value"):
        m = torchweb.nn.Hardtanh(min_value=-3.0)
    assert m.min_val == -3.0
    with pytest.warns(FutureWarning, match="max_value"):
        assert torchweb.nn.Hardtanh(max_value=3.0).max_val == 3.0


def test_bad_inputs(device):
    check_forward_error(lambda nn: nn.Softmax2d(), [make((3, 4))], device)
    check_forward_error(lambda nn: nn.Softmax2d(), [make((1, 2, 3, 4, 5))], device)
    check_forward_error(lambda nn: nn.GLU(), [make((2, 3))], device)
    check_forward_error(lambda nn: nn.PReLU(3), [make((2, 4, 2))], device)
    check_forward_error(lambda nn: nn.Softmax(dim=3), [make((2, 3))], device)
    check_forward_error(lambda nn: nn.Softplus(), [torch.tensor([1, 2])], device)


def test_in_a_model(device):
    def build(nn):
        return nn.Sequential(nn.Linear(4, 6), nn.PReLU(6), nn.Identity(), nn.Linear(6, 5), nn.GELU(approximate="tanh"),
                             nn.LogSoftmax(dim=-1))
    mine, ref = pair(build, device)
    x = make((3, 4))
    wx = ours(x, device)
    got, expected = mine(wx), ref(x)
    assert_close(got, expected, rtol=1e-4, atol=1e-5)
    got.sum().backward()
    expected.sum().backward()
    for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
        assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)
    assert list(mine.state_dict()) == ["0.weight", "0.bias", "1.weight", "3.weight", "3.bias"]



ELEMENTWISE = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
               "Hardswish", "ELU", "CELU", "SELU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
               "Softshrink", "PReLU", "Softsign", "Tanhshrink"]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_zero_dim_empty_noncontiguous(name, device):
    build = CASES[name][0][0]
    mine, ref = pair(build, device)
    mine.eval()
    ref.eval()
    base = make((4, 6))
    for x in (make(()), torch.zeros(0, 3), base.t(), base[:, ::2]):
        if name == "PReLU" and x.dim() == 0:
            continue
        tx = x.clone().requires_grad_(True)
        wx = ours(x, device)
        if x.numel() and not x.is_contiguous():        # a real strided view on our side too
            wx = ours(base, device).t() if x.shape == base.t().shape else ours(base, device)[:, ::2]
            assert not wx.is_contiguous()
        wx.requires_grad_(True)
        expected, got = ref(tx), mine(wx)
        assert_close(got, expected, rtol=1e-4, atol=1e-5)
        if x.numel():
            expected.sum().backward()
            got.sum().backward()
            assert_close(wx.grad, tx.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["Softmax", "Softmin", "LogSoftmax"])
def test_implicit_dim_warns(name, device):
    for shape in [(2, 3), (2, 3, 4), (5,)]:
        x = make(shape)
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {dict(LogSoftmax='log_softmax').get(name, name.lower())} has been deprecated"):
            got = getattr(torchweb.nn, name)()(ours(x, device))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = getattr(torch.nn, name)()(x)
        assert_close(got, expected, rtol=1e-5, atol=1e-6)
