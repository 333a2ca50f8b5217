"""The webgpu device's primitives, in the interface that ops/ calls for every device
(see backends/__init__.py): storage, host transfer, elementwise, reduce, matmul, random,
softmax."""

from . import host
from .kernels import elementwise as ew_kernel, matmul as mm_kernel, random as rand_kernel, reduction as red_kernel
from .runtime import get_runtime
from .storage import GPUStorage

name = "webgpu"


def rt():
    return get_runtime()


def empty_storage(numel, dtype):
    if dtype.gpu_storage == "f16" and "shader-f16" not in rt().features:
        raise TypeError("torch.float16 on webgpu needs the adapter feature 'shader-f16', which this "
                        "adapter lacks; use torch.float32")
    return GPUStorage(rt(), numel, dtype)


def storage_from_values(values, dtype):
    """A storage holding a flat list of Python numbers (already range-checked)."""
    s = empty_storage(len(values), dtype)
    if values:
        rt().upload(s.buffer_id, 0, host.pack(values, dtype))
    return s


def storage_from_bytes(data, numel, dtype):
    """A storage from bytes already in dtype's GPU storage format."""
    s = empty_storage(numel, dtype)
    if numel:
        rt().upload(s.buffer_id, 0, data)
    return s


def _read_range(t):
    """(buffer id, byte offset, nbytes, skip) to read t's elements; t must be contiguous."""
    elem = 2 if t.dtype.gpu_storage == "f16" else 4
    start = t._offset * elem
    aligned = start & ~3
    nbytes = (start - aligned + t.numel() * elem + 3) & ~3
    return t._storage.buffer_id, aligned, nbytes, start - aligned


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


async def read_values_async(t):
    if t.numel() == 0:
        return []
    bid, off, nbytes, skip = _read_range(t)
    data = await rt().read_async(bid, off, nbytes)
    return host.unpack(memoryview(data)[skip:], t.dtype, t.numel())


def elementwise(op, out, operands, classes, cls, value_cls, compute_dtypes):
    ew_kernel.run(rt(), op, out, operands, classes, cls, value_cls, compute_dtypes)


_SPLITTABLE = {"sum": "sum", "mean": "sum", "prod": "prod", "max": "max", "min": "min",
               "all": "all", "any": "any"}


def reduce(kind, out, inp, nred, acc_cls):
    """Few long reductions are split in two passes, so that more than a handful of
    workgroups share the work: partial results per chunk, then a reduction of those."""
    R = 1
    for s in inp.shape[inp.dim() - nred:]:
        R *= s
    n_out = out.numel()
    if kind not in _SPLITTABLE and kind not in ("argmax", "argmin") or n_out > 256 or R < 65536:
        red_kernel.run(rt(), kind, out, inp, nred, acc_cls)
        return
    from ...ops.dispatch import empty
    from ... import _dtype as D
    nchunks = min(1024, -(-R // 8192))
    if kind in ("all", "any"):
        pdt = D.bool
    elif kind in ("max", "min"):
        pdt = D.float32 if inp.dtype is D.float16 else inp.dtype
    else:
        pdt = D.float32 if acc_cls == "f" else D.int64
    if kind in ("argmax", "argmin"):
        # (Also the only way on lavapipe, which ends a shader's loops after 65535 trips: one
        # workgroup cannot walk 2^24 elements.) Each chunk's extreme and its global position,
        # then the first winning chunk, whose position is read back from the index partials.
        ext = kind[3:]
        values = empty((n_out, nchunks), D.float32 if inp.dtype is D.float16 else inp.dtype, out.device)
        where = empty((n_out, nchunks), D.int64, out.device)
        red_kernel.run(rt(), ext, values, inp, nred, acc_cls, nchunks=nchunks)
        red_kernel.run(rt(), kind, where, inp, nred, acc_cls, nchunks=nchunks)
        red_kernel.run(rt(), kind, out, values, 1, acc_cls, index_from=where)
        return
    if out.dtype is D.int64 and kind in ("sum", "prod"):
        # 64-bit partials as (lo, hi) int32 pairs: a partial may pass 32 bits when the total doesn't
        pairs = empty((n_out, nchunks, 2), D.int32, out.device)
        red_kernel.run(rt(), kind, pairs, inp, nred, acc_cls, nchunks=nchunks, pairs_out=True)
        partial = pairs._view((n_out, nchunks), (nchunks, 1), 0)
        red_kernel.run(rt(), kind, out, partial, 1, acc_cls, pairs_in=True)
        return
    partial = empty((n_out, nchunks), pdt, out.device)
    red_kernel.run(rt(), _SPLITTABLE[kind], partial, inp, nred, acc_cls, nchunks=nchunks)
    red_kernel.run(rt(), kind, out, partial, 1, acc_cls, divisor=R)


SPLIT_K = 1 << 16


def matmul(out, a, b, acc_cls):
    """Long inner dimensions go in slices of SPLIT_K whose products are added up: one
    invocation's loop stays short (lavapipe silently stops loops after 65535 iterations)."""
    K = a.shape[-1]
    if K <= SPLIT_K:
        return _matmul_once(out, a, b, acc_cls)
    from ...ops.dispatch import empty
    from ...ops import elementwise as E
    from ... import _dtype as D
    acc_dtype = D.float32 if acc_cls == "f" else out.dtype   # int64: each slice checked
    acc = out if out.dtype is acc_dtype else empty(out.shape, acc_dtype, out.device)
    part = empty(out.shape, acc_dtype, out.device)
    for k0 in range(0, K, SPLIT_K):
        n = min(SPLIT_K, K - k0)
        a_k = a._view(a.shape[:-1] + (n,), a._stride, a._offset + k0 * a._stride[-1])
        b_k = b._view(b.shape[:-2] + (n, b.shape[-1]), b._stride, b._offset + k0 * b._stride[-2])
        _matmul_once(acc if k0 == 0 else part, a_k, b_k, acc_cls)
        if k0:
            E.run("add", acc, part, out=acc)
    if acc is not out:
        E.copy_into(out, acc)


def _matmul_once(out, a, b, acc_cls):
    from .kernels import matmul_small
    # tiny matrices: a thread per output beats a mostly idle 128x64 tile per batch entry
    # (and int64, whose products only this kernel sums in 64 bits)
    kernel = matmul_small if (matmul_small.fits(a.shape[-2], b.shape[-1], a.shape[-1])
                              or out.dtype.name == "int64") else mm_kernel
    kernel.run(rt(), out, a, b, "f32" if acc_cls == "f" else "i32")


def softmax(out, inp, log):
    """Fused softmax over inp's last dim into out; False (nothing done) where the composite
    does better: a row too long for one workgroup's loop on lavapipe, or few long rows, which
    one workgroup each would leave most of the GPU idle (the composite splits them)."""
    from .kernels import softmax as sm_kernel
    R = inp.shape[-1]
    rows = inp.numel() // R
    if R > sm_kernel.MAX_ROW or (R >= 65536 and rows < 256):
        return False
    sm_kernel.run(rt(), out, inp, log)
    return True


def random(kind, out, seed, call, a, b):
    rand_kernel.run(rt(), kind, out, seed, call, a, b)
