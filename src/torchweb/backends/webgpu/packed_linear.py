"""The webgpu device's linear layers with packed weights (kernels/matmul_packed.py): int8 (4 a
word, with per-channel scales) or bfloat16 (2 a word), unpacked inside the matmul."""

from .kernels import matmul_packed
from .runtime import get_runtime


def packed_linear(out, x, packed, scale, bias, bits):
    """out (M, N) = x (M, K) @ q^T * scale (+ bias); q (N, K) packed 32 / bits per int32 word."""
    matmul_packed.forward(get_runtime(), out, x, packed, scale, bias, bits)


def pack_bfloat16(out, w):
    """out (N, ceil(K / 2)) int32 = bfloat16 w (N, K), contiguous, two values a word."""
    matmul_packed.pack_bfloat16(get_runtime(), out, w)
