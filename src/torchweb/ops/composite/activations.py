"""Activations written from table rows (where, clamp, exp, log1p, tanh, sigmoid, ...), so their
gradients come from the rows' rules: softplus, mish, elu, selu, celu, leaky_relu, hardtanh,
relu6, hardswish, hardsigmoid, softsign, tanhshrink, softshrink, hardshrink, threshold, glu,
prelu, rrelu, logsigmoid, softmin, gumbel_softmax. Branches that where() discards are computed
on clamped inputs, so that an overflow there (exp of a large input) cannot turn the discarded
branch's zero gradient into NaN. Where PyTorch's derivative at a kink differs from what the
composite would give (hardtanh at its bounds, hardswish at +-3), the branches are chosen so that
they agree."""

import math

from ..elementwise import call
from ..registry import OPS, define
from .. import shape as S
from ..._creation import rand, arange
from ..._size import wrap_dim
from ..activation import softmax
from ..reduction import argmax


def _float(x, kernel):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{x.dtype.word}'")


def _inplace(input, result, inplace):
    return input.copy_(result) if inplace else result


def _src(input, inplace):
    """The input the composite reads: a copy when the result is written over input (the
    composite's backward may read what it saved of it)."""
    return S.clone(input) if inplace else input


def _F(name, **kw):
    return define(name, "activation", torch=False, method=False, functional=True, **kw)


@_F("softplus")
def softplus(input, beta=1.0, threshold=20.0):
    """softplus(input, beta=1, threshold=20) -> Tensor

    log(1 + exp(beta * input)) / beta, and input itself where beta * input > threshold."""
    _float(input, "softplus_cpu")
    bx = input * beta if beta != 1 else input
    soft = call("log1p", call("exp", call("clamp_max", bx, float(threshold))))
    if beta != 1:
        soft = soft / beta
    return call("where", bx > threshold, input, soft)


@_F("mish")
def mish(input, inplace=False):
    """mish(input, inplace=False) -> Tensor

    input * tanh(softplus(input))."""
    _float(input, "mish_cpu")
    x = _src(input, inplace)
    return _inplace(input, x * call("tanh", softplus(x)), inplace)


def _elu(input, alpha, scale, input_scale, inplace, kernel):
    _float(input, kernel)
    x = _src(input, inplace)
    neg = call("expm1", call("clamp_max", x * input_scale if input_scale != 1 else x, 0.0))
    r = call("where", x > 0, x, neg * alpha if alpha != 1 else neg)
    if scale != 1:
        r = r * scale
    return _inplace(input, r, inplace)


@_F("elu")
def elu(input, alpha=1.0, inplace=False):
    """elu(input, alpha=1.0, inplace=False) -> Tensor

    input where input > 0, else alpha * (exp(input) - 1)."""
    return _elu(input, alpha, 1, 1, inplace, "elu_cpu")


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


@define("selu", "activation", method=False, functional=True)
def selu(input, inplace=False):
    """selu(input, inplace=False) -> Tensor

    scale * elu(input, alpha), with SELU's fixed alpha = 1.6733 and scale = 1.0507."""
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1, inplace, "elu_cpu")


