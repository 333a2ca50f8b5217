"""The public elementwise ops, registered (registry.py): the rows of elementwise/table.py with an
`api` become torch.<name>, Tensor.<name> and Tensor.<name>_ here with no code of their own; the
ops whose signature needs more (alpha, rounding modes, bounds, conditions) are written below."""

from .. import _dtype as D
from .._size import contiguous_strides, numel
from ..lazy import write_into
from .operands import is_tensor
from .elementwise import call, OPS, row_dtypes
from .inplace import call_inplace
from .out_arg import write_out
from .registry import define, register
from .._creation import tensor
from .reduction import all as all_
from .shape import clone


def _out(result, out, name):
    """out_arg.result_or_out, computed straight into out's buffer where the result is still
    pending (_write_direct: every check of write_out holds there)."""
    if out is None:
        return result
    if _write_direct(result, out):
        return out
    return write_out(result, out, name)


def _write_direct(result, out):
    """(result: the fresh tensor an op just made, seen by no one else.) out= without the copy: a result not yet computed (a pending fused expression of the
    webgpu backend) is computed straight into out's buffer, when out is laid out as the
    result would be and autograd has nothing to record. False: nothing done, copy instead."""
    storage = result._storage
    if getattr(storage, "pending", None) is None or not is_tensor(out):
        return False
    dst = out._storage
    shape = out._shape
    if (out.dtype is not result.dtype or shape != result._shape or out._offset
            or getattr(dst, "pending", False) is False or dst is storage
            or result.requires_grad or out.requires_grad):
        return False
    stride = contiguous_strides(shape)
    if out._stride != stride:
        return False
    if not write_into(storage, dst, stride, dst.numel == numel(shape)):
        return False
    out._bump_version()   # written in place, as copy_ would
    return True


def _unary(op):
    name = op.name

    def fn(input, *, out=None):
        _need_tensor(name, input, "input", 1)
        return _out(call(name, input), out, name)

    def fn_(self):
        return call_inplace(name, self)
    return fn, fn_, "(input, *, out=None)"


