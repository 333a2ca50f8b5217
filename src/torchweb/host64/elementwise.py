"""Elementwise math on float64 tensors in Python's floats (IEEE doubles, libm's functions),
with broadcasting and PyTorch's results at the edges (NaN, infinities, division by zero)."""

import itertools
import math
from array import array

from .._size import Size
from .tensor import from_values, values_of
from .._creation import tensor
from .. import _dtype as D

inf, nan = math.inf, math.nan


def broadcast_shapes(*shapes, what="op"):
    n = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(n):
        sizes = {s[len(s) - n + i] for s in shapes if len(s) - n + i >= 0} - {1}
        if len(sizes) > 1:
            raise RuntimeError(f"The size of tensors must match except in broadcast dims: shapes "
                               f"{[list(s) for s in shapes]} in {what}")
        out.append(sizes.pop() if sizes else 1)
    return Size(out)


def expand(values, shape, out_shape):
    """values (flat, contiguous, of `shape`) broadcast to out_shape, as a flat list."""
    if tuple(shape) == tuple(out_shape):
        return values
    n = len(out_shape)
    shape = (1,) * (n - len(shape)) + tuple(shape)
    strides, acc = [0] * n, 1
    for d in range(n - 1, -1, -1):
        strides[d] = 0 if shape[d] == 1 else acc
        acc *= shape[d]
    if len(values) == 1:
        return [values[0]] * math.prod(out_shape)
    return [values[sum(i * s for i, s in zip(idx, strides))]
            for idx in itertools.product(*(range(s) for s in out_shape))]


def _guard(f, on_value_error=nan, on_overflow=inf):
    """f with libm's domain and range errors turned into IEEE results (as PyTorch's)."""
    def g(x):
        try:
            return f(x)
        except ValueError:
            return on_value_error(x) if callable(on_value_error) else on_value_error
        except OverflowError:
            return on_overflow(x) if callable(on_overflow) else on_overflow
    return g


def _log(f):
    return _guard(f, lambda x: -inf if x == 0 else nan)


def _sigmoid(x):
    try:
        return 1.0 / (1.0 + math.exp(-x))
    except OverflowError:
        return 0.0


def _round(x):
    return x if not math.isfinite(x) else float(round(x))


def _sign(x):
    return 1.0 if x > 0 else -1.0 if x < 0 else 0.0    # NaN: 0, as PyTorch


def _div(a, b):
    if b == 0:
        if a == 0 or a != a:
            return nan
        return math.copysign(inf, a) * math.copysign(1.0, b)
    return a / b


def _pow(a, b):
    try:
        return math.pow(a, b)
    except ValueError:   # 0 ** negative, or a negative base with a fractional exponent
        if a == 0:
            odd = b == int(b) and int(b) % 2 == 1
            return math.copysign(inf, a) if odd else inf
        return nan
    except OverflowError:
        odd = b == int(b) and int(b) % 2 == 1
        return -inf if a < 0 and odd else inf


def _fmod(a, b):
    try:
        return math.fmod(a, b)
    except ValueError:
        return nan


def _remainder(a, b):
    if b == 0 or math.isinf(a) or a != a or b != b:
        return nan
    r = math.fmod(a, b)
    if r != 0 and (r < 0) != (b < 0):
        r += b
    return r


def _floor_divide(a, b):
    # PyTorch's div_floor for floats (c10's div_floor_floating), IEEE edges included
    if b == 0:
        return _div(a, b)
    mod = _fmod(a, b)
    div = (a - mod) / b
    if mod != 0 and (b < 0) != (mod < 0):
        div -= 1
    if div != 0:
        floor = float(math.floor(div)) if math.isfinite(div) else div
        if div - floor > 0.5:
            floor += 1.0
        return floor
    return math.copysign(0.0, a / b)


def _maximum(a, b):
    return nan if a != a or b != b else max(a, b)


def _minimum(a, b):
    return nan if a != a or b != b else min(a, b)


