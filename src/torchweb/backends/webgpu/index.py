"""The webgpu device's index primitives (kernels/index.py): gather and scatter through index
tensors, and the compaction behind nonzero, masked_select and masked_scatter."""

from .kernels import index as K
from .runtime import get_runtime

MAX_INDEX_BUFFERS = K.MAX_INDEX_BUFFERS
ATOMIC_FLOAT16 = False   # no 16-bit atomics: ops/lowering.py widens float16 scatter reductions


def index_gather(out, src, walk, indices, check):
    """out (contiguous) = src through index tensors (kernels/index.py says how)."""
    K.gather(get_runtime(), out, src, walk, indices, check)


def index_scatter(dst, src, walk, indices, reduce, check):
    """dst (op)= src through index tensors; reduce None, "sum", "prod", "amax" or "amin"."""
    K.scatter(get_runtime(), dst, src, walk, indices, reduce, check)


def mask_compact(out, mask, pos, src):
    """mask's nonzeros in row-major order: their coordinates (src None) or src's values."""
    K.compact(get_runtime(), out, mask, pos, src)


def masked_scatter(out, mask, pos, source, check):
    """out[i] = source[pos[i] - 1] where mask[i]; a short source raises at the next readback."""
    K.masked_scatter(get_runtime(), out, mask, pos, source, check)
