"""Reductions (sum, mean, prod, max, min, amax, amin) and scans (cumsum, cumprod) of float64
tensors along dims, with PyTorch's NaN rules (max/min propagate NaN)."""

import math
from array import array
from collections import namedtuple

from .._size import Size
from .tensor import from_values
from .._creation import tensor
from .. import _dtype as D

_bmax, _bsum = max, sum   # the builtins (this module defines torch's sum, max, min)
_values_indices = namedtuple("return_types", ["values", "indices"])


def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        n = _bmax(ndim, 1)
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {d})")
        out.append(d % n)
    return tuple(sorted(set(out))) if ndim else ()


def _groups(x, dims):
    """The values of x grouped by their position in the dims that stay (row-major order)."""
    shape = tuple(x._shape)
    keep = [d for d in range(len(shape)) if d not in dims]
    strides = [0] * len(shape)
    acc = 1
    for d in range(len(shape) - 1, -1, -1):
        if d in keep:
            strides[d] = acc
            acc *= shape[d]
    groups = [[] for _ in range(acc)]
    idx = [0] * len(shape)
    for v in x._data:
        groups[_bsum(i * s for i, s in zip(idx, strides))].append(v)
        for d in range(len(shape) - 1, -1, -1):   # the next multi-index
            idx[d] += 1
            if idx[d] < shape[d]:
                break
            idx[d] = 0
    return groups, keep


def _out_shape(x, dims, keep, keepdim):
    shape = tuple(x._shape)
    return Size(1 if d in dims else shape[d] for d in range(len(shape))) if keepdim else \
        Size(shape[d] for d in keep)


def _reduce(x, dim, keepdim, fn, what):
    dims = _dims(dim, x.dim())
    groups, keep = _groups(x, dims)
    return from_values(map(fn, groups), _out_shape(x, dims, keep, keepdim))


def _extreme(values, better, name):
    if not values:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    best, at = values[0], 0
    for i, v in enumerate(values):
        if v != v:
            return v, i
        if better(v, best):
            best, at = v, i
    return best, at


def _fsum(g):
    """The correctly rounded sum (PyTorch's pairwise sum is within an ulp or two of it);
    infinities and NaN as IEEE adds them (fsum refuses inf - inf)."""
    try:
        return math.fsum(g)
    except (ValueError, OverflowError):
        r = 0.0
        for v in g:
            r += v
        return r


def sum(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce(x, dim, keepdim, _fsum, "sum")


def mean(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce(x, dim, keepdim, lambda g: _fsum(g) / len(g) if g else math.nan, "mean")


def prod(x, dim=None, keepdim=False, *, dtype=None):
    def p(g):
        r = 1.0
        for v in g:
            r *= v
        return r
    return _reduce(x, dim, keepdim, p, "prod")


def _max_min(name, better):
    def f(x, dim=None, keepdim=False):
        if dim is None:
            return from_values([_extreme(list(x._data), better, name)[0]], ())
        if not isinstance(dim, int):
            raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
        dims = _dims(dim, x.dim())
        groups, keep = _groups(x, dims)
        pairs = [_extreme(g, better, name) for g in groups]
        shape = _out_shape(x, dims, keep, keepdim)
        return _values_indices(from_values((p[0] for p in pairs), shape),
                               tensor([p[1] for p in pairs], dtype=D.int64).reshape(tuple(shape)))
    return f


max = _max_min("max", lambda a, b: a > b)
min = _max_min("min", lambda a, b: a < b)


def amax(x, dim=(), keepdim=False):
    return _reduce(x, dim if dim != () else None, keepdim,
                   lambda g: _extreme(g, lambda a, b: a > b, "amax")[0], "amax")


def amin(x, dim=(), keepdim=False):
    return _reduce(x, dim if dim != () else None, keepdim,
                   lambda g: _extreme(g, lambda a, b: a < b, "amin")[0], "amin")


def _scan(x, dim, step, name):
    if dim is None:
        raise TypeError(f"{name}() missing 1 required positional arguments: \"dim\"")
    (d,) = _dims(dim, x.dim()) or (0,)
    shape = tuple(x._shape) or (1,)
    inner = math.prod(shape[d + 1:])
    n = shape[d]
    out = list(x._data)
    for o in range(math.prod(shape[:d])):
        for i in range(inner):
            base = o * n * inner + i
            for k in range(1, n):
                out[base + k * inner] = step(out[base + (k - 1) * inner], out[base + k * inner])
    return from_values(out, x._shape)


def cumsum(x, dim=None, *, dtype=None):
    return _scan(x, dim, lambda a, b: a + b, "cumsum")


def cumprod(x, dim=None, *, dtype=None):
    return _scan(x, dim, lambda a, b: a * b, "cumprod")


def var(x, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """(sum of squared deviations from the mean) / (n - correction), over dim."""
    if unbiased is not None:
        correction = 1 if unbiased else 0

    def v(g):
        n = len(g)
        if n - correction <= 0:
            return math.nan
        m = _fsum(g) / n
        return _fsum((a - m) * (a - m) for a in g) / (n - correction)
    if isinstance(dim, bool):      # var(unbiased) as a positional, PyTorch's older form
        dim, correction = None, 1 if dim else 0
    return _reduce(x, dim, keepdim, v, "var")


def std(x, dim=None, *, correction=1, keepdim=False, unbiased=None):
    out = var(x, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)
    out._data[:] = array("d", (math.sqrt(v) if v >= 0 else math.nan for v in out._data))
    return out


def _arg(name, better):
    def f(x, dim=None, keepdim=False):
        if dim is None:
            at = _extreme(list(x._data), better, name)[1]
            r = tensor(at, dtype=D.int64)
            return r.reshape((1,) * x.dim()) if keepdim else r
        dims = _dims(dim, x.dim())
        groups, keep = _groups(x, dims)
        shape = _out_shape(x, dims, keep, keepdim)
        return tensor([_extreme(g, better, name)[1] for g in groups], dtype=D.int64).reshape(tuple(shape))
    return f


argmax = _arg("argmax", lambda a, b: a > b)
argmin = _arg("argmin", lambda a, b: a < b)
