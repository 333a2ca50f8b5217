"""The tolerance of each family's float results (see compare.py for the base and the rules).

Each function takes PyTorch's inputs (torch tensors and Python values, as the case ran them)
and PyTorch's result (a compare.Read), and gives a compare.Tol (or a list, one per result).
"""

import numpy as np
import torch

from .compare import F32_MAX, U16, U32, Tol, base_tol, finite_abs64, sum_bound, terms

EXACT = Tol(0.0, 0.0)


def _np64(v):
    if isinstance(v, torch.Tensor):
        return v.detach().double().numpy()
    if isinstance(v, (bool, int, float)):
        return np.float64(v)
    return None


def _fit(a, shape):
    """a (per element of the operands' broadcast) fitted to a result of `shape`: itself where
    the shapes agree, else its largest element (a base written through a view)."""
    a = np.asarray(a, dtype=np.float64)
    try:
        return np.broadcast_to(a, shape)
    except ValueError:
        return np.float64(a.max()) if a.size else np.float64(0.0)


def _tol_for(exp, fn):
    """Apply fn(Read) -> Tol to each result of exp."""
    if isinstance(exp, list):
        return [_tol_for(e, fn) for e in exp]
    if isinstance(exp, tuple) or not exp.is_float:
        return EXACT
    return fn(exp)


# -- pointwise (elementwise rows, operators, in-place forms, writes) -----------------------------
ROUNDED_DIVISIONS = {"div_trunc": np.trunc, "div_floor": np.floor, "//": np.floor, "__ifloordiv__": np.floor}


def pointwise(op, args, kwargs, exp):
    def fn(r):
        t = base_tol(r.dtype, op)
        if r.dtype == "float16" and op in ROUNDED_DIVISIONS and len(args) >= 2:
            # deviation 9: PyTorch's vectorised float16 loop rounds x / y to float16 before
            # truncating (or flooring), its scalar loop does not: where the two differ, either
            # is PyTorch's answer
            x, y = _np64(args[0]), _np64(args[1])
            if x is not None and y is not None:
                rnd = ROUNDED_DIVISIONS[op]
                with np.errstate(all="ignore"):
                    q = x / y
                    q16 = np.asarray(q).astype(np.float16).astype(np.float64)
                    bad = (rnd(q16) != rnd(q)) & np.isfinite(q) & np.isfinite(q16)
                if np.any(bad):
                    t.unchecked = _fit(bad.astype(np.float64), r.shape).astype(bool)
                    t.deviation = "f16-div-rounding"
        if r.dtype != "float32":
            return t
        if op in ("add_alpha", "sub_alpha") and len(args) >= 2:
            # a + alpha * b: PyTorch's vectorised kernel fuses it (fma), its scalar tail does
            # not; either is right to within a rounding of alpha * b
            alpha = kwargs.get("alpha", 2)
            b = _np64(args[1])
            if b is not None:
                with np.errstate(invalid="ignore", over="ignore"):
                    extra = 2 * U32 * np.abs(float(alpha) * b)
                t.atol = np.nan_to_num(t.atol + _fit(extra, r.shape), nan=0.0, posinf=np.inf)
        if op == "gelu" and args and isinstance(args[0], torch.Tensor) and args[0].dtype == torch.float32:
            # deviation 5: PyTorch's float32 CPU gelu computes x * (1 + erf(..)) first, so it
            # gives inf for x > max/2 and NaN for x = +-inf; torchweb gives x (and 0 at -inf)
            x = args[0].detach().double().numpy()
            bad = np.isinf(x) | (x > F32_MAX / 2)
            if bad.any():
                t.unchecked = _fit(bad.astype(np.float64), r.shape).astype(bool)
                t.deviation = "gelu-overflow"
        if op in ("remainder", "%", "__imod__", "fmod") and len(args) >= 2:
            # deviation 7: where x / y overflows float32, PyTorch's vectorised CPU remainder
            # and fmod (x - y * floor(x / y)) give NaN, its scalar loop the exact remainder
            x, y = _np64(args[0]), _np64(args[1])
            if x is not None and y is not None:
                with np.errstate(all="ignore"):
                    q = np.abs(x / y)
                bad = np.isfinite(x) & np.isfinite(y) & (y != 0) & (q > F32_MAX)
                if np.any(bad):
                    t.unchecked = _fit(bad.astype(np.float64), r.shape).astype(bool)
                    t.deviation = "remainder-overflow"
        if op in ("pow", "**", "__ipow__") and len(args) >= 2:
            # exp2(y * log2(x)): the error of y * log2(x) (a few ulp of it) becomes a relative
            # error of the result of that size
            x, y = _np64(args[0]), _np64(args[1])
            if x is not None and y is not None:
                with np.errstate(all="ignore"):
                    lg = np.abs(y * np.log2(np.abs(x)))
                lg = np.nan_to_num(lg, nan=0.0, posinf=0.0)
                t.rtol = t.rtol + 4 * U32 * _fit(lg, r.shape)
        return t
    return _tol_for(exp, fn)