def _need_tensor(name, value, what, position):
    """PyTorch's signature check: a Python number where only a Tensor is accepted."""
    if not is_tensor(value):
        raise TypeError(f"{name}(): argument '{what}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _binary(op):
    """PyTorch's overloads: `other` may be a number unless api is "binary_tensor"; `input`
    must be a tensor unless the row says scalar_input (remainder, xlogy have that overload)."""
    name, tensor_only = op.name, op.api == "binary_tensor"
    scalar_input = op.extra.get("scalar_input", False)

    def fn(input, other, *, out=None):
        if not scalar_input:
            _need_tensor(name, input, "input", 1)
        if tensor_only:
            _need_tensor(name, other, "other", 2)
        return _out(call(name, input, other), out, name)

    def fn_(self, other):
        if tensor_only:
            _need_tensor(name + "_", other, "other", 1)
        return call_inplace(name, self, other)
    return fn, fn_, "(input, other, *, out=None)"


def _register_rows():
    for op in OPS.values():
        if not op.api:
            continue
        fn, fn_, sig = (_unary if op.api == "unary" else _binary)(op)
        for f, n in ((fn, op.name), (fn_, op.name + "_")):
            f.__name__ = f.__qualname__ = n
        fn.__doc__ = f"{op.name}{sig} -> Tensor\n\n{op.doc}"
        fn_.__doc__ = f"In-place {op.name}: {op.doc}"
        kind = "comparison" if op.rule in ("compare", "pred") else "elementwise"
        register(op.name, fn, kind, inplace=fn_ if op.inplace else None, aliases=op.aliases,
                 differentiable=op.grad is not None, dtypes=row_dtypes(op))


_register_rows()


def _check_alpha(input, other, alpha):
    if alpha == 1 and not isinstance(alpha, (float, bool)):
        return
    dt = D.result_type(input, other)
    if not dt.is_floating_point and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if dt is not D.bool and isinstance(alpha, bool):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    _check_fits(dt, alpha)


def _numbers_to_tensor(input, other):
    """torch.add(2, 3) and friends: two Python numbers give a 0-d tensor, as in PyTorch."""
    if not is_tensor(input) and not is_tensor(other):
        _need_number(input)
        return tensor(input)
    return input


def _need_number(v):
    if not isinstance(v, (int, float, bool)):
        raise TypeError(f"expected a Tensor or a Python number, got {type(v).__name__}")


def _add_(self, other, *, alpha=1):
    """In-place add: self += alpha * other."""
    _check_alpha(self, other, alpha)
    return call_inplace("add" if alpha == 1 else "add_alpha", self, other, *(() if alpha == 1 else (alpha,)))


@define("add", "elementwise", inplace=_add_)
def add(input, other, *, alpha=1, out=None):
    """add(input, other, *, alpha=1, out=None) -> Tensor

    input + alpha * other, with broadcasting and type promotion."""
    input = _numbers_to_tensor(input, other)
    _check_alpha(input, other, alpha)
    return _out(call("add", input, other) if alpha == 1 else call("add_alpha", input, other, alpha), out, "add")


def _sub_(self, other, *, alpha=1):
    """In-place sub: self -= alpha * other."""
    _check_alpha(self, other, alpha)
    return call_inplace("sub" if alpha == 1 else "sub_alpha", self, other, *(() if alpha == 1 else (alpha,)))


@define("sub", "elementwise", dtypes="numeric", inplace=_sub_, aliases=("subtract",))
def sub(input, other, *, alpha=1, out=None):
    """sub(input, other, *, alpha=1, out=None) -> Tensor

    input - alpha * other, with broadcasting and type promotion."""
    input = _numbers_to_tensor(input, other)
    _check_alpha(input, other, alpha)
    return _out(call("sub", input, other) if alpha == 1 else call("sub_alpha", input, other, alpha), out, "sub")


@define("rsub", "elementwise", dtypes="numeric", method=False)
def rsub(input, other, *, alpha=1):
    """rsub(input, other, *, alpha=1) -> Tensor

    other - alpha * input."""
    return sub(other, input, alpha=alpha)


@define("mul", "elementwise", inplace=lambda self, other: call_inplace("mul", self, other),
        aliases=("multiply",))
def mul(input, other, *, out=None):
    """mul(input, other, *, out=None) -> Tensor

    input * other, with broadcasting and type promotion."""
    return _out(call("mul", _numbers_to_tensor(input, other), other), out, "mul")


def _div_(self, other, *, rounding_mode=None):
    """In-place div, with div's rounding modes."""
    return call_inplace("div" if rounding_mode is None else "div_" + rounding_mode, self, other)


@define("div", "elementwise", inplace=_div_, aliases=("divide", "true_divide"))
def div(input, other, *, rounding_mode=None, out=None):
    """div(input, other, *, rounding_mode=None, out=None) -> Tensor

    input / other: true division (integers give floats), or rounded with rounding_mode 'trunc'
    or 'floor' (integers stay integers; an integer divisor of 0 raises ZeroDivisionError)."""
    input = _numbers_to_tensor(input, other)
    if rounding_mode is None:
        return _out(call("div", input, other), out, "div")
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    return _out(call("div_" + rounding_mode, input, other), out, "div")


@define("floor_divide", "elementwise", out=True, dtypes="numeric", inplace=lambda self, other: _div_(self, other, rounding_mode="floor"))
def floor_divide(input, other):
    """floor_divide(input, other) -> Tensor

    input // other: division rounded down, as Python's."""
    return div(input, other, rounding_mode="floor")


def _pow_(self, exponent):
    """In-place pow (bool ** bool answered like pow(), which PyTorch does without a kernel)."""
    if self.dtype is D.bool and isinstance(exponent, bool):
        return self.copy_(pow(self, exponent))
    if not self.dtype.is_floating_point and isinstance(exponent, int) and not isinstance(exponent, bool) \
            and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return call_inplace("pow", self, exponent)


@define("pow", "elementwise", dtypes="numeric", inplace=_pow_)
def pow(input, exponent, *, out=None):
    """pow(input, exponent, *, out=None) -> Tensor

    input ** exponent; either may be a number. Integers to negative integer powers are refused."""
    if not is_tensor(input):   # a number base: a tensor of the dtype the pair promotes to
        input = tensor(input, dtype=D.result_type(input, exponent), device=exponent.device)
    if isinstance(exponent, bool) and input.dtype is D.bool:
        # PyTorch answers x ** True and x ** False without its (missing) bool pow kernel
        return _out(clone(input) if exponent else call("eq", input, input), out, "pow")
    if is_tensor(exponent) is False and not input.dtype.is_floating_point and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _out(call("pow", input, exponent), out, "pow")


def _square_(self):
    """In-place square (bool can't hold its int64 result, as in PyTorch)."""
    if self.dtype is D.bool:
        raise RuntimeError("result type Long can't be cast to the desired output type Bool")
    return call_inplace("square", self)


@define("square", "elementwise", inplace=_square_)
def square(input, *, out=None):
    """square(input, *, out=None) -> Tensor

    input * input (bool squares to int64, as PyTorch's pow(x, 2))."""
    _need_tensor("square", input, "input", 1)
    if input.dtype is D.bool:
        input = input.to(D.int64)
    return _out(call("square", input), out, "square")


def _check_fits(dtype, *values):
    """where(), clamp() and alpha convert Python scalars to the result dtype, and PyTorch refuses
    overflow there: ints past dtype.scalar_range, finite floats past float's range."""
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if dtype.c_int is not None and isinstance(v, int):
            lo, hi = dtype.scalar_range
            if not lo <= v <= hi:
                raise RuntimeError(f"value cannot be converted to type {dtype.c_int} without overflow")
        elif dtype.is_floating_point and abs(v) > dtype.max and abs(v) != float("inf"):
            raise RuntimeError(f"value cannot be converted to type {dtype.c_name} without overflow")


def _same_kind_bounds(name, min, max):
    """PyTorch's clamp overloads take two numbers or two tensors, not one of each; a 0-d tensor
    beside a number is read as a number (PyTorch's argument parser does that, with a sync)."""
    if min is not None and max is not None and is_tensor(min) != is_tensor(max):
        t = min if is_tensor(min) else max
        if t.dim() == 0:
            return (t.item(), max) if t is min else (min, t.item())
        raise TypeError(f"{name}() received an invalid combination of arguments - got a "
                        f"{'Tensor' if is_tensor(min) else type(min).__name__} min and a "
                        f"{'Tensor' if is_tensor(max) else type(max).__name__} max: both must be "
                        f"numbers or both tensors")


def _clamp_(self, min=None, max=None):
    """In-place clamp."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    min, max = _same_kind_bounds("clamp_", min, max) or (min, max)
    if min is None:
        return call_inplace("clamp_max", self, max)
    if max is None:
        return call_inplace("clamp_min", self, min)
    return call_inplace("clamp", self, min, max)


@define("clamp", "elementwise", inplace=_clamp_, aliases=("clip",))
def clamp(input, min=None, max=None, *, out=None):
    """clamp(input, min=None, max=None, *, out=None) -> Tensor

    input limited to [min, max] (numbers or tensors); where min > max the result is max."""
    _need_tensor("clamp", input, "input", 1)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    min, max = _same_kind_bounds("clamp", min, max) or (min, max)
    dt = D.result_type(input, min, max)
    if dt is D.bool and not (is_tensor(min) or is_tensor(max)):
        which = "clamp_min" if max is None else "clamp_max" if min is None else "clamp"
        raise NotImplementedError(f"\"{which}_scalar_cpu\" not implemented for 'Bool'")
    _check_fits(dt, min, max)
    if min is None:
        return _out(call("clamp_max", input, max), out, "clamp")
    if max is None:
        return _out(call("clamp_min", input, min), out, "clamp")
    return _out(call("clamp", input, min, max), out, "clamp")


@define("clamp_min", "elementwise", out=True, inplace=lambda self, min: call_inplace("clamp_min", self, min))
def clamp_min(input, min):
    """clamp_min(input, min) -> Tensor

    max(input, min), elementwise."""
    _need_tensor("clamp_min", input, "input", 1)
    return call("clamp_min", input, min)


@define("clamp_max", "elementwise", out=True, inplace=lambda self, max: call_inplace("clamp_max", self, max))
def clamp_max(input, max):
    """clamp_max(input, max) -> Tensor

    min(input, max), elementwise."""
    _need_tensor("clamp_max", input, "input", 1)
    return call("clamp_max", input, max)


@define("where", "elementwise", method=False)
def where(condition, input=None, other=None, *, out=None):
    """where(condition, input, other, *, out=None) -> Tensor

    input where condition is true, else other (either may be a number)."""
    if input is None and other is None:
        raise NotImplementedError("torch.where(condition) (nonzero) is not supported by torchweb yet")
    if condition.dtype is not D.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype.word}")
    _check_fits(D.result_type(input, other), input, other)
    return _out(call("where", condition, input, other), out, "where")


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """In-place nan_to_num."""
    return self.copy_(nan_to_num(self, nan, posinf, neginf))


@define("nan_to_num", "elementwise", inplace=_nan_to_num_)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None) -> Tensor

    NaN, +inf and -inf replaced (by default with 0 and the dtype's largest and lowest finite)."""
    _need_tensor("nan_to_num", input, "input", 1)
    if not input.dtype.is_floating_point:  # nothing to replace; the dtype stays
        return _out(clone(input), out, "nan_to_num")
    big = 65504.0 if input.dtype is D.float16 else 3.4028234663852886e38
    return _out(call("nan_to_num", input, nan, big if posinf is None else posinf,
                     -big if neginf is None else neginf), out, "nan_to_num")


@define("gelu", "activation", torch=False, method=False, functional=True)
def gelu(input, approximate="none"):
    """gelu(input, approximate='none') -> Tensor

    x * Phi(x), Phi the standard normal CDF (approximate='tanh': its tanh approximation)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return call("gelu" if approximate == "none" else "gelu_tanh", input)


@define("isclose", "comparison", dtypes="numeric")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor

    |input - other| <= atol + rtol * |other|, elementwise (equal infinities are close)."""
    with_tol = call("le", call("abs", input - other), atol + rtol * call("abs", other))
    r = call("logical_or", with_tol, call("eq", input, other))
    if equal_nan:
        r = call("logical_or", r, call("logical_and", call("isnan", input), call("isnan", other)))
    return r


@define("allclose", "comparison", dtypes="numeric")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool

    Whether isclose holds everywhere."""
    return bool(all_(isclose(input, other, rtol, atol, equal_nan)).item())


@define("equal", "comparison")
def equal(input, other):
    """equal(input, other) -> bool

    Whether both have the same shape and elements."""
    return input.shape == other.shape and bool(all_(call("eq", input, other)).item())
