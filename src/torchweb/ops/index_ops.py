"""Gather and scatter ops: gather, scatter (src, value, reduce=), scatter_add, scatter_reduce,
index_select, take, take_along_dim, put, index_add, index_copy, index_fill, masked_fill,
masked_select, masked_scatter, nonzero, argwhere; each with PyTorch's checks, its backward
(PyTorch's formulas, derivatives.yaml / FunctionsManual.cpp) and its in-place form.

All of them lower to two backend primitives (ops/lowering.py index_gather / index_scatter):
a walk over an iteration space where some dims of the indexed tensor come from index tensors.
Indices in tensors are checked by the backend: at once on the cpu device, and on the GPU by the
kernel, raised with the op's exception type at the next readback (backends/webgpu/errors.py).
nonzero and masked_select need their output's size: one readback of a running count (a scan),
as PyTorch synchronizes too.
"""

from .. import _dtype as D
from .._size import broadcast_shapes, required_dim, wrap_dim
from ..autograd.function import Function
from ..backends import backend_for
from . import elementwise as E
from . import lowering
from . import shape as S
from .operands import common_device, empty, expand_to, is_tensor
from .adjoint import linear_backward
from .inplace import apply_function_inplace
from .registry import define
from .elementwise import call
from .scan_lowering import raw_scan

OOB = "index {index} is out of bounds for dimension {dim} with size {size}"
GATHER = ("gather", RuntimeError, OOB)
SCATTER = ("scatter", RuntimeError, OOB)
INDEX_SELECT = ("index_select", IndexError, "index out of range in self")
TAKE = ("take", IndexError, "out of range: tried to access index {index} on a tensor of {numel} elements.")
PUT = ("put_", IndexError, "out of range: tried to access index {index} on a tensor of {numel} elements.")
INDEX_ADD = ("index_add", RuntimeError, OOB)
INDEX_COPY = ("index_copy", IndexError, "index_copy_(): " + OOB)
INDEX_FILL = ("index_fill", IndexError, OOB)
_INT = (D.int32, D.int64)


# -- raw pieces (no autograd) --------------------------------------------------------------------
def _atleast1(t):
    return t if t.dim() else t._view((1,), (1,), t._offset)


def _zeros(shape, dtype, device):
    return E.fill(empty(shape, dtype, device), 0)


def _along(x, d, index):
    """(walk, index expanded) for an index along dim d of a tensor shaped like x, the other dims
    walked one to one (gather/scatter: index has x's rank)."""
    return [j if j != d else None for j in range(x.dim())], [(index, d, False)]


def raw_gather(x, d, index, wrap=False, check=GATHER):
    """out[p] = x[p with dim d replaced by index[p]] (index has x's rank, or both are 0-d)."""
    x1, i1 = _atleast1(x), _atleast1(index)
    out = empty(i1.shape, x.dtype, x.device)
    walk = [j if j != d else None for j in range(x1.dim())]
    lowering.index_gather(out, x1, walk, [(i1, d, wrap)], check)
    return out if index.dim() else out._view((), (), out._offset)


def raw_scatter(dst, d, index, src, reduce=None, check=SCATTER):
    """dst[p with dim d replaced by index[p]] (op)= src[p], in place (src a number or a tensor
    at least index's size in every dim)."""
    d1, i1 = _atleast1(dst), _atleast1(index)
    if is_tensor(src):
        s1 = _atleast1(src)
        src = s1._view(i1.shape, s1._stride, s1._offset)
    walk = [j if j != d else None for j in range(d1.dim())]
    lowering.index_scatter(d1, src, walk, [(i1, d, False)], reduce, check)
    return dst


def _select_plan(x, d, index):
    """(walk, indices, shape) to pick index (a vector) along dim d of x: index_select's space."""
    x1 = _atleast1(x)
    i1 = _atleast1(index)
    shape = list(x1.shape)
    shape[d] = i1.shape[0]
    strides = [0] * len(shape)
    strides[d] = i1._stride[0]
    idx = i1._view(tuple(shape), tuple(strides), i1._offset)
    return [j if j != d else None for j in range(len(shape))], [(idx, d, False)], tuple(shape)


def raw_index_select(x, d, index, check=INDEX_SELECT, wrap=False):
    walk, indices, shape = _select_plan(x, d, index)
    indices = [(i, dd, wrap) for i, dd, _ in indices]
    out = empty(shape, x.dtype, x.device)
    lowering.index_gather(out, _atleast1(x), walk, indices, check)
    return out if x.dim() else out._view((index.numel(),) if index.dim() else (), (1,) if index.dim() else (), 0)


def raw_index_scatter(dst, d, index, src, reduce, check, wrap=False):
    """dst's slices index[k] along d (op)= src's slice k (src: dst's shape with index.numel()
    along d, or a number)."""
    walk, indices, shape = _select_plan(dst, d, index)
    indices = [(i, dd, wrap) for i, dd, _ in indices]
    if is_tensor(src):
        src = expand_to(_atleast1(src), shape) if src.dim() else expand_to(src, shape)
    lowering.index_scatter(_atleast1(dst), src, walk, indices, reduce, check)
    return dst


