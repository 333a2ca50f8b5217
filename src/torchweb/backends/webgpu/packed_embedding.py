"""The webgpu device's lookup in a packed weight (kernels/packed_embedding.py): the rows at the
indices unpacked to floats; a table past the binding limit is read one window of its rows at a
time."""

from . import windows
from .kernels import packed_embedding as kernel
from .runtime import get_runtime
from ..limits import BindingTooLarge


def packed_embedding(out, packed, scale, idx, fmt):
    """out (n, dim) = the rows of packed (num, words) at idx, unpacked by the format fmt (times
    scale (num,) where given); an index out of range raises IndexError at the next readback."""
    rt = get_runtime()
    try:
        kernel.forward(rt, out, packed, scale, idx, fmt)
    except BindingTooLarge as e:
        tag = rt.errors.tag("packed_embedding")
        extra = [] if scale is None else [scale]
        windows.split(e, windows.split_rows, lambda w, o, i, *s, rows: kernel.forward(
            rt, o, w, s[0] if s else None, i, fmt, rows, tag), rt.max_binding, packed, [out, idx] + extra, "rows")
