"""Lowering: how an op's reduction, matmul or softmax becomes backend kernels. Between the ops
(above) and the backends (below), which only run the kernels they are given and never call up.

- Long reductions over few outputs go in two passes (partials per chunk, then their reduction),
  so that many workgroups share the work; int64 partials travel as 64-bit (lo, hi) pairs.
- Long inner dimensions of a matmul go in slices whose products are added.
- softmax runs as one fused kernel where the backend has one that fits the rows.

Each backend says what it wants through attributes: SPLIT_REDUCTIONS, MAX_MATMUL_K and
softmax_fits(row, rows) (backends/base.py, the backend contract).
"""

from math import prod

from .. import _dtype as D
from ..backends import backend_for
from ..backends.limits import BindingTooLarge
from ..backends.plans import ReducePass
from ..lazy import matmul_epilogue, matmul_reshaped, reduction_prologue, sum_prologue  # noqa: F401 (matmul_reshaped: for ops)
from .._size import contiguous_strides
from .operands import empty, is_tensor
from . import elementwise as E

_SPLITTABLE = {"sum": "sum", "mean": "sum", "prod": "prod", "max": "max", "min": "min",
               "all": "all", "any": "any", "argmax": "argmax", "argmin": "argmin"}
SPLIT_MIN = 65536           # a reduction this long over at most...
SPLIT_MAX_OUTPUTS = 256     # ...this many outputs is split
CHUNK = 8192                # elements per chunk (and at most 1024 chunks)
_WHOLE = {}                 # (kind, nred, acc_cls) -> its one-pass ReducePass: made once, every reduction asks