def _flat(t):
    """A flat view of contiguous t."""
    return t._view((t.numel(),), (1,), t._offset)


def _run(fn, inplace, x, *args):
    """fn's out-of-place form, or its in-place one through ops/inplace.py's checks."""
    if inplace:
        return apply_function_inplace(fn, x, *args, True)
    return fn.apply(x, *args, False)


def _target(x, inplace):
    """What a forward writes: x itself (in place) or a contiguous copy."""
    return x if inplace else E.copy_of(x)


def _done(out, inplace):
    if inplace:
        out._bump_version()
    return out


# -- argument checks ---------------------------------------------------------------------------
def _index_dtype(name, index, allowed=_INT, exc=RuntimeError, msg=None):
    if not is_tensor(index):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype not in allowed:
        raise exc(msg or f"{name}(): Expected dtype int32/int64 for index")


def _gather_dims(name, x, d, index, src=None):
    """PyTorch's shape rules for gather/scatter: same rank; index no larger than self apart
    from dim d (and no larger than src anywhere)."""
    def rank(t):
        return max(t.dim(), 1)
    if rank(index) != rank(x):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           + ("input" if src is None else "self") + " tensor")
    if src is not None and rank(index) != rank(src):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if index.numel() == 0:
        return
    ishape, xshape = index.shape or (1,), x.shape or (1,)
    sshape = (src.shape or (1,)) if src is not None else None
    for k in range(len(ishape)):
        too_big = k != d and ishape[k] > xshape[k]
        if src is None and too_big:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be no "
                               f"larger than self {list(x.shape)} apart from dimension {d}")
        if src is not None and (too_big or ishape[k] > sshape[k]):
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(x.shape)} apart "
                               f"from dimension {d} and to be no larger size than src {list(src.shape)}")


def _same_dtype(name, x, src):
    if src.dtype is not x.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")


# -- gather ---------------------------------------------------------------------------------------
class _Gather(Function):
    _backward_name = "GatherBackward0"
    _double_backward = True   # (ops/adjoint.py)

    @staticmethod
    def forward(ctx, x, d, index, wrap):
        ctx.meta = (x.shape, d, index, wrap)
        return raw_gather(x, d, index, wrap, GATHER)

    @staticmethod
    def backward(ctx, g):
        shape, d, index, wrap = ctx.meta
        idx = index if not wrap else _wrapped(index, shape[d] if shape else 1)
        return linear_backward(g, lambda g: raw_scatter(_zeros(shape, g.dtype, g.device), d, idx, g, "sum", GATHER),
                               lambda gg: _Gather.apply(gg, d, index, wrap), "GatherBackwardBackward0"), None, None, None


def _wrapped(index, size):
    """index with negative entries counted from the end (take_along_dim's rule)."""
    return E.run("where", E.run("lt", index, 0), E.run("add", index, size), index)


@define("gather", "indexing", doc="gather(input, dim, index, *, sparse_grad=False) -> Tensor\n\n"
        "out[i][j][k] = input[index[i][j][k]][j][k] (for dim=0): values picked along dim by index, "
        "which has input's rank and is no larger apart from dim. Indices must be in [0, size).")
def gather(input, dim=None, index=None, *, sparse_grad=False, out=None, axis=None):
    dim = required_dim("gather", dim, axis)
    _index_dtype("gather", index)
    common_device(input, index, what="gather")
    d = wrap_dim(dim, input.dim())
    _gather_dims("gather", input, d, index)
    r = _Gather.apply(input, d, index, False)
    if out is not None:
        out.copy_(r)
        return out
    return r


@define("take_along_dim", "indexing", out=True, doc="take_along_dim(input, indices, dim=None) -> Tensor\n\n"
        "gather along dim after broadcasting input and indices (apart from dim); dim=None: over "
        "the flattened input. Negative indices count from the end.")
def take_along_dim(input, indices, dim=None, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if not is_tensor(indices) or indices.dtype is not D.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype.word if is_tensor(indices) else type(indices).__name__}")
    common_device(input, indices, what="take_along_dim")
    if dim is None:
        return _Gather.apply(S.reshape(input, -1), 0, S.reshape(indices, -1), False)
    if input.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {input.dim()} dimensions for input, and {indices.dim()} "
                           "dimensions for indices")
    d = wrap_dim(dim, input.dim())
    if input.dim() == 0:
        return _Gather.apply(input, 0, indices, True)
    xs = list(input.shape)
    xs[d] = indices.shape[d]
    ishape = broadcast_shapes(tuple(xs), indices.shape)
    ts = list(indices.shape)
    ts[d] = input.shape[d]
    xshape = broadcast_shapes(tuple(ts), input.shape)
    return _Gather.apply(S.expand(input, xshape), d, S.expand(indices, ishape), True)


