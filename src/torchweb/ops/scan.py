"""Scans: cumsum, cumprod, cummax, cummin, logcumsumexp, each with its own backward.

The backend scans the last dim of a view (the scan dim moved last, no copy): ops/scan_lowering.py.
"""

from collections import namedtuple

from .. import _dtype as D
from .._size import contiguous_strides, required_dim, wrap_dim
from ..autograd.function import Function
from ..backends import backend_for
from . import elementwise as E
from .operands import compute_class, empty
from .elementwise import contiguous_operand, K
from ..autograd import grad_mode
from .adjoint import linear_backward
from .registry import define
from .scan_lowering import moved, raw_scan
from .index_ops import gather

cummax_t = namedtuple("cummax", ["values", "indices"])
cummin_t = namedtuple("cummin", ["values", "indices"])


def _dim(x, dim):
    return wrap_dim(dim, max(x.dim(), 1))


def _rev_cumsum(g, d):
    return raw_scan("sum", g, d, g.dtype, "f", reverse=True)


def _rev_cumsum_recorded(g, d):
    return linear_backward(g, lambda g: _rev_cumsum(g, d), lambda gg: cumsum(gg, d), "CumsumBackwardBackward0")


class _Cumsum(Function):
    _backward_name = "CumsumBackward0"
    _double_backward = True   # (ops/adjoint.py)

    @staticmethod
    def forward(ctx, x, d, out_dtype):
        ctx.meta = (d, x.dtype)
        return raw_scan("sum", x, d, out_dtype, compute_class(out_dtype))

    @staticmethod
    def backward(ctx, g):
        d, in_dtype = ctx.meta
        # the reversed cumsum's adjoint is the cumsum
        r = _rev_cumsum_recorded(g, d)
        return (r if r.dtype is in_dtype else r.to(in_dtype)), None, None


class _Cumprod(Function):
    _backward_name = "CumprodBackward0"
    _double_backward = True   # (create_graph: the same formula recorded, K.run)

    @staticmethod
    def forward(ctx, x, d, out_dtype):
        out = raw_scan("prod", x, d, out_dtype, compute_class(out_dtype))
        ctx.save_for_backward(x, out)
        ctx.meta = d
        return out

    @staticmethod
    def backward(ctx, g):
        # PyTorch's formula, zeros included: before a row's first zero, reversed
        # cumsum(g * out) / x; at the first zero, the reversed cumsum of g times the
        # products with that zero left out; after it, nothing.
        x, out = ctx.saved_tensors
        d = ctx.meta
        xs = x if x.dtype is g.dtype else x.to(g.dtype)
        outs = out if out.dtype is g.dtype else out.to(g.dtype)
        zero = E.run("eq", xs, 0.0)
        nz = raw_scan("sum", zero, d, D.int64, "i")
        before = E.run("eq", nz, 0)
        first = E.run("logical_and", zero, E.run("eq", nz, 1))
        # (K.run: raw kernels, or recorded ops while a create_graph backward runs)
        recording = grad_mode._state["enabled"]
        rev = _rev_cumsum_recorded if recording else _rev_cumsum
        part1 = K.run("where", before, K.run("div", rev(K.run("mul", g, outs), d),
                                             K.run("where", before, xs, 1.0)), 0.0)
        kept = K.run("where", first, 1.0, xs)
        skip = cumprod(kept, d) if recording else raw_scan("prod", kept, d, g.dtype, "f")
        part2 = K.run("where", first, rev(K.run("mul", g, skip), d), 0.0)
        r = K.run("add", part1, part2)
        return (r if r.dtype is x.dtype else r.to(x.dtype)), None, None


def _scan_dtype(x, dtype):
    if dtype is not None:
        return D.as_dtype(dtype)
    return D.int64 if not x.dtype.is_floating_point else x.dtype


def _sum_prod(fn, x, dim, dtype):
    d = _dim(x, dim)
    out_dtype = _scan_dtype(x, dtype)
    if dtype is not None and x.dtype is not out_dtype:
        x = x.to(out_dtype)      # PyTorch casts the input first
    return fn.apply(x, d, out_dtype)


@define("cumsum", "reduction", out=True, inplace=lambda x, dim=None, dtype=None, *, axis=None: _inplace(x, cumsum(x, dim, dtype=dtype, axis=axis)),
        doc="cumsum(input, dim, *, dtype=None) -> Tensor\n\nThe cumulative sum along dim. Integers and "
            "bool give int64 (exact; on webgpu past int32 raises Int64RangeError).")
def cumsum(input, dim=None, *, dtype=None, axis=None):
    dim = required_dim("cumsum", dim, axis)
    return _sum_prod(_Cumsum, input, dim, dtype)


@define("cumprod", "reduction", out=True, inplace=lambda x, dim=None, dtype=None, *, axis=None: _inplace(x, cumprod(x, dim, dtype=dtype, axis=axis)),
        doc="cumprod(input, dim, *, dtype=None) -> Tensor\n\nThe cumulative product along dim. Integers "
            "and bool give int64 (exact; on webgpu past int32 raises Int64RangeError).")
