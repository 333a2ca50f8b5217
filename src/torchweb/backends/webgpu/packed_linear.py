"""The webgpu device's linear layers with packed weights (kernels/matmul_packed.py): int8 (4 a
word, with per-channel scales), bfloat16 or float16 (2 a word), unpacked inside the matmul. A weight
past the binding limit runs in blocks of its rows, each seen through a window (windows.py),
each writing its block of the output's columns; packing a half weight splits by rows the same way."""

from . import windows
from .kernels import matmul_packed
from .runtime import get_runtime
from ..limits import BindingTooLarge


def packed_linear(out, x, packed, scale, bias, fmt):
    """out (M, N) = x (M, K) @ q^T * scale (+ bias); q (N, K) of format fmt packed in int32 words."""
    rt = get_runtime()
    try:
        matmul_packed.forward(rt, out, x, packed, scale, bias, fmt)
    except BindingTooLarge as e:
        windows.split(e, _by_rows, rt, out, x, packed, scale, bias, fmt)


def _by_rows(rt, out, x, packed, scale, bias, fmt):
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
                              windows.part(bias, rows), fmt)


def pack_half(out, w, fmt):
    """out (N, ceil(K / 2)) int32 = w (N, K) of dtype fmt (bfloat16, float16), contiguous, two
    values a word; a weight past the binding limit (a GPT-2 tied table: 154 MB in f32 words) in
    blocks of its rows, each seen through windows of w and out."""
    rt = get_runtime()
    try:
        matmul_packed.pack_half(rt, out, w, fmt)
    except BindingTooLarge as e:
        windows.split(e, _pack_by_rows, rt, out, w, fmt)


def _pack_by_rows(rt, out, w, fmt):
    limit = rt.max_binding
    (N, K), words = w.shape, out.shape[1]
    fits_w, fits_out = windows.fits_in(limit, [w]), windows.fits_in(limit, [out])
    for ((n0, n1),) in windows.blocks((N,), lambda b: fits_w(b + ((0, K),)) and fits_out(b + ((0, words),))):
        cache = {}
        matmul_packed.pack_half(rt, windows.windowed(windows.part(out, ((n0, n1), (0, words))), limit, cache),
                                windows.windowed(windows.part(w, ((n0, n1), (0, K))), limit, cache), fmt)