# -- scatter ----------------------------------------------------------------------------------------
class _Scatter(Function):
    """scatter(src or value), no reduce."""
    _double_backward = True   # (create_graph: gather / scatter, recorded)

    @staticmethod
    def forward(ctx, x, d, index, src, inplace):
        ctx.meta = (d, index, is_tensor(src))
        out = _target(x, inplace)
        raw_scatter(out, d, index, src if is_tensor(src) else _scalar(src, x.dtype), None, SCATTER)
        return _done(out, inplace)

    @staticmethod
    def backward(ctx, g):
        d, index, has_src = ctx.meta
        if g.requires_grad:   # create_graph: recorded
            return (scatter(g, d, index, value=0.0), None, None,
                    (gather(g, d, index) if has_src else None), None)
        gself = raw_scatter(E.copy_of(g), d, index, 0)
        return gself, None, None, (raw_gather(g, d, index) if has_src else None), None


class _ScatterValue(_Scatter):
    _backward_name = "ScatterBackward1"


_Scatter._backward_name = "ScatterBackward0"


class _ScatterReduceLegacy(Function):
    """scatter(..., reduce='add'|'multiply'): PyTorch has no derivative for it."""

    _backward_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, x, d, index, src, reduce, inplace):
        out = _target(x, inplace)
        raw_scatter(out, d, index, src if is_tensor(src) else _scalar(src, x.dtype), reduce, SCATTER)
        return _done(out, inplace)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::scatter is not implemented")


def _scalar(v, dtype):
    """A Python number as dtype holds it (PyTorch converts a scatter value to self's type)."""
    if is_tensor(v):
        v = v.item()
    if dtype is D.bool:
        return bool(v)
    if not dtype.is_floating_point:
        v = int(v)
        return v & 0xFF if dtype is D.uint8 else v
    return float(v)


def _scatter(x, dim, index, src=None, value=None, reduce=None, inplace=False):
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    src = src if src is not None else value
    _index_dtype("scatter", index)
    common_device(x, index, src if is_tensor(src) else None, what="scatter")
    d = wrap_dim(dim, x.dim())
    if is_tensor(src):
        _same_dtype("scatter", x, src)
        _gather_dims("scatter", x, d, index, src)
    else:
        _gather_dims("scatter", x, d, index)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        return _run(_ScatterReduceLegacy, inplace, x, d, index, src, "sum" if reduce == "add" else "prod")
    return _run(_Scatter if is_tensor(src) else _ScatterValue, inplace, x, d, index, src)


def scatter_(x, dim=None, index=None, src=None, value=None, *, reduce=None, axis=None):
    dim = required_dim("scatter_", dim, axis)
    return _scatter(x, dim, index, src, value, reduce, inplace=True)


@define("scatter", "indexing", out=True, inplace=scatter_, doc="scatter(input, dim, index, src, *, reduce=None) -> Tensor\n\n"
        "A copy of input with src's values (or one number) written at the positions index gives along "
        "dim (the inverse of gather); reduce='add' or 'multiply' combines instead (no gradient, as "
        "PyTorch). With duplicate indices and no reduce, which value wins is not defined.")
def scatter(input, dim=None, index=None, src=None, value=None, *, reduce=None, axis=None):
    dim = required_dim("scatter", dim, axis)
    return _scatter(input, dim, index, src, value, reduce)


class _ScatterAdd(Function):
    _backward_name = "ScatterAddBackward0"
    _double_backward = True   # (create_graph: gather / index_select / scatter, recorded)

    @staticmethod
    def forward(ctx, x, d, index, src, inplace):
        ctx.meta = (d, index)
        out = _target(x, inplace)
        raw_scatter(out, d, index, src, "sum", SCATTER)
        return _done(out, inplace)

    @staticmethod
    def backward(ctx, g):
        d, index = ctx.meta
        if g.requires_grad:   # create_graph: recorded
            return g, None, None, gather(g, d, index), None
        return g, None, None, raw_gather(g, d, index), None


def _scatter_add(x, dim, index, src, inplace):
    _index_dtype("scatter_add", index)
    common_device(x, index, src, what="scatter_add")
    d = wrap_dim(dim, x.dim())
    _same_dtype("scatter", x, src)
    _gather_dims("scatter_add", x, d, index, src)
    return _run(_ScatterAdd, inplace, x, d, index, src)


def scatter_add_(x, dim=None, index=None, src=None, *, axis=None):
    dim = required_dim("scatter_add_", dim, axis)
    return _scatter_add(x, dim, index, src, True)


@define("scatter_add", "indexing", out=True, inplace=scatter_add_, doc="scatter_add(input, dim, index, src) -> Tensor\n\n"
        "A copy of input with src's values added at the positions index gives along dim "
        "(duplicates add up; on the GPU in no fixed order, so float sums may differ in the last bits).")
