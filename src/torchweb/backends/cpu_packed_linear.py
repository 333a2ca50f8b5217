"""The cpu device's linear layers with packed weights on numpy (the contract of
backends/webgpu/packed_linear.py): the int8, bfloat16 or float16 weight unpacked from its 32-bit words,
multiplied in float32, the scale applied after."""

from .cpu_arrays import np, view


def _unpacked(n, packed, K, fmt):
    words = n.ascontiguousarray(view(packed))
    if fmt == "int8":
        return words.view(n.int8).reshape(words.shape[0], -1)[:, :K].astype(n.float32)
    if fmt == "float16":
        return words.view(n.float16).reshape(words.shape[0], -1)[:, :K].astype(n.float32)
    halves = words.view(n.uint16).reshape(words.shape[0], -1)[:, :K]
    return (halves.astype(n.uint32) << n.uint32(16)).view(n.float32)


def packed_linear(out, x, packed, scale, bias, fmt):
    """out (M, N) = x (M, K) @ q^T * scale (+ bias); q (N, K) of format fmt packed in int32 words."""
    n = np()
    acc = view(x).astype(n.float32) @ _unpacked(n, packed, x.shape[1], fmt).T
    if scale is not None:
        acc *= view(scale).astype(n.float32)
    if bias is not None:
        acc += view(bias).astype(n.float32)
    n.copyto(view(out), acc, casting="unsafe")


def pack_half(out, w, fmt):
    """out (N, ceil(K / 2)) int32 = w (N, K) of dtype fmt (bfloat16: float32 words; float16),
    two values a word."""
    n = np()
    N, K = w.shape
    halves = n.zeros((N, out.shape[1] * 2), dtype=n.uint16)
    if fmt == "float16":
        halves[:, :K] = n.ascontiguousarray(view(w), dtype=n.float16).view(n.uint16)
    else:
        halves[:, :K] = n.ascontiguousarray(view(w), dtype=n.float32).view(n.uint32) >> n.uint32(16)
    n.copyto(view(out), halves.view(n.int32))
