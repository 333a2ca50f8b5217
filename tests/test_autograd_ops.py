"""Gradients of every differentiable op, compared with PyTorch's on the same inputs.

Each case builds the same leaves in both libraries, runs the op, takes
loss = sum over outputs of (output * fixed random weights).sum(), calls backward and compares
the outputs and every leaf's .grad. Inputs cover broadcasting (gradients summed back over the
broadcast dims), strided and transposed operands, and the tie and zero cases where the
gradient rules are subtle (clamp at its bounds, max/min ties, prod with zeros, norm at 0)."""

import pytest
import torch

import torchweb as tw
import torchweb.nn.functional  # noqa: F401  (makes T.nn.functional reachable for both libraries)
from oracle import assert_close, ours

INF, NAN = float("inf"), float("nan")


class NoGrad:
    """An input tensor that does not require grad (conditions, indices, constants)."""

    def __init__(self, t):
        self.t = t


def rn(*shape):
    return torch.randn(shape)


def pos(*shape):
    return torch.rand(shape) + 0.5


def T_(*rows):
    return torch.tensor(rows, dtype=torch.float32)


def _flat_outputs(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat_outputs(x)]
    return [out]


def run_case(device, fn, make_inputs, rtol=1e-4, atol=1e-5, seed=0):
    torch.manual_seed(seed)
    raw = make_inputs()
    t_args, w_args, t_leaves, w_leaves = [], [], [], []
    for a in raw:
        if isinstance(a, NoGrad):
            t_args.append(a.t)
            w_args.append(ours(a.t, device))
        elif isinstance(a, torch.Tensor):
            t = a.clone().requires_grad_(a.dtype.is_floating_point)
            w = ours(a, device, requires_grad=a.dtype.is_floating_point)
            t_args.append(t)
            w_args.append(w)
            if a.dtype.is_floating_point:
                t_leaves.append(t)
                w_leaves.append(w)
        else:
            t_args.append(a)
            w_args.append(a)
    t_outs = _flat_outputs(fn(torch, *t_args))
    w_outs = _flat_outputs(fn(tw, *w_args))
    assert len(t_outs) == len(w_outs)
    gen = torch.Generator().manual_seed(1234)
    t_loss, w_loss = 0, 0
    for to, wo in zip(t_outs, w_outs):
        assert_close(wo, to.detach(), rtol=rtol, atol=atol)
        assert wo.requires_grad == to.requires_grad, (wo.requires_grad, to.requires_grad)
        if to.requires_grad:
            weight = torch.randn(to.shape, generator=gen).to(to.dtype)
            t_loss = t_loss + (to * weight).sum()
            w_loss = w_loss + (wo * ours(weight, device)).sum()
    assert isinstance(t_loss, torch.Tensor), "case has no differentiable output"
    t_loss.backward()
    w_loss.backward()
    for i, (t, w) in enumerate(zip(t_leaves, w_leaves)):
        if t.grad is None:
            assert w.grad is None, f"leaf {i}: expected no grad, got {w.grad}"
        else:
            assert w.grad is not None, f"leaf {i}: no grad, expected {t.grad}"
            assert w.grad.device.type == device
            assert_close(w.grad, t.grad, rtol=rtol, atol=atol)


def case(name, fn, make_inputs, **tol):
    return pytest.param(fn, make_inputs, tol, id=name)


# -- elementwise ------------------------------------------------------------------------------
def nnf(T):
    return T.nn.functional