def scatter_add(input, dim=None, index=None, src=None, *, axis=None):
    dim = required_dim("scatter_add", dim, axis)
    return _scatter_add(input, dim, index, src, False)


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def raw_scatter_reduce(out, d, index, src, reduce, include_self):
    """out (a copy of self) reduced in place with src at index along d: PyTorch's scatter_reduce."""
    if not include_self:
        # positions that receive a value start from it, not from self
        if reduce in ("amax", "amin"):
            raw_scatter(out, d, index, src, None)
        else:
            raw_scatter(out, d, index, 0 if reduce in ("sum", "mean") else 1, None)
    if reduce == "mean":
        if out.dtype is D.bool:
            raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'")
        count = E.fill(empty(out.shape, out.dtype, out.device), 1 if include_self else 0)
        raw_scatter(count, d, index, 1, "sum")
        raw_scatter(out, d, index, src, "sum")
        count = E.run("where", E.run("eq", count, 0), 1, count)
        E.run("div" if out.dtype.is_floating_point else "div_floor", out, count, out=out)
        return out
    raw_scatter(out, d, index, src, reduce)
    return out


class _ScatterReduce(Function):
    _backward_name = "ScatterReduceBackward0"

    @staticmethod
    def forward(ctx, x, d, index, src, reduce, include_self, inplace):
        needs_self = reduce in ("prod", "amax", "amin")
        self_before = (E.copy_of(x) if inplace else x) if needs_self else None
        out = _done(raw_scatter_reduce(_target(x, inplace), d, index, src, reduce, include_self), inplace)
        ctx.meta = (d, index, reduce, include_self)
        ctx.save_for_backward(self_before, src, out)
        return out

    @staticmethod
    def backward(ctx, g):
        d, index, reduce, include_self = ctx.meta
        x, src, result = ctx.saved_tensors
        if reduce == "sum":
            gself, gsrc = g, raw_gather(g, d, index)
        elif reduce == "prod":
            masked_self = E.run("where", E.run("eq", x, 0), 1.0, x)
            masked_self_result = raw_scatter_reduce(E.copy_of(masked_self), d, index, src, reduce, include_self)
            gself = g * masked_self_result / masked_self
            src_zero = E.run("eq", src, 0)
            nzeros = raw_gather(raw_scatter(_zeros(x.shape, x.dtype, x.device), d, index,
                                            src_zero.to(x.dtype), "sum"), d, index)
            single = E.run("logical_and", src_zero, E.run("eq", nzeros, 1))
            masked_src = E.run("where", single, 1.0, src)
            masked_src_result = raw_scatter_reduce(E.copy_of(x), d, index, masked_src, reduce, include_self)
            gsrc = E.run("where", single, raw_gather(g * masked_src_result, d, index),
                         raw_gather(g * result, d, index) / E.run("where", src_zero, 1.0, src))
        elif reduce == "mean":
            n = E.fill(empty(g.shape, g.dtype, g.device), 1 if include_self else 0)
            raw_scatter(n, d, index, 1, "sum")
            n = E.run("where", E.run("eq", n, 0), 1.0, n)
            gself = g / n
            gsrc = raw_gather(g, d, index) / raw_gather(n, d, index)
        else:
            value = raw_gather(result, d, index)
            self_is = E.run("eq", x, result).to(x.dtype)
            src_is = E.run("eq", src, value).to(x.dtype)
            n = raw_scatter(E.copy_of(self_is), d, index, src_is, "sum")
            dist = g / n
            gself = self_is * dist
            gsrc = src_is * raw_gather(dist, d, index)
        if not include_self:
            gself = raw_scatter(E.copy_of(gself), d, index, 0)
        return gself, None, None, gsrc, None, None, None


def _scatter_reduce(x, dim, index, src, reduce, include_self, inplace):
    _index_dtype("scatter_reduce", index)
    common_device(x, index, src, what="scatter_reduce")
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = wrap_dim(dim, x.dim())
    _same_dtype("scatter", x, src)
    _gather_dims("scatter_reduce", x, d, index, src)
    return _run(_ScatterReduce, inplace, x, d, index, src, reduce, bool(include_self))


def scatter_reduce_(x, dim=None, index=None, src=None, reduce=None, *, include_self=True, axis=None):
    dim = required_dim("scatter_reduce_", dim, axis)
    return _scatter_reduce(x, dim, index, src, reduce, include_self, True)


@define("scatter_reduce", "indexing", out=True, inplace=scatter_reduce_,
        doc="scatter_reduce(input, dim, index, src, reduce, *, include_self=True) -> Tensor\n\n"
        "A copy of input with src reduced into the positions index gives along dim: reduce 'sum', "
        "'prod', 'mean', 'amax' or 'amin'; include_self=False leaves input's values out where "
        "something is scattered. Integer means round down, as PyTorch.")
