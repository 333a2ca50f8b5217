"""The torch.* function namespace over ops/: thin wrappers with PyTorch's signatures."""

from . import _dtype as D
from .ops import activation as A
from .ops import join as J
from .ops import linalg as L
from .ops import reduction as R
from .ops import shape as S
from .ops.dispatch import is_tensor
from .ops.pointwise import call


def _out(result, out):
    if out is None:
        return result
    out.copy_(result)
    return out


def _check_alpha(input, other, alpha):
    if alpha == 1 and not isinstance(alpha, float):
        return
    dt = D.result_type(input, other)
    if not dt.is_floating_point and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if dt is not D.bool and isinstance(alpha, bool):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


def add(input, other, *, alpha=1, out=None):
    _check_alpha(input, other, alpha)
    return _out(call("add", input, other) if alpha == 1 else call("add_alpha", input, other, alpha), out)


def sub(input, other, *, alpha=1, out=None):
    _check_alpha(input, other, alpha)
    return _out(call("sub", input, other) if alpha == 1 else call("sub_alpha", input, other, alpha), out)


subtract = sub


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha)


def mul(input, other, *, out=None):
    return _out(call("mul", input, other), out)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        return _out(call("div", input, other), out)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    return _out(call("div_" + rounding_mode, input, other), out)


divide = true_divide = div


def floor_divide(input, other):
    return div(input, other, rounding_mode="floor")


def pow(input, exponent, *, out=None):
    if not is_tensor(input):
        from ._creation import tensor
        input = tensor(input, device=exponent.device)
        if not exponent.dtype.is_floating_point and isinstance(input.item(), float):
            input = input.to(D.default_float())
    if isinstance(exponent, bool) and input.dtype is D.bool:
        # PyTorch answers x ** True and x ** False without its (missing) bool pow kernel
        return _out(S.clone(input) if exponent else call("eq", input, input), out)
    if is_tensor(exponent) is False and not input.dtype.is_floating_point and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _out(call("pow", input, exponent), out)


_C_INT = {"uint8": ("uint8_t", -255, 255), "int32": ("int32_t", -2**31, 2**31 - 1),
          "int64": ("int64_t", -2**63, 2**63 - 1)}


def _check_fits(dtype, *values):
    """where() and clamp() convert Python scalars to the result dtype, and PyTorch refuses
    overflow there (unsigned types accept negatives down to -max, which wrap)."""
    name, lo, hi = _C_INT.get(dtype.name, (None, 0, 0))
    for v in values:
        if name and isinstance(v, int) and not isinstance(v, bool) and not lo <= v <= hi:
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = D.result_type(input, min, max)
    if dt is D.bool and not (is_tensor(min) or is_tensor(max)):
        which = "clamp_min" if max is None else "clamp_max" if min is None else "clamp"
        raise NotImplementedError(f"\"{which}_scalar_cpu\" not implemented for 'Bool'")
    _check_fits(dt, min, max)
    if min is None:
        return _out(call("clamp_max", input, max), out)
    if max is None:
        return _out(call("clamp_min", input, min), out)
    return _out(call("clamp", input, min, max), out)


clip = clamp


def clamp_min(input, min):
    return call("clamp_min", input, min)


def clamp_max(input, max):
    return call("clamp_max", input, max)


def where(condition, input=None, other=None):
    if input is None and other is None:
        raise NotImplementedError("torch.where(condition) (nonzero) is not supported by torchweb yet")
    if condition.dtype is not D.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {_word(condition.dtype)}")
    _check_fits(D.result_type(input, other), input, other)
    return call("where", condition, input, other)


def _word(d):
    from .ops.dispatch import type_word
    return type_word(d)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    if not input.dtype.is_floating_point:  # nothing to replace; the dtype stays
        return _out(S.clone(input), out)
    big = 65504.0 if input.dtype is D.float16 else 3.4028234663852886e38
    return _out(call("nan_to_num", input, nan, big if posinf is None else posinf,
                     -big if neginf is None else neginf), out)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return call("gelu" if approximate == "none" else "gelu_tanh", input)