UNARY = {  # name: (fn, input maker)
    "neg": (lambda T, x: -x, rn),
    "neg_fn": (lambda T, x: T.neg(x), rn),
    "abs": (lambda T, x: T.abs(x), lambda *s: torch.cat([rn(*s).flatten()[:-2], torch.zeros(2)]).reshape(s)),
    "exp": (lambda T, x: T.exp(x), rn),
    "log": (lambda T, x: T.log(x), pos),
    "log1p": (lambda T, x: T.log1p(x), lambda *s: torch.rand(*s) * 2 - 0.5),
    "expm1": (lambda T, x: T.expm1(x), rn),
    "sqrt": (lambda T, x: T.sqrt(x), pos),
    "rsqrt": (lambda T, x: T.rsqrt(x), pos),
    "sin": (lambda T, x: T.sin(x), rn),
    "cos": (lambda T, x: T.cos(x), rn),
    "tanh": (lambda T, x: T.tanh(x), rn),
    "sigmoid": (lambda T, x: T.sigmoid(x), rn),
    "relu": (lambda T, x: T.relu(x), lambda *s: torch.cat([rn(*s).flatten()[:-2], torch.zeros(2)]).reshape(s)),
    "relu_nnf": (lambda T, x: nnf(T).relu(x), rn),
    "gelu": (lambda T, x: nnf(T).gelu(x), lambda *s: rn(*s) * 2),
    "gelu_tanh": (lambda T, x: nnf(T).gelu(x, approximate="tanh"), lambda *s: rn(*s) * 2),
    "silu": (lambda T, x: nnf(T).silu(x), lambda *s: rn(*s) * 2),
    "reciprocal": (lambda T, x: T.reciprocal(x), pos),
    "square": (lambda T, x: T.square(x), rn),
    "erf": (lambda T, x: T.erf(x), rn),
    "log2": (lambda T, x: T.log2(x), pos),
    "log10": (lambda T, x: T.log10(x), pos),
    "exp2": (lambda T, x: T.exp2(x), rn),
    "sign": (lambda T, x: T.sign(x), rn),
    "floor": (lambda T, x: T.floor(x), lambda *s: rn(*s) * 3),
    "ceil": (lambda T, x: T.ceil(x), lambda *s: rn(*s) * 3),
    "trunc": (lambda T, x: T.trunc(x), lambda *s: rn(*s) * 3),
    "round": (lambda T, x: T.round(x), lambda *s: rn(*s) * 3),
    "nan_to_num": (lambda T, x: T.nan_to_num(x, nan=1.0, posinf=2.0),
                   lambda *s: torch.cat([rn(*s).flatten()[:-3], T_(NAN, INF, -INF)]).reshape(s)),
    "pow_2": (lambda T, x: x ** 2, rn),
    "pow_3_neg_and_zero": (lambda T, x: T.pow(x, 3), lambda *s: torch.cat([rn(*s).flatten()[:-1], torch.zeros(1)]).reshape(s)),
    "pow_half": (lambda T, x: x ** 0.5, pos),
    "pow_neg": (lambda T, x: T.pow(x, -1.5), pos),
    "pow_0": (lambda T, x: x ** 0, rn),
    "pow_1": (lambda T, x: x ** 1, rn),
    "rpow": (lambda T, x: 2 ** x, rn),
    "pow_scalar_base": (lambda T, x: T.pow(3.0, x), rn),
    "mul_scalar": (lambda T, x: x * 2.5, rn),
    "rmul_scalar": (lambda T, x: -3 * x, rn),
    "div_scalar": (lambda T, x: x / 4, rn),
    "rdiv_scalar": (lambda T, x: 2 / x, pos),
    "add_scalar": (lambda T, x: x + 2, rn),
    "rsub_scalar": (lambda T, x: 1 - x, rn),
    "sub_scalar": (lambda T, x: x - 1.5, rn),
    "remainder_scalar": (lambda T, x: T.remainder(x, 0.7), lambda *s: rn(*s) * 3),
    "fmod_scalar": (lambda T, x: T.fmod(x, 0.7), lambda *s: rn(*s) * 3),
    "clamp": (lambda T, x: T.clamp(x, -0.5, 0.5), lambda *s: torch.cat([rn(*s).flatten()[:-4], T_(-0.5, 0.5, -0.5, 0.5)]).reshape(s)),
    "clamp_min": (lambda T, x: T.clamp(x, min=0.25), lambda *s: torch.cat([rn(*s).flatten()[:-2], T_(0.25, 0.25)]).reshape(s)),
    "clamp_max": (lambda T, x: x.clamp(max=0.25), lambda *s: torch.cat([rn(*s).flatten()[:-2], T_(0.25, 0.25)]).reshape(s)),
    "clip": (lambda T, x: x.clip(-1, 1), rn),
    "clamp_min_fn": (lambda T, x: T.clamp_min(x, 0.0), lambda *s: torch.cat([rn(*s).flatten()[:-2], torch.zeros(2)]).reshape(s)),
    "clamp_max_fn": (lambda T, x: T.clamp_max(x, 0.0), lambda *s: torch.cat([rn(*s).flatten()[:-2], torch.zeros(2)]).reshape(s)),
}

UNARY_CASES = []
for _name, (_fn, _make) in UNARY.items():
    UNARY_CASES.append(case(_name, (lambda f: lambda T, x: f(T, x))(_fn), (lambda m: lambda: (m(3, 4),))(_make)))
    # strided input: a transposed view of every other column of the leaf
    UNARY_CASES.append(case(_name + "-strided", (lambda f: lambda T, x: f(T, x[:, ::2].t()))(_fn),
                            (lambda m: lambda: (m(4, 6),))(_make)))


@pytest.mark.parametrize("fn,make_inputs,tol", UNARY_CASES)
def test_unary(device, fn, make_inputs, tol):
    run_case(device, fn, make_inputs, **tol)


def _ties(*shape):
    """Pairs with some exactly equal entries (max/min ties split the gradient)."""
    a, b = rn(*shape), rn(*shape)
    b.view(-1)[::3] = a.view(-1)[::3]
    return a, b


