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
    "mul": lambda g, x, y: (g * x[1], g * x[0]),
    "div": lambda g, x, y: (g / x[1], -g * x[0] / (x[1] * x[1])),
    "pow": lambda g, x, y: _pow_backward(g, x, y),
    "maximum": lambda g, x, y: _minmax_backward(g, x, "lt"),
    "minimum": lambda g, x, y: _minmax_backward(g, x, "gt"),
    "clamp": lambda g, x, y: _clamp_backward(g, x),
    "clamp_min": lambda g, x, y: (_mask(g, x[0] >= x[1]), _mask(g, x[0] < x[1])),
    "clamp_max": lambda g, x, y: (_mask(g, x[0] <= x[1]), _mask(g, x[0] > x[1])),
    "remainder": lambda g, x, y: (g, -g * E.run("div_floor", x[0], x[1])),
    "fmod": lambda g, x, y: (g, -g * E.run("div_trunc", x[0], x[1])),
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


def _pow_backward(g, x, y):
    a, b = x
    if is_tensor(b):
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
    glo = _mask(g, a < lo) if is_tensor(lo) else None
    ghi = _mask(g, E.run("logical_and", a > hi, a >= lo)) if is_tensor(hi) else None
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


# what each backward reads: x (operands), y (result); saving less lets in-place ops that
# follow modify the rest, as in PyTorch
_NEEDS_RESULT_ONLY = {"exp", "exp2", "expm1", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "relu"}
_NEEDS_NOTHING = {"add", "sub", "neg", "copy", "sign", "floor", "ceil", "trunc", "round"}

_FUNCTIONS = {}


def _function(name):
    fn = _FUNCTIONS.get(name)
    if fn is None:
        rule = BACKWARD[name]
        backward_name = "".join(p.capitalize() for p in name.split("_")) + "Backward0"

        def forward(ctx, *operands):
            out = E.run(name, *operands)
            keep_x = name not in _NEEDS_RESULT_ONLY and name not in _NEEDS_NOTHING
            keep_y = name not in _NEEDS_NOTHING and (name in _NEEDS_RESULT_ONLY or name == "pow")
            ctx.save_for_backward(*([o if keep_x else None for o in operands if is_tensor(o)]
                                    + [out if keep_y else None]))
            ctx.operands = tuple(None if is_tensor(o) else o for o in operands)
            return out

        def backward(ctx, g):
            saved = list(ctx.saved_tensors)
            out = saved.pop()
            it = iter(saved)
            xs = tuple(next(it) if o is None else o for o in ctx.operands)
            grads = rule(g, xs, out)
            return tuple(gr if o is None else None for gr, o in zip(grads, ctx.operands))

        fn = type(name, (Function,), {"forward": staticmethod(forward),
                                      "backward": staticmethod(backward),
                                      "_backward_name": backward_name})
        _FUNCTIONS[name] = fn
    return fn


def call(name, *operands):
    """Run elementwise op `name`, recording it for autograd when an operand requires grad."""
    if name in BACKWARD and grad_mode.is_grad_enabled() and any(
            is_tensor(o) and o.requires_grad for o in operands):
        return _function(name).apply(*operands)
    return E.run(name, *operands)


def call_inplace(name, target, *operands):
    """target = op(target, *operands) in place, with PyTorch's autograd checks."""
    from .inplace import apply_inplace
    return apply_inplace(name, target, operands)
