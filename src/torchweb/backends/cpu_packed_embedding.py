"""The cpu device's lookup in a packed weight on numpy (the contract of
backends/webgpu/packed_embedding.py): the rows of the int32 words at the indices, unpacked by
the packing's format (a row of FORMATS, as the kernel's table), times the row's scale."""

from .._bfloat16 import round_np
from .cpu_arrays import np, view


def _int8(n, words):
    return words.view(n.int8).astype(n.float32)


def _bfloat16(n, words):
    return (words.view(n.uint16).astype(n.uint32) << n.uint32(16)).view(n.float32)


def _float16(n, words):
    return words.view(n.float16).astype(n.float32)


# format: the float32 values of the words (rows, words), little-endian (rows, words * per)
FORMATS = {"int8": _int8, "bfloat16": _bfloat16, "float16": _float16}


def packed_embedding(out, packed, scale, idx, fmt):
    """out (n, dim) = the rows of packed (num, words) at idx, unpacked by the format fmt (times
    scale (num,) where given); IndexError for an index out of range, as PyTorch."""
    n = np()
    i = view(idx).astype(n.int64)
    if i.size and (i.min() < 0 or i.max() >= packed.shape[0]):
        raise IndexError("index out of range in self")
    rows = FORMATS[fmt](n, n.ascontiguousarray(view(packed)[i]))[:, :out.shape[1]]
    if scale is not None:
        rows = rows * view(scale).astype(n.float32)[i][:, None]
    if out.dtype.name == "bfloat16":   # (held in float32 words: rounded as every bfloat16 store)
        rows = round_np(n, rows)
    n.copyto(view(out), rows, casting="unsafe")
