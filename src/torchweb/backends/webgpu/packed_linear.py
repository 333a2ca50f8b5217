"""The webgpu device's linear layers with packed weights (kernels/matmul_packed.py): int8 (4 a
word, with per-channel scales) or bfloat16 (2 a word), unpacked inside the matmul. A weight
past the binding limit runs in blocks of its rows, each seen through a window (windows.py),
each writing its block of the output's columns."""

from . import windows
from .kernels import matmul_packed
from .runtime import get_runtime
from ..limits import BindingTooLarge


def packed_linear(out, x, packed, scale, bias, bits):
    """out (M, N) = x (M, K) @ q^T * scale (+ bias); q (N, K) packed 32 / bits per int32 word."""
    rt = get_runtime()
    try:
        matmul_packed.forward(rt, out, x, packed, scale, bias, bits)
    except BindingTooLarge as e:
        windows.split(e, _by_rows, rt, out, x, packed, scale, bias, bits)


def _by_rows(rt, out, x, packed, scale, bias, bits):
    limit = rt.max_binding
    M, words = out.shape[0], packed.shape[1]
    for block in windows.blocks(tuple(packed.shape), windows.fits_in(limit, [packed, out])):
        (n0, n1), cols = block
        if cols != (0, words):   # (one row past the limit: refused, see windows.split)
            raise windows._Unsplittable("torchweb: a packed weight row past the binding limit")
        cache = {}
        rows = ((n0, n1),)
        matmul_packed.forward(rt, windows.windowed(windows.part(out, ((0, M), (n0, n1))), limit, cache), x,
                              windows.windowed(windows.part(packed, block), limit, cache),
                              None if scale is None else windows.part(scale, rows), None if bias is None else
                              windows.part(bias, rows), bits)


def pack_bfloat16(out, w):
    """out (N, ceil(K / 2)) int32 = bfloat16 w (N, K), contiguous, two values a word."""
    matmul_packed.pack_bfloat16(get_runtime(), out, w)
