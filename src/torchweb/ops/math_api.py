"""Math ops whose public form needs more than a table row: logit's eps, heaviside's dtype
check, float_power's refusal, and the blends lerp, addcmul and addcdiv (composites of table
rows, so their gradients come from the rows' rules)."""

from .. import _dtype as D
from .operands import is_tensor
from .elementwise import call, OPS, row_dtypes
from .inplace import call_inplace
from .out_arg import result_or_out
from .registry import define


def _logit_(self, eps=None):
    """In-place logit."""
    if eps is None:
        return call_inplace("logit", self)
    return self.copy_(logit(self, eps))


@define("logit", "elementwise", inplace=_logit_)
def logit(input, eps=None, *, out=None):
    """logit(input, eps=None, *, out=None) -> Tensor

    log(input / (1 - input)); with eps, input is first clamped to [eps, 1 - eps]."""
    if eps is not None:
        input = call("clamp", input, float(eps), 1.0 - float(eps))
    return result_or_out(call("logit", input), out, "logit")


def _check_heaviside(input, values):
    if not is_tensor(input):
        raise TypeError(f"heaviside(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not is_tensor(values):
        raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def _heaviside_(self, values):
    """In-place heaviside."""
    _check_heaviside(self, values)
    return call_inplace("heaviside", self, values)


@define("heaviside", "elementwise", inplace=_heaviside_, differentiable=False)
def heaviside(input, values, *, out=None):
    """heaviside(input, values, *, out=None) -> Tensor

    The Heaviside step: 0 where input < 0, values where input == 0, 1 where input > 0."""
    _check_heaviside(input, values)
    return result_or_out(call("heaviside", input, values), out, "heaviside")


def _no_float64(*a, **k):
    raise TypeError("float_power computes in float64, and WebGPU has no float64 (WGSL has no f64 type): "
                    "use torch.pow, which computes in the inputs' float32")


@define("float_power", "elementwise", inplace=lambda self, exponent: _no_float64(), differentiable=False)
def float_power(input, exponent, *, out=None):
    """float_power(input, exponent, *, out=None) -> Tensor

    Refused: PyTorch computes it in float64, which WebGPU does not have (use pow)."""
    _no_float64()


# -- blends ----------------------------------------------------------------------------------
def _lerp_(self, end, weight):
    return self.copy_(lerp(self, end, weight))


@define("lerp", "elementwise", inplace=_lerp_)
def lerp(input, end, weight, *, out=None):
    """lerp(input, end, weight, *, out=None) -> Tensor

    input + weight * (end - input) (weight a number or a tensor); computed from end where
    |weight| >= 0.5, as PyTorch, so that weight 1 gives end exactly."""
    if not is_tensor(end):
        raise TypeError(f"lerp(): argument 'end' (position 2) must be Tensor, not {type(end).__name__}")
    if input.dtype is not end.dtype or (is_tensor(weight) and weight.dtype is not input.dtype):
        other = end.dtype if input.dtype is not end.dtype else weight.dtype
        raise RuntimeError(f"expected dtype {input.dtype.word} for `end` but got dtype {other.word}"
                           if input.dtype is not end.dtype else
                           f"expected dtype {input.dtype.word} for `weight` but got dtype {other.word}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"lerp_kernel_scalar\" not implemented for '{input.dtype.word}'")
    diff = end - input
    if is_tensor(weight):
        small = call("abs", weight) < 0.5
        r = call("where", small, input + weight * diff, end - diff * (1 - weight))
    elif abs(weight) < 0.5:
        r = input + diff * weight
    else:
        r = end - diff * (1 - weight)
    return result_or_out(r, out, "lerp")


def _check_value(name, dt, value):
    if not dt.is_floating_point and isinstance(value, float) and value != int(value):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _addcmul_(self, tensor1, tensor2, *, value=1):
    return self.copy_(addcmul(self, tensor1, tensor2, value=value))


@define("addcmul", "elementwise", inplace=_addcmul_)
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """addcmul(input, tensor1, tensor2, *, value=1, out=None) -> Tensor

    input + value * tensor1 * tensor2."""
    prod = tensor1 * tensor2
    return result_or_out(input + (prod if value == 1 else prod * value), out, "addcmul")


def _addcdiv_(self, tensor1, tensor2, *, value=1):
    return self.copy_(addcdiv(self, tensor1, tensor2, value=value))


@define("addcdiv", "elementwise", inplace=_addcdiv_)
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """addcdiv(input, tensor1, tensor2, *, value=1, out=None) -> Tensor

    input + value * tensor1 / tensor2 (integer tensor1 and tensor2 are refused, as PyTorch)."""
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release "
                           "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                           "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                           "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                           "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    q = tensor1 / tensor2
    return result_or_out(input + (q if value == 1 else q * value), out, "addcdiv")


def _round_decimals(input, decimals):
    """PyTorch's rounding to `decimals` places: round(x * 10^d) / 10^d (for negative d,
    round(x / 10^-d) * 10^-d), in the input's dtype."""
    if decimals == 0:
        return call("round", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError('"round_decimals" not implemented for ' + f"'{input.dtype.word}'")
    if decimals > 0:
        scale = 10.0 ** decimals
        return call("div", call("round", call("mul", input, scale)), scale)
    scale = 10.0 ** -decimals
    return call("mul", call("round", call("div", input, scale)), scale)


def _round_(self, *, decimals=0):
    """In-place round."""
    if decimals == 0:
        return call_inplace("round", self)
    return self.copy_(_round_decimals(self, decimals))


@define("round", "elementwise", inplace=_round_, dtypes=row_dtypes(OPS["round"]))
def round(input, *, decimals=0, out=None):
    """round(input, *, decimals=0, out=None) -> Tensor

    input rounded to the nearest integer (halves to even), or to `decimals` decimal places."""
    if not is_tensor(input):
        raise TypeError(f"round(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return result_or_out(_round_decimals(input, decimals), out, "round")