BINARY_CASES = [
    case("add", lambda T, x, y: x + y, lambda: (rn(3, 4), rn(3, 4))),
    case("add-broadcast-row", lambda T, x, y: x + y, lambda: (rn(3, 4), rn(4))),
    case("add-broadcast-both", lambda T, x, y: T.add(x, y), lambda: (rn(3, 1), rn(1, 4))),
    case("add-broadcast-0d", lambda T, x, y: x + y, lambda: (rn(3, 4), rn())),
    case("add-transposed", lambda T, x, y: x.t() + y, lambda: (rn(4, 3), rn(3, 4))),
    case("add-alpha", lambda T, x, y: T.add(x, y, alpha=2.5), lambda: (rn(3, 4), rn(4))),
    case("add-same-tensor", lambda T, x: x + x, lambda: (rn(3, 4),)),
    case("sub", lambda T, x, y: x - y, lambda: (rn(2, 3, 4), rn(3, 1))),
    case("sub-alpha", lambda T, x, y: T.sub(x, y, alpha=-0.5), lambda: (rn(3, 1), rn(3, 4))),
    case("mul", lambda T, x, y: x * y, lambda: (rn(3, 4), rn(3, 4))),
    case("mul-broadcast", lambda T, x, y: T.mul(x, y), lambda: (rn(2, 1, 4), rn(3, 1))),
    case("mul-strided", lambda T, x, y: x[::2] * y.t(), lambda: (rn(6, 3), rn(3, 3))),
    case("mul-same-tensor", lambda T, x: x * x, lambda: (rn(3, 4),)),
    case("div", lambda T, x, y: x / y, lambda: (rn(3, 4), pos(3, 4))),
    case("div-broadcast", lambda T, x, y: T.div(x, y), lambda: (rn(4), pos(3, 1))),
    case("div-0d", lambda T, x, y: x / y, lambda: (rn(3, 4), pos())),
    case("pow-tensor", lambda T, x, y: x ** y, lambda: (pos(3, 4), rn(3, 4))),
    case("pow-tensor-broadcast", lambda T, x, y: T.pow(x, y), lambda: (pos(3, 4), rn(4))),
    case("pow-tensor-zero-base", lambda T, x, y: T.pow(x, y),
         lambda: (T_([0., 0., 0., 1.5], [2., 0., 0.5, 0.]), T_([2., 0., 3., 1.], [0., 1., 0., 2.]))),
    case("pow-0d-exponent", lambda T, x, y: x ** y, lambda: (pos(3, 4), rn())),
    case("maximum", lambda T, x, y: T.maximum(x, y), lambda: _ties(3, 4)),
    case("minimum", lambda T, x, y: T.minimum(x, y), lambda: _ties(3, 4)),
    case("maximum-broadcast", lambda T, x, y: T.maximum(x, y),
         lambda: (T_([1., 2., 3.], [0., 2., 5.]), T_(1., 2., 4.))),
    case("minimum-broadcast", lambda T, x, y: T.minimum(x, y),
         lambda: (T_([1., 2., 3.], [0., 2., 5.]), T_(1., 2., 4.))),
    case("max-binary", lambda T, x, y: T.max(x, y), lambda: _ties(3, 4)),
    case("min-binary", lambda T, x, y: T.min(x, y), lambda: _ties(3, 4)),
    case("remainder", lambda T, x, y: T.remainder(x, y), lambda: (rn(3, 4) * 3, pos(3, 4))),
    case("remainder-neg", lambda T, x, y: x % y, lambda: (rn(3, 4) * 3, -pos(4))),
    case("fmod", lambda T, x, y: T.fmod(x, y), lambda: (rn(3, 4) * 3, pos(3, 4))),
    case("fmod-neg", lambda T, x, y: T.fmod(x, y), lambda: (rn(3, 4) * 3, -pos(4))),
    case("where", lambda T, c, x, y: T.where(c, x, y), lambda: (NoGrad(rn(3, 4) > 0), rn(3, 4), rn(3, 4))),
    case("where-broadcast", lambda T, c, x, y: T.where(c, x, y), lambda: (NoGrad(rn(3, 1) > 0), rn(4), rn(3, 4))),
    case("where-scalar", lambda T, c, x: T.where(c, x, 0.5), lambda: (NoGrad(rn(3, 4) > 0), rn(3, 4))),
    case("where-method", lambda T, c, x, y: x.where(c, y), lambda: (NoGrad(rn(3, 4) > 0), rn(3, 4), rn(1, 4))),
    case("clamp-tensor-bounds", lambda T, x, lo, hi: T.clamp(x, lo, hi),
         lambda: (T_([-2., -1., 0., 1.], [2., 0.5, -0.5, 3.]), T_(-1., -1., 0., 0.), T_(1., 1., 1., 2.))),
    case("clamp-tensor-min>max", lambda T, x, lo, hi: T.clamp(x, lo, hi),
         lambda: (T_(-2., 0., 1., 2., 3.), T_(2., 2., 2., 2., 2.), T_(0., 0., 0., 0., 0.))),
    case("clamp-tensor-min-only", lambda T, x, lo: T.clamp(x, min=lo),
         lambda: (T_([-2., -1., 0., 1.]), T_(-1., 0., 0., 0.))),
    case("clamp-tensor-max-only", lambda T, x, hi: T.clamp(x, max=hi),
         lambda: (T_([-2., -1., 0., 1.]), T_(-1., 0., 0., 0.))),
    case("chain", lambda T, x, y: T.tanh(x * y + T.exp(-x)) / (1 + y * y),
         lambda: (rn(3, 4), rn(4))),
]