def scatter_reduce(input, dim=None, index=None, src=None, reduce=None, *, include_self=True, axis=None):
    dim = required_dim("scatter_reduce", dim, axis)
    return _scatter_reduce(input, dim, index, src, reduce, include_self, False)


# -- index_select, take, put ----------------------------------------------------------------
class _IndexSelect(Function):
    _backward_name = "IndexSelectBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, d, index):
        ctx.meta = (x.shape, d, index)
        return raw_index_select(x, d, index)

    @staticmethod
    def backward(ctx, g):
        shape, d, index = ctx.meta
        return linear_backward(
            g, lambda g: raw_index_scatter(_zeros(shape, g.dtype, g.device), d, index, g, "sum", INDEX_SELECT),
            lambda gg: _IndexSelect.apply(gg, d, index), "IndexSelectBackwardBackward0"), None, None


@define("index_select", "indexing", doc="index_select(input, dim, index) -> Tensor\n\n"
        "The slices of input along dim at the positions of index (a vector of int32/int64 in "
        "[0, size)).")
def index_select(input, dim=None, index=None, *, out=None, axis=None):
    dim = required_dim("index_select", dim, axis)
    _index_dtype("index_select", index, exc=RuntimeError,
                 msg="index_select(): Expected dtype int32 or int64 for index")
    common_device(input, index, what="index_select")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, input.dim())
    if input.dim() == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    r = _IndexSelect.apply(input, d, index)
    if out is not None:
        out.copy_(r)
        return out
    return r


def _flat_of(x):
    """A flat view of x, through a contiguous copy where x is not contiguous (no autograd)."""
    return _flat(x if x.is_contiguous() else E.copy_of(x))


class _Take(Function):
    _backward_name = "TakeBackward0"
    _double_backward = True   # (ops/adjoint.py)

    @staticmethod
    def forward(ctx, x, index):
        ctx.meta = (x.shape, index)
        out = empty(index.shape, x.dtype, x.device)
        lowering.index_gather(out, _flat_of(x), [None] * index.dim(), [(index, 0, True)], TAKE)
        return out

    @staticmethod
    def backward(ctx, g):
        shape, index = ctx.meta

        def scatter(g):
            z = _zeros(shape, g.dtype, g.device)
            lowering.index_scatter(_flat(z), g, [None] * index.dim(), [(index, 0, True)], "sum", TAKE)
            return z
        return linear_backward(g, scatter, lambda gg: _Take.apply(gg, index), "TakeBackwardBackward0"), None


@define("take", "indexing", out=True, doc="take(input, index) -> Tensor\n\n"
        "The elements of the flattened input at index (int64; negatives count from the end), in "
        "index's shape.")
def take(input, index):
    if not is_tensor(index) or index.dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype.word}")
    common_device(input, index, what="take")
    return _Take.apply(input, index)


class _Put(Function):
    _backward_name = "PutBackward0"

    @staticmethod
    def forward(ctx, x, index, source, accumulate, inplace):
        ctx.meta = (index, source.shape, accumulate)
        out = x if inplace and x.is_contiguous() else E.copy_of(x)
        lowering.index_scatter(_flat(out), S.reshape(source, index.shape) if index.dim() else S.reshape(source, ()),
                               [None] * index.dim(), [(index, 0, True)], "sum" if accumulate else None, PUT)
        if inplace and out is not x:
            E.copy_into(x, out)
            out = x
        return _done(out, inplace)

    @staticmethod
    def backward(ctx, g):
        index, sshape, accumulate = ctx.meta
        gself = g
        if not accumulate:
            gself = E.copy_of(g)
            lowering.index_scatter(_flat(gself), 0.0, [None] * index.dim(), [(index, 0, True)], None, PUT)
        gsrc = empty(index.shape, g.dtype, g.device)
        lowering.index_gather(gsrc, _flat_of(g), [None] * index.dim(), [(index, 0, True)], PUT)
        return gself, None, S.reshape(gsrc, sshape), None, None


def _put(x, index, source, accumulate, inplace):
    if not is_tensor(index) or index.dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype.word}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {x.dtype.word} and source.dtype = {source.dtype.word}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    common_device(x, index, source, what="put_")
    return _run(_Put, inplace, x, index, source, bool(accumulate))


def put_(x, index, source, accumulate=False):
    return _put(x, index, source, accumulate, True)


@define("put", "indexing", inplace=put_, doc="put(input, index, source, accumulate=False) -> Tensor\n\n"
        "A copy of input with source written (or added, accumulate=True) at index into the "
        "flattened input; negative indices count from the end.")
def put(input, index, source, accumulate=False):
    return _put(input, index, source, accumulate, False)


