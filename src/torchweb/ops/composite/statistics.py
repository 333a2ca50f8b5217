"""Statistics written from reductions, matmul and elementwise rows, so their gradients come from
those: nansum, nanmean, count_nonzero, aminmax, cov and corrcoef. write_out is out= for the
long-tail composites (quantiles.py, differences.py, norms.py use it too)."""

import warnings
from collections import namedtuple

from ..._size import wrap_dim
from ..operands import is_tensor
from ..elementwise import call
from ..registry import define
from .. import reduction as R
from ..layout import diagonal
from ..linalg import matmul
from ..pointwise_api import clamp

aminmax_t = namedtuple("aminmax", ["min", "max"])


def write_out(result, out):
    """out= as PyTorch: the result copied into out (an empty out resized first, where Tensor.resize_
    exists)."""
    if out is None:
        return result
    if isinstance(out, (tuple, list)):
        for o, r in zip(out, result):
            write_out(r, o)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0 or not hasattr(out, "resize_"):
            raise RuntimeError(f"out= has shape {list(out.shape)} but the result has shape {list(result.shape)}")
        out.resize_(result.shape)
    return out.copy_(result)


def _floating(name, x):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{name}(): expected input to have floating point or complex dtype but got "
                           f"{x.dtype.word}")


def _no_nan(x):
    return call("where", call("isnan", x), 0.0, x) if x.dtype.is_floating_point else x


@define("nansum", "reduction", doc="nansum(input, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor\n\n"
        "The sum over dim with NaN counted as zero. Integers and bool sum to int64.")
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return write_out(R.sum(_no_nan(input), dim, keepdim, dtype=dtype), out)


@define("nanmean", "reduction", dtypes="floating",
        doc="nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor\n\n"
            "The mean over dim of the elements that are not NaN (floating dtypes only).")
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    _floating("nanmean", input)
    count = R.sum(call("logical_not", call("isnan", input)), dim, keepdim)
    total = R.sum(_no_nan(input), dim, keepdim, dtype=dtype)
    return write_out(total / count, out)


# -- counts and extremes ----------------------------------------------------------------------
def _dim_tuple(dim, ndim):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    wrapped = [wrap_dim(d, max(ndim, 1)) for d in dims]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(wrapped)


@define("count_nonzero", "reduction",
        doc="count_nonzero(input, dim=None) -> Tensor\n\nThe number of nonzero elements over dim (an int "
            "or tuple; all by default), as int64.")
def count_nonzero(input, dim=None, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    nz = call("ne", input, 0)
    dims = () if dim is None else _dim_tuple(dim, input.dim())
    return R.sum(nz, dims) if dims and input.dim() else R.sum(nz)


@define("aminmax", "reduction",
        doc="aminmax(input, *, dim=None, keepdim=False, out=None) -> (min, max)\n\n"
            "amin and amax together, as a named tuple (min, max).")
def aminmax(input, *, dim=None, keepdim=False, out=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                               "has no identity.")
        lo, hi = input.amin(), input.amax()   # (methods: a float64 host tensor has them too)
        if keepdim:
            lo, hi = lo.reshape((1,) * input.dim()), hi.reshape((1,) * input.dim())
    else:
        d = wrap_dim(dim, max(input.dim(), 1))
        if input.dim() and input.shape[d] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
        if input.dim() == 0:
            lo, hi = input.amin(), input.amax()
        else:
            lo, hi = input.amin(d, keepdim), input.amax(d, keepdim)
    return write_out(aminmax_t(lo, hi), out)


# -- covariance -------------------------------------------------------------------------------
def _check_weights(kind, w, n, integral):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with "
                           f"{w.dim()} dimensions")
    if integral and (w.dtype.is_floating_point or w.dtype.name == "bool"):
        raise RuntimeError(f"cov(): expected {kind} to have integral dtype but got {kind} with {w.dtype.word} dtype")
    if not integral and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {kind} to have floating point dtype but got {kind} with "
                           f"{w.dtype.word} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are observations in the "
                           f"input but got {w.numel()} != {n}")
    if n and bool(w.amin() < 0):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


@define("cov", "linalg", dtypes="numeric",
        doc="cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor\n\n"
            "The covariance matrix of input's rows (variables) over its columns (observations), "
            "weighted by fweights (integer counts) and aweights (float weights).")
def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype.name == "bool":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = float(n)
        avg = R.sum(x, 1) / w_sum
    else:
        w_sum = R.sum(w)
        if not bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = R.sum(x * w, 1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm = w_sum - correction * R.sum(w * aweights) / w_sum
    else:
        norm = w_sum - correction
    if bool(norm <= 0) if is_tensor(norm) else norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    xc = x - avg.unsqueeze(1)
    c = matmul(xc, (xc * w if w is not None else xc).t())
    return (c / norm).squeeze()


@define("corrcoef", "linalg", dtypes="numeric",
        doc="corrcoef(input) -> Tensor\n\nPearson's correlation coefficients of input's rows (cov "
            "normalized by the standard deviations, clipped to [-1, 1]).")
def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    sd = call("sqrt", diagonal(c))
    c = c / sd.reshape(-1, 1)
    c = c / sd.reshape(1, -1)
    return clamp(c, -1, 1)