# -- reductions -------------------------------------------------------------------------------------
def _dims(x, dim):
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return list(range(x.dim()))
    if isinstance(dim, (tuple, list)):
        return sorted({d % max(x.dim(), 1) for d in dim})
    return [dim % max(x.dim(), 1)] if x.dim() else []


def _rsum(t, dims, keepdim):
    return t.sum(dims, keepdim=keepdim) if dims else t


def _ramax(t, dims, keepdim):
    if not dims:
        return t
    if t.numel() == 0:
        return t.sum(dims, keepdim=keepdim)
    return t.amax(dims, keepdim=keepdim)


def _shape_like(a, r):
    return np.broadcast_to(np.asarray(a, dtype=np.float64), r.shape) if r.shape else np.asarray(a, dtype=np.float64).reshape(())


def reduction(name, x, kwargs, exp):
    if not isinstance(x, torch.Tensor) or not x.dtype.is_floating_point and name in ("amax", "amin", "max", "min", "argmax", "argmin", "all", "any"):
        return _tol_for(exp, lambda r: EXACT)
    if name in ("amax", "amin", "max", "min", "argmax", "argmin", "all", "any"):
        return _tol_for(exp, lambda r: EXACT)       # values are picked, not computed
    dim = kwargs.get("dim")
    keepdim = kwargs.get("keepdim", False)
    dims = _dims(x, dim)
    n = int(np.prod([x.shape[d] for d in dims])) if x.dim() else 1
    a = finite_abs64(x)
    if name in ("softmax", "log_softmax"):
        d = dim % max(x.dim(), 1) if x.dim() else None
        n = x.shape[d] if d is not None else 1

        def fn(r):
            t = base_tol(r.dtype)
            if name == "softmax":
                t.rtol += (terms(n) + 3) * U32             # the denominator's sum
            else:                                          # x - max - log(sum): absolute errors
                big = _ramax(a, [d], True) if d is not None else a
                t.atol = t.atol + (terms(n) + 3) * U32 + 4 * U32 * np.broadcast_to(big.numpy(), r.shape)
                if r.dtype == "float16":
                    # PyTorch's float16 log_softmax (dtype=float16) rounds the log of the sum
                    # to float16 (log(1.000122) becomes 0): an absolute float16 rounding
                    t.atol = t.atol + 2 * U16
            return t
        return _tol_for(exp, fn)

    abs_sum = _rsum(a, dims, keepdim).numpy()

    if name in ("sum", "mean"):
        def fn(r):
            t = base_tol(r.dtype)
            bound, over = sum_bound(abs_sum, n)
            if name == "mean":
                bound = bound / max(n, 1)
            t.atol = t.atol + _shape_like(bound, r)
            t.unchecked = _shape_like(over, r).astype(bool)
            return t
        return _tol_for(exp, fn)

    if name == "prod":
        return _tol_for(exp, lambda r: _prod_tol(r, x, dims, keepdim, n))

    if name in ("var", "std", "var_mean", "std_mean"):
        return _var_tol(name, x, kwargs, dims, keepdim, n, abs_sum, exp)

    if name == "logsumexp":
        big = _ramax(a, dims, keepdim).numpy()
        return _tol_for(exp, lambda r: Tol(base_tol(r.dtype).rtol,
                                          base_tol(r.dtype).atol + (terms(n) + 3) * U32 + 4 * U32 * _shape_like(big, r)))

    if name in ("norm", "linalg.vector_norm"):
        p = kwargs.get("p", kwargs.get("ord", 2))

        def fn(r):
            t = base_tol(r.dtype)
            if p in (float("inf"), float("-inf"), 0):
                return t                                   # picked or counted
            if p in (2, "fro", None, 1):
                t.rtol += (terms(n) + 3) * U32             # sum of squares (or of |x|), then sqrt
            else:
                # |x|**p and the final **(1/p) through exp2/log2: a few ulp of |p log2|x||
                # (<= 3 * 128) each, as for pow
                t.rtol += (terms(n) + 3) * U32 + 2e-5
            return t
        return _tol_for(exp, fn)
    return _tol_for(exp, lambda r: base_tol(r.dtype))