# -- index_add, index_copy, index_fill -----------------------------------------------------
def _index_args(name, x, d, index, source=None):
    if index.dim() > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if source is not None:
        if source.dim() != x.dim() and not (max(source.dim(), 1) == max(x.dim(), 1)):
            raise IndexError(f"{name}(): When source and destination are not scalars, their dimensionality must match. "
                             f"Source dimensionality ({source.dim()}), destination dimensionality ({x.dim()})")
        ns = (source.shape or (1,))[d]
        if index.numel() != ns and name == "index_copy_":
            raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                             f"source.size(dim) ({ns})")
        if index.numel() != ns:
            raise RuntimeError(f"{name}(): Number of indices ({index.numel()}) should be equal to "
                               f"source.size(dim): ({ns}), for dim: {d}")
        for k in range(max(x.dim(), 1)):
            if k != d and (source.shape or (1,))[k] != (x.shape or (1,))[k]:
                raise RuntimeError(f"{name}(): Source/destination tensor must have same slice shapes. Destination "
                                   f"slice shape: {list(x.shape)} at dimension {d} and source slice shape: "
                                   f"{list(source.shape)} at dimension {d}.")


class _IndexAdd(Function):
    _backward_name = "IndexAddBackward0"
    _double_backward = True   # (create_graph: gather / index_select / scatter, recorded)

    @staticmethod
    def forward(ctx, x, d, index, source, alpha, inplace):
        ctx.meta = (d, index, alpha, source.shape)
        out = _target(x, inplace)
        src = source if alpha == 1 else E.run("mul", source, alpha)
        raw_index_scatter(out, d, index, src, "sum", INDEX_ADD)
        return _done(out, inplace)

    @staticmethod
    def backward(ctx, g):
        d, index, alpha, sshape = ctx.meta
        gs = index_select(g, d, index) if g.requires_grad else raw_index_select(g, d, index, INDEX_ADD)
        if alpha != 1:
            gs = gs * alpha
        return g, None, None, S.reshape(gs, sshape), None, None


def _index_add(x, dim, index, source, alpha, inplace):
    _index_dtype("index_add_", index)
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_add_(): self ({x.dtype.word}) and source ({source.dtype.word}) must have the "
                           "same scalar type")
    common_device(x, index, source, what="index_add")
    d = wrap_dim(dim, x.dim())
    _index_args("index_add_", x, d, index, source)
    if not x.dtype.is_floating_point:
        alpha = int(alpha)
    return _run(_IndexAdd, inplace, x, d, index, source, alpha)


def index_add_(x, dim=None, index=None, source=None, *, alpha=1, axis=None):
    dim = required_dim("index_add_", dim, axis)
    return _index_add(x, dim, index, source, alpha, True)


@define("index_add", "indexing", out=True, inplace=index_add_, doc="index_add(input, dim, index, source, *, alpha=1) -> Tensor\n\n"
        "A copy of input with alpha * source's slices added into the slices index gives along dim.")
def index_add(input, dim=None, index=None, source=None, *, alpha=1, axis=None):
    dim = required_dim("index_add", dim, axis)
    return _index_add(input, dim, index, source, alpha, False)


class _IndexCopy(Function):
    _backward_name = "IndexCopyBackward0"
    _double_backward = True   # (create_graph: index_fill and index_select, recorded)

    @staticmethod
    def forward(ctx, x, d, index, source, inplace):
        ctx.meta = (d, index, source.shape)
        out = _target(x, inplace)
        raw_index_scatter(out, d, index, source, None, INDEX_COPY)
        return _done(out, inplace)

    @staticmethod
    def backward(ctx, g):
        d, index, sshape = ctx.meta
        if g.requires_grad:
            return (_IndexFill.apply(g, d, index, 0.0, False), None, None,
                    S.reshape(index_select(g, d, index), sshape), None)
        gself = raw_index_scatter(E.copy_of(g), d, index, 0, None, INDEX_COPY)
        return gself, None, None, S.reshape(raw_index_select(g, d, index, INDEX_COPY), sshape), None


def _index_copy(x, dim, index, source, inplace):
    if not is_tensor(index) or index.dtype is not D.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {index.dtype.word}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{x.dtype.word} and (source) {source.dtype.word}")
    common_device(x, index, source, what="index_copy")
    d = wrap_dim(dim, x.dim())
    _index_args("index_copy_", x, d, index, source)
    return _run(_IndexCopy, inplace, x, d, index, source)


def index_copy_(x, dim=None, index=None, source=None, *, axis=None):
    dim = required_dim("index_copy_", dim, axis)
    return _index_copy(x, dim, index, source, True)


@define("index_copy", "indexing", out=True, inplace=index_copy_, doc="index_copy(input, dim, index, source) -> Tensor\n\n"
        "A copy of input with source's slices written into the slices index (int64) gives along dim.")
def index_copy(input, dim=None, index=None, source=None, *, axis=None):
    dim = required_dim("index_copy", dim, axis)
    return _index_copy(input, dim, index, source, False)


