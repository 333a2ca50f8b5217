"""Differentiable elementwise ops: the forward runs the table op (elementwise.py), the
backward is one line per op below. Gradients for broadcast operands are summed back to their
shapes by the autograd engine, as PyTorch's does."""

import math

from ..autograd.function import Function
from ..autograd import grad_mode
from .dispatch import is_tensor
from . import elementwise as E

# name -> backward(g, inputs, out) returning one gradient (or None) per operand
BACKWARD = {
    "add": lambda g, x, y: (g, g),
    "add_alpha": lambda g, x, y: (g, g * x[2], None),
    "sub": lambda g, x, y: (g, -g),
    "sub_alpha": lambda g, x, y: (g, -(g * x[2]), None),
    # an operand read only by another's gradient is None when that gradient isn't needed
    "mul": lambda g, x, y: (_times(g, x[1]), _times(g, x[0])),
    "div": lambda g, x, y: (g / x[1], None if x[0] is None else -g * x[0] / (x[1] * x[1])),
    "pow": lambda g, x, y: _pow_backward(g, x, y),
    "maximum": lambda g, x, y: _minmax_backward(g, x, "lt"),
    "minimum": lambda g, x, y: _minmax_backward(g, x, "gt"),
    "clamp": lambda g, x, y: _clamp_backward(g, x),
    "clamp_min": lambda g, x, y: (_mask(g, x[0] >= x[1]), _mask(g, x[0] < x[1])),
    "clamp_max": lambda g, x, y: (_mask(g, x[0] <= x[1]), _mask(g, x[0] > x[1])),
    "remainder": lambda g, x, y: (g, None if x[0] is None else -g * E.run("div_floor", x[0], x[1])),
    "fmod": lambda g, x, y: (g, None if x[0] is None else -g * E.run("div_trunc", x[0], x[1])),
    "neg": lambda g, x, y: (-g,),
    "abs": lambda g, x, y: (g * E.run("sign", x[0]),),
    "square": lambda g, x, y: (g * x[0] * 2,),
    "relu": lambda g, x, y: (_mask(g, y > 0),),
    "exp": lambda g, x, y: (g * y,),
    "exp2": lambda g, x, y: (g * y * math.log(2.0),),
    "log": lambda g, x, y: (g / x[0],),
    "log2": lambda g, x, y: (g / (x[0] * math.log(2.0)),),
    "log10": lambda g, x, y: (g / (x[0] * math.log(10.0)),),
    "log1p": lambda g, x, y: (g / (x[0] + 1),),
    "expm1": lambda g, x, y: (g * (y + 1),),
    "sqrt": lambda g, x, y: (g / (y * 2),),
    "rsqrt": lambda g, x, y: (g * y * y * y * -0.5,),
    "reciprocal": lambda g, x, y: (-g * y * y,),
    "sin": lambda g, x, y: (g * E.run("cos", x[0]),),
    "cos": lambda g, x, y: (-g * E.run("sin", x[0]),),
    "tanh": lambda g, x, y: (g * (1 - y * y),),
    "sigmoid": lambda g, x, y: (g * y * (1 - y),),
    "silu": lambda g, x, y: _silu_backward(g, x),
    "erf": lambda g, x, y: (g * E.run("exp", -(x[0] * x[0])) * (2.0 / math.sqrt(math.pi)),),
    "gelu": lambda g, x, y: _gelu_backward(g, x[0]),
    "gelu_tanh": lambda g, x, y: _gelu_tanh_backward(g, x[0]),
    "nan_to_num": lambda g, x, y: (_mask(g, E.run("isfinite", x[0])), None, None, None),
    "where": lambda g, x, y: (None, _mask(g, x[0]), _mask(g, E.run("logical_not", x[0]))),
    "copy": lambda g, x, y: (g,),
    # piecewise constant: zero gradient, as PyTorch
    "sign": lambda g, x, y: (g * 0,),
    "floor": lambda g, x, y: (g * 0,),
    "ceil": lambda g, x, y: (g * 0,),
    "trunc": lambda g, x, y: (g * 0,),
    "round": lambda g, x, y: (g * 0,),
    "div_trunc": lambda g, x, y: (g * 0, g * 0),
    "div_floor": lambda g, x, y: (g * 0, g * 0),
}


def _mask(g, cond):
    return E.run("where", cond, g, 0.0)


def _times(g, v):
    return None if v is None else g * v


def _pow_backward(g, x, y):
    a, b = x
    if is_tensor(b):
        gb = None  # the result is saved only when the exponent's gradient is needed
        if y is not None:
            gb = g * y * E.run("log", a)
            gb = E.run("where", E.run("logical_and", a == 0, b >= 0), 0.0, gb)
        ga = g * b * E.run("pow", a, b - 1)
        ga = E.run("where", b == 0, 0.0, ga)
    else:
        gb = None
        ga = g * 0 if b == 0 else g * b * E.run("pow", a, b - 1)
    return ga, gb


def _minmax_backward(g, x, loses):
    a, b = x
    half = E.run("where", a == b, g / 2, g)
    return (_mask(half, E.run("logical_not", E.run(loses, a, b))),
            _mask(half, E.run("logical_not", E.run(loses, b, a))))


def _clamp_backward(g, x):
    a, lo, hi = x
    keep = E.run("logical_and", a >= lo, a <= hi)
    # PyTorch's rule: where min > max the result is max, and min gets no gradient
    glo = _mask(g, E.run("logical_and", a < lo, E.run("lt", lo, hi))) if is_tensor(lo) else None
    ghi = _mask(g, E.run("logical_or", a > hi, E.run("lt", hi, lo))) if is_tensor(hi) else None
    return _mask(g, keep), glo, ghi


