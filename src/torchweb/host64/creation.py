"""Creation of float64 tensors (tensor, zeros/ones/full/empty and their _like forms, arange,
linspace: _creation.py hands a float64 request here)."""

import math

from .._size import as_shape
from .._float64 import refusal
from .tensor import from_values
from .._creation import _flatten
from .._is_tensor import is_tensor


def _no_grad(requires_grad):
    if requires_grad:
        raise refusal("autograd")


def tensor(data, requires_grad=False):
    _no_grad(requires_grad)
    if is_tensor(data):
        return from_values((float(v) for v in data.detach()._flat_values()), tuple(data.shape))
    if hasattr(data, "tolist") and not isinstance(data, (list, tuple)):
        data = data.tolist()      # numpy arrays and scalars
    if not isinstance(data, (list, tuple)):
        return from_values([float(data)], ())
    flat = []
    shape = _flatten(data, [], flat)
    return from_values((float(v) for v in flat), tuple(shape))


def full(size, value, requires_grad=False):
    _no_grad(requires_grad)
    shape = as_shape(size) if not isinstance(size, tuple) or any(not isinstance(s, int) for s in size) else size
    return from_values([float(value)] * math.prod(shape), tuple(shape))


def from_list(values, shape, requires_grad=False):
    _no_grad(requires_grad)
    return from_values((float(v) for v in values), tuple(shape))


def _fma(a, b, c):
    """a * b + c rounded once, as PyTorch's vectorized kernels compute it (math.fma is 3.13+)."""
    fma = getattr(math, "fma", None)
    if fma is not None:
        return fma(a, b, c)
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    from fractions import Fraction
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def linspace(start, end, steps, requires_grad=False):
    """PyTorch's float64 linspace to the bit: start + i * step in the first half, end - (n - 1 -
    i) * step in the second, each a fused multiply-add."""
    _no_grad(requires_grad)
    start, end = float(start), float(end)
    if steps == 1:
        return from_values([start], (1,))
    step = (end - start) / (steps - 1)
    half = steps // 2
    return from_values([_fma(i, step, start) if i < half else _fma(-(steps - 1 - i), step, end)
                        for i in range(steps)], (steps,))