@pytest.mark.parametrize("fn,make_inputs,tol", BINARY_CASES)
def test_binary(device, fn, make_inputs, tol):
    run_case(device, fn, make_inputs, **tol)


# -- views --------------------------------------------------------------------------------------
VIEW_CASES = [
    case("view", lambda T, x: x.view(2, 6), lambda: (rn(3, 4),)),
    case("view-infer", lambda T, x: x.view(-1), lambda: (rn(3, 4),)),
    case("view-of-slice", lambda T, x: x[1:].view(4, 2), lambda: (rn(3, 4),)),
    case("reshape", lambda T, x: x.reshape(4, 3), lambda: (rn(3, 4),)),
    case("reshape-transposed", lambda T, x: x.t().reshape(-1), lambda: (rn(3, 4),)),
    case("reshape-fn", lambda T, x: T.reshape(x, (2, 2, 3)), lambda: (rn(3, 4),)),
    case("permute", lambda T, x: x.permute(2, 0, 1), lambda: (rn(2, 3, 4),)),
    case("permute-fn", lambda T, x: T.permute(x, (1, 2, 0)) * 1, lambda: (rn(2, 3, 4),)),
    case("transpose", lambda T, x: x.transpose(0, 2), lambda: (rn(2, 3, 4),)),
    case("transpose-neg", lambda T, x: T.transpose(x, -1, -2), lambda: (rn(2, 3, 4),)),
    case("t", lambda T, x: x.t(), lambda: (rn(3, 4),)),
    case("t-1d", lambda T, x: x.t(), lambda: (rn(4),)),
    case("T", lambda T, x: x.T, lambda: (rn(3, 4),)),
    case("mT", lambda T, x: x.mT, lambda: (rn(2, 3, 4),)),
    case("expand", lambda T, x: x.expand(2, 3, 4), lambda: (rn(3, 1),)),
    case("expand-minus1", lambda T, x: x.expand(3, -1), lambda: (rn(1, 4),)),
    case("expand_as", lambda T, x, y: x.expand_as(y) * y, lambda: (rn(4), rn(3, 4))),
    case("broadcast_to", lambda T, x: T.broadcast_to(x, (2, 3, 4)), lambda: (rn(4),)),
    case("squeeze", lambda T, x: x.squeeze(), lambda: (rn(1, 3, 1, 4),)),
    case("squeeze-dim", lambda T, x: x.squeeze(2), lambda: (rn(1, 3, 1, 4),)),
    case("squeeze-noop-dim", lambda T, x: T.squeeze(x, 1), lambda: (rn(1, 3, 1, 4),)),
    case("unsqueeze", lambda T, x: x.unsqueeze(1), lambda: (rn(3, 4),)),
    case("unsqueeze-neg", lambda T, x: T.unsqueeze(x, -1), lambda: (rn(3, 4),)),
    case("flatten", lambda T, x: x.flatten(), lambda: (rn(2, 3, 4),)),
    case("flatten-range", lambda T, x: T.flatten(x, 1), lambda: (rn(2, 3, 4),)),
    case("flatten-transposed", lambda T, x: x.transpose(0, 1).flatten(1), lambda: (rn(2, 3, 4),)),
    case("unflatten", lambda T, x: x.unflatten(1, (2, 2)), lambda: (rn(3, 4),)),
    case("movedim", lambda T, x: T.movedim(x, 0, -1), lambda: (rn(2, 3, 4),)),
    case("narrow", lambda T, x: x.narrow(1, 1, 2), lambda: (rn(3, 4),)),
    case("narrow-neg-start", lambda T, x: T.narrow(x, 0, -2, 2), lambda: (rn(3, 4),)),
    case("select", lambda T, x: x.select(1, 2), lambda: (rn(3, 4),)),
    case("select-neg", lambda T, x: T.select(x, 0, -1), lambda: (rn(3, 4),)),
    case("index-int", lambda T, x: x[1], lambda: (rn(3, 4),)),
    case("index-neg", lambda T, x: x[-1, -2], lambda: (rn(3, 4),)),
    case("slice-steps", lambda T, x: x[::2, 1::2], lambda: (rn(5, 6),)),
    case("slice-neg", lambda T, x: x[-2:, :-1], lambda: (rn(5, 6),)),
    case("slice-ellipsis-none", lambda T, x: x[..., None, 1:3], lambda: (rn(2, 3, 4),)),
    case("slice-all", lambda T, x: x[...], lambda: (rn(3, 4),)),
    case("slice-chain", lambda T, x: x.t()[1:][::2].reshape(-1), lambda: (rn(4, 5),)),
    case("as_strided", lambda T, x: x.as_strided((2, 3), (1, 2)), lambda: (rn(3, 4),)),
    case("as_strided-offset", lambda T, x: T.as_strided(x, (2, 2), (4, 1), 5), lambda: (rn(3, 4),)),
    case("as_strided-overlap", lambda T, x: x.as_strided((3, 3), (1, 1)), lambda: (rn(6),)),
    case("unbind", lambda T, x: x.unbind(), lambda: (rn(3, 4),)),
    case("unbind-dim", lambda T, x: T.unbind(x, 1), lambda: (rn(3, 4),)),
    case("unbind-partial-use", lambda T, x: x.unbind(1)[2], lambda: (rn(3, 4),)),
    case("split", lambda T, x: x.split(2), lambda: (rn(5, 3),)),
    case("split-sizes", lambda T, x: T.split(x, [1, 3], dim=1), lambda: (rn(3, 4),)),
    case("split-partial-use", lambda T, x: x.split(2)[1], lambda: (rn(5, 3),)),
    case("chunk", lambda T, x: x.chunk(3, -1), lambda: (rn(3, 7),)),
    case("chunk-fn", lambda T, x: T.chunk(x, 2), lambda: (rn(4, 3),)),
    case("view-chain-then-op", lambda T, x: T.exp(x.permute(1, 0)[1:].unsqueeze(0)) * x.sum(),
         lambda: (rn(3, 4),)),
]


