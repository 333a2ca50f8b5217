"""The webgpu device's primitives, in the interface that ops/ calls for every device
(see backends/__init__.py): storage, host transfer, elementwise, reduce, matmul, random,
softmax."""

from . import host
from .kernels import elementwise as ew_kernel, matmul as mm_kernel, random as rand_kernel, reduction as red_kernel
from .kernels import check, fused, matmul_small, matmul_tiles as tiles, moments as mo_kernel, softmax as sm_kernel
from .runtime import _runtime, get_runtime
from .storage import GPUStorage

name = "webgpu"


def rt():
    r = _runtime[0]   # (get_runtime() without its call where the runtime is made: every kernel asks)
    return r if r is not None else get_runtime()


def empty_storage(numel, dtype):
    r = _runtime[0]   # (get_runtime() without its call where the runtime is made: every op asks)
    if r is None:
        r = get_runtime()
    return GPUStorage(r, numel, dtype)


def storage_from_values(values, dtype):
    """A storage holding a flat list of Python numbers (already range-checked)."""
    s = empty_storage(len(values), dtype)
    if values:
        rt().upload(s.buffer_for_write(), 0, host.pack(values, dtype))
    return s


def storage_from_bytes(data, numel, dtype):
    """A storage from bytes already in dtype's GPU storage format."""
    s = empty_storage(numel, dtype)
    if numel:
        rt().upload(s.buffer_for_write(), 0, data)
    return s


def _read_range(t):
    """(buffer id, byte offset, nbytes, skip) to read t's elements; t must be contiguous."""
    elem = 2 if t.dtype.gpu_storage == "f16" else 4
    start = t._offset * elem
    aligned = start & ~3
    nbytes = (start - aligned + t.numel() * elem + 3) & ~3
    return t._storage.buffer_for_read(), aligned, nbytes, start - aligned


def read_values(t):
    """The elements of contiguous t as a flat list of Python numbers (blocks until ready)."""
    if t.numel() == 0:
        return []
    bid, off, nbytes, skip = _read_range(t)
    data = rt().read(bid, off, nbytes)
    return host.unpack(memoryview(data)[skip:], t.dtype, t.numel())


def read_array(t, np):
    """The elements of contiguous t as a flat numpy array, straight from the bytes: no Python
    list in between, which for millions of elements costs seconds and gigabytes."""
    dt = getattr(np, t.dtype.numpy_name)
    if t.numel() == 0:
        return np.zeros(0, dtype=dt)
    bid, off, nbytes, skip = _read_range(t)
    data = rt().read(bid, off, nbytes)
    storage = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32}[t.dtype.gpu_storage]
    raw = np.frombuffer(data, dtype=storage, count=t.numel(), offset=skip)
    return raw != 0 if t.dtype.name == "bool" else raw.astype(dt)


def read_memoryview(t):
    """Contiguous t's elements as a memoryview shaped like t (host.as_memoryview): no Python
    numbers are made, so a million floats cost one copy, not a list."""
    if t.numel() == 0:
        return host.as_memoryview(b"", 0, t.dtype, 0, t.shape)
    bid, off, nbytes, skip = _read_range(t)
    return host.as_memoryview(rt().read(bid, off, nbytes), skip, t.dtype, t.numel(), t.shape)


async def read_memoryview_async(t):
    if t.numel() == 0:
        return host.as_memoryview(b"", 0, t.dtype, 0, t.shape)
    bid, off, nbytes, skip = _read_range(t)
    data = await rt().read_async(bid, off, nbytes)
    return host.as_memoryview(data, skip, t.dtype, t.numel(), t.shape)


async def read_values_async(t):
    if t.numel() == 0:
        return []
    bid, off, nbytes, skip = _read_range(t)
    data = await rt().read_async(bid, off, nbytes)
    return host.unpack(memoryview(data)[skip:], t.dtype, t.numel())


def elementwise(op, out, operands, classes, cls, value_cls, compute_dtypes):
    """out = op(operands) now (the lazy layer, torchweb/lazy, decided not to defer it)."""
    ew_kernel.run(rt(), op, out, operands, classes, cls, value_cls, compute_dtypes)


# run_fused(outs, nodes, one_kernel=False, patched=False): write each pending storage of outs
# with the values of the fused elementwise expression of the same position in nodes (lazy Nodes
# of one shape), one kernel (one_kernel: one dispatch, no vec4 body and tail; patched: its
# scalars noted for a captured call's replay: an optimizer step's, lazy/scope.py)
run_fused = fused.run


GRID_LIMITED = True   # a fused kernel's elements are bounded by a folded grid (the lazy layer checks at the op)


# What the lowering step (ops/lowering.py) should do for this backend
SPLIT_REDUCTIONS = True   # long reductions over few outputs in two passes
MAX_MATMUL_K = 1 << 16    # longer inner dimensions in slices: lavapipe ends loops at 65535 trips


