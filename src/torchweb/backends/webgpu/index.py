"""The webgpu device's index primitives (kernels/index.py): gather and scatter through index
tensors, and the compaction behind nonzero, masked_select and masked_scatter."""

from .kernels import index as K
from ..limits import BindingTooLarge
from . import windows
from .runtime import get_runtime

MAX_INDEX_BUFFERS = K.MAX_INDEX_BUFFERS
ATOMIC_FLOAT16 = False   # no 16-bit atomics: ops/lowering.py widens float16 scatter reductions


def index_gather(out, src, walk, indices, check):
    """out (contiguous) = src through index tensors (kernels/index.py says how). A src past the
    binding limit (a big table) is read one window of its buffer at a time (windows.py)."""
    rt = get_runtime()
    try:
        K.gather(rt, out, src, walk, indices, check)
    except BindingTooLarge as e:
        windows.split(e, windows.split_target, lambda t, win, o, *ix: K.gather(
            rt, o, t, walk, _with(indices, ix), check, win), rt.max_binding, src, [out] + [i for i, _, _ in indices])


def index_scatter(dst, src, walk, indices, reduce, check):
    """dst (op)= src through index tensors; reduce None, "sum", "prod", "amax" or "amin". A dst
    past the binding limit is written one window of its buffer at a time (but an int64 sum's
    exact pairs, which span dst, are not split)."""
    rt = get_runtime()
    try:
        K.scatter(rt, dst, src, walk, indices, reduce, check)
    except BindingTooLarge as e:
        if reduce == "sum" and dst.dtype.name == "int64":
            raise
        windows.split(e, windows.split_target, lambda t, win, s, *ix: K.scatter(
            rt, t, s, walk, _with(indices, ix), reduce, check, win), rt.max_binding, dst,
            [src] + [i for i, _, _ in indices])


def _with(indices, tensors):
    """indices [(idx, dim, wrap)] with each idx replaced by the view of it in tensors."""
    return [(t, d, w) for t, (_, d, w) in zip(tensors, indices)]


def mask_compact(out, mask, pos, src):
    """mask's nonzeros in row-major order: their coordinates (src None) or src's values."""
    K.compact(get_runtime(), out, mask, pos, src)


def masked_scatter(out, mask, pos, source, check):
    """out[i] = source[pos[i] - 1] where mask[i]; a short source raises at the next readback."""
    K.masked_scatter(get_runtime(), out, mask, pos, source, check)