def reduce(kind, out, inp, nred, acc_cls, sizes=None):
    """Reduce inp's last nred dims into out. sizes: (elements reduced per output, outputs),
    where the caller knows them (a cached layout's)."""
    if inp._storage.pending is not None:
        reduction_prologue(inp)   # (realizes it; the fused prologue of issue #21 goes here)
    be = backend_for(out.device.type)
    if sizes is None:
        shape = inp._shape
        R = prod(tuple(shape)[len(shape) - nred:])   # (a plain tuple's slice: a Size's runs Python)
        n_out = prod(out._shape)
    else:
        R, n_out = sizes
    # (the common case first: a short reduction)
    if R < SPLIT_MIN or n_out > SPLIT_MAX_OUTPUTS or not be.SPLIT_REDUCTIONS or kind not in _SPLITTABLE:
        p = _WHOLE.get((kind, nred, acc_cls))
        if p is None:
            p = _WHOLE[kind, nred, acc_cls] = ReducePass(kind, nred, acc_cls)
        be.reduce(p, out, inp)
        return
    nchunks = min(1024, -(-R // CHUNK))
    if kind in ("argmax", "argmin"):
        # Each chunk's extreme and its global position, then the first winning chunk, whose
        # position is read back from the index partials (also the only way on lavapipe, which
        # ends a shader's loops after 65535 trips: one workgroup cannot walk 2^24 elements).
        values = empty((n_out, nchunks), D.float32 if inp.dtype in D.HALF_FLOATS else inp.dtype, out.device)
        where = empty((n_out, nchunks), D.int64, out.device)
        be.reduce(ReducePass(kind[3:], nred, acc_cls, nchunks), values, inp)
        be.reduce(ReducePass(kind, nred, acc_cls, nchunks), where, inp)
        be.reduce(ReducePass(kind, 1, acc_cls), out, values, index_from=where)
        return
    if out.dtype is D.int64 and kind in ("sum", "prod"):
        # 64-bit partials as (lo, hi) int32 pairs: a partial may pass 32 bits when the total doesn't
        pairs = empty((n_out, nchunks, 2), D.int32, out.device)
        be.reduce(ReducePass(kind, nred, acc_cls, nchunks, pairs_out=True), pairs, inp)
        be.reduce(ReducePass(kind, 1, acc_cls, pairs_in=True), out, pairs._view((n_out, nchunks), (nchunks, 1), 0))
        return
    if kind in ("all", "any"):
        pdt = D.bool
    elif kind in ("max", "min"):
        pdt = D.float32 if inp.dtype in D.HALF_FLOATS else inp.dtype
    else:
        pdt = D.float32 if acc_cls == "f" else D.int64
    partial = empty((n_out, nchunks), pdt, out.device)
    be.reduce(ReducePass(_SPLITTABLE[kind], nred, acc_cls, nchunks), partial, inp)
    be.reduce(ReducePass(kind, 1, acc_cls, divisor=R), out, partial)


def matmul(out, a, b, acc_cls, defer=True):
    """out = a @ b ([*B, M, K] @ [*B, K, N], batch dims already broadcast). A K longer than the
    backend's MAX_MATMUL_K goes in slices whose products are added (one invocation's loop stays
    short: lavapipe silently stops loops after 65535 iterations). A float32 product is deferred
    where it may be (lazy matmul_epilogue: the elementwise ops after it stored by its kernel),
    unless defer is False (nothing elementwise follows: a weight's gradient)."""
    be = backend_for(out.device.type)
    if defer and be.MATMUL_EPILOGUE:
        if matmul_epilogue(out, a, b):   # (deferred: its kernel will store the ops after it too)
            return
    elif a._storage.pending is not None or b._storage.pending is not None:
        matmul_epilogue(out, a, b, False)   # (realizes them)
    *_, K = a._shape   # (unpacked: indexing a Size runs Python code)
    limit = be.MAX_MATMUL_K
    if limit is None or K <= limit:
        try:
            be.matmul(out, a, b, acc_cls)
        except BindingTooLarge as e:
            _matmul_in_pieces(be, out, a, b, acc_cls, e.limit)
        return
    acc_dtype = D.float32 if acc_cls == "f" else out.dtype   # int64: each slice checked
    acc = out if out.dtype is acc_dtype else empty(out.shape, acc_dtype, out.device)
    part = empty(out.shape, acc_dtype, out.device)
    for k0 in range(0, K, limit):
        n = min(limit, K - k0)
        a_k = a._view(a.shape[:-1] + (n,), a._stride, a._offset + k0 * a._stride[-1])
        b_k = b._view(b.shape[:-2] + (n, b.shape[-1]), b._stride, b._offset + k0 * b._stride[-2])
        try:
            be.matmul(acc if k0 == 0 else part, a_k, b_k, acc_cls)
        except BindingTooLarge as e:
            _matmul_in_pieces(be, acc if k0 == 0 else part, a_k, b_k, acc_cls, e.limit)
        if k0:
            E.run("add", acc, part, out=acc)
    if acc is not out:
        E.copy_into(out, acc)


def _matmul_in_pieces(be, out, a, b, acc_cls, limit):
    """out = a @ b where an operand passes the backend's binding limit (limits.BindingTooLarge):
    per batch entry, in blocks of B's columns and of A's rows whose views each span less than
    the limit (the backend binds each through a window of its storage). A block of out's
    columns that is not all of them is written through a contiguous temporary."""
    *batch, M, N = out._shape
    K = a._shape[-1]
    budget = limit - 1024   # (4-byte elements; a window starts up to 256 bytes early)

    def rows_fitting(n, span_of):
        while n > 1 and span_of(n) > budget:
            n = (n + 1) // 2
        if span_of(n) > budget:
            raise BindingTooLarge(f"torchweb: matmul of a {M}x{K} by a {K}x{N} matrix: one row or "
                                  f"column spans more than the binding limit ({limit} bytes, "
                                  f"maxStorageBufferBindingSize)", 0, limit)
        return n

    kb = rows_fitting(K, lambda k: max(_span_bytes((k, 1), b._stride[-2:]), _span_bytes((1, k), a._stride[-2:])))
    if kb < K:   # a row of A or a column of B spans too much: slices of K, their products added
        if out.dtype is not D.float32:
            raise BindingTooLarge(f"torchweb: {out.dtype.name} matmul with an inner dimension past the "
                                  f"binding limit ({limit} bytes, maxStorageBufferBindingSize) is not split",
                                  0, limit)
        part = empty(out.shape, out.dtype, out.device)
        for k0 in range(0, K, kb):
            n = min(kb, K - k0)
            a_k = a._view(a.shape[:-1] + (n,), a._stride, a._offset + k0 * a._stride[-1])
            b_k = b._view(b.shape[:-2] + (n, b.shape[-1]), b._stride, b._offset + k0 * b._stride[-2])
            _matmul_in_pieces(be, out if k0 == 0 else part, a_k, b_k, acc_cls, limit)
            if k0:
                E.run("add", out, part, out=out)
        return
    for bi in _indices(batch):
        a2 = a._view((M, K), a._stride[-2:], a._offset + sum(i * st for i, st in zip(bi, a._stride)))
        b2 = b._view((K, N), b._stride[-2:], b._offset + sum(i * st for i, st in zip(bi, b._stride)))
        o2 = out._view((M, N), out._stride[-2:], out._offset + sum(i * st for i, st in zip(bi, out._stride)))
        nb = rows_fitting(N, lambda n: _span_bytes((K, n), b2._stride))
        for n0 in range(0, N, nb):
            n = min(nb, N - n0)
            b_p = b2._view((K, n), b2._stride, b2._offset + n0 * b2._stride[1])
            mb = rows_fitting(M, lambda m: max(_span_bytes((m, K), a2._stride), 4 * m * n))
            for m0 in range(0, M, mb):
                m = min(mb, M - m0)
                a_p = a2._view((m, K), a2._stride, a2._offset + m0 * a2._stride[0])
                o_p = o2._view((m, n), o2._stride, o2._offset + m0 * o2._stride[0] + n0 * o2._stride[1])
                if n == N:
                    be.matmul(o_p, a_p, b_p, acc_cls)
                else:
                    tmp = empty((m, n), out.dtype, out.device)
                    be.matmul(tmp, a_p, b_p, acc_cls)
                    E.copy_into(o_p, tmp)


def _span_bytes(shape, stride):
    """The bytes a view of 4-byte elements spans in its storage."""
    return 4 * (1 + sum((s - 1) * abs(st) for s, st in zip(shape, stride) if s))


def _indices(shape):
    """Every index of shape, row-major."""
    out = [()]
    for s in shape:
        out = [i + (j,) for i in out for j in range(s)]
    return out


def fused_softmax(out, inp, log):
    """softmax (or log_softmax) over inp's last dim into out in one kernel; False where the
    backend has none or it would do worse (the caller composes max, exp, sum)."""
    be = backend_for(out.device.type)
    *_, R = inp._shape
    if not be.softmax_fits(R, prod(inp._shape) // R):
        return False
    be.softmax(out, inp, log)
    return True


def _contiguous(t):
    return t._stride == contiguous_strides(t._shape)


def _ln_backend(x, row, *others):
    """The backend whose layer_norm kernels take x's rows of `row` elements (its normalized
    dims, flattened; weight and bias the same) where all are contiguous float32; else None."""
    for t in (x,) + others:
        if t is not None and (t.dtype is not D.float32 or not _contiguous(t)):
            return None
    be = backend_for(x.device.type)
    return be if be.layer_norm_fits(row) else None


def fused_layer_norm(x, weight, bias, dims, eps):
    """(y, mean, rstd) of layer_norm over x's trailing `dims` in one kernel, mean and rstd
    shaped as keepdim means; None where the backend has no kernel for it (compose)."""
    k = len(dims)
    row = prod(x._shape[-k:])
    be = _ln_backend(x, row, weight, bias)
    if be is None:
        return None
    stat = tuple(x._shape[:-k]) + (1,) * k
    y = empty(x._shape, x.dtype, x.device)
    stats = empty((2,) + stat, x.dtype, x.device)   # (mean and rstd in one buffer: one binding)
    n = stats.numel() // 2
    mean, rstd = stats._view(stat, stats._stride[1:], 0), stats._view(stat, stats._stride[1:], n)
    parts = sum_prologue(x) if x._storage.pending is not None else None
    be.layer_norm(y, mean, rstd, x, weight, bias, float(eps), row, parts)
    return y, mean, rstd


def fused_layer_norm_backward(g, x, weight, mean, rstd, dims, with_gx):
    """(dx, gx) of layer_norm's backward in one kernel, gx = g * xhat (the weight gradient's
    terms, None unless with_gx); None where the backend has no kernel (compose)."""
    row = prod(x._shape[-len(dims):])
    if g.dtype is not x.dtype or g._shape != x._shape:
        return None
    be = _ln_backend(x, row, g, weight, mean, rstd)
    if be is None or mean._storage is not rstd._storage:
        return None
    dx = empty(x._shape, x.dtype, x.device)
    gx = empty(x._shape, x.dtype, x.device) if with_gx else None
    parts = sum_prologue(g) if g._storage.pending is not None else None
    be.layer_norm_backward(dx, g, x, weight, mean, rstd, row, gx, parts)
    return dx, gx


def index_gather(out, src, walk, indices, check):
    """out = src through index tensors (backends/webgpu/kernels/index.py has the contract)."""
    be = backend_for(out.device.type)
    be.index_gather(out, src, walk, _bindable(be, indices), check)


def index_scatter(dst, src, walk, indices, reduce, check):
    """dst (op)= src through index tensors. Operands living in dst's storage are copied first
    (dst is written while they are read); float16 reductions run in a float32 copy where the
    backend has no 16-bit atomics, bfloat16 ones always (its atomic adds are on float32 words)."""
    be = backend_for(dst.device.type)
    if is_tensor(src) and src._storage is dst._storage:
        src = E.copy_of(src)
    indices = [(E.copy_of(i) if i._storage is dst._storage else i, d, w) for i, d, w in indices]
    indices = _bindable(be, indices)
    if reduce is not None and ((dst.dtype is D.float16 and not be.ATOMIC_FLOAT16) or dst.dtype is D.bfloat16):
        wide = E.copy_into(empty(dst.shape, D.float32, dst.device), dst)
        be.index_scatter(wide, src, walk, indices, reduce, check)
        E.copy_into(dst, wide)
        return
    be.index_scatter(dst, src, walk, indices, reduce, check)


def _bindable(be, indices):
    """Index tensors in more distinct storages than one dispatch can bind go into one buffer."""
    if len({id(i._storage) for i, _, _ in indices}) <= be.MAX_INDEX_BUFFERS:
        return indices
    shape = tuple(indices[0][0].shape)
    n = 1
    for s in shape:
        n *= s
    buf = empty((len(indices),) + shape, D.int64, indices[0][0].device)
    out = []
    for k, (i, d, w) in enumerate(indices):
        part = buf._view(shape, buf._stride[1:], buf._offset + k * n)
        E.copy_into(part, i)
        out.append((part, d, w))
    return out