@pytest.mark.parametrize("fn,make_inputs,tol", VIEW_CASES)
def test_view(device, fn, make_inputs, tol):
    run_case(device, fn, make_inputs, **tol)


# -- reductions ---------------------------------------------------------------------------------
def _zeros_in(t, n):
    t.view(-1)[:n] = 0
    return t


def _tie_rows():
    """Rows with repeated maxima and minima."""
    return (T_([1., 3., 3., 0.], [2., 2., 2., 2.], [-1., 5., -1., 5.]),)


REDUCTION_CASES = [
    case("sum", lambda T, x: x.sum(), lambda: (rn(3, 4),)),
    case("sum-dim", lambda T, x: T.sum(x, 1), lambda: (rn(3, 4),)),
    case("sum-dims-keepdim", lambda T, x: x.sum((0, 2), keepdim=True), lambda: (rn(2, 3, 4),)),
    case("sum-neg-dim-transposed", lambda T, x: x.t().sum(-1), lambda: (rn(3, 4),)),
    case("sum-0d", lambda T, x: x.sum(), lambda: (rn(),)),
    case("mean", lambda T, x: x.mean(), lambda: (rn(3, 4),)),
    case("mean-dim", lambda T, x: T.mean(x, 0), lambda: (rn(3, 4),)),
    case("mean-dims-keepdim", lambda T, x: x.mean((-1, 0), keepdim=True), lambda: (rn(2, 3, 4),)),
    case("prod", lambda T, x: x.prod(), lambda: (rn(2, 3),)),
    case("prod-one-zero", lambda T, x: T.prod(x), lambda: (_zeros_in(rn(2, 3), 1),)),
    case("prod-two-zeros", lambda T, x: x.prod(), lambda: (_zeros_in(rn(2, 3), 2),)),
    case("prod-dim-zeros", lambda T, x: x.prod(1),
         lambda: (T_([1., 2., 3.], [0., 2., 3.], [0., 0., 3.], [4., 0., -1.]),)),
    case("prod-dim-keepdim", lambda T, x: T.prod(x, 0, keepdim=True),
         lambda: (T_([1., 0., 0.], [0.5, 2., 0.], [3., 2., 1.]),)),
    case("max-dim", lambda T, x: x.max(1), _tie_rows),
    case("max-dim-keepdim", lambda T, x: T.max(x, 0, keepdim=True), _tie_rows),
    case("min-dim", lambda T, x: x.min(1), _tie_rows),
    case("min-dim-values", lambda T, x: T.min(x, -1).values, _tie_rows),
    case("max-dim-random", lambda T, x: x.max(1), lambda: (rn(4, 5),)),
    case("max-all", lambda T, x: x.max(), _tie_rows),
    case("min-all", lambda T, x: T.min(x), _tie_rows),
    case("max-all-random", lambda T, x: x.max(), lambda: (rn(4, 5),)),
    case("amax", lambda T, x: x.amax(1), _tie_rows),
    case("amax-dims", lambda T, x: T.amax(x, (0, 1)), _tie_rows),
    case("amin-keepdim", lambda T, x: x.amin(0, keepdim=True), _tie_rows),
    case("amin-all", lambda T, x: T.amin(x), _tie_rows),
    case("var", lambda T, x: x.var(), lambda: (rn(3, 4),)),
    case("var-dim", lambda T, x: T.var(x, 1), lambda: (rn(3, 4),)),
    case("var-correction0-keepdim", lambda T, x: x.var(0, correction=0, keepdim=True), lambda: (rn(3, 4),)),
    case("var-unbiased-false", lambda T, x: x.var(1, unbiased=False), lambda: (rn(3, 4),)),
    case("std", lambda T, x: x.std(), lambda: (rn(3, 4),)),
    case("std-dim", lambda T, x: T.std(x, -1, keepdim=True), lambda: (rn(3, 4),)),
    case("logsumexp", lambda T, x: x.logsumexp(1), lambda: (rn(3, 4),)),
    case("logsumexp-dims-keepdim", lambda T, x: T.logsumexp(x * 10, (0, 2), keepdim=True), lambda: (rn(2, 3, 4),)),
    case("norm", lambda T, x: x.norm(), lambda: (rn(3, 4),)),
    case("norm-dim", lambda T, x: T.norm(x, dim=1), lambda: (rn(3, 4),)),
    case("norm-zero", lambda T, x: x.norm(), lambda: (torch.zeros(3, 4),)),
    case("norm-dim-zero-row", lambda T, x: x.norm(dim=1, keepdim=True), lambda: (T_([0., 0., 0.], [3., 0., -4.]),)),
    case("norm-p1", lambda T, x: x.norm(1), lambda: (_zeros_in(rn(3, 4), 2),)),
    case("norm-p1-dim", lambda T, x: T.norm(x, p=1, dim=0), lambda: (rn(3, 4),)),
    case("norm-inf", lambda T, x: x.norm(INF), lambda: (T_([1., -3., 3.], [2., 0., -1.]),)),
    case("norm-inf-dim", lambda T, x: x.norm(INF, dim=1), lambda: (T_([1., -3., 3.], [2., 0., -1.]),)),
    case("norm-p3", lambda T, x: x.norm(3), lambda: (rn(3, 4),)),
]


