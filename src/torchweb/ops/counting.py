"""Counting: unique, unique_consecutive, bincount, histc, histogram.

unique (dim=None) runs on the GPU as: a stable sort of the flattened input with the original
positions (ops/sorting.py) -> a flag per sorted element, "differs from the one before" (NaN
differs from everything, as in PyTorch, so every NaN is its own value; -0.0 equals 0.0 and the
first of them in sorted order, the first occurrence, is kept) -> the inclusive cumsum of the
flags (ops/scan.py): each element's slot + 1 -> the number of unique values, read back to the
host (it sizes the result: PyTorch syncs here too) -> a compaction scatter of the flagged values
and of their positions to their slots (backends' count_scatter) -> counts as differences of
those first positions, and the inverse as each element's slot scattered back through the sort's
permutation. unique_consecutive is the same without the sort. unique(dim=d) sorts the slices
along d lexicographically (stable sorts by each column, last column first) and flags slices
that differ from the one before in any element.

bincount sizes its result from max(input), read back with min(input) (negatives are refused),
then one kernel adds 1 (atomicAdd) or the weights (a compare-exchange loop in float32) per
element (kernels/count.py says why not a sort). histc and histogram find each element's bin
with PyTorch's own arithmetic (histc: (x - min) * bins / (max - min) in the input's dtype;
histogram: a binary search of the edges, searchsorted), send the elements outside the range
(and NaN) to an extra bin, and count with bincount.

None of them has a gradient: the values of unique and unique_consecutive, and bincount's and
histogram's float results, refuse backward as PyTorch's do.
"""

import struct
from collections import namedtuple

from .. import _dtype as D
from .._size import wrap_dim, contiguous_strides
from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends import backend_for
from . import elementwise as E
from .operands import empty, is_tensor
from .elementwise import contiguous_operand
from .registry import define
from .._creation import arange, tensor
from .reduction import raw_reduce
from .scan_lowering import raw_scan
from .search import search_rows
from .sorting import raw_sort

histogram_t = namedtuple("histogram", ["hist", "bin_edges"])


def _flat(t):
    c = contiguous_operand(t)
    return c._view((c.numel(),), (1,), c._offset)


def _slice(t, start, length):
    """t[start:start+length] of a contiguous 1-D t."""
    return t._view((length,), (1,), t._offset + start)


def _flags_1d(v):
    """bool [n]: True where v[i] differs from v[i - 1] (and at 0)."""
    n = v.shape[0]
    flags = empty((n,), D.bool, v.device)
    E.fill(_slice(flags, 0, 1), True)
    if n > 1:
        E.run("ne", _slice(v, 1, n - 1), _slice(v, 0, n - 1), out=_slice(flags, 1, n - 1))
    return flags


def _runs(flags, n):
    """From the change flags: (inclusive running count int64 [n], number of runs m)."""
    pos = raw_scan("sum", flags, 0, D.int64, "i")
    m = int(_slice(pos, n - 1, 1).item())
    return pos, m


def _first_positions(be, flags, pos, n, m, device):
    """int64 [m + 1]: where each run starts, then n."""
    starts = empty((m + 1,), D.int64, device)
    E.fill(_slice(starts, m, 1), n)
    be.count_scatter(_slice(starts, 0, m), pos, None, flags, -1)
    return starts


def _counts(starts, m):
    return E.run("sub", _slice(starts, 1, m), _slice(starts, 0, m))


class _NoGrad(Function):
    """Runs fn; float outputs that would require grad refuse backward like PyTorch's."""

    @staticmethod
    def forward(ctx, x, fn):
        out = fn()
        outs = out if isinstance(out, tuple) else (out,)
        ctx.mark_non_differentiable(*outs[1:])
        return out


def _refusing(node, what, exc=NotImplementedError, message=None):
    def backward(ctx, *grads):
        raise exc(message or f"the derivative for '{what}' is not implemented.")
    return type("_" + node, (_NoGrad,), {"_backward_name": node, "backward": staticmethod(backward)})


