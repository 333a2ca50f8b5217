"""Sorting: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode.

Every sort is stable (ties keep their order, NaN sorts as the largest value, -0.0 equals 0.0),
so stable=False gives PyTorch's stable order too. The backend sorts the last dim of a view; on a
backend with a workgroup sort (SORT_BLOCK), rows up to that length are one dispatch, longer ones
are padded to a power of two and merged here: blocks, then per merge stage the long distances in
global memory and the short ones in workgroup memory. The others pick positions of the sorted
rows; their gradients go back to the picked indices (a scatter-add).
"""

from collections import namedtuple

from .. import _dtype as D
from .._size import wrap_dim
from ..autograd.function import Function
from ..backends import backend_for
from ..backends.plans import SortPlan
from . import elementwise as E
from . import shape as S
from .operands import compute_class, empty
from .elementwise import contiguous_operand, K
from .registry import define
from .scan import scatter_add_along
from .scan_lowering import moved, raw_scan
from .._creation import arange
from .reduction import raw_reduce

_RT = {n: namedtuple(n, ["values", "indices"]) for n in ("sort", "topk", "kthvalue", "median", "nanmedian", "mode")}


def _pow2(n):
    p = 1
    while p < n:
        p <<= 1
    return p


def raw_sort(x, d, descending):
    """(values, int64 indices) of x sorted along dim d (no autograd), contiguous."""
    values = empty(x.shape, x.dtype, x.device)
    indices = empty(x.shape, D.int64, x.device)
    if x.dim() == 0:
        E.copy_into(values, x)
        E.fill(indices, 0)
        return values, indices
    if x.numel() == 0:
        return values, indices
    xm, vm, im = moved(x, d), moved(values, d), moved(indices, d)
    be = backend_for(x.device.type)
    R = xm.shape[-1]
    rows = xm.numel() // R
    if be.SORT_BLOCK is None:
        be.sort(vm, im, xm, descending)
        return values, indices
    plan = SortPlan(compute_class(x.dtype), descending, R)
    B = be.SORT_BLOCK
    if R <= B:
        be.sort_block(plan, xm, _pow2(R), values=vm, indices=im)
        return values, indices
    npad = _pow2(R)
    keys = empty((rows, npad), D.float32 if x.dtype is D.float16 else x.dtype, x.device)
    idx = empty((rows, npad), D.int32, x.device)
    be.sort_block(plan, xm, B, work_keys=keys, work_idx=idx)
    k = 2 * B
    while k <= npad:
        j = k // 2
        while j >= B:
            be.sort_step(plan, keys, idx, k, j)
            j //= 2
        last = k == npad
        be.sort_merge(plan, keys, idx, values=vm if last else None, indices=im if last else None)
        k *= 2
    return values, indices


def _dim(x, dim):
    return wrap_dim(dim, max(x.dim(), 1))


class _Pick(Function):
    """values and indices picked from x along d (indices computed in forward); the gradient
    goes back to the indices."""
    _double_backward = True   # (scatter_add_along)

    @staticmethod
    def forward(ctx, x, d, fn):
        values, indices = fn()
        ctx.save_for_backward(indices)
        ctx.meta = (d, x.shape, x.dim())
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, g, _gi):
        (indices,) = ctx.saved_tensors
        d, shape, nd = ctx.meta
        if g.dim() < nd:        # keepdim=False
            g = S.unsqueeze(g, d)
            indices = S.unsqueeze(indices, d)
        return scatter_add_along(g, indices, d, shape), None, None


_NODES = {n: type("_" + n, (_Pick,), {"_backward_name": n}) for n in
          ("SortBackward0", "TopkBackward0", "KthvalueBackward0", "MedianBackward1", "NanmedianBackward1",
           "ModeBackward0")}


def _picked(node, x, d, fn):
    v, i = _NODES[node].apply(x, d, fn)
    return v, i


@define("sort", "other", out=True, doc="sort(input, dim=-1, descending=False, stable=False) -> (values, indices)\n\n"
        "The elements along dim in order, and where each came from. Always stable (ties keep their "
        "order); NaN sorts as the largest value.")