@pytest.mark.parametrize("fn,make_inputs,tol", REDUCTION_CASES)
def test_reduction(device, fn, make_inputs, tol):
    run_case(device, fn, make_inputs, **tol)


# -- matmul family, joins, softmax ---------------------------------------------------------------
OTHER_CASES = [
    case("mm", lambda T, a, b: a.mm(b), lambda: (rn(3, 4), rn(4, 5))),
    case("mm-transposed", lambda T, a, b: T.mm(a.t(), b.t()), lambda: (rn(4, 3), rn(5, 4))),
    case("mm-operator", lambda T, a, b: a @ b, lambda: (rn(3, 4), rn(4, 2))),
    case("bmm", lambda T, a, b: T.bmm(a, b), lambda: (rn(2, 3, 4), rn(2, 4, 5))),
    case("matmul-1d-1d", lambda T, a, b: T.matmul(a, b), lambda: (rn(4), rn(4))),
    case("matmul-1d-2d", lambda T, a, b: T.matmul(a, b), lambda: (rn(4), rn(4, 3))),
    case("matmul-2d-1d", lambda T, a, b: a @ b, lambda: (rn(3, 4), rn(4))),
    case("matmul-3d-2d", lambda T, a, b: a @ b, lambda: (rn(2, 3, 4), rn(4, 5))),
    case("matmul-batch-broadcast", lambda T, a, b: T.matmul(a, b), lambda: (rn(2, 1, 3, 4), rn(5, 4, 2))),
    case("matmul-1d-3d", lambda T, a, b: T.matmul(a, b), lambda: (rn(4), rn(2, 4, 3))),
    case("mv", lambda T, a, v: T.mv(a, v), lambda: (rn(3, 4), rn(4))),
    case("dot", lambda T, a, b: a.dot(b), lambda: (rn(5), rn(5))),
    case("addmm", lambda T, c, a, b: T.addmm(c, a, b), lambda: (rn(3, 5), rn(3, 4), rn(4, 5))),
    case("addmm-broadcast-beta-alpha", lambda T, c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2.0),
         lambda: (rn(5), rn(3, 4), rn(4, 5))),
    case("linear", lambda T, x, w: nnf(T).linear(x, w), lambda: (rn(3, 4), rn(5, 4))),
    case("linear-bias", lambda T, x, w, b: nnf(T).linear(x, w, b), lambda: (rn(3, 4), rn(5, 4), rn(5))),
    case("linear-3d", lambda T, x, w, b: nnf(T).linear(x, w, b), lambda: (rn(2, 3, 4), rn(5, 4), rn(5))),
    case("cat", lambda T, x, y: T.cat([x, y]), lambda: (rn(2, 3), rn(4, 3))),
    case("cat-dim1", lambda T, x, y, z: T.cat((x, y, z), 1), lambda: (rn(3, 2), rn(3, 1), rn(3, 4))),
    case("cat-neg-dim-transposed", lambda T, x, y: T.cat([x.t(), y], -1), lambda: (rn(2, 3), rn(3, 4))),
    case("cat-same-tensor", lambda T, x: T.cat([x, x * 2, x]), lambda: (rn(2, 3),)),
    case("cat-with-constant", lambda T, x, c: T.cat([x, c]), lambda: (rn(2, 3), NoGrad(rn(1, 3)))),
    case("stack", lambda T, x, y: T.stack([x, y]), lambda: (rn(3, 4), rn(3, 4))),
    case("stack-dim1", lambda T, x, y: T.stack((x, y), 1), lambda: (rn(3, 4), rn(3, 4))),
    case("stack-neg-dim", lambda T, x, y: T.stack([x, y.t()], -1), lambda: (rn(3, 4), rn(4, 3))),
    case("softmax", lambda T, x: x.softmax(-1), lambda: (rn(3, 4),)),
    case("softmax-dim0", lambda T, x: T.softmax(x, 0), lambda: (rn(3, 4) * 4,)),
    case("softmax-3d", lambda T, x: nnf(T).softmax(x, dim=1), lambda: (rn(2, 3, 4),)),
    case("softmax-transposed", lambda T, x: T.softmax(x.t(), 1), lambda: (rn(3, 4),)),
    case("log_softmax", lambda T, x: x.log_softmax(-1), lambda: (rn(3, 4),)),
    case("log_softmax-dim0", lambda T, x: T.log_softmax(x, 0), lambda: (rn(3, 4) * 4,)),
    case("log_softmax-3d", lambda T, x: nnf(T).log_softmax(x, dim=1), lambda: (rn(2, 3, 4),)),
    case("clone", lambda T, x: x.clone(), lambda: (rn(3, 4),)),
    case("clone-fn-strided", lambda T, x: T.clone(x[:, ::2]), lambda: (rn(3, 4),)),
    case("contiguous", lambda T, x: x.t().contiguous(), lambda: (rn(3, 4),)),
    case("contiguous-noop", lambda T, x: x.contiguous() * 2, lambda: (rn(3, 4),)),
    case("to-float16-and-back", lambda T, x: (x.to(T.float16) * 3).to(T.float32), lambda: (rn(3, 4),),
         rtol=2e-3, atol=2e-3),
    case("half-float", lambda T, x: x.half().float() * x, lambda: (rn(3, 4),), rtol=2e-3, atol=2e-3),
    case("to-same-dtype", lambda T, x: x.to(T.float32) * 2, lambda: (rn(3, 4),)),
    case("to-int-cuts-graph", lambda T, x: x * 2 + x.to(T.int64), lambda: (rn(3, 4) * 3,)),
]