_UNIQUE = _refusing("Unique2Backward0", "_unique2")
_UNIQUE_DIM = _refusing("UniqueDimBackward0", "unique_dim")
_UNIQUE_CONSEC = _refusing("UniqueConsecutiveBackward0", "unique_consecutive")
_BINCOUNT = _refusing("torch::autograd::NotImplemented", "bincount", RuntimeError,
                      "derivative for aten::bincount is not implemented")
_HISTOGRAM = _refusing("torch::autograd::NotImplemented", "histogram", RuntimeError,
                       "derivative for aten::histogram is not implemented")


def _result(values, inverse, counts, return_inverse, return_counts):
    out = (values,)
    if return_inverse:
        out += (inverse,)
    if return_counts:
        out += (counts,)
    return out if len(out) > 1 else values


def _unique_flat(x, consecutive, return_inverse, return_counts):
    dev = x.device
    n = x.numel()
    flat = _flat(x)
    if n == 0:
        return (empty((0,), x.dtype, dev), empty(x.shape, D.int64, dev), empty((0,), D.int64, dev))
    be = backend_for(dev.type)
    if consecutive:
        v, perm = flat, None
    else:
        v, perm = raw_sort(flat, 0, False)
    flags = _flags_1d(v)
    pos, m = _runs(flags, n)
    values = empty((m,), x.dtype, dev)
    be.count_scatter(values, pos, v, flags, -1)
    inverse = counts = None
    if return_inverse:
        slot = E.run("sub", pos, 1)
        if consecutive:
            inverse = slot
        else:
            inverse = empty((n,), D.int64, dev)
            be.count_scatter(inverse, perm, slot)
        inverse = inverse._view(x.shape, _strides(x.shape), inverse._offset)
    if return_counts:
        counts = _counts(_first_positions(be, flags, pos, n, m, dev), m)
    return values, inverse, counts


def _strides(shape):
    return contiguous_strides(shape)


def _rows_view(x, d):
    """x with dim d first, as a contiguous [n, rest] tensor, and the moved shape."""
    order = [d] + [i for i in range(x.dim()) if i != d]
    moved = x._view(tuple(x.shape[i] for i in order), tuple(x._stride[i] for i in order), x._offset)
    c = empty(moved.shape, x.dtype, x.device)
    E.copy_into(c, moved)
    n = x.shape[d]
    rest = c.numel() // n if n else 0
    return c._view((n, rest), (rest, 1), 0), moved.shape, order


def _take_rows(t, perm):
    """t[perm] for a contiguous [n, rest] t and an int64 [k] index (a row gather)."""
    n, rest = t.shape
    k = perm.shape[0]
    out = empty((k, rest), t.dtype, t.device)
    if k * rest == 0:
        return out
    idx = E.run("add", E.run("mul", perm._view((k, 1), (perm._stride[0], 1), perm._offset), rest),
                _iota(rest, t.device)._view((1, rest), (0, 1), 0))
    backend_for(t.device.type).count_gather(_flat(out), _flat(idx), _flat(t))
    return out


def _gather(src, idx):
    """src[idx] for 1-D contiguous src and int64 idx."""
    out = empty((idx.shape[0],), src.dtype, src.device)
    if idx.shape[0]:
        backend_for(src.device.type).count_gather(out, _flat(idx), src)
    return out


def _iota(n, device):
    return arange(n, dtype=D.int64, device=device)