def sort(input, dim=-1, descending=False, stable=False, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    d = _dim(input, dim)
    return _RT["sort"](*_picked("SortBackward0", input, d, lambda: raw_sort(input, d, descending)))


@define("argsort", "other", out=True, doc="argsort(input, dim=-1, descending=False, stable=False) -> Tensor\n\n"
        "The indices that sort input along dim (stable).")
def argsort(input, dim=-1, descending=False, stable=False, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    return raw_sort(input, _dim(input, dim), descending)[1]


@define("msort", "other", out=True, doc="msort(input) -> Tensor\n\nsort(input, dim=0).values.")
def msort(input):
    return sort(input, 0).values


def _narrow(t, d, start, length):
    if t.dim() == 0:
        return t
    return t._view(t.shape[:d] + (length,) + t.shape[d + 1:], t._stride, t._offset + start * t._stride[d])


@define("topk", "other", out=True, doc="topk(input, k, dim=-1, largest=True, sorted=True) -> (values, indices)\n\n"
        "The k largest (or smallest) elements along dim, in order (NaN counts as the largest).")
def topk(input, k, dim=-1, largest=True, sorted=True, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    d = _dim(input, dim)
    n = input.shape[d] if input.dim() else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")

    def fn():
        v, i = raw_sort(input, d, largest)
        return contiguous_operand(_narrow(v, d, 0, k)), contiguous_operand(_narrow(i, d, 0, k))
    return _RT["topk"](*_picked("TopkBackward0", input, d, fn))


def _select(t, d, pos, keepdim):
    """t's element at position pos (an int, or an int64 tensor shaped like t without dim d,
    keepdim'ed) along d."""
    if isinstance(pos, int):
        r = contiguous_operand(_narrow(t, d, pos, 1)) if t.dim() else t
    else:
        n = t.shape[d]
        iota = S.reshape(arange(n, dtype=D.int64, device=t.device), tuple(n if i == d else 1 for i in range(t.dim())))
        hit = E.run("eq", iota, pos)
        picked = E.run("where", hit, t, 0 if not t.dtype.is_floating_point else 0.0)
        r = raw_reduce("sum", picked, [d], True, t.dtype if t.dtype.is_floating_point else D.int64)
        if r.dtype is not t.dtype:
            r = r.to(t.dtype)
    if not keepdim and t.dim():
        r = S.squeeze(r, d)
    return r


@define("kthvalue", "other", out=True, doc="kthvalue(input, k, dim=-1, keepdim=False) -> (values, indices)\n\n"
        "The k-th smallest element along dim (k from 1) and its index.")
def kthvalue(input, k, dim=-1, keepdim=False, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    d = _dim(input, dim)
    n = input.shape[d] if input.dim() else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")

    def fn():
        v, i = raw_sort(input, d, False)
        return _select(v, d, k - 1, keepdim), _select(i, d, k - 1, keepdim)
    return _RT["kthvalue"](*_picked("KthvalueBackward0", input, d, fn))


def _median_pos(v, d, ignore_nan):
    """Per row of sorted v, the position of the (nan)median: the lower median of the non-NaN
    values; for median a row with NaN gives its first NaN, for nanmedian an all-NaN row the
    lower middle."""
    n = v.shape[d]
    if not v.dtype.is_floating_point:
        return (n - 1) // 2
    m = raw_reduce("sum", E.run("logical_not", E.run("isnan", v)), [d], True, D.int64)
    low = E.run("div_floor", E.run("sub", m, 1), 2)
    if ignore_nan:
        return E.run("where", E.run("eq", m, 0), (n - 1) // 2, low)
    return E.run("where", E.run("lt", m, n), m, low)


def _pick_sorted(name, node, input, dim, keepdim, pick):
    """(values, indices) of the element each row along dim picks once sorted: pick(sorted
    values, d) gives its position (median, nanmedian and mode differ only in it)."""
    d = _dim(input, dim)
    if input.dim() and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")

    def fn():
        v, i = raw_sort(input, d, False)
        if input.dim() == 0:
            return v, i
        pos = pick(v, d)
        return _select(v, d, pos, keepdim), _select(i, d, pos, keepdim)
    return _RT[name](*_picked(node, input, d, fn))


def _median_dim(name, input, dim, keepdim, ignore_nan):
    return _pick_sorted(name, "NanmedianBackward1" if ignore_nan else "MedianBackward1", input, dim, keepdim,
                        lambda v, d: _median_pos(v, d, ignore_nan))


class _MedianAll(Function):
    """median()/nanmedian() of all elements; the gradient is shared among the elements equal to
    the result (NaN ones where it is NaN), as PyTorch's."""
    _double_backward = True

    @staticmethod
    def forward(ctx, x, ignore_nan):
        flat = S.reshape(contiguous_operand(x), (x.numel(),))
        if x.numel() == 0:
            r = empty((), x.dtype, x.device)
            E.fill(r, float("nan"))
        else:
            v, _ = raw_sort(flat, 0, False)
            r = S.reshape(_select(v, 0, _median_pos(v, 0, ignore_nan), True), ())
        ctx.save_for_backward(x, r)
        return r

    @staticmethod
    def backward(ctx, g):
        x, r = ctx.saved_tensors
        hit = E.run("logical_or", E.run("eq", x, r), E.run("logical_and", E.run("isnan", x), E.run("isnan", r)))
        hitf = hit.to(g.dtype)
        count = raw_reduce("sum", hitf, list(range(x.dim())), False, g.dtype)
        return K.run("div", K.run("mul", hitf, g), count), None   # (recorded under create_graph)


_MEDIAN_ALL = {False: type("_MedianAll0", (_MedianAll,), {"_backward_name": "MedianBackward0"}),
               True: type("_NanmedianAll0", (_MedianAll,), {"_backward_name": "NanmedianBackward0"})}


def _median(name, input, dim, keepdim, axis, keepdims, ignore_nan):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    if dim is None:
        return _MEDIAN_ALL[ignore_nan].apply(input, ignore_nan)
    return _median_dim(name, input, dim, keepdim, ignore_nan)


@define("median", "reduction", out=True, doc="median(input) -> Tensor; median(input, dim, keepdim=False) -> (values, indices)\n\n"
        "The lower median (of all elements, or along dim with its index); NaN if there is any NaN.")
def median(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return _median("median", input, dim, keepdim, axis, keepdims, False)


@define("nanmedian", "reduction", out=True, doc="nanmedian(input) -> Tensor; nanmedian(input, dim, keepdim=False) -> (values, indices)\n\n"
        "median ignoring NaN (NaN only where all are NaN).")
def nanmedian(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return _median("nanmedian", input, dim, keepdim, axis, keepdims, True)


@define("mode", "reduction", out=True, doc="mode(input, dim=-1, keepdim=False) -> (values, indices)\n\n"
        "The most frequent value along dim (the smallest among equally frequent ones) and the last "
        "index where it occurs.")
def mode(input, dim=-1, keepdim=False, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _pick_sorted("mode", "ModeBackward0", input, dim, keepdim, _mode_pos)


def _mode_pos(v, d):
    """The end of the first longest run of equal values in each sorted row of v along d."""
    n = v.shape[d]
    # run lengths of equal values in the sorted rows: position - start of its run + 1
    iota = S.reshape(arange(n, dtype=D.int64, device=v.device), tuple(n if k == d else 1 for k in range(v.dim())))
    prev = _narrow(v, d, 0, n - 1)
    starts = E.run("ne", _narrow(v, d, 1, n - 1), prev) if n > 1 else None
    first = empty(v.shape, D.bool, v.device)
    E.fill(_narrow(first, d, 0, 1), True)
    if n > 1:
        E.copy_into(_narrow(first, d, 1, n - 1), starts)
    start = raw_scan("max", E.run("where", first, iota, 0), d, D.int64, "i")[0]
    run = E.run("sub", iota, start)
    return raw_reduce("argmax", run, [d], True, D.int64)