@pytest.mark.parametrize("fn,make_inputs,tol", OTHER_CASES)
def test_other(device, fn, make_inputs, tol):
    run_case(device, fn, make_inputs, **tol)


@pytest.mark.parametrize("src,dst", [("cpu", "webgpu"), ("webgpu", "cpu")])
def test_to_device(src, dst):
    torch.manual_seed(0)
    a = rn(3, 4)
    w = torch.randn(3, 4)
    t = a.clone().requires_grad_()
    x = ours(a, src, requires_grad=True)
    y = x.to(dst)
    assert y.device.type == dst and y.grad_fn.name() == "ToCopyBackward0"
    expected = torch.exp(t * 2) * w
    got = tw.exp(y * 2) * ours(w, dst)
    assert_close(got, expected.detach(), rtol=1e-4)
    expected.sum().backward()
    got.sum().backward()
    assert x.grad.device.type == src
    assert_close(x.grad, t.grad, rtol=1e-4)


# -- in-place ops on non-leaves, and writes through views -------------------------------------
def _inplace(ops):
    """y = x * 1, then each op in place on y (z: a second leaf), then y is the output."""
    def fn(T, x, z):
        y = x * 1
        for op in ops:
            op(T, y, z)
        return y
    return fn


INPLACE_CASES = [
    case("mul_-exp_", _inplace([lambda T, y, z: y.mul_(2), lambda T, y, z: y.exp_()]), lambda: (rn(3, 4), rn(4))),
    case("mul_-tensor", _inplace([lambda T, y, z: y.mul_(z)]), lambda: (rn(3, 4), rn(4))),
    case("add_-alpha", _inplace([lambda T, y, z: y.add_(z, alpha=2)]), lambda: (rn(3, 4), rn(4))),
    case("sub_", _inplace([lambda T, y, z: y.sub_(z), lambda T, y, z: y.sub_(1.5)]), lambda: (rn(3, 4), rn(3, 1))),
    case("div_", _inplace([lambda T, y, z: y.div_(z)]), lambda: (rn(3, 4), pos(4))),
    case("pow_", _inplace([lambda T, y, z: y.pow_(2), lambda T, y, z: y.pow_(z)]), lambda: (pos(3, 4), rn(4))),
    # ops whose backward reads their input save the original value (PyTorch clones it), so
    # later in-place ops may follow; ops that save their result must come last
    case("self-saving-chain", _inplace([lambda T, y, z: y.neg_(), lambda T, y, z: y.abs_(),
                                        lambda T, y, z: y.log_(), lambda T, y, z: y.sin_(),
                                        lambda T, y, z: y.square_(), lambda T, y, z: y.cos_(),
                                        lambda T, y, z: y.log1p_(), lambda T, y, z: y.erf_(),
                                        lambda T, y, z: y.mul_(z), lambda T, y, z: y.clamp_(-0.3, 0.3)]),
         lambda: (rn(3, 4), rn(4))),
    case("self-saving-chain-2", _inplace([lambda T, y, z: y.mul_(z), lambda T, y, z: y.div_(z),
                                          lambda T, y, z: y.pow_(3), lambda T, y, z: y.clamp_(min=0.1),
                                          lambda T, y, z: y.clamp_max_(0.7), lambda T, y, z: y.log2_(),
                                          lambda T, y, z: y.log10_()]),
         lambda: (rn(3, 4), rn(4))),
]
for _name, _mk in [("exp", rn), ("sigmoid", rn), ("tanh", rn), ("sqrt", pos), ("rsqrt", pos),
                   ("reciprocal", pos), ("relu", rn), ("exp2", rn), ("expm1", rn)]:
    INPLACE_CASES.append(case(_name + "_-last", _inplace(
        [lambda T, y, z: y.mul_(z), lambda T, y, z: y.sub_(z), (lambda n: lambda T, y, z: getattr(y, n + "_")())(_name)]),
        (lambda m: lambda: (m(3, 4), m(4).abs() + 0.5))(_mk)))
