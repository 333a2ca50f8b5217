"""The cpu device's weight-only int8 linear on numpy (the contract of backends/webgpu/int8.py):
the int8 weight unpacked from its 32-bit words, multiplied in float32, the scale applied after."""

from .cpu_arrays import np, view


def int8_linear(out, x, packed, scale, bias):
    """out (M, N) = x (M, K) @ q^T * scale (+ bias); q (N, K) int8 packed 4 per int32 word."""
    n = np()
    K = x.shape[1]
    words = n.ascontiguousarray(view(packed))
    q = words.view(n.int8).reshape(words.shape[0], -1)[:, :K]
    acc = view(x).astype(n.float32) @ q.astype(n.float32).T
    acc *= view(scale).astype(n.float32)
    if bias is not None:
        acc += view(bias).astype(n.float32)
    n.copyto(view(out), acc, casting="unsafe")
