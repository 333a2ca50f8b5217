"""Backward rules of the elementwise ops: g is the output's gradient, x the operands (a
tensor operand not saved for this backward is None), y the result when saved. Each returns one
gradient (or None) per operand. table.py names each op's rule beside it."""

import math

from ..operands import is_tensor
from .rule_kernels import K


def d_nextafter(g, x, y):
    return (g, g * 0)   # PyTorch's rule: the step is treated as the identity in input


def d_add(g, x, y):
    return (g, g)


def d_add_alpha(g, x, y):
    return (g, g * x[2], None)


def d_sub(g, x, y):
    return (g, -g)


def d_sub_alpha(g, x, y):
    return (g, -(g * x[2]), None)


def d_mul(g, x, y):
    return (_times(g, x[1]), _times(g, x[0]))


def d_div(g, x, y):
    return (g / x[1], None if x[0] is None else -g * x[0] / (x[1] * x[1]))


def d_pow(g, x, y):
    return _pow_backward(g, x, y)


def d_maximum(g, x, y):
    return _minmax_backward(g, x, "lt")


def d_minimum(g, x, y):
    return _minmax_backward(g, x, "gt")


def d_clamp(g, x, y):
    return _clamp_backward(g, x)


def d_clamp_min(g, x, y):
    return (_mask(g, x[0] >= x[1]), _mask(g, x[0] < x[1]))


def d_clamp_max(g, x, y):
    return (_mask(g, x[0] <= x[1]), _mask(g, x[0] > x[1]))


def d_remainder(g, x, y):
    return (g, None if x[0] is None else -g * K.run("div_floor", x[0], x[1]))


def d_fmod(g, x, y):
    return (g, None if x[0] is None else -g * K.run("div_trunc", x[0], x[1]))


def d_neg(g, x, y):
    return (-g,)


def d_abs(g, x, y):
    return (g * K.run("sign", x[0]),)


def d_square(g, x, y):
    return (g * x[0] * 2,)


def d_relu(g, x, y):
    return (_mask(g, y > 0),)


def d_exp(g, x, y):
    return (g * y,)


def d_exp2(g, x, y):
    return (g * y * math.log(2.0),)


def d_log(g, x, y):
    return (g / x[0],)


def d_log2(g, x, y):
    return (g / (x[0] * math.log(2.0)),)


def d_log10(g, x, y):
    return (g / (x[0] * math.log(10.0)),)


def d_log1p(g, x, y):
    return (g / (x[0] + 1),)


def d_expm1(g, x, y):
    return (g * (y + 1),)


def d_sqrt(g, x, y):
    return (g / (y * 2),)


def d_rsqrt(g, x, y):
    return (g * y * y * y * -0.5,)


def d_reciprocal(g, x, y):
    return (-g * y * y,)


def d_sin(g, x, y):
    return (g * K.run("cos", x[0]),)


def d_cos(g, x, y):
    return (-g * K.run("sin", x[0]),)


def d_tanh(g, x, y):
    return (g * (1 - y * y),)


def d_sigmoid(g, x, y):
    return (g * y * (1 - y),)


def d_silu(g, x, y):
    return _silu_backward(g, x)


def d_erf(g, x, y):
    return (g * K.run("exp", -(x[0] * x[0])) * (2.0 / math.sqrt(math.pi)),)


def d_gelu(g, x, y):
    return _gelu_backward(g, x[0])


def d_gelu_tanh(g, x, y):
    return _gelu_tanh_backward(g, x[0])


def d_nan_to_num(g, x, y):
    return (_mask(g, K.run("isfinite", x[0])), None, None, None)


def d_where(g, x, y):
    # (the other branch's as where(cond, 0, g): fused with the first, where a logical_not of
    # the condition was a kernel of its own)
    return (None, _mask(g, x[0]), K.run("where", x[0], 0.0, g))


def d_copy(g, x, y):
    return (g,)


def d_sign(g, x, y):
    return (g * 0,)


def d_floor(g, x, y):
    return (g * 0,)


def d_ceil(g, x, y):
    return (g * 0,)


def d_trunc(g, x, y):
    return (g * 0,)


def d_round(g, x, y):
    return (g * 0,)


def d_div_trunc(g, x, y):
    return (g * 0, g * 0)


def d_div_floor(g, x, y):
    return (g * 0, g * 0)


def _mask(g, cond):
    return K.run("where", cond, g, 0.0)


def _times(g, v):
    return None if v is None else g * v


def _pow_backward(g, x, y):
    a, b = x
    if is_tensor(b):
        gb = None  # the result is saved only when the exponent's gradient is needed
        if y is not None:
            gb = g * y * K.run("log", a)
            gb = K.run("where", K.run("logical_and", a == 0, b >= 0), 0.0, gb)
        ga = g * b * K.run("pow", a, b - 1)
        ga = K.run("where", b == 0, 0.0, ga)
    else:
        gb = None
        ga = g * 0 if b == 0 else g * b * K.run("pow", a, b - 1)
    return ga, gb


def _minmax_backward(g, x, loses):
    a, b = x
    half = K.run("where", a == b, g / 2, g)
    return (_mask(half, K.run("logical_not", K.run(loses, a, b))),
            _mask(half, K.run("logical_not", K.run(loses, b, a))))


def _clamp_backward(g, x):
    a, lo, hi = x
    keep = K.run("logical_and", a >= lo, a <= hi)
    # PyTorch's rule: where min > max the result is max, and min gets no gradient
    glo = _mask(g, K.run("logical_and", a < lo, K.run("lt", lo, hi))) if is_tensor(lo) else None
    ghi = _mask(g, K.run("logical_or", a > hi, K.run("lt", hi, lo))) if is_tensor(hi) else None
    return _mask(g, keep), glo, ghi