INPLACE_CASES += [
    case("nnf-relu-inplace", _inplace([lambda T, y, z: y.mul_(z), lambda T, y, z: nnf(T).relu(y, inplace=True)]),
         lambda: (rn(3, 4), rn(4))),
    case("operators", _inplace([lambda T, y, z: y.__iadd__(z), lambda T, y, z: y.__imul__(z),
                                lambda T, y, z: y.__isub__(2), lambda T, y, z: y.__itruediv__(3),
                                lambda T, y, z: y.__ipow__(2)]), lambda: (rn(3, 4), rn(4))),
    case("copy_", _inplace([lambda T, y, z: y.copy_(z)]), lambda: (rn(3, 4), rn(4))),
    case("copy_-then-mul_", _inplace([lambda T, y, z: y.copy_(z * 2), lambda T, y, z: y.mul_(z)]),
         lambda: (rn(3, 4), rn(4))),
    case("fill_-zero_", _inplace([lambda T, y, z: y.mul_(z), lambda T, y, z: y[0].fill_(2.0),
                                  lambda T, y, z: y[1].zero_()]), lambda: (rn(3, 4), rn(4))),
]


def _setitem(T, x, w):
    y = x.clone()
    y[0] = w * 3
    y[:, 1].mul_(2)
    return y


def _write_views(T, x, w):
    y = x * 2
    v = y[:, 1:3]
    y[1:, ::2] = w[:2]       # broadcast over rows, every other column
    y[-1, -1] = 5.0
    v.exp_()                 # last: exp saves its result, which a later write would modify
    return y, v


def _nested_view_write(T, x, w):
    y = x.clone()
    a = y[1:]
    b = a.t()
    b[0].add_(w[:2])
    b[1] *= 3
    return y * 1, a, b


def _write_into_constant(T, x, w):
    a = T.zeros(3, 4, device=x.device)
    a.add_(x)
    a[0] = w * x[1]
    return a


def _view_then_base_inplace(T, x, w):
    y = x.clone()
    v = y[0]
    y.mul_(w)        # the view reads the base's new values and history
    return v * 1, y


def _transposed_view_inplace(T, x, w):
    y = x.clone()
    y.t()[1:3].sigmoid_()
    return y


def _half_target(T, x, z):
    y = x.half() * 1
    y.mul_(z)                # a float32 operand written into a float16 tensor
    return y.float()


def _mixed_writes(T, x, z):
    y = x * 1
    y[:, 0].add_(z[0])       # a 0-d operand broadcast into a column
    y[1].copy_(z.half())     # copy_ converts the dtype; the gradient converts back
    y.unsqueeze(0)[0, 2] = z
    y.view(-1)[::5].sub_(1)
    return y


def _as_strided_write(T, x, z):
    y = x.clone()
    y.as_strided((2, 2), (1, 4))[0].mul_(z[:2])
    return y


INPLACE_CASES += [
    case("half-target", _half_target, lambda: (rn(3, 4), rn(4)), rtol=2e-3, atol=2e-3),
    case("mixed-writes", _mixed_writes, lambda: (rn(3, 4), rn(4)), rtol=2e-3, atol=2e-3),
    case("as_strided-write", _as_strided_write, lambda: (rn(3, 4), rn(4))),
    case("setitem-then-view-mul_", _setitem, lambda: (rn(3, 4), rn(4))),
    case("write-views", _write_views, lambda: (rn(3, 4), rn(2))),
    case("nested-view-write", _nested_view_write, lambda: (rn(3, 4), rn(2))),
    case("write-into-constant", _write_into_constant, lambda: (rn(3, 4), rn(4))),
    case("view-then-base-inplace", _view_then_base_inplace, lambda: (rn(3, 4), rn(4))),
    case("transposed-view-inplace", _transposed_view_inplace, lambda: (rn(3, 4), rn(4))),
]


@pytest.mark.parametrize("fn,make_inputs,tol", INPLACE_CASES)
def test_inplace(device, fn, make_inputs, tol):
    run_case(device, fn, make_inputs, **tol)
