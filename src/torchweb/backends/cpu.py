"""The cpu device on numpy (an optional dependency): storage is a flat numpy array, and a
tensor's view of it is made with as_strided, so views share memory exactly as on the GPU
(cpu_arrays.py). The primitives are backends/base.py's contract.

A storage may be pending (torchweb/lazy: its values an elementwise expression not yet run, or
read by one); view() asks the lazy layer to write them first (backends/pending.py), and
run_fused evaluates the expressions with the same numpy bodies as elementwise()."""

from math import prod as _prod

from . import pending
from .. import _bfloat16
from .. import _philox
from .base import absent as _absent
from .cpu_arrays import CPUStorage as _CPUStorage, compute_np_dtype as _compute_np_dtype, np as _np
from .cpu_arrays import np_dtype as _np_dtype, strided as _strided, view as _view
from .cpu_arrays import storage_from_array as _storage_from_array
from .cpu_conv import (col2im, grid_sample, grid_sample_backward, im2col, interpolate,  # noqa: F401
                       interpolate_backward, pad, pad_backward, pool, pool_backward, unpool, unpool_backward)
from .cpu_linalg import ldl, ldl_fits, ldl_solve, qr_panel, trsm_block  # noqa: F401
from .cpu_count import bincount, count_gather, count_scatter, search_sorted  # noqa: F401
from .cpu_embedding import embedding, embedding_backward  # noqa: F401
from .cpu_packed_linear import pack_half, packed_linear  # noqa: F401
from .cpu_packed_embedding import packed_embedding  # noqa: F401
from .cpu_samplers import random_sample  # noqa: F401
from .cpu_index import (ATOMIC_FLOAT16, MAX_INDEX_BUFFERS, index_gather, index_scatter,  # noqa: F401
                        mask_compact, masked_scatter)
from .cpu_jacobi import jacobi_sweep  # noqa: F401
from .cpu_sort import (SORT_BLOCK, SPLIT_SCANS, scan, sort, sort_block, sort_merge,  # noqa: F401
                       sort_scatter_add, sort_step)

name = "cpu"


def empty_storage(numel, dtype):
    return _CPUStorage(_np().zeros(numel, dtype=_np_dtype(dtype)), dtype)


def storage_maker():
    return empty_storage


def storage_from_values(values, dtype):
    return _storage_from_array(_np().array(values, dtype=_np_dtype(dtype)), dtype)


def read_values(t):
    return _view(t).reshape(-1).tolist()


async def read_values_async(t):
    return read_values(t)


def elementwise(op, out, operands, dtypes):
    n = _np()
    args = []
    cls = dtypes.cls
    for o, c, d in zip(operands, dtypes.classes, dtypes.compute):
        want = _compute_np_dtype(d, c)
        if hasattr(o, "_storage"):
            v = _view(o)
            if d.name == "float16" and o.dtype.name != "float16":
                with n.errstate(over="ignore"):   # 70000 -> inf, as PyTorch casts
                    v = v.astype(n.float16)   # to the common dtype first, as PyTorch
            elif d.name == "bfloat16" and o.dtype.name != "bfloat16":
                v = _bfloat16.round_np(n, v.astype(n.float32))
            args.append(v.astype(want, copy=False))
        else:
            args.append(n.array(o).astype(want))
    if op.divisor >= 0 and cls in ("i", "u") and (args[op.divisor] == 0).any():
        raise RuntimeError("ZeroDivisionError")
    with n.errstate(all="ignore"):
        r = op.np(n, *args)
    dst = _view(out)
    if out.dtype.name == "uint8":
        r = n.asarray(r)
        if r.dtype.kind == "f":
            r = r.astype(n.int64)
    with n.errstate(all="ignore"):   # float -> float16 overflow is inf, as in PyTorch
        n.copyto(dst, n.broadcast_to(r, dst.shape), casting="unsafe")


def run_fused(outs, roots, one_kernel=False, patched=False):
    """Write each pending storage of outs with the values of the fused elementwise expression
    of the same position in roots (lazy Nodes of one shape), evaluated op by op as
    elementwise() would, each intermediate rounded to float32 as its tensor would be.
    (one_kernel, patched: the webgpu backend's dispatch and capture details.)"""
    n = _np()
    shape = tuple(roots[0].shape)
    values = [_evaluate(n, node.key, iter(node.leaves), iter(node.scalars), shape, node.ROWS)
              for node in roots]   # (all read before any is written: out= may read its own storage)
    for s, v in zip(outs, values):
        n.copyto(s.array[:_prod(shape)].reshape(shape), v, casting="unsafe")