def reduce(kind, out, inp, nred, acc_cls, nchunks=1, divisor=None, index_from=None,
           pairs_in=False, pairs_out=False):
    """One reduction kernel (kernels/reduction.py has the options)."""
    red_kernel.run(rt(), kind, out, inp, nred, acc_cls, nchunks=nchunks, divisor=divisor,
                   index_from=index_from, pairs_in=pairs_in, pairs_out=pairs_out)


_MATMUL_CHOICE = {}   # (output shape, K, dtype, forced variant, runtime) -> kernel: asked per call


def matmul(out, a, b, acc_cls):
    compute = "f32" if acc_cls == "f" else "i32"
    r = rt()
    *_, K = a._shape   # (unpacked: indexing a Size runs Python code)
    key = (out._shape, K, out.dtype, tiles.FORCED, id(r))
    kernel = _MATMUL_CHOICE.get(key)
    if kernel is None:
        if len(_MATMUL_CHOICE) > 4096:
            _MATMUL_CHOICE.clear()
        kernel = _MATMUL_CHOICE[key] = _choose_matmul(r, out, a, b)
    if kernel == "small":
        matmul_small.run(r, out, a, b, compute)
    elif kernel == "mm2":
        mm_kernel.run(r, out, a, b, compute)
    else:
        tiles.run(r, out, a, b, compute, kernel)


def _choose_matmul(r, out, a, b):
    """'small', 'mm2' or a matmul_tiles variant name for this product."""
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    # int64: only matmul_small sums its products in 64 bits; tiny matrices: a thread per output
    # beats a mostly idle tile per batch entry (unless a test or the bench forces a variant)
    if out.dtype.name == "int64" or (tiles.FORCED is None and matmul_small.fits(M, N, K)):
        return "small"
    nbatch = out.numel() // max(1, M * N)
    variant = tiles.choose(M, N, K, nbatch, r.software_adapter)   # kernels/matmul_tiles.py TABLE
    if variant == "mm2" and max(-(-M // mm_kernel.TM), -(-N // mm_kernel.TN)) > r.max_workgroups:
        variant = "t128x64_k16"   # mm2 has no split of a grid past the limit; this one has
    return variant


def softmax_fits(row, rows):
    """Whether the fused kernel does better than the composite: not for a row too long for one
    workgroup's loop on lavapipe, nor for few long rows, which one workgroup each would leave
    most of the GPU idle (the composite splits them)."""
    return row <= sm_kernel.MAX_ROW and not (row >= 65536 and rows < 256)


def softmax(out, inp, log):
    """Fused softmax (log: log_softmax) over inp's last dim into out."""
    sm_kernel.run(rt(), out, inp, log)


def moments_fits(row, rows):
    """Whether var/std (and mean) of rows of length `row` go in one kernel (kernels/moments.py)."""
    return mo_kernel.fits(row, rows)


def moments(out, inp, denom, std, with_mean):
    """var (std) of each row of inp (its last dim, stride 1) into out[:rows], the mean into
    out[rows:] if with_mean; denom: n - correction, at least 0."""
    mo_kernel.run(rt(), out, inp, denom, std, with_mean)


def random(kind, out, seed, call, a, b):
    rand_kernel.run(rt(), kind, out, seed, call, a, b)


from .embedding import embedding, embedding_backward  # noqa: E402,F401


from .conv import (col2im, im2col, interpolate, interpolate_backward, pad, pad_backward,  # noqa: E402,F401
                   grid_sample, grid_sample_backward, pool, pool_backward, unpool,
                   unpool_backward)  # (conv, pooling, padding, interpolation, sampling)

from .sort_scan import (SORT_BLOCK, SPLIT_SCANS, scan, sort_block, sort_merge,  # noqa: E402,F401
                        sort_scatter_add, sort_step)  # (scans, sorting)

from .index import (ATOMIC_FLOAT16, MAX_INDEX_BUFFERS, index_gather, index_scatter,  # noqa: E402,F401
                    mask_compact, masked_scatter)  # (gather, scatter, indexing, masks)

from .attention import attention_backward, attention_fits, attention_forward  # noqa: E402,F401  (fused attention)

from .count import bincount, count_gather, count_scatter, search_sorted  # noqa: E402,F401  (searchsorted, unique, bincount)

from .raw_bytes import read_storage_bytes, read_storage_bytes_async  # noqa: E402,F401  (serialization)


def capturing():
    """True while torchweb.compile records a call (capture.py): readbacks are not allowed."""
    return rt().capture is not None


def refuse_capture(reason):
    """Have the call torchweb.compile is recording run eagerly instead (nothing while none is)."""
    capture = rt().capture
    if capture is not None:
        capture.refuse(reason)


def device_assert(bad, what, exc, message):
    """Raise exc(message) at the next readback if any element of bool tensor bad is true."""
    check.run(rt(), bad.contiguous(), what, exc, message)