def _prod_tol(r, x, dims, keepdim, n):
    # Each partial product rounds once: (n - 1) roundings of PyTorch's accumulator, float32
    # for float32 input and float16 (PyTorch's CPU prod keeps float16 partial products) for
    # float16. Where partial products can leave the dtype's range in one order and not in
    # another (an overflow that a small factor later brings back, or an underflow to 0 later
    # multiplied by a huge one), the order decides between inf, 0, nan and a finite value:
    # unchecked.
    t = base_tol(r.dtype)
    u, hi, lo = (U16, 15.9, -14.0) if x.dtype == torch.float16 else (U32, 127.9, -126.0)
    t.rtol += (n + 1) * u
    xa = x.detach().double().abs()
    with np.errstate(divide="ignore"):
        lg = torch.log2(xa)
    fin = torch.isfinite(lg)
    pos = torch.where(fin & (lg > 0), lg, torch.zeros_like(lg))
    neg = torch.where(fin & (lg < 0), lg, torch.zeros_like(lg))
    zero = (xa == 0).double()
    inf = torch.isinf(xa).double()
    up = _rsum(pos, dims, keepdim).numpy() + 1e9 * _rsum(inf, dims, keepdim).numpy()
    down = _rsum(neg, dims, keepdim).numpy() - 1e9 * _rsum(zero, dims, keepdim).numpy()
    risky = ((up > hi) & (down < 0)) | ((down < lo) & (up > 0))
    t.unchecked = _shape_like(risky, r).astype(bool)
    return t


