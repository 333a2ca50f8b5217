"""Tensor methods and Python operators, attached to Tensor from the op modules."""

from . import _functions as F
from . import _dtype as D
from ._tensor import Tensor
from .ops import convert, indexing, shape as S
from .ops.dispatch import is_tensor
from .ops.pointwise import binary, call, call_inplace
from .ops.composite.matrix_builders import fill_diagonal_
from .ops.registry import method_names


def _reflected(name):
    """other <op> self for a number on the left (5 - t, 2 ** t): the op takes the number as its
    first operand, so it keeps a Python number's low priority in type promotion."""
    fn = getattr(F, name)

    def op(self, other):
        if not (is_tensor(other) or isinstance(other, (int, float, bool))):
            return NotImplemented
        return fn(other, self)
    return op


# With a tensor as `input` and the defaults (alpha=1, no rounding mode, no out=), these
# torch.<name> functions come down to call(name, input, other): the operators go there directly
# (the functions' own checks and the wrapping are per-op Python time)
_DIRECT = ("add", "sub", "mul", "div")


def _binop(name):
    fn = getattr(F, name)
    if name in _DIRECT:
        return lambda self, other: binary(name, self, other)   # (NotImplemented for other types)

    def op(self, other):
        if not (is_tensor(other) or isinstance(other, (int, float, bool))):
            return NotImplemented
        return fn(self, other)
    return op


def _pos(self):
    if self.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return call("bitwise_not", self)


def _bitwise(bitwise):
    """& | ^ on tensors: bitwise for integers, logical for bool (the same kernels)."""
    def op(self, other):
        if not (is_tensor(other) or isinstance(other, (int, float, bool))):
            return NotImplemented
        return call(bitwise, self, other)   # a float operand: PyTorch's NotImplementedError
    return op


OPERATORS = {
    "__add__": _binop("add"), "__radd__": _binop("add"),
    "__sub__": _binop("sub"), "__rsub__": _reflected("sub"),
    "__mul__": _binop("mul"), "__rmul__": _binop("mul"),
    "__truediv__": _binop("div"), "__rtruediv__": _reflected("div"),
    "__floordiv__": _binop("floor_divide"), "__rfloordiv__": _reflected("floor_divide"),
    "__mod__": _binop("remainder"), "__rmod__": _reflected("remainder"),
    "__pow__": _binop("pow"), "__rpow__": _reflected("pow"),
    "__matmul__": lambda a, b: F.matmul(a, b), "__rmatmul__": lambda a, b: F.matmul(b, a),
    "__neg__": lambda a: call("neg", a), "__pos__": _pos, "__abs__": lambda a: call("abs", a),
    "__invert__": _invert,
    "__and__": _bitwise("bitwise_and"), "__rand__": _bitwise("bitwise_and"),
    "__or__": _bitwise("bitwise_or"), "__ror__": _bitwise("bitwise_or"),
    "__xor__": _bitwise("bitwise_xor"), "__rxor__": _bitwise("bitwise_xor"),
    "__lshift__": _binop("bitwise_left_shift"), "__rlshift__": _reflected("bitwise_left_shift"),
    "__rshift__": _binop("bitwise_right_shift"), "__rrshift__": _reflected("bitwise_right_shift"),
    "__eq__": _binop("eq"), "__ne__": _binop("ne"), "__lt__": _binop("lt"), "__le__": _binop("le"),
    "__gt__": _binop("gt"), "__ge__": _binop("ge"),
    "__getitem__": indexing.getitem, "__setitem__": indexing.setitem,
}


def _copy_(self, src, non_blocking=False):
    return call_inplace("copy", self, src)


def _fill_(self, value):
    if is_tensor(value):
        value = value.item()
    return call_inplace("copy", self, value)


def _zero_(self):
    return _fill_(self, 0)