def _unary(name):
    def fn(input, *, out=None):
        return _out(call(name, input), out)
    fn.__name__ = name
    return fn


# binary ops whose `other` PyTorch accepts only as a tensor (no Python scalar overload)
_TENSOR_OTHER = {"maximum", "minimum", "logical_and", "logical_or", "logical_xor"}


def _binary(name):
    def fn(input, other, *, out=None):
        if name in _TENSOR_OTHER and not is_tensor(other):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
        return _out(call(name, input, other), out)
    fn.__name__ = name
    return fn


UNARY = ["neg", "abs", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt",
         "sin", "cos", "tanh", "sigmoid", "relu", "silu", "erf", "reciprocal", "sign", "square",
         "floor", "ceil", "trunc", "round", "isnan", "isinf", "isfinite", "logical_not", "bitwise_not"]
BINARY = ["maximum", "minimum", "remainder", "fmod", "eq", "ne", "lt", "le", "gt", "ge",
          "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"]

for _n in UNARY:
    globals()[_n] = _unary(_n)
for _n in BINARY:
    globals()[_n] = _binary(_n)


def square(input, *, out=None):
    if input.dtype is D.bool:  # square is pow(x, 2): bool squares to int64, as PyTorch's
        input = input.to(D.int64)
    return _out(call("square", input), out)


negative = globals()["neg"]
absolute = globals()["abs"]
greater, greater_equal, less, less_equal = globals()["gt"], globals()["ge"], globals()["lt"], globals()["le"]
not_equal = globals()["ne"]


def equal(input, other):
    return input.shape == other.shape and bool(R.all(call("eq", input, other)).item())


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(R.all(isclose(input, other, rtol, atol, equal_nan)).item())


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    with_tol = call("le", call("abs", input - other), atol + rtol * call("abs", other))
    same = call("eq", input, other)
    r = call("logical_or", with_tol, same)
    if equal_nan:
        r = call("logical_or", r, call("logical_and", call("isnan", input), call("isnan", other)))
    return r


# reductions, linear algebra, joins, views: re-exported with PyTorch's names
sum, mean, prod, max, min = R.sum, R.mean, R.prod, R.max, R.min
amax, amin, argmax, argmin, all, any = R.amax, R.amin, R.argmax, R.argmin, R.all, R.any
var, std, var_mean, std_mean, logsumexp, norm = R.var, R.std, R.var_mean, R.std_mean, R.logsumexp, R.norm
mm, bmm, matmul, mv, dot, addmm = L.mm, L.bmm, L.matmul, L.mv, L.dot, L.addmm
cat, concat, concatenate, stack, split, chunk = J.cat, J.concat, J.concatenate, J.stack, J.split, J.chunk
hstack, vstack, tensor_split = J.hstack, J.vstack, J.tensor_split
softmax, log_softmax = A.softmax, A.log_softmax
reshape, flatten, squeeze, unsqueeze, permute = S.reshape, S.flatten, S.squeeze, S.unsqueeze, S.permute
transpose, t, narrow, select, unbind, movedim = S.transpose, S.t, S.narrow, S.select, S.unbind, S.movedim
swapaxes = swapdims = S.transpose
clone, as_strided, unflatten = S.clone, S.as_strided, S.unflatten


def broadcast_to(input, size):
    return S.expand(input, size)


def broadcast_tensors(*tensors):
    from ._size import broadcast_shapes
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(S.expand(t, shape) for t in tensors)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.dtype.is_floating_point


def result_type(tensor1, tensor2):
    return D.result_type(tensor1, tensor2)


def can_cast(from_, to):
    return from_.category <= to.category


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("D", "A", "J", "L", "R", "S", "call", "is_tensor", "UNARY", "BINARY")]