def _unique_dim(x, d, consecutive, return_inverse, return_counts):
    dev = x.device
    rows, moved_shape, order = _rows_view(x, d)
    n, rest = rows.shape
    inv_order = [order.index(i) for i in range(x.dim())]

    def back(t, k):
        shape = (k,) + tuple(moved_shape[1:])
        t = t._view(shape, _strides(shape), t._offset)
        return t._view(tuple(shape[i] for i in inv_order), tuple(t._stride[i] for i in inv_order), t._offset)

    if n == 0:
        return back(empty((0, rest), x.dtype, dev), 0), empty((0,), D.int64, dev), empty((0,), D.int64, dev)
    be = backend_for(dev.type)
    perm = None
    if not consecutive and rest:
        # lexicographic order of the rows: stable sorts by each column, the last first
        perm = _iota(n, dev)
        for j in reversed(range(rest)):
            _, p = raw_sort(_gather(_flat(rows), E.run("add", E.run("mul", perm, rest), j)), 0, False)
            perm = _gather(perm, p)
        srt = _take_rows(rows, perm)
    else:
        srt = rows
    flags = empty((n,), D.bool, dev)
    E.fill(_slice(flags, 0, 1), True)
    if n > 1:
        if rest:
            diff = E.run("ne", srt._view((n - 1, rest), (rest, 1), rest), srt._view((n - 1, rest), (rest, 1), 0))
            E.copy_into(_slice(flags, 1, n - 1), raw_reduce("any", diff, [1], False, D.bool))
        else:
            E.fill(_slice(flags, 1, n - 1), False)
    pos, m = _runs(flags, n)
    starts = _first_positions(be, flags, pos, n, m, dev)
    values = _take_rows(srt, _slice(starts, 0, m)) if m < n else srt
    values = back(values if values is not srt else contiguous_operand(srt), m)
    inverse = counts = None
    if return_inverse:
        slot = E.run("sub", pos, 1)
        if perm is None:
            inverse = slot
        else:
            inverse = empty((n,), D.int64, dev)
            be.count_scatter(inverse, perm, slot)
    if return_counts:
        counts = _counts(starts, m)
    return values, inverse, counts


def _unique(x, consecutive, return_inverse, return_counts, dim, node):
    if dim is None:
        fn = lambda: _unique_flat(x, consecutive, return_inverse, return_counts)  # noqa: E731
    else:
        if x.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = wrap_dim(dim, x.dim())
        if x.numel() == 0 and x.shape[d] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
        fn = lambda: _unique_dim(x, d, consecutive, return_inverse, return_counts)  # noqa: E731
    values, inverse, counts = node.apply(x, fn) if x.requires_grad and grad_mode.is_grad_enabled() \
        else _call(fn)
    return _result(values, inverse, counts, return_inverse, return_counts)


def _call(fn):
    with grad_mode.no_grad():
        return fn()


@define("unique", "other", differentiable=False,
        doc="unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None) -> Tensor or tuple\n\n"
            "The distinct elements of input (or distinct slices along dim) in ascending order; with "
            "return_inverse, where each element went (input's shape; along dim: one per slice); with "
            "return_counts, how often each occurs. NaNs are all distinct; -0.0 equals 0.0.")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return _unique(input, False, return_inverse, return_counts, dim,
                   _UNIQUE if dim is None else _UNIQUE_DIM)


@define("unique_consecutive", "other", differentiable=False,
        doc="unique_consecutive(input, return_inverse=False, return_counts=False, dim=None) -> Tensor or tuple\n\n"
            "input with each run of equal consecutive elements (or slices along dim) kept once; "
            "return_inverse: each element's run; return_counts: each run's length.")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    return _unique(input, True, return_inverse, return_counts, dim, _UNIQUE_CONSEC)


def _minmax(x):
    """(min, max) of x as Python numbers, in one readback."""
    dims = list(range(x.dim()))
    both = empty((2,), x.dtype, x.device)
    E.copy_into(_slice(both, 0, 1), raw_reduce("min", x, dims, False, x.dtype)._view((1,), (0,), 0))
    E.copy_into(_slice(both, 1, 1), raw_reduce("max", x, dims, False, x.dtype)._view((1,), (0,), 0))
    lo, hi = both.tolist()
    return lo, hi


def raw_bincount(idx, weights, nbins, out_dtype):
    out = empty((nbins,), out_dtype, idx.device)
    E.fill(out, 0)
    if idx.numel():
        backend_for(idx.device.type).bincount(out, idx, weights)
    return out


@define("bincount", "other", differentiable=False,
        doc="bincount(input, weights=None, minlength=0) -> Tensor\n\n"
            "How often each value 0..max(input) occurs in the 1-D non-negative integer input (at least "
            "minlength bins); with weights, the sum of the weights of each value. int64 counts; weights "
            "give float32 sums (PyTorch gives float64 for weights other than float32: WebGPU has no float64).")
