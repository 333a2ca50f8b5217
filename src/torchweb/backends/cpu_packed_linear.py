"""The cpu device's linear layers with packed weights on numpy (the contract of
backends/webgpu/packed_linear.py): the int8 or bfloat16 weight unpacked from its 32-bit words,
multiplied in float32, the scale applied after."""

from .cpu_arrays import np, view


def _unpacked(n, packed, K, bits):
    words = n.ascontiguousarray(view(packed))
    if bits == 8:
        return words.view(n.int8).reshape(words.shape[0], -1)[:, :K].astype(n.float32)
    halves = words.view(n.uint16).reshape(words.shape[0], -1)[:, :K]
    return (halves.astype(n.uint32) << n.uint32(16)).view(n.float32)


def packed_linear(out, x, packed, scale, bias, bits):
    """out (M, N) = x (M, K) @ q^T * scale (+ bias); q (N, K) packed 32 / bits per int32 word."""
    n = np()
    acc = view(x).astype(n.float32) @ _unpacked(n, packed, x.shape[1], bits).T
    if scale is not None:
        acc *= view(scale).astype(n.float32)
    if bias is not None:
        acc += view(bias).astype(n.float32)
    n.copyto(view(out), acc, casting="unsafe")


def pack_bfloat16(out, w):
    """out (N, ceil(K / 2)) int32 = bfloat16 w (N, K) (float32 words), two values a word."""
    n = np()
    N, K = w.shape
    halves = n.zeros((N, out.shape[1] * 2), dtype=n.uint16)
    halves[:, :K] = n.ascontiguousarray(view(w), dtype=n.float32).view(n.uint32) >> n.uint32(16)
    n.copyto(view(out), halves.view(n.int32))