def _silu_backward(g, x):
    s = E.run("sigmoid", x[0])
    return (g * s * (1 + x[0] * (1 - s)),)


def _gelu_backward(g, a):
    cdf = (E.run("erf", a * (1 / math.sqrt(2.0))) + 1) * 0.5
    pdf = E.run("exp", a * a * -0.5) * (1 / math.sqrt(2 * math.pi))
    return (g * (cdf + a * pdf),)


def _gelu_tanh_backward(g, a):
    k = math.sqrt(2 / math.pi)
    inner = (a + a * a * a * 0.044715) * k
    t = E.run("tanh", inner)
    dinner = (a * a * (3 * 0.044715) + 1) * k
    return (g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * dinner),)


# what each backward reads: x (operands), y (result). Saving only that lets in-place ops that
# follow modify the rest, as in PyTorch.
_NEEDS_RESULT_ONLY = {"exp", "exp2", "expm1", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "relu"}
_NEEDS_NOTHING = {"add", "sub", "add_alpha", "sub_alpha", "neg", "copy", "sign", "floor", "ceil",
                  "trunc", "round", "div_trunc", "div_floor"}
# operand index -> the operands whose gradients read it (ops not listed: every gradient reads
# every operand)
_READ_BY = {"mul": {0: (1,), 1: (0,)}, "div": {0: (1,), 1: (0, 1)}, "remainder": {0: (1,), 1: (1,)},
            "fmod": {0: (1,), 1: (1,)}, "where": {0: (1, 2)}}

# PyTorch's node names where they are not "<Op>Backward0": one name, or (name when the
# other operands are numbers, name when one is a tensor)
_NAMES = {"add_alpha": "AddBackward0", "sub_alpha": "SubBackward0", "square": "PowBackward0",
          "log1p": "Log1PBackward0", "gelu_tanh": "GeluBackward0",
          "pow": ("PowBackward0", "PowBackward1"), "remainder": ("RemainderBackward0", "RemainderBackward1"),
          "fmod": ("FmodBackward0", "FmodBackward1"), "clamp": ("ClampBackward1", "ClampBackward0"),
          "clamp_min": ("ClampBackward1", "ClampBackward0"), "clamp_max": ("ClampBackward1", "ClampBackward0")}


def _saves(name, operands, needs):
    """(indices of the operands to save, whether to save the result) for the needed grads."""
    if name in _NEEDS_NOTHING:
        return (), False
    if name in _NEEDS_RESULT_ONLY:
        return (), True
    read_by = _READ_BY.get(name)
    idx = tuple(i for i, o in enumerate(operands) if is_tensor(o) and (
        read_by is None or any(needs[j] for j in read_by.get(i, ()))))
    return idx, name == "pow" and needs[1]


_FUNCTIONS = {}


def _function(name, operands, inplace=False):
    """The autograd Function of op `name` (in place: it writes operands[0])."""
    names = _NAMES.get(name, "".join(p.capitalize() for p in name.split("_")) + "Backward0")
    if isinstance(names, tuple):
        names = names[any(is_tensor(o) for o in operands[1:])]
    key = (name, names, inplace)
    fn = _FUNCTIONS.get(key)
    if fn is None:
        fn = _FUNCTIONS[key] = _make_function(name, names, inplace)
    return fn


def _make_function(name, backward_name, inplace):
    rule = BACKWARD[name]

    def forward(ctx, *operands):
        idx, keep_y = _saves(name, operands, ctx.needs_input_grad)
        xs = list(operands)
        if inplace and 0 in idx:
            xs[0] = E._clone(operands[0])  # the value before the write (PyTorch's original_self)
        saved = [xs[i] if i in idx else None for i, o in enumerate(operands) if is_tensor(o)]
        # versions as before the write: an operand that is the target (y.mul_(y)) can't backward
        versions = tuple(t._version if t is not None else None for t in saved)
        if inplace:
            out = E.run(name, *operands, out=operands[0])
            out._bump_version()
        else:
            out = E.run(name, *operands)
        ctx.save_for_backward(*saved, out if keep_y else None)
        ctx._saved_versions = versions + ctx._saved_versions[-1:]
        ctx.operands = tuple(None if is_tensor(o) else o for o in operands)
        if name not in _NEEDS_NOTHING and any(o is not None for o in ctx.operands):
            ctx._saved_any = True  # PyTorch saves a number operand as a tensor (x * 2: MulBackward0)
        return out

    def backward(ctx, g):
        saved = list(ctx.saved_tensors)
        out = saved.pop()
        it = iter(saved)
        xs = tuple(next(it) if o is None else o for o in ctx.operands)
        grads = rule(g, xs, out)
        return tuple(gr if o is None and need else None
                     for gr, o, need in zip(grads, ctx.operands, ctx.needs_input_grad))

    return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                    "_backward_name": backward_name})


def call(name, *operands):
    """Run elementwise op `name`, recording it for autograd when an operand requires grad."""
    if name in BACKWARD and grad_mode.is_grad_enabled() and any(
            is_tensor(o) and o.requires_grad for o in operands):
        return _function(name, operands).apply(*operands)
    return E.run(name, *operands)


def inplace_function(name, operands):
    """The Function that runs op `name` in place on operands[0], for ops/inplace.py."""
    return _function(name, operands, inplace=True)


def call_inplace(name, target, *operands):
    """target = op(target, *operands) in place, with PyTorch's autograd checks."""
    from .inplace import apply_inplace
    return apply_inplace(name, target, operands)
