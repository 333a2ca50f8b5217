"""Tensor methods and Python operators, attached to Tensor from the op modules."""

from . import _functions as F
from . import _dtype as D
from ._tensor import Tensor
from .ops import convert, indexing, join as J, reduction as R, shape as S
from .ops.dispatch import is_tensor
from .ops.pointwise import call, call_inplace


def _method(fn):
    return lambda self, *a, **k: fn(self, *a, **k)


def _reflected(fn):
    return lambda self, other: fn(_as_operand(other, self), self)


def _as_operand(value, like):
    if is_tensor(value):
        return value
    if not isinstance(value, (int, float, bool)):
        return NotImplemented
    return value


def _scalar_tensor(value, like):
    from ._creation import tensor
    return tensor(value, device=like.device)


def _rsub(self, other):
    return F.sub(_scalar_tensor(other, self) if not is_tensor(other) else other, self)


def _rdiv(self, other):
    return F.div(_scalar_tensor(other, self) if not is_tensor(other) else other, self)


def _rpow(self, other):
    return F.pow(_scalar_tensor(other, self) if not is_tensor(other) else other, self)


def _rfloordiv(self, other):
    return F.floor_divide(_scalar_tensor(other, self) if not is_tensor(other) else other, self)


def _rmod(self, other):
    return F.remainder(_scalar_tensor(other, self) if not is_tensor(other) else other, self)


def _binop(name):
    fn = getattr(F, name)

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


def _bool_or_bitwise(logical, bitwise):
    def op(self, other):
        if not (is_tensor(other) or isinstance(other, (int, bool))):
            return NotImplemented
        return call(bitwise, self, other)
    return op


OPERATORS = {
    "__add__": _binop("add"), "__radd__": _binop("add"),
    "__sub__": _binop("sub"), "__rsub__": _rsub,
    "__mul__": _binop("mul"), "__rmul__": _binop("mul"),
    "__truediv__": _binop("div"), "__rtruediv__": _rdiv,
    "__floordiv__": _binop("floor_divide"), "__rfloordiv__": _rfloordiv,
    "__mod__": _binop("remainder"), "__rmod__": _rmod,
    "__pow__": _binop("pow"), "__rpow__": _rpow,
    "__matmul__": lambda a, b: F.matmul(a, b), "__rmatmul__": lambda a, b: F.matmul(b, a),
    "__neg__": lambda a: call("neg", a), "__pos__": _pos, "__abs__": lambda a: call("abs", a),
    "__invert__": _invert,
    "__and__": _bool_or_bitwise("logical_and", "bitwise_and"), "__rand__": _bool_or_bitwise("logical_and", "bitwise_and"),
    "__or__": _bool_or_bitwise("logical_or", "bitwise_or"), "__ror__": _bool_or_bitwise("logical_or", "bitwise_or"),
    "__xor__": _bool_or_bitwise("logical_xor", "bitwise_xor"), "__rxor__": _bool_or_bitwise("logical_xor", "bitwise_xor"),
    "__eq__": _binop("eq"), "__ne__": _binop("ne"), "__lt__": _binop("lt"), "__le__": _binop("le"),
    "__gt__": _binop("gt"), "__ge__": _binop("ge"),
    "__getitem__": indexing.getitem, "__setitem__": indexing.setitem,
}


def _inplace(name):
    def op(self, *operands):
        return call_inplace(name, self, *operands)
    return op


def _add_(self, other, *, alpha=1):
    return call_inplace("add" if alpha == 1 else "add_alpha", self, other, *(() if alpha == 1 else (alpha,)))


def _sub_(self, other, *, alpha=1):
    return call_inplace("sub" if alpha == 1 else "sub_alpha", self, other, *(() if alpha == 1 else (alpha,)))


def _div_(self, other, *, rounding_mode=None):
    return call_inplace("div" if rounding_mode is None else "div_" + rounding_mode, self, other)