def _random_(kind):
    def op(self, a=None, b=None, *, generator=None):
        from . import _random
        if not self.dtype.is_floating_point:  # PyTorch's kernels have no integer forms
            raise NotImplementedError(f'"{"check_uniform_bounds" if kind == "uniform" else "normal_kernel_cpu"}" '
                                      f"not implemented for '{self.dtype.word}'")
        if kind == "uniform":
            lo, hi = (0.0 if a is None else a), (1.0 if b is None else b)
            if lo > hi:
                raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={float(lo):g} > to={float(hi):g}")
            return _random.fill(self, "uniform", lo, hi, generator)
        std = 1.0 if b is None else b
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
        return _random.fill(self, "normal", 0.0 if a is None else a, std, generator)
    return op


def _in_place(name):
    """The registered in-place form of op `name`, for the augmented operators."""
    return lambda self, other: getattr(self, name + "_")(other)


INPLACE = {
    "copy_": _copy_, "fill_": _fill_, "zero_": _zero_, "uniform_": _random_("uniform"),
    "normal_": _random_("normal"),
    "__iadd__": _in_place("add"), "__isub__": _in_place("sub"), "__imul__": _in_place("mul"),
    "__itruediv__": _in_place("div"), "__ipow__": _in_place("pow"),
    "__ifloordiv__": _in_place("floor_divide"), "__imod__": _in_place("remainder"),
    "__iand__": _in_place("bitwise_and"), "__ior__": _in_place("bitwise_or"),
    "__ixor__": _in_place("bitwise_xor"),
    "__ilshift__": _in_place("bitwise_left_shift"), "__irshift__": _in_place("bitwise_right_shift"),
    "fill_diagonal_": fill_diagonal_,
}

# Tensor methods that are not ops of the registry (conversions, constructors)
METHODS = {
    "to": convert.to,
    "cpu": lambda self: convert.to(self, "cpu"),
    "webgpu": lambda self: convert.to(self, "webgpu"),
    "float": lambda self: convert.to(self, D.float32),
    "half": lambda self: convert.to(self, D.float16),
    "int": lambda self: convert.to(self, D.int32),
    "long": lambda self: convert.to(self, D.int64),
    "bool": lambda self: convert.to(self, D.bool),
    "byte": lambda self: convert.to(self, D.uint8),
    "double": lambda self: convert.to(self, D.as_dtype("float64")),  # a TypeError that says why
    "where": lambda self, condition, other: F.where(condition, self, other),
    "new_tensor": lambda self, data, dtype=None, device=None, requires_grad=False: _new("tensor", self, data, dtype=dtype, device=device, requires_grad=requires_grad),
    "new_zeros": lambda self, *size, dtype=None, device=None, requires_grad=False: _new("zeros", self, size, dtype=dtype, device=device, requires_grad=requires_grad),
    "new_ones": lambda self, *size, dtype=None, device=None, requires_grad=False: _new("ones", self, size, dtype=dtype, device=device, requires_grad=requires_grad),
    "new_empty": lambda self, *size, dtype=None, device=None, requires_grad=False: _new("zeros", self, size, dtype=dtype, device=device, requires_grad=requires_grad),
    "new_full": lambda self, size, fill_value, dtype=None, device=None, requires_grad=False: _new("full", self, size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad),
}


def _new(kind, self, *args, dtype=None, device=None, requires_grad=False):
    from . import _creation as C
    fn = getattr(C, kind)
    if kind in ("zeros", "ones") and len(args[0]) == 1 and isinstance(args[0][0], (tuple, list)):
        args = (args[0][0],)
    return fn(*args, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def install():
    for table in (method_names(), OPERATORS, INPLACE, METHODS):
        for name, fn in table.items():
            setattr(Tensor, name, fn)
    Tensor.T = property(lambda self: S.permute(self, list(range(self.dim() - 1, -1, -1))))
    Tensor.mT = property(lambda self: S.transpose(self, -2, -1))
    Tensor.__iter__ = lambda self: iter(S.unbind(self, 0)) if self.dim() else _iter_0d()
    Tensor.__hash__ = lambda self: id(self)


def _iter_0d():
    raise TypeError("iteration over a 0-d tensor")