class _IndexFill(Function):
    _backward_name = "IndexFillBackward0"
    _double_backward = True   # (create_graph: index_fill and index_select, recorded)

    @staticmethod
    def forward(ctx, x, d, index, value, inplace):
        ctx.meta = (d, index)
        out = _target(x, inplace)
        v = value.to(x.dtype) if is_tensor(value) else _scalar(value, x.dtype)
        raw_index_scatter(out, d, index, v, None, INDEX_FILL, wrap=True)
        return _done(out, inplace)

    @staticmethod
    def backward(ctx, g):
        d, index = ctx.meta
        if g.requires_grad:
            gv = None
            if ctx.needs_input_grad[3]:
                gv = index_select(g, d, _wrapped(index, g.shape[d] if g.dim() else 1)).sum()
            return _IndexFill.apply(g, d, index, 0.0, False), None, None, gv, None
        gself = raw_index_scatter(E.copy_of(g), d, index, 0, None, INDEX_FILL, wrap=True)
        gv = raw_index_select(g, d, index, INDEX_FILL, wrap=True).sum() if ctx.needs_input_grad[3] else None
        return gself, None, None, gv, None


class _IndexFillTensor(_IndexFill):
    _backward_name = "IndexFillBackward1"


def _index_fill(x, dim, index, value, inplace):
    if is_tensor(value) and value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    if not is_tensor(index) or index.dtype is not D.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    common_device(x, index, value if is_tensor(value) else None, what="index_fill")
    d = wrap_dim(dim, x.dim())
    _index_args("index_fill_", x, d, index)
    return _run(_IndexFillTensor if is_tensor(value) else _IndexFill, inplace, x, d, index, value)


def index_fill_(x, dim=None, index=None, value=None, *, axis=None):
    dim = required_dim("index_fill_", dim, axis)
    return _index_fill(x, dim, index, value, True)


@define("index_fill", "indexing", inplace=index_fill_, doc="index_fill(input, dim, index, value) -> Tensor\n\n"
        "A copy of input with the slices index (int64, negatives from the end) gives along dim set "
        "to value (a number or a 0-d tensor).")
def index_fill(input, dim=None, index=None, value=None, *, axis=None):
    dim = required_dim("index_fill", dim, axis)
    return _index_fill(input, dim, index, value, False)


# -- masks --------------------------------------------------------------------------------------
def mask_positions(mask):
    """(pos, count): pos the inclusive running count of mask's nonzeros in row-major order
    (contiguous int64, mask's numel), count their number: a readback, as in PyTorch."""
    n = mask.numel()
    nz = E.run("ne", mask, 0) if mask.dtype is not D.bool else mask
    flat = nz.reshape(-1) if n else _zeros((0,), D.bool, mask.device)
    pos = raw_scan("sum", flat, 0, D.int64, "i") if n else empty((0,), D.int64, mask.device)
    count = int(pos._view((), (), pos._offset + n - 1).item()) if n else 0
    return pos, count


@define("nonzero", "indexing", differentiable=False, doc="nonzero(input, *, as_tuple=False) -> Tensor or tuple of Tensors\n\n"
        "The coordinates of input's nonzero elements (NaN counts; -0.0 does not) in row-major order, "
        "as a (count, ndim) int64 tensor or one vector per dim. Reads the count back (a sync).")
def nonzero(input, *, as_tuple=False, out=None):
    pos, count = mask_positions(input)
    nd = input.dim()
    coords = empty((max(nd, 1), count), D.int64, input.device)
    if nd and count:
        backend_for(input.device.type).mask_compact(coords, input, pos, None)
    if as_tuple:
        if nd == 0:
            return (E.fill(empty((count,), D.int64, input.device), 0),)
        return tuple(coords._view((count,), (1,), coords._offset + d * count) for d in range(nd))
    r = coords._view((count, nd), (1, count), coords._offset)
    if out is not None:
        out.copy_(r)
        return out
    return r


@define("argwhere", "indexing", differentiable=False, doc="argwhere(input) -> Tensor\n\nnonzero(input): the coordinates of the "
        "nonzero elements, one row each.")
def argwhere(input):
    return nonzero(input)


class _MaskedSelect(Function):
    _backward_name = "MaskedSelectBackward0"
    _double_backward = True   # (ops/adjoint.py)

    @staticmethod
    def forward(ctx, x, mask):
        shape = broadcast_shapes(x.shape, mask.shape)
        xe, me = expand_to(x, shape), expand_to(mask, shape)
        pos, count = mask_positions(me)
        ctx.meta = (me, pos, shape)
        out = empty((count,), x.dtype, x.device)
        if count:
            backend_for(x.device.type).mask_compact(out, me, pos, xe)
        return out

    @staticmethod
    def backward(ctx, g):
        me, pos, shape = ctx.meta

        def scatter(g):
            out = _zeros(shape, g.dtype, g.device)
            backend_for(g.device.type).masked_scatter(out, me, pos, _flat_of(g), MASKED_SCATTER)
            return out
        return linear_backward(g, scatter, lambda gg: _MaskedSelect.apply(gg, me),
                               "MaskedSelectBackwardBackward0"), None