GRID_LIMITED = False   # (no dispatch grid: any number of elements runs)
MATMUL_EPILOGUE = False   # (numpy runs each op as it comes: nothing is deferred)


def refuse_capture(reason):
    """(torchweb.compile records webgpu calls only: nothing to refuse.)"""


def _evaluate(n, key, leaves, scalars, shape, rows):
    """The float32 values of the expression key (a lazy Node's structure), reading leaves
    (depth first) and scalars (children's first, then the op's own) in the Node's order."""
    (name, cls), args = key[0], key[1:]
    values = []
    own = []   # positions of this op's own scalars, filled after its children took theirs
    for part in args:
        if type(part[0]) is not str:   # an inlined child
            values.append(_evaluate(n, part, leaves, scalars, shape, rows).astype(
                _CLASS_DTYPE.get(part[0][1], n.float32), copy=False))
        elif part[0] == "t":
            storage, stride, offset, dtype = next(leaves)
            v = _strided(storage.array, offset, shape, stride)
            values.append(v.astype(n.float32 if part[1] == "f" else _compute_np_dtype(dtype, part[1]), copy=False))
        else:
            own.append(len(values))
            values.append(None)
    for i in own:
        values[i] = n.array(next(scalars)).astype(n.float32)
    with n.errstate(all="ignore"):
        r = rows[name].np(n, *values)
        return n.broadcast_to(n.asarray(r).astype(n.float32, copy=False), shape)


_CLASS_DTYPE = {"b": "bool", "i": "int32", "u": "uint8"}   # how a child's float32 value is read in other classes


SPLIT_REDUCTIONS = False   # numpy reduces in one go (ops/lowering.py)
MAX_MATMUL_K = None


def reduce(p, out, inp, index_from=None):
    """(p's split options and index_from are a split reduction's passes: never asked,
    SPLIT_REDUCTIONS is False.)"""
    n = _np()
    kind, nred, acc_cls = p.kind, p.nred, p.acc_cls
    x = _view(inp)
    axes = tuple(range(x.ndim - nred, x.ndim))
    outer = x.shape[:x.ndim - nred]
    with n.errstate(all="ignore"):
        if kind in ("sum", "mean", "prod"):
            acc = n.float32 if acc_cls == "f" else (n.int64 if acc_cls == "i" else n.int64)
            if kind == "sum":
                r = x.sum(axis=axes, dtype=acc)
            elif kind == "prod":
                r = x.prod(axis=axes, dtype=acc)
            else:
                # sum / count rather than mean(): an empty mean is NaN here without numpy's warning
                r = x.sum(axis=axes, dtype=n.float32) / n.float32(int(n.prod([x.shape[a] for a in axes])))
        elif kind in ("max", "min"):
            xc = x.astype(n.float32) if inp.dtype.name == "float16" else x
            r = (n.max if kind == "max" else n.min)(xc, axis=axes) if x.size else n.zeros(outer)
        elif kind in ("argmax", "argmin"):
            flat = x.reshape(outer + (int(n.prod(x.shape[x.ndim - nred:])),))  # not -1: outer may be empty
            if flat.dtype.kind == "f":
                # NaN wins, first occurrence, as PyTorch
                nan = n.isnan(flat)
                r = (n.argmax if kind == "argmax" else n.argmin)(flat, axis=-1)
                r = n.where(nan.any(axis=-1), nan.argmax(axis=-1), r)
            else:
                r = (n.argmax if kind == "argmax" else n.argmin)(flat, axis=-1)
        elif kind == "all":
            r = x.astype(bool).all(axis=axes)
        elif kind == "any":
            r = x.astype(bool).any(axis=axes)
        else:
            raise ValueError(kind)
    n.copyto(_view(out).reshape(n.shape(r)), r, casting="unsafe")


def matmul(out, a, b, acc_cls, epi=None):   # (epi: never passed, MATMUL_EPILOGUE is unset)
    n = _np()
    x, y = _view(a), _view(b)
    if acc_cls == "f":
        x, y = x.astype(n.float32), y.astype(n.float32)
    else:
        x, y = x.astype(n.int64), y.astype(n.int64)
    with n.errstate(all="ignore"):  # inf * 0 in a product is NaN, as in PyTorch, silently
        n.copyto(_view(out), n.matmul(x, y), casting="unsafe")


