"""Tensor methods and Python operators, attached to Tensor from the op modules."""

from . import _functions as torch_functions
from . import _dtype as D
from ._refused import install_tensor_refusals
from .autograd import grad_mode
from ._tensor import Tensor
from .ops import convert, indexing, real_complex as RC, shape as S
from .ops.operands import is_tensor
from .ops.elementwise import binary_operator, call
from .ops.inplace import call_inplace
from .ops.composite.matrix_builders import fill_diagonal_
from .ops.registry import method_names
from . import _creation as C, _random, _tensor_autograd, _tensor_convert, _tensor_info, _tensor_storage


def _reflected(name):
    """other <op> self for a number on the left (5 - t, 2 ** t): the op takes the number as its
    first operand, so it keeps a Python number's low priority in type promotion."""
    fn = getattr(torch_functions, name)

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
    fn = getattr(torch_functions, name)
    if name in _DIRECT:
        return binary_operator(name)   # (NotImplemented for other types)

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
    "__matmul__": lambda a, b: torch_functions.matmul(a, b), "__rmatmul__": lambda a, b: torch_functions.matmul(b, a),
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


def _copy_(self, other, non_blocking=False):
    return call_inplace("copy", self, other)


def _fill_(self, value):
    if is_tensor(value):
        value = value.item()
    return call_inplace("copy", self, value)


def _zero_(self):
    return _fill_(self, 0)


def _random_(kind):
    def op(self, a=None, b=None, *, generator=None, **names):
        # PyTorch's keyword names: uniform_(from=0, to=1), normal_(mean=0, std=1)
        a, b = _random_names(kind, a, b, names)
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


def _random_names(kind, a, b, names):
    first, second = ("from", "to") if kind == "uniform" else ("mean", "std")
    for key in names:
        if key not in (first, second):
            raise TypeError(f"{kind}_() got an unexpected keyword argument '{key}'")
    return names.get(first, a), names.get(second, b)


# random_'s default `to` (exclusive) per dtype: every integer the dtype holds exactly, as
# PyTorch's; int64 stops at 2**31, the range torchweb's int64 holds on the GPU (PyTorch's 2**63)
_RANDOM_TO = {"float32": 2 ** 24 + 1, "float16": 2 ** 11 + 1, "int64": 2 ** 31, "int32": 2 ** 31,
              "uint8": 256, "bool": 2}


def _random_int_(self, *args, generator=None, **kwargs):
    """random_(from=0, to=None, *, generator=None), random_(to): integers uniform in [from, to)."""
    if "from" in kwargs or "to" in kwargs:
        args = (kwargs.pop("from", 0), kwargs.pop("to", None)) + args
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    lo, hi = (0, None) if not args else (0, args[0]) if len(args) == 1 else args[:2]
    if grad_mode.is_grad_enabled() and self.requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if hi is None:
        hi = _RANDOM_TO[self.dtype.name]
    lo, hi = int(lo), int(hi)
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    # the bounds PyTorch checks; float32 (where PyTorch only warns past 2**24) and int64 stop at
    # the int32 range that the random kernel draws in
    top = 2 ** 31 - 1 if self.dtype is D.float32 else _RANDOM_TO[self.dtype.name] - 1
    bottom = -top - 1 if self.dtype in (D.int32, D.int64, D.float32) else -top if self.dtype.is_floating_point else 0
    if lo < bottom:
        raise RuntimeError(f"from is out of bounds for {self.dtype.c_name}"
                           + (" (torchweb draws int32's range)" if self.dtype in (D.int64, D.float32) else ""))
    if hi - 1 > top:
        raise RuntimeError(f"to - 1 is out of bounds for {self.dtype.c_name}"
                           + (" (torchweb draws int32's range)" if self.dtype in (D.int64, D.float32) else ""))
    if hi - lo >= 2 ** 32:
        raise RuntimeError(f"random_: the range [{lo}, {hi}) is wider than the 2**32 - 1 values torchweb draws")
    return _random.fill(self, "randint", lo, hi - lo, generator)


def _in_place(name):
    """The registered in-place form of op `name`, for the augmented operators."""
    return lambda self, other: getattr(self, name + "_")(other)


INPLACE = {
    "copy_": _copy_, "fill_": _fill_, "zero_": _zero_, "uniform_": _random_("uniform"),
    "normal_": _random_("normal"), "random_": _random_int_,
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
    "cpu": lambda self, memory_format=None: convert.to(self, "cpu"),
    "webgpu": lambda self: convert.to(self, "webgpu"),
    "cuda": lambda self, device=None, non_blocking=False, memory_format=None: convert.to(self, _cuda(device)),
    "float": lambda self: convert.to(self, D.float32),
    "half": lambda self: convert.to(self, D.float16),
    "int": lambda self: convert.to(self, D.int32),
    "long": lambda self: convert.to(self, D.int64),
    "bool": lambda self: convert.to(self, D.bool),
    "byte": lambda self: convert.to(self, D.uint8),
    "double": lambda self, memory_format=None: convert.to(self, D.float64),  # onto the host
    "where": lambda self, condition, other: torch_functions.where(condition, self, other),
    "new_tensor": lambda self, data, dtype=None, device=None, requires_grad=False, pin_memory=False: _new("tensor", self, data, dtype=dtype, device=device, requires_grad=requires_grad),
    "new_zeros": lambda self, *size_args, size=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False: _new("zeros", self, size_args if size is None else (size,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad),
    "new_ones": lambda self, *size_args, size=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False: _new("ones", self, size_args if size is None else (size,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad),
    "new_empty": lambda self, *size_args, size=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False: _new("zeros", self, size_args if size is None else (size,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad),
    "new_full": lambda self, size, fill_value, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False: _new("full", self, size, fill_value, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad),
}


def _cuda(device):
    """Tensor.cuda()'s target: webgpu, the GPU torchweb has (with or without the torch alias;
    "cuda" as a device string names it only under the alias, cuda.py)."""
    return "webgpu"


def _new(kind, self, *args, dtype=None, layout=None, device=None, requires_grad=False):
    C._options("new_" + kind, layout)
    fn = getattr(C, kind)
    if kind in ("zeros", "ones") and len(args[0]) == 1 and isinstance(args[0][0], (tuple, list)):
        args = (args[0][0],)
    return fn(*args, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def install():
    for table in (method_names(), OPERATORS, INPLACE, METHODS, _tensor_info.METHODS,
                  _tensor_storage.METHODS, _tensor_convert.METHODS, _tensor_autograd.METHODS):
        for name, fn in table.items():
            setattr(Tensor, name, fn)
    for name, fn in _tensor_info.PROPERTIES.items():
        setattr(Tensor, name, property(fn))
    Tensor.T = property(lambda self: S.permute(self, list(range(self.dim() - 1, -1, -1))))
    Tensor.mT = property(RC.m_transpose)
    Tensor.mH = property(lambda self: RC.m_transpose(self, "mH"))
    Tensor.H = property(RC.h_transpose)
    Tensor.real = property(RC.real)
    Tensor.imag = property(RC.imag)
    Tensor.__iter__ = lambda self: iter(S.unbind(self, 0)) if self.dim() else _iter_0d()
    Tensor.__hash__ = lambda self: id(self)
    install_tensor_refusals(Tensor)   # (last: only names nothing above defined)


def _iter_0d():
    raise TypeError("iteration over a 0-d tensor")