@define("masked_select", "indexing", out=True, doc="masked_select(input, mask) -> Tensor\n\n"
        "The elements of input where the bool mask is True (both broadcast), in row-major order, "
        "as a vector. Reads the count back (a sync).")
def masked_select(input, mask):
    if mask.dtype is not D.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    common_device(input, mask, what="masked_select")
    return _MaskedSelect.apply(input, mask)


MASKED_SCATTER = ("masked_scatter", RuntimeError, "Number of elements of source < number of ones in mask")


class _MaskedScatter(Function):
    _backward_name = "MaskedScatterBackward0"

    @staticmethod
    def forward(ctx, x, mask, source, inplace):
        shape = x.shape if inplace else broadcast_shapes(x.shape, mask.shape)
        me = expand_to(mask, shape)
        out = E.copy_of(expand_to(x, shape)) if not (inplace and x.is_contiguous()) else x
        pos = _running_count(me)
        backend_for(x.device.type).masked_scatter(out, me, pos, _flat_of(source), MASKED_SCATTER)
        if inplace and out is not x:
            E.copy_into(x, out)
            out = x
        ctx.meta = (me, source.shape, source.numel())
        return _done(out, inplace)

    @staticmethod
    def backward(ctx, g):
        me, sshape, n = ctx.meta
        gself = E.run("where", me, 0.0, g)
        pos, count = mask_positions(me)
        gsrc = _zeros((n,), g.dtype, g.device)
        if count:
            sel = empty((count,), g.dtype, g.device)
            backend_for(g.device.type).mask_compact(sel, me, pos, g)
            E.copy_into(gsrc._view((min(count, n),), (1,), gsrc._offset), sel._view((min(count, n),), (1,), sel._offset))
        return gself, None, S.reshape(gsrc, sshape), None


def _running_count(mask):
    """The running count of mask's nonzeros (no readback)."""
    if mask.numel() == 0:
        return empty((0,), D.int64, mask.device)
    nz = E.run("ne", mask, 0) if mask.dtype is not D.bool else mask
    return raw_scan("sum", nz.reshape(-1), 0, D.int64, "i")


def _masked_scatter(x, mask, source, inplace):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype.word}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{x.dtype.word} and {source.dtype.word}")
    common_device(x, mask, source, what="masked_scatter")
    if inplace:
        S.expand(mask, x.shape)   # PyTorch's error where mask does not broadcast to self
    return _run(_MaskedScatter, inplace, x, mask, source)


def masked_scatter_(x, mask, source):
    return _masked_scatter(x, mask, source, True)


@define("masked_scatter", "indexing", inplace=masked_scatter_, doc="masked_scatter(input, mask, source) -> Tensor\n\n"
        "A copy of input with source's leading elements written, in row-major order, where the "
        "bool mask is True (broadcast).")
def masked_scatter(input, mask, source):
    return _masked_scatter(input, mask, source, False)


class _MaskedFill(Function):
    _backward_name = "MaskedFillBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, mask, value, inplace):
        ctx.meta = (mask,)
        if inplace:
            E.run("where", mask, value, x, out=x)
            return _done(x, inplace)
        return E.run("where", mask, value, x)

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.meta
        if g.requires_grad:   # create_graph: recorded
            gv = call("where", mask, g, 0.0).sum() if ctx.needs_input_grad[2] else None
            return call("where", mask, 0.0, g), None, gv, None
        gself = E.run("where", mask, 0.0, g)
        gv = E.run("where", mask, g, 0.0).sum() if ctx.needs_input_grad[2] else None
        return gself, None, gv, None


class _MaskedFillTensor(_MaskedFill):
    _backward_name = "MaskedFillBackward1"


def _masked_fill(x, mask, value, inplace):
    if not is_tensor(mask) or mask.dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.c_name}")
    if is_tensor(value):
        if value.dim() != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.dim()} dimension(s).")
        common_device(x, mask, what="masked_fill")
        if value.device != x.device:
            value = value.to(x.device)
        value = value.to(x.dtype)
        return _run(_MaskedFillTensor, inplace, x, mask, value)
    common_device(x, mask, what="masked_fill")
    return _run(_MaskedFill, inplace, x, mask, _scalar(value, x.dtype))


def masked_fill_(x, mask, value):
    return _masked_fill(x, mask, value, True)


@define("masked_fill", "indexing", inplace=masked_fill_, doc="masked_fill(input, mask, value) -> Tensor\n\n"
        "input with value (a number or 0-d tensor, cast to input's dtype) where the bool mask "
        "(broadcast) is True.")
def masked_fill(input, mask, value):
    return _masked_fill(input, mask, value, False)