def softmax_fits(row, rows):
    """No fused kernel: the caller composes max, exp, sum (numpy gains nothing from fusing)."""
    return False


def softmax(out, inp, log):
    raise _absent("softmax", "softmax_fits is False")


def layer_norm_fits(row):
    """No fused kernel: the caller composes means and elementwise ops (numpy gains nothing)."""
    return False


def layer_norm(y, mean, rstd, x, weight, bias, eps, row, x_parts=None):
    raise _absent("layer_norm", "layer_norm_fits is False")


def layer_norm_backward(dx, g, x, weight, mean, rstd, row, gx=None, g_parts=None):
    raise _absent("layer_norm_backward", "layer_norm_fits is False")


def cholesky_block_fits(n):
    """No kernel: Cholesky is composed of tensor ops (ops/linalg_cholesky.py)."""
    return False


def cholesky_block(out, info, inp, n, count, inverse=None):
    raise _absent("cholesky_block", "cholesky_block_fits is False")


def lu_panel_fits(w):
    """No kernel: LU's panels are composed of tensor ops (ops/linalg_kernels.py)."""
    return False


def lu_panel(out, pivots, order, inp, m, w, count):
    raise _absent("lu_panel", "lu_panel_fits is False")


def fft_fits(n):
    """numpy.fft transforms any length."""
    return n >= 1


def fft(spec, out, inp):
    """numpy.fft's (pocketfft) transforms, unnormalized, rounded to float32."""
    n = _np()
    x = _view(inp)
    z = x.astype(n.float32) if spec.real else x[..., 0] + 1j * x[..., 1]
    f = n.fft.fft(z, spec.n, axis=2) if spec.sign < 0 else n.fft.ifft(z, spec.n, axis=2, norm="forward")
    y = _view(out)
    y[..., 0] = f.real
    y[..., 1] = f.imag


def moments_fits(row, rows):
    """No fused kernel: var and std are composed of reductions."""
    return False


def moments(out, inp, denom, std, with_mean):
    raise _absent("moments", "moments_fits is False")


def attention_fits(L, S, E, Ev, batch=1):
    """No fused kernels: attention is composed of matmuls and softmax."""
    return False


def attention_forward(spec, out, lse, q, k, v):
    raise _absent("attention_forward", "attention_fits is False")


def attention_backward(spec, dq, dkv, q, k, v, dout, ld):
    raise _absent("attention_backward", "attention_fits is False")


def capturing():
    """torchweb.compile captures webgpu work only."""
    return False


def capture_holds(storage):
    return False


def on_device_lost(callback):
    """The cpu device is never lost."""


def device_assert(bad, what, exc, message):
    """Raise exc(message) now if any element of bad is true (numpy has the values at hand)."""
    if _view(bad).any():
        raise exc(message() if callable(message) else message)


def device_assert_range(t, lo, hi, skip, what, exc, message):
    """Raise exc(message) now if an element of t is outside [lo, hi) and not skip."""
    v = _view(t)
    bad = (v < lo) | (v >= hi)
    if skip is not None:
        bad &= v != skip
    if bad.any():
        raise exc(message() if callable(message) else message)


def random(draw, out):
    n = _np()
    kind, seed, call, a, b = draw.kind, draw.seed, draw.call, draw.a, draw.b
    if kind == "uniform" and out.dtype.name == "float16":
        # 11 random bits for half, as the GPU kernel draws them: 24 would round up to 1.0
        u = (_philox.philox(n, out.numel(), seed, call)[0] >> n.uint32(21)).astype(n.float32) * n.float32(2.0 ** -11)
        v = n.float32(a) + (n.float32(b) - n.float32(a)) * u
    else:
        v = _philox.values(n, kind, out.numel(), seed, call, a, b)
    n.copyto(_view(out), v.reshape(out.shape), casting="unsafe")


# bfloat16 outputs rounded after every primitive that writes them (cpu_bfloat16.py)
from .base import Backend as _Backend  # noqa: E402
from .cpu_bfloat16 import round_outputs as _round_outputs  # noqa: E402
_round_outputs(globals(), [_n for _n in dir(_Backend) if not _n.startswith("_")])