def _clamp_(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is None:
        return call_inplace("clamp_max", self, max)
    if max is None:
        return call_inplace("clamp_min", self, min)
    return call_inplace("clamp", self, min, max)


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
        if kind == "uniform":
            lo, hi = (0.0 if a is None else a), (1.0 if b is None else b)
            return _random.fill(self, "uniform", lo, hi, generator)
        return _random.fill(self, "normal", 0.0 if a is None else a, 1.0 if b is None else b, generator)
    return op


INPLACE = {
    "add_": _add_, "sub_": _sub_, "div_": _div_, "clamp_": _clamp_, "clip_": _clamp_, "copy_": _copy_,
    "fill_": _fill_, "zero_": _zero_, "uniform_": _random_("uniform"), "normal_": _random_("normal"),
    "true_divide_": _div_,
}
for _n in ("mul", "pow", "neg", "abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
           "tanh", "sigmoid", "relu", "silu", "reciprocal", "sign", "floor", "ceil", "trunc", "round",
           "maximum", "minimum", "remainder", "fmod", "logical_not", "bitwise_not", "square",
           "clamp_min", "clamp_max", "eq", "ne", "lt", "le", "gt", "ge", "erf", "exp2", "log2", "log10",
           "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"):
    INPLACE[_n + "_"] = _inplace(_n)
INPLACE["__iadd__"] = lambda s, o: _add_(s, o)
INPLACE["__isub__"] = lambda s, o: _sub_(s, o)
INPLACE["__imul__"] = _inplace("mul")
INPLACE["__itruediv__"] = _inplace("div")
INPLACE["__ipow__"] = _inplace("pow")
INPLACE["__ifloordiv__"] = INPLACE["floor_divide_"] = lambda s, o: _div_(s, o, rounding_mode="floor")
INPLACE["__imod__"] = _inplace("remainder")
INPLACE["__iand__"] = _inplace("bitwise_and")
INPLACE["__ior__"] = _inplace("bitwise_or")
INPLACE["__ixor__"] = _inplace("bitwise_xor")

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
    "view": S.view, "reshape": S.reshape, "view_as": lambda s, o: S.view(s, o.shape),
    "reshape_as": lambda s, o: S.reshape(s, o.shape), "flatten": S.flatten, "unflatten": S.unflatten,
    "squeeze": S.squeeze, "unsqueeze": S.unsqueeze, "permute": S.permute, "transpose": S.transpose,
    "swapaxes": S.transpose, "swapdims": S.transpose, "t": S.t, "movedim": S.movedim,
    "expand": S.expand, "expand_as": S.expand_as, "narrow": S.narrow, "select": S.select,
    "unbind": S.unbind, "as_strided": S.as_strided, "contiguous": S.contiguous, "clone": S.clone,
    "sum_to_size": S.sum_to_size,
    "split": J.split, "chunk": J.chunk, "tensor_split": J.tensor_split,
    "sum": R.sum, "mean": R.mean, "prod": R.prod, "max": R.max, "min": R.min, "amax": R.amax,
    "amin": R.amin, "argmax": R.argmax, "argmin": R.argmin, "all": R.all, "any": R.any, "var": R.var,
    "std": R.std, "logsumexp": R.logsumexp, "norm": R.norm,
    "mm": F.mm, "bmm": F.bmm, "matmul": F.matmul, "mv": F.mv, "dot": F.dot, "addmm": F.addmm,
    "softmax": F.softmax, "log_softmax": F.log_softmax,
    "add": F.add, "sub": F.sub, "subtract": F.sub, "mul": F.mul, "multiply": F.mul, "div": F.div,
    "divide": F.div, "true_divide": F.div, "floor_divide": F.floor_divide, "pow": F.pow,
    "clamp": F.clamp, "clip": F.clamp, "where": lambda self, cond, other: F.where(cond, self, other),
    "nan_to_num": F.nan_to_num, "gelu": F.gelu, "isclose": F.isclose, "allclose": F.allclose,
    "equal": F.equal, "rsub": F.rsub,
    "new_tensor": lambda self, data, dtype=None, device=None, requires_grad=False: _new("tensor", self, data, dtype=dtype, device=device, requires_grad=requires_grad),
    "new_zeros": lambda self, *size, dtype=None, device=None, requires_grad=False: _new("zeros", self, size, dtype=dtype, device=device, requires_grad=requires_grad),
    "new_ones": lambda self, *size, dtype=None, device=None, requires_grad=False: _new("ones", self, size, dtype=dtype, device=device, requires_grad=requires_grad),
    "new_empty": lambda self, *size, dtype=None, device=None, requires_grad=False: _new("zeros", self, size, dtype=dtype, device=device, requires_grad=requires_grad),
    "new_full": lambda self, size, fill_value, dtype=None, device=None, requires_grad=False: _new("full", self, size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad),
}
for _n in F.UNARY + F.BINARY:
    METHODS[_n] = getattr(F, _n)


def _new(kind, self, *args, dtype=None, device=None, requires_grad=False):
    from . import _creation as C
    fn = getattr(C, kind)
    if kind in ("zeros", "ones") and len(args[0]) == 1 and isinstance(args[0][0], (tuple, list)):
        args = (args[0][0],)
    return fn(*args, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def install():
    for table in (OPERATORS, INPLACE, METHODS):
        for name, fn in table.items():
            setattr(Tensor, name, fn)
    Tensor.T = property(lambda self: S.permute(self, list(range(self.dim() - 1, -1, -1))))
    Tensor.mT = property(lambda self: S.transpose(self, -2, -1))
    Tensor.__iter__ = lambda self: iter(S.unbind(self, 0)) if self.dim() else _iter_0d()
    Tensor.__hash__ = lambda self: id(self)


def _iter_0d():
    raise TypeError("iteration over a 0-d tensor")
