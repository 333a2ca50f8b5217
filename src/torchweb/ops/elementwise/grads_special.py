"""Backward rules of torch.special's differentiable Cephes rows (PyTorch's derivatives.yaml):
i0e, i1e, erfcx, ndtri, log_ndtr. The other special rows are not differentiable in PyTorch."""

import math

from .rule_kernels import K


def d_i0e(g, x, y):
    a = x[0]
    return (g * (K.run("special_i1e", a) - K.run("sign", a) * K.run("special_i0e", a)),)


def d_i1e(g, x, y):
    a = x[0]
    y = K.run("special_i1e", a)
    d = K.run("special_i0e", a) - y * (K.run("sign", a) + K.run("reciprocal", a))
    return (K.run("where", a == 0, 0.5, d) * g,)


def d_erfcx(g, x, y):
    a = x[0]
    return (g * (2.0 * a * K.run("special_erfcx", a) - 2.0 / math.sqrt(math.pi)),)


def d_ndtri(g, x, y):
    return (g * math.sqrt(2 * math.pi) * K.run("exp", y * y * 0.5),)


def d_log_ndtr(g, x, y):
    a = x[0]
    y = K.run("special_log_ndtr", a)
    return (g / math.sqrt(2 * math.pi) * K.run("exp", -(y + a * a * 0.5)),)

