"""The webgpu device's weight-only int8 linear (kernels/matmul_int8.py): int8 weights packed 4
per word, dequantized inside the matmul."""

from .kernels import matmul_int8
from .runtime import get_runtime


def int8_linear(out, x, packed, scale, bias):
    """out (M, N) = x (M, K) @ q^T * scale (+ bias); q (N, K) int8 packed 4 per int32 word."""
    matmul_int8.forward(get_runtime(), out, x, packed, scale, bias)
