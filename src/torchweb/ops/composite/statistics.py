"""Statistics written from reductions, sort, gather and elementwise rows, so their gradients come
from those: nansum, nanmean, quantile, nanquantile, count_nonzero, aminmax, diff, cov, corrcoef
and dist."""

import warnings
from collections import namedtuple

from ..._size import wrap_dim
from ..dispatch import is_tensor
from ..pointwise import call
from ..registry import define

aminmax_t = namedtuple("aminmax", ["min", "max"])


def _T():
    import torchweb
    return torchweb


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
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    return write_out(_T().sum(_no_nan(input), dim, keepdim, dtype=dtype), out)


@define("nanmean", "reduction", dtypes="floating",
        doc="nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor\n\n"
            "The mean over dim of the elements that are not NaN (floating dtypes only).")
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    _floating("nanmean", input)
    T = _T()
    count = T.sum(call("logical_not", call("isnan", input)), dim, keepdim)
    total = T.sum(_no_nan(input), dim, keepdim, dtype=dtype)
    return write_out(total / count, out)


# -- quantiles --------------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_checks(name, input, q):
    if not is_tensor(input):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if is_tensor(q) and q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if input.dtype.name != "float32":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if is_tensor(q):
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.device != input.device:
            raise RuntimeError(f"{name}() q tensor must be on the same device as the input tensor")
        if q.numel() and bool(((q < 0) | (q > 1)).any()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's algorithm: sort (NaN last), a fractional rank per q, then the neighbours at
    floor and ceil of the rank gathered and blended as `interpolation` says."""
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    _quantile_checks(name, input, q)
    T = _T()
    scalar_q = not is_tensor(q) or q.dim() == 0
    qt = (q.reshape(-1) if is_tensor(q) else T.tensor([float(q)], dtype=input.dtype, device=input.device))
    if dim is None:
        x = input.reshape(-1)
    else:
        d = wrap_dim(dim, max(input.dim(), 1))
        x = input.reshape(1) if input.dim() == 0 else T.movedim(input, d, -1)
    srt = T.sort(x, -1).values                      # NaN sorts last
    n = x.shape[-1]
    nq = qt.shape[0]
    if ignore_nan:
        count = T.sum(call("logical_not", call("isnan", srt)), -1, keepdim=True)
        ranks = call("clamp_min", qt * (count - 1).to(input.dtype), 0.0)
    else:
        ranks = (qt * float(n - 1)).expand(*srt.shape[:-1], nq)
        last_is_nan = call("isnan", srt.narrow(-1, n - 1, 1))
        ranks = call("where", last_is_nan, float(n - 1), ranks)
    ranks = ranks.expand(*srt.shape[:-1], nq)
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": "floor", "higher": "ceil", "nearest": "round"}[interpolation]
        r = T.gather(srt, -1, call(pick, ranks).long())
    else:
        below = call("floor", ranks)
        above = call("ceil", ranks)
        lo = T.gather(srt, -1, below.long())
        hi = T.gather(srt, -1, above.long())
        weights = (T.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below)
        r = T.lerp(lo, hi, weights)
    # r: [..., nq] -> (nq, ...) or (...)
    r = r.squeeze(-1) if scalar_q else T.movedim(r, -1, 0)
    if keepdim:
        lead = () if scalar_q else (nq,)
        if dim is None:
            r = r.reshape(lead + (1,) * input.dim())
        elif input.dim() > 0:
            r = r.unsqueeze(len(lead) + d)
    return r


@define("quantile", "reduction", dtypes=("float32",),
        doc="quantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None) -> Tensor\n\n"
            "The q-th quantiles (q a number or a 1-D tensor in [0, 1]) over dim (the flattened input by "
            "default); interpolation: linear, lower, higher, midpoint or nearest. NaN in a row gives NaN.")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return write_out(_quantile("quantile", input, q, dim, keepdim, interpolation, False), out)


@define("nanquantile", "reduction", dtypes=("float32",),
        doc="nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None) -> Tensor\n\n"
            "quantile ignoring NaN (a row of NaN only gives NaN).")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return write_out(_quantile("nanquantile", input, q, dim, keepdim, interpolation, True), out)


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
def count_nonzero(input, dim=None):
    nz = call("ne", input, 0)
    dims = () if dim is None else _dim_tuple(dim, input.dim())
    return _T().sum(nz, dims) if dims and input.dim() else _T().sum(nz)


@define("aminmax", "reduction",
        doc="aminmax(input, *, dim=None, keepdim=False, out=None) -> (min, max)\n\n"
            "amin and amax together, as a named tuple (min, max).")
def aminmax(input, *, dim=None, keepdim=False, out=None):
    T = _T()
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                               "has no identity.")
        lo, hi = T.amin(input), T.amax(input)
        if keepdim:
            lo, hi = lo.reshape((1,) * input.dim()), hi.reshape((1,) * input.dim())
    else:
        d = wrap_dim(dim, max(input.dim(), 1))
        if input.dim() and input.shape[d] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
        if input.dim() == 0:
            lo, hi = T.amin(input), T.amax(input)
        else:
            lo, hi = T.amin(input, d, keepdim), T.amax(input, d, keepdim)
    return write_out(aminmax_t(lo, hi), out)


# -- differences ------------------------------------------------------------------------------
def _diff_part(input, other, d):
    if other.dim() != input.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(input.dim()):
        if i != d and other.shape[i] != input.shape[i]:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                               f"except along the differencing dimension; input.size({i}) = {input.shape[i]}, "
                               f"but got tensor.size({i}) = {other.shape[i]}")
    return other


@define("diff", "shape",
        doc="diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None) -> Tensor\n\n"
            "The n-th forward difference along dim (bool: logical xor), after concatenating prepend "
            "and append along dim.")
def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    T = _T()
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.dim())
    parts = ([_diff_part(input, prepend, d)] if prepend is not None else []) + [input] + \
            ([_diff_part(input, append, d)] if append is not None else [])
    x = T.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = call("logical_xor", a, b) if x.dtype.name == "bool" else a - b
    if x is input:
        x = input.clone()
    return write_out(x, out)


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
    if n and bool(_T().amin(w) < 0):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


@define("cov", "linalg", dtypes="numeric",
        doc="cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor\n\n"
            "The covariance matrix of input's rows (variables) over its columns (observations), "
            "weighted by fweights (integer counts) and aweights (float weights).")
def cov(input, *, correction=1, fweights=None, aweights=None):
    T = _T()
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
        avg = T.sum(x, 1) / w_sum
    else:
        w_sum = T.sum(w)
        if not bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = T.sum(x * w, 1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm = w_sum - correction * T.sum(w * aweights) / w_sum
    else:
        norm = w_sum - correction
    if bool(norm <= 0) if is_tensor(norm) else norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    xc = x - avg.unsqueeze(1)
    c = T.matmul(xc, (xc * w if w is not None else xc).t())
    return (c / norm).squeeze()


@define("corrcoef", "linalg", dtypes="numeric",
        doc="corrcoef(input) -> Tensor\n\nPearson's correlation coefficients of input's rows (cov "
            "normalized by the standard deviations, clipped to [-1, 1]).")
def corrcoef(input):
    T = _T()
    c = cov(input)
    if c.dim() == 0:
        return c / c
    sd = T.sqrt(T.diagonal(c))
    c = c / sd.reshape(-1, 1)
    c = c / sd.reshape(1, -1)
    return T.clamp(c, -1, 1)


@define("dist", "reduction", dtypes="floating",
        doc="dist(input, other, p=2) -> Tensor\n\nThe p-norm of input - other (broadcast).")
def dist(input, other, p=2):
    return _T().norm(input - other, p)


def _renorm_(self, p, dim, maxnorm):
    """In-place renorm."""
    return self.copy_(renorm(self, p, dim, maxnorm))


@define("renorm", "normalization", inplace=_renorm_,
        doc="renorm(input, p, dim, maxnorm) -> Tensor\n\nEach slice of input along dim scaled, where its p-norm "
            "exceeds maxnorm, to norm maxnorm (by maxnorm / (norm + 1e-7), as PyTorch).")
def renorm(input, p, dim, maxnorm, *, out=None):
    T = _T()
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{input.dtype}")
    d = wrap_dim(dim, input.dim())
    others = tuple(i for i in range(input.dim()) if i != d)
    norm = T.norm(input, p, others, keepdim=True)
    factor = call("where", norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return write_out(input * factor, out)