def cumprod(input, dim=None, *, dtype=None, axis=None):
    dim = required_dim("cumprod", dim, axis)
    return _sum_prod(_Cumprod, input, dim, dtype)


def _inplace(x, r):
    return x.copy_(r)


class _CumMaxMin(Function):
    _double_backward = True   # (scatter_add_along)
    @staticmethod
    def forward(ctx, x, kind, d):
        values, indices = raw_scan(kind, x, d, x.dtype, compute_class(x.dtype))
        ctx.save_for_backward(indices)
        ctx.meta = (d, x.shape)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, g, _gi):
        (indices,) = ctx.saved_tensors
        d, shape = ctx.meta
        return scatter_add_along(g, indices, d, shape), None, None


def scatter_add_along(g, indices, d, shape):
    """zeros(shape).scatter_add(d, indices, g): the gradient of an op that picked elements
    (cummax, sort, topk, ...) sent back to where they came from. g and indices have the same
    shape (shape with dim d of any length)."""
    if g.dim() == 0:
        return g.clone() if g.dtype is D.float32 else g.to(g.dtype)
    # its adjoint (create_graph): the values at the indices again
    return linear_backward(g, lambda g: _scatter_add_along(g, indices, d, shape),
                           lambda gg: gather(gg, d, indices), "ScatterAddAlongBackward0")


def _scatter_add_along(g, indices, d, shape):
    be = backend_for(g.device.type)
    gm, im = moved(g, d), moved(indices, d)
    K = gm.shape[-1]
    N = shape[d]
    rows = gm.numel() // K if K else 0
    order = [i for i in range(len(shape)) if i != d] + [d]
    acc = empty((rows, N), D.float32, g.device)
    E.fill(acc, 0.0)
    if rows and K:
        ic = contiguous_operand(im)
        ic = ic._view((rows, K), (K, 1), ic._offset)
        gc = contiguous_operand(gm)
        gc = gc._view((rows, K), (K, 1), gc._offset)
        be.sort_scatter_add(acc, ic, gc)
    moved_shape = tuple(shape[i] for i in order)
    res = acc._view(moved_shape, contiguous_strides(moved_shape), 0)
    inv = [order.index(i) for i in range(len(shape))]
    res = res._view(tuple(moved_shape[i] for i in inv), tuple(res._stride[i] for i in inv), 0)
    out = empty(shape, g.dtype, g.device)
    E.copy_into(out, res)
    return out


_CUM_NODE = {"max": type("_Cummax", (_CumMaxMin,), {"_backward_name": "CummaxBackward0"}),
             "min": type("_Cummin", (_CumMaxMin,), {"_backward_name": "CumminBackward0"})}


def _cummaxmin(kind, x, dim):
    d = _dim(x, dim)
    v, i = _CUM_NODE[kind].apply(x, kind, d)
    return (cummax_t if kind == "max" else cummin_t)(v, i)


@define("cummax", "reduction", out=True, doc="cummax(input, dim) -> (values, indices)\n\nThe running maximum along "
        "dim and where it was found: NaN propagates, ties take the latest index.")
def cummax(input, dim=None, *, axis=None):
    dim = required_dim("cummax", dim, axis)
    return _cummaxmin("max", input, dim)


@define("cummin", "reduction", out=True, doc="cummin(input, dim) -> (values, indices)\n\nThe running minimum along "
        "dim and where it was found: NaN propagates, ties take the latest index.")
def cummin(input, dim=None, *, axis=None):
    dim = required_dim("cummin", dim, axis)
    return _cummaxmin("min", input, dim)


class _Logcumsumexp(Function):
    _backward_name = "LogcumsumexpBackward0"

    @staticmethod
    def forward(ctx, x, d):
        out = raw_scan("logsumexp", x, d, x.dtype, "f")
        ctx.save_for_backward(x, out)
        ctx.meta = d
        return out

    @staticmethod
    def backward(ctx, g):
        # PyTorch's (from TensorFlow): the positive and negative parts of g in log space,
        # each a reversed logcumsumexp, so no exp overflows
        x, out = ctx.saved_tensors
        d = ctx.meta
        lg = E.run("log", E.run("abs", g))
        ninf = float("-inf")
        pos = E.run("where", E.run("gt", g, 0.0), lg, ninf)
        neg = E.run("where", E.run("lt", g, 0.0), lg, ninf)
        rp = raw_scan("logsumexp", E.run("sub", pos, out), d, g.dtype, "f", reverse=True)
        rn = raw_scan("logsumexp", E.run("sub", neg, out), d, g.dtype, "f", reverse=True)
        return E.run("sub", E.run("exp", E.run("add", rp, x)), E.run("exp", E.run("add", rn, x))), None


@define("logcumsumexp", "reduction", out=True, doc="logcumsumexp(input, dim) -> Tensor\n\nlog(cumsum(exp(input), "
        "dim)), computed stably (floating dtypes).")
def logcumsumexp(input, dim=None, *, axis=None):
    dim = required_dim("logcumsumexp", dim, axis)
    d = _dim(input, dim)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{input.dtype.word}\'')
    return _Logcumsumexp.apply(input, d)