@define("celu", "activation", method=False, functional=True)
def celu(input, alpha=1.0, inplace=False):
    """celu(input, alpha=1.0, inplace=False) -> Tensor

    max(0, input) + min(0, alpha * (exp(input / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu(input, alpha, 1, 1.0 / alpha, inplace, "elu_cpu")


@_F("leaky_relu")
def leaky_relu(input, negative_slope=0.01, inplace=False):
    """leaky_relu(input, negative_slope=0.01, inplace=False) -> Tensor

    input where input > 0, else negative_slope * input."""
    _float(input, "leaky_relu_cpu")
    x = _src(input, inplace)
    return _inplace(input, call("where", x > 0, x, x * negative_slope), inplace)


@_F("hardtanh", dtypes="numeric")
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False) -> Tensor

    input clamped to [min_val, max_val]; the gradient is 0 at the bounds, as PyTorch's."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype.name == "bool":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    inside = call("logical_and", input > min_val, input < max_val)
    r = call("where", inside, input, call("clamp", input, min_val, max_val).detach())
    return _inplace(input, r, inplace)


@_F("relu6", dtypes="numeric")
def relu6(input, inplace=False):
    """relu6(input, inplace=False) -> Tensor

    min(max(0, input), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


@_F("hardswish")
def hardswish(input, inplace=False):
    """hardswish(input, inplace=False) -> Tensor

    input * relu6(input + 3) / 6."""
    _float(input, "hardswish_cpu")
    x = _src(input, inplace)
    # PyTorch's formula x * min(max(x + 3, 0), 6) / 6 branch by branch, with its gradient:
    # x / 3 + 1/2 strictly inside (-3, 3), 1 from 3 on, 0 up to -3
    inside = call("logical_and", x > -3, x < 3)
    r = call("where", inside, x * (x + 3) / 6, call("where", x >= 3, x * 6.0 / 6, x * 0.0 / 6))
    return _inplace(input, r, inplace)


@_F("hardsigmoid")
def hardsigmoid(input, inplace=False):
    """hardsigmoid(input, inplace=False) -> Tensor

    relu6(input + 3) / 6: 0 below -3, 1 above 3, linear between."""
    _float(input, "hardsigmoid_cpu")
    x = _src(input, inplace)
    r = call("where", x <= -3, 0.0, call("where", x >= 3, 1.0, (x + 3) / 6))
    return _inplace(input, r, inplace)


@_F("softsign", dtypes="numeric")
def softsign(input):
    """softsign(input) -> Tensor

    input / (1 + |input|)."""
    return input / (call("abs", input) + 1)


@_F("tanhshrink", dtypes="numeric")
def tanhshrink(input):
    """tanhshrink(input) -> Tensor

    input - tanh(input)."""
    return input - call("tanh", input)


def _check_lambd(lambd):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {float(lambd)}.")


@_F("softshrink")
def softshrink(input, lambd=0.5):
    """softshrink(input, lambd=0.5) -> Tensor

    input - lambd above lambd, input + lambd below -lambd, 0 between (NaN stays NaN)."""
    _check_lambd(lambd)
    _float(input, "softshrink_cpu")
    r = call("where", input > lambd, input - lambd, call("where", input < -lambd, input + lambd, 0.0))
    return call("where", call("isnan", input), input, r)


@define("hardshrink", "activation", out=True, method=True, functional=True)
def hardshrink(input, lambd=0.5):
    """hardshrink(input, lambd=0.5) -> Tensor

    input outside [-lambd, lambd], 0 inside."""
    _float(input, "hardshrink_cpu")
    inside = call("logical_and", input >= -lambd, input <= lambd)
    return call("where", inside, 0.0, input)


@define("threshold", "activation", out=True, method=False, functional=True)
def threshold(input, threshold, value, inplace=False):
    """threshold(input, threshold, value, inplace=False) -> Tensor

    value where input <= threshold, else input."""
    return _inplace(input, call("where", input <= threshold, value, input), inplace)


@_F("glu")
def glu(input, dim=-1):
    """glu(input, dim=-1) -> Tensor

    a * sigmoid(b), a and b the two halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.dim())
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a = S.narrow(input, d, 0, n // 2)
    b = S.narrow(input, d, n // 2, n // 2)
    return a * call("sigmoid", b)


@define("prelu", "activation", method=True, functional=True)
def prelu(input, weight):
    """prelu(input, weight) -> Tensor

    input where input > 0, else weight * input; weight has 1 or channel-count (dim 1) elements."""
    k = weight.numel()
    channels = input.shape[1] if input.dim() >= 2 else 1
    if k != 1 and k != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {k} "
                           f"and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    w = S.reshape(weight, ()) if k == 1 else S.reshape(weight, (k,) + (1,) * (input.dim() - 2))
    return call("where", input > 0, input, input * w)


@define("rrelu", "activation", method=False, functional=True)
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False, generator=None):
    """rrelu(input, lower=1/8, upper=1/3, training=False, inplace=False) -> Tensor

    leaky_relu with slope (lower + upper) / 2 in eval mode; in training, a slope drawn uniformly
    from [lower, upper] for each element (torch.manual_seed makes it repeatable)."""
    _float(input, "rrelu_with_noise_cpu")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = rand(tuple(input.shape), device=input.device, dtype=input.dtype, generator=generator) * (upper - lower) + lower
    x = _src(input, inplace)
    return _inplace(input, call("where", x >= 0, x, x * slope), inplace)


@_F("logsigmoid")
def logsigmoid(input):
    """logsigmoid(input) -> Tensor

    log(sigmoid(input)) = min(input, 0) - log1p(exp(-|input|)), computed stably."""
    _float(input, "log_sigmoid_forward")
    return _LogSigmoid.apply(input)


from ...autograd.function import Function  # noqa: E402


class _LogSigmoid(Function):
    _double_backward = True
    _backward_name = "LogSigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        neg = call("where", x < 0, x, 0.0)
        return neg - call("log1p", call("exp", -call("abs", x)))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * call("sigmoid", -x)


@_F("softmin")
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmin(input, dim=None, dtype=None) -> Tensor

    softmax(-input, dim)."""
    if dim is None:
        import warnings
        warnings.warn("Implicit dimension choice for softmin has been deprecated. Change the call to include "
                      "dim=X as an argument.", stacklevel=2)
        dim = 0 if input.dim() in (0, 1, 3) else 1  # PyTorch's legacy implicit dim
    if dtype is not None:
        input = input.to(dtype)
    return softmax(-input, dim)


@_F("gumbel_softmax", dtypes="all")
def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1) -> Tensor

    softmax((logits + g) / tau, dim), g Gumbel(0, 1) noise (torch.manual_seed makes it
    repeatable); hard=True: the one-hot of the argmax in the forward, the soft gradient in the
    backward."""
    u = rand(tuple(logits.shape), device=logits.device, dtype=logits.dtype)
    # -log(E), E = -log(U) exponential; U kept away from 0 and 1
    u = call("clamp", u, 1e-20, 1.0 - 2.0 ** -24)
    g = -call("log", -call("log", u))
    y = softmax((logits + g) / tau, dim)
    if not hard:
        return y
    d = wrap_dim(dim, logits.dim())
    idx = argmax(y.detach(), d, keepdim=True)
    shape = [1] * logits.dim()
    shape[d] = logits.shape[d]
    pos = S.reshape(arange(logits.shape[d], device=logits.device), tuple(shape))
    y_hard = (pos == idx).to(logits.dtype)
    return y_hard - y.detach() + y


def _inplace_form(fn):
    name = fn.__name__ + "_"

    def f(input, *args, **kwargs):
        return fn(input, *args, **kwargs, inplace=True)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{name}(input, ...) -> Tensor\n\n{fn.__name__} in place."
    _F(name, dtypes=OPS[fn.__name__].dtypes)(f)


for _fn in (elu, selu, celu, leaky_relu, hardtanh, threshold, rrelu):
    _inplace_form(_fn)