def bincount(input, weights=None, minlength=0):
    if input.dtype.is_floating_point or input.dtype is D.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{input.dtype.word}'")
    if input.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = input.shape[0]
    if n == 0:   # PyTorch: int64 zeros, with or without weights
        out = empty((minlength,), D.int64, input.device)
        E.fill(out, 0)
        return out

    def fn():
        lo, hi = _minmax(input)
        if lo < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        nbins = max(minlength, int(hi) + 1)
        idx = _flat(input)
        if weights is None:
            return raw_bincount(idx, None, nbins, D.int64)
        w = weights if weights.dtype is D.float32 else weights.to(D.float32)
        return raw_bincount(idx, _flat(w), nbins, D.float32)
    if weights is not None and weights.requires_grad and grad_mode.is_grad_enabled():
        return _BINCOUNT.apply(weights, fn)
    return _call(fn)


def _f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _f16(v):
    try:
        return struct.unpack("<e", struct.pack("<e", v))[0]
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def _round(dtype, v):
    return _f16(v) if dtype is D.float16 else _f32(v)


def _fmt(v):
    return repr(v) if v != v or v in (float("inf"), float("-inf")) or v != int(v) else str(int(v))


def _bins_of(x, bins, lo, hi):
    """int64 bin of each element of flat x: PyTorch's (x - lo) * bins / (hi - lo) in x's dtype
    (lo, hi rounded to it), truncated; hi itself in the last bin; outside [lo, hi] and NaN: bins."""
    dt = x.dtype
    left, right = _round(dt, lo), _round(dt, hi)
    width = _round(dt, right - left)
    q = E.run("div", E.run("mul", E.run("sub", x, left), float(bins)), width)
    valid = E.run("logical_and", E.run("ge", x, left), E.run("le", x, right))
    pos = E.run("where", valid, q, 0.0).to(D.int64)
    pos = E.run("where", E.run("eq", pos, bins), bins - 1, pos)
    return E.run("where", valid, pos, bins)


@define("histc", "other", out=True, dtypes="floating", differentiable=False,
        doc="histc(input, bins=100, min=0, max=0) -> Tensor\n\n"
            "Counts of input's elements in `bins` equal-width bins over [min, max] (the data's own min "
            "and max when min == max); elements outside (and NaN) are ignored, max itself falls in the "
            "last bin. The input's float dtype; no gradient.")
def histc(input, bins=100, min=0, max=0):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{input.dtype.word}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    with grad_mode.no_grad():
        lo, hi = float(min), float(max)
        if lo == hi and input.numel() > 0:
            lo, hi = (float(v) for v in _minmax(input))
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if lo != lo or hi != hi or lo in (float("inf"), float("-inf")) or hi in (float("inf"), float("-inf")):
            raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
        if not lo < hi:
            raise RuntimeError("torch.histc: max must be larger than min")
        counts = raw_bincount(_bins_of(_flat(input), bins, lo, hi), None, bins + 1, D.int64) \
            if input.numel() else _zeros_i64(bins + 1, input.device)
        return _slice(counts, 0, bins).to(input.dtype)


def _zeros_i64(n, device):
    out = empty((n,), D.int64, device)
    E.fill(out, 0)
    return out


def _linspace_f32(lo, hi, steps):
    """PyTorch's float32 linspace: start + step * i for the first half, end - step * (steps - 1 - i)
    for the rest, each op rounded to float32."""
    start, end = _f32(lo), _f32(hi)
    step = _f32(_f32(end - start) / (steps - 1))
    half = steps // 2
    return [_f32(start + _f32(step * i)) if i < half else _f32(end - _f32(step * (steps - 1 - i)))
            for i in range(steps)]