def _var_tol(name, x, kwargs, dims, keepdim, n, abs_sum, exp):
    # Two passes (mean m~, then sum (x - m~)^2): with m~ = m + delta, |delta| <= n u mean|x|,
    # the computed sum is within (n + 3) u (D + n delta^2) + n delta^2 of D = sum (x - m)^2
    # (the cross term vanishes); divided by n - correction. std: |sqrt(a) - sqrt(b)| is at most
    # |a - b| / (2 sqrt(b)) and at most sqrt(|a - b|).
    if "correction" in kwargs:
        c = kwargs["correction"]
    elif "unbiased" in kwargs:
        c = 1 if kwargs["unbiased"] else 0
    else:
        c = 1
    x64 = x.detach().double()
    x64 = torch.where(torch.isfinite(x64), x64, torch.zeros_like(x64))
    mean = x64.mean(dims, keepdim=True) if dims else x64
    dev2 = _rsum((x64 - mean) ** 2, dims, keepdim).numpy()
    k = terms(n) + 1
    delta = k * U32 * abs_sum / max(n, 1)
    err_var = ((k + 3) * U32 * (dev2 + n * delta ** 2) + n * delta ** 2) / max(n - c, 1e-300)
    err_mean = k * U32 * abs_sum / max(n, 1)
    var_exact = dev2 / max(n - c, 1e-300)

    def var_t(r):
        t = base_tol(r.dtype)
        t.atol = t.atol + _shape_like(np.nan_to_num(err_var, nan=0.0, posinf=np.inf), r)
        return t

    def std_t(r):
        t = base_tol(r.dtype)
        with np.errstate(all="ignore"):
            e = np.minimum(err_var / (2 * np.sqrt(var_exact)), np.sqrt(err_var))
        t.atol = t.atol + _shape_like(np.nan_to_num(e, nan=0.0, posinf=np.inf), r)
        return t

    inf_in = _rsum(torch.isinf(x.detach()).double(), dims, keepdim).numpy() > 0

    def mean_t(r):
        t = base_tol(r.dtype)
        t.atol = t.atol + _shape_like(err_mean, r)
        if inf_in.any():
            # deviation 8: the mean of var_mean/std_mean over a slice holding an infinity is
            # inf or NaN depending on PyTorch's internal path (its Welford update makes NaN of
            # inf - inf in some, not in others: var_mean([1., inf]) gives mean inf)
            t.unchecked = _shape_like(inf_in, r).astype(bool)
            t.deviation = "var-mean-inf"
        return t

    first = var_t if name.startswith("var") else std_t
    if name in ("var", "std"):
        return _tol_for(exp, first)
    return [_tol_for(exp[0], first), _tol_for(exp[1], mean_t)] if isinstance(exp, list) and len(exp) == 2 \
        else _tol_for(exp, first)


# -- matmul ---------------------------------------------------------------------------------
def matmul(op, args, kwargs, exp):
    """(K + 2) u (|A| |B|)_ij per element (K products and K - 1 additions, plus addmm's and
    linear's added term), with |A| |B| in float64; unchecked where it passes float32's max."""
    try:
        if op == "addmm":
            c, a, b = args[:3]
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            s = abs(beta) * finite_abs64(c) + abs(alpha) * (finite_abs64(a) @ finite_abs64(b))
            k = a.shape[-1]
        elif op == "linear":
            xx, w = args[0], args[1]
            s = finite_abs64(xx) @ finite_abs64(w).t() if w.dim() == 2 else finite_abs64(xx) @ finite_abs64(w)
            if len(args) > 2 and args[2] is not None:
                s = s + finite_abs64(args[2])
            k = xx.shape[-1]
        else:
            a, b = args[0], args[1]
            s = torch.matmul(finite_abs64(a), finite_abs64(b))
            k = a.shape[-1]
        s = s.numpy()
    except Exception:  # noqa: BLE001 - shapes PyTorch accepted in a way this cannot follow
        return _tol_for(exp, lambda r: base_tol(r.dtype))

    def fn(r):
        t = base_tol(r.dtype)
        bound, over = sum_bound(s, k + 3)
        t.atol = t.atol + _shape_like(bound, r)
        t.unchecked = _shape_like(over, r).astype(bool)
        return t
    return _tol_for(exp, fn)


# -- gradients ------------------------------------------------------------------------------
def chain(exp):
    """A chain of up to four ops on moderate inputs, each within ~1e-5 relative (sums within
    their bound), compounded through condition numbers that the moderate inputs keep small:
    1e-4 relative, and 1e-4 of the result's largest magnitude absolute (sums and matmuls in the
    chain make absolute errors of that size)."""
    def fn(r):
        finite = np.abs(r.values[np.isfinite(r.values)])
        scale = float(finite.max()) if finite.size else 0.0
        return Tol(1e-4 if r.dtype == "float32" else 2e-3, 1e-4 * (1.0 + scale))
    return _tol_for(exp, fn)