def _silu_backward(g, x):
    s = K.run("sigmoid", x[0])
    return (g * s * (1 + x[0] * (1 - s)),)


def _gelu_backward(g, a):
    cdf = (K.run("erf", a * (1 / math.sqrt(2.0))) + 1) * 0.5
    pdf = K.run("exp", a * a * -0.5) * (1 / math.sqrt(2 * math.pi))
    return (g * (cdf + a * pdf),)


def _gelu_tanh_backward(g, a):
    k = math.sqrt(2 / math.pi)
    inner = (a + a * a * a * 0.044715) * k
    t = K.run("tanh", inner)
    dinner = (a * a * (3 * 0.044715) + 1) * k
    return (g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * dinner),)


# -- math functions (issue 7) ------------------------------------------------------------------
_PI = math.pi


def d_tan(g, x, y):
    return (g * (y * y + 1),)


def d_asin(g, x, y):
    return (g * K.run("rsqrt", -x[0] * x[0] + 1),)


def d_acos(g, x, y):
    return (-(g * K.run("rsqrt", -x[0] * x[0] + 1)),)


def d_atan(g, x, y):
    return (g / (x[0] * x[0] + 1),)


def d_sinh(g, x, y):
    return (g * K.run("cosh", x[0]),)


def d_cosh(g, x, y):
    return (g * K.run("sinh", x[0]),)


def d_asinh(g, x, y):
    return (g * K.run("rsqrt", x[0] * x[0] + 1),)


def d_acosh(g, x, y):
    return (g * K.run("rsqrt", x[0] * x[0] - 1),)


def d_atanh(g, x, y):
    return (g / (-x[0] * x[0] + 1),)


def d_erfc(g, x, y):
    return (g * K.run("exp", -(x[0] * x[0])) * (-2.0 / math.sqrt(_PI)),)


def d_erfinv(g, x, y):
    return (g * K.run("exp", y * y) * (0.5 * math.sqrt(_PI)),)


def d_sinc(g, x, y):
    a = x[0]
    p = a * _PI
    d = (p * K.run("cos", p) - K.run("sin", p)) / (p * a)
    return (_mask(d, a != 0) * g,)


def d_deg2rad(g, x, y):
    return (g * (_PI / 180),)


def d_rad2deg(g, x, y):
    return (g * (180 / _PI),)


def d_logit(g, x, y):
    a = x[0]
    r = g / (a * (-a + 1))
    return (K.run("where", K.run("logical_or", a < 0, a > 1), math.nan, r),)


def d_copysign(g, x, y):
    ga = None
    if y is not None:
        ga = _mask(g * (y / x[0]), x[0] != 0)
    return (ga, g * 0 if is_tensor(x[1]) else None)


def d_xlogy(g, x, y):
    a, b = x
    ga = None
    if is_tensor(a):  # PyTorch: a number `other` gives grad * log(other) everywhere
        ga = g * K.run("xlogy", a != 0, b) if is_tensor(b) else g * math.log(b) if b > 0 else g * K.run("log", g * 0 + b)
    gb = g * a / b if is_tensor(b) else None
    return (ga, gb)


def d_logaddexp(g, x, y):
    a, b = x
    return (g / (K.run("exp", b - a) + 1), g / (K.run("exp", a - b) + 1))


def d_logaddexp2(g, x, y):
    a, b = x
    return (g / (K.run("exp2", b - a) + 1), g / (K.run("exp2", a - b) + 1))


def d_fmax(g, x, y):
    a, b = x
    keep = K.run("logical_or", a >= b, K.run("isnan", b))
    return (_mask(g, keep), _mask(g, K.run("logical_not", keep)))


def d_fmin(g, x, y):
    a, b = x
    keep = K.run("logical_or", a <= b, K.run("isnan", b))
    return (_mask(g, keep), _mask(g, K.run("logical_not", keep)))


def d_atan2(g, x, y):
    a, b = x
    r = K.run("reciprocal", a * a + b * b)
    return (g * b * r, g * -a * r)


def d_hypot(g, x, y):
    a, b = x
    h = K.run("hypot", a, b)
    return (g * a / h, g * b / h)


def d_lgamma(g, x, y):
    return (g * K.run("digamma", x[0]),)


def d_digamma(g, x, y):
    return (g * K.run("polygamma", x[0], 1),)


def d_polygamma(g, x, y):
    n = x[1]
    return (g * K.run("polygamma", x[0], n + 1), None)


def d_i0(g, x, y):
    return (g * K.run("special_i1", x[0]),)


def d_i1(g, x, y):
    a = x[0]
    d = K.run("i0", a) - K.run("special_i1", a) / a
    return (K.run("where", a == 0, 0.5, d) * g,)


def _igamma_density(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)."""
    return K.run("exp", (a - 1) * K.run("log", x) - x - K.run("lgamma", a))


def d_igamma(g, x, y):
    # PyTorch has no derivative in a: its backward raises, and so does ours (NotImplemented)
    return (NotImplemented, g * _igamma_density(*x))


def d_igammac(g, x, y):
    return (NotImplemented, -g * _igamma_density(*x))


def d_zeta(g, x, y):
    # d/dq zeta(s, q) = -s zeta(s + 1, q); PyTorch has no derivative in s
    s, q = x
    return (NotImplemented, -g * s * K.run("special_zeta", s + 1, q))
