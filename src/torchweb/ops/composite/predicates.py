"""Small predicates and identities on tensors: is_nonzero, is_same_size, is_signed (Python
bools), isposinf, isneginf, isreal (bool tensors; real dtypes only here) and positive."""

from ... import _dtype as D
from ..operands import is_tensor
from ..elementwise import call
from ..out_arg import result_or_out
from ..registry import define


@define("is_nonzero", "comparison", differentiable=False,
        doc="is_nonzero(input) -> bool\n\nWhether a one-element tensor is nonzero.")
def is_nonzero(input):
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


@define("is_same_size", "comparison", differentiable=False,
        doc="is_same_size(input, other) -> bool\n\nWhether the two tensors have the same shape.")
def is_same_size(input, other):
    if not is_tensor(other):
        raise TypeError(f"is_same_size(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return tuple(input.shape) == tuple(other.shape)


@define("is_signed", "comparison", differentiable=False,
        doc="is_signed(input) -> bool\n\nWhether input's dtype is signed (not bool or uint8).")
def is_signed(input):
    return input.dtype not in (D.bool, D.uint8)


def _bool_out(name, out):
    if out is not None and is_tensor(out) and out.dtype is not D.bool:
        raise RuntimeError(f"{name} does not support non-boolean outputs.")


@define("isposinf", "comparison", differentiable=False,
        doc="isposinf(input, *, out=None) -> Tensor\n\nWhether each element is +inf.")
def isposinf(input, *, out=None):
    _bool_out("isposinf", out)
    if not input.dtype.is_floating_point:
        return result_or_out(call("ne", input, input), out, "isposinf")   # all False, input's shape
    return result_or_out(call("eq", input, float("inf")), out, "isposinf")


@define("isneginf", "comparison", differentiable=False,
        doc="isneginf(input, *, out=None) -> Tensor\n\nWhether each element is -inf.")
def isneginf(input, *, out=None):
    _bool_out("isneginf", out)
    if not input.dtype.is_floating_point:
        return result_or_out(call("ne", input, input), out, "isneginf")
    return result_or_out(call("eq", input, float("-inf")), out, "isneginf")


@define("isreal", "comparison", differentiable=False,
        doc="isreal(input) -> Tensor\n\nWhether each element has no imaginary part: all True for real dtypes.")
def isreal(input):
    return call("eq", input, input) if not input.dtype.is_floating_point else \
        call("logical_or", call("eq", input, input), call("isnan", input))


@define("positive", "elementwise", dtypes="numeric",
        doc="positive(input) -> Tensor\n\ninput itself (+input); bool refused, as PyTorch.")
def positive(input):
    if input.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input