def equal_width_edges(bins, rng, data, d):
    """The bins + 1 equal-width edge values of dimension d over rng (lo, hi) or data's min and max
    (float32 linspace; float16 data rounds them), with torch.histogramdd's checks."""
    nb = int(bins)
    if nb <= 0:
        raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {nb} for dimension {d}")
    if rng is not None:
        lo, hi = float(rng[0]), float(rng[1])
    elif data.numel():
        lo, hi = (float(v) for v in _minmax(data))
    else:
        lo, hi = 0.0, 1.0
    if lo != lo or hi != hi or abs(lo) == float("inf") or abs(hi) == float("inf"):
        raise RuntimeError(f"torch.histogramdd(): dimension {d}'s range [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd(): min should not exceed max, but got min {_fmt(lo)} max "
                           f"{_fmt(hi)} for dimension {d}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    vals = _linspace_f32(lo, hi, nb + 1)
    if data.dtype is D.float16:
        vals = [_f16(v) for v in vals]
    return vals


@define("histogram", "other", out=True, differentiable=False,
        doc="histogram(input, bins, *, range=None, weight=None, density=False) -> (hist, bin_edges)\n\n"
            "A histogram of input's elements: bins an int (equal widths over range, or the data's "
            "min and max) or a 1-D tensor of increasing edges. weight: each element's weight; density: "
            "normalize so that the histogram integrates to 1. Elements outside the edges are ignored; "
            "the last edge belongs to the last bin.")
def histogram(input, bins, *, range=None, weight=None, density=False):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{input.dtype.word}'")
    if input.dtype is D.float16:
        raise NotImplementedError("\"histogramdd\" not implemented for 'Half'")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                           f"should have the same dtype, but got input({input.dtype.c_name}), and "
                           f"weight({weight.dtype.c_name})")
    if is_tensor(bins) and bins.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                           f"got input with dtype {input.dtype.c_name} and bins for dimension 0 with dtype "
                           f"{bins.dtype.c_name}")
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape "
                           f"as the input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    dev = input.device

    def fn():
        if is_tensor(bins):
            if bins.dim() != 1:
                raise RuntimeError(f"torch.histogramdd(): bins tensor should have one dimension, but got "
                                   f"{bins.dim()} dimensions in the bins tensor for dimension 0")
            if bins.numel() == 0:
                raise RuntimeError("torch.histogramdd(): bins tensor should have at least 1 element, but got 0 "
                                   "elements in the bins tensor for dimension 0")
            edges = contiguous_operand(bins if bins.dtype is input.dtype else bins.to(input.dtype))
            nb = edges.numel() - 1
            left, right = (v for v in _slice(edges, 0, 1).tolist() + _slice(edges, nb, 1).tolist())
        else:
            vals = equal_width_edges(bins, None if range is None else range[:2], input, 0)
            nb = len(vals) - 1
            edges = tensor(vals, dtype=input.dtype, device=dev)
            left, right = vals[0], vals[-1]
        wdt = D.float32
        if nb == 0 or input.numel() == 0:
            hist = empty((max(nb, 0),), input.dtype, dev)
            E.fill(hist, 0.0)
        else:
            x = _flat(input)
            # the last edge <= x: upper_bound - 1 (PyTorch's binary search over the edges)
            pos = E.run("sub", search_rows(edges, x, False, True, None), 1)
            pos = E.run("where", E.run("eq", pos, nb), nb - 1, pos)
            valid = E.run("logical_and", E.run("ge", x, left), E.run("le", x, right))
            idx = E.run("where", valid, pos, nb)
            if weight is None:
                hist = _slice(raw_bincount(idx, None, nb + 1, D.int64), 0, nb).to(input.dtype)
            else:
                w = _flat(weight if weight.dtype is wdt else weight.to(wdt))
                hist = _slice(raw_bincount(idx, w, nb + 1, wdt), 0, nb)
                if hist.dtype is not input.dtype:
                    hist = hist.to(input.dtype)
        if density and nb > 0:
            widths = E.run("sub", _slice(edges, 1, nb), _slice(edges, 0, nb))
            total = raw_reduce("sum", hist, [0], False, hist.dtype)
            hist = E.run("div", hist, E.run("mul", widths, total))
        return hist, edges
    grad = grad_mode.is_grad_enabled() and (input.requires_grad or (weight is not None and weight.requires_grad))
    h, e = _HISTOGRAM.apply(input, fn) if grad else _call(fn)
    if grad:
        e = e.detach()
    return histogram_t(h, e)