UNARY = {
    "abs": abs, "neg": lambda x: -x, "negative": lambda x: -x, "positive": lambda x: x,
    "sqrt": _guard(math.sqrt), "rsqrt": _guard(lambda x: _div(1.0, math.sqrt(x))),
    "exp": _guard(math.exp), "exp2": _guard(lambda x: 2.0 ** x), "expm1": _guard(math.expm1),
    "log": _log(math.log), "log2": _log(math.log2), "log10": _log(math.log10),
    "log1p": _guard(math.log1p, lambda x: -inf if x == -1 else nan),
    "sin": _guard(math.sin), "cos": _guard(math.cos), "tan": _guard(math.tan),
    "asin": _guard(math.asin), "acos": _guard(math.acos), "atan": math.atan,
    "arcsin": _guard(math.asin), "arccos": _guard(math.acos), "arctan": math.atan,
    "sinh": _guard(math.sinh, nan, lambda x: math.copysign(inf, x)), "cosh": _guard(math.cosh),
    "tanh": math.tanh, "asinh": math.asinh, "acosh": _guard(math.acosh),
    "atanh": _guard(math.atanh, lambda x: math.copysign(inf, x) if abs(x) == 1 else nan),
    "sigmoid": _sigmoid, "floor": _guard(lambda x: float(math.floor(x)), nan, lambda x: x),
    "ceil": _guard(lambda x: float(math.ceil(x)), nan, lambda x: x),
    "trunc": _guard(lambda x: float(math.trunc(x)), nan, lambda x: x), "round": _round,
    "sign": _sign, "reciprocal": lambda x: _div(1.0, x), "square": lambda x: x * x,
    "erf": math.erf, "erfc": math.erfc, "lgamma": _guard(math.lgamma, inf),
    "frac": lambda x: x - math.trunc(x) if math.isfinite(x) else (nan if x == x and math.isinf(x) else x),
    "relu": lambda x: x if x > 0 or x != x else 0.0,
}

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "subtract": lambda a, b: a - b,
    "mul": lambda a, b: a * b, "multiply": lambda a, b: a * b, "div": _div, "divide": _div,
    "true_divide": _div, "pow": _pow,
    "maximum": _maximum, "minimum": _minimum, "fmod": _fmod, "remainder": _remainder,
    "floor_divide": _floor_divide, "hypot": math.hypot,
}
BINARY["atan2"] = lambda a, b: math.atan2(a, b)
BINARY["arctan2"] = BINARY["atan2"]

COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
           "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}
COMPARE.update(greater=COMPARE["gt"], greater_equal=COMPARE["ge"], less=COMPARE["lt"],
               less_equal=COMPARE["le"], not_equal=COMPARE["ne"])

PREDICATES = {"isnan": lambda x: x != x, "isinf": math.isinf, "isfinite": math.isfinite,
              "isposinf": lambda x: x == inf, "isneginf": lambda x: x == -inf,
              "signbit": lambda x: math.copysign(1.0, x) < 0}


def unary(name, x):
    f = UNARY[name]
    return from_values(map(f, x._data), x._shape)


def binary(name, a, b, alpha=None, rounding_mode=None):
    f = BINARY[name]
    if rounding_mode is not None and name in ("div", "divide", "true_divide"):
        f = {"trunc": lambda p, q: _tr(_div(p, q)), "floor": _floor_divide}[rounding_mode]
    (av, ash), (bv, bsh) = values_of(a, name), values_of(b, name)
    if alpha is not None and alpha != 1:
        bv = [v * alpha for v in bv]
    shape = broadcast_shapes(ash, bsh, what=name)
    return from_values(map(f, expand(av, ash, shape), expand(bv, bsh, shape)), shape)


def _tr(v):
    return float(math.trunc(v)) if math.isfinite(v) else v


def to_bool_tensor(values, shape):
    """A non-float64 result: an ordinary tensor on torchweb's default device."""
    flat = list(values)
    return tensor(flat, dtype=_bool()).reshape(tuple(shape))


def _bool():
    return D.bool


def compare(name, a, b):
    (av, ash), (bv, bsh) = values_of(a, name), values_of(b, name)
    shape = broadcast_shapes(ash, bsh, what=name)
    return to_bool_tensor(map(COMPARE[name], expand(av, ash, shape), expand(bv, bsh, shape)), shape)


def predicate(name, x):
    return to_bool_tensor(map(PREDICATES[name], x._data), x._shape)


def clamp(x, min=None, max=None):
    out = list(x._data)
    for bound, pick in ((min, _maximum), (max, _minimum)):
        if bound is None:
            continue
        bv, bsh = values_of(bound, "clamp")
        shape = broadcast_shapes(x._shape, bsh, what="clamp")
        out = list(map(pick, expand(out, x._shape, shape), expand(bv, bsh, shape)))
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return from_values(out, shape)


def lerp(x, end, weight):
    (ev, esh), (wv, wsh) = values_of(end, "lerp"), values_of(weight, "lerp")
    shape = broadcast_shapes(x._shape, esh, wsh, what="lerp")
    return from_values((a + w * (b - a) for a, b, w in zip(
        expand(x._data, x._shape, shape), expand(ev, esh, shape), expand(wv, wsh, shape))), shape)


def where(condition, x, y):
    (cv, csh), (xv, xsh), (yv, ysh) = (values_of(v, "where", any_device=True) for v in (condition, x, y))
    shape = broadcast_shapes(csh, xsh, ysh, what="where")
    return from_values((a if c else b for c, a, b in zip(
        expand(cv, csh, shape), expand(xv, xsh, shape), expand(yv, ysh, shape))), shape)


def write(x, result):
    """x's values replaced by result's (an in-place op); x keeps its shape."""
    if tuple(result._shape) != tuple(x._shape):
        raise RuntimeError(f"output with shape {list(x._shape)} doesn't match the broadcast shape "
                           f"{list(result._shape)}")
    x._data[:] = result._data
    return x


__all__ = ["UNARY", "BINARY", "COMPARE", "PREDICATES", "unary", "binary", "compare", "predicate",
           "clamp", "lerp", "where", "write", "expand", "broadcast_shapes", "array"]
