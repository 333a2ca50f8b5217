"""Philox4x32-10 on the host (numpy), the same stream as the GPU kernel
(backends/webgpu/kernels/random.py), so the cpu device draws the same numbers."""


def philox(np, n, seed, call):
    """(4, n) uint32 array of the draws for elements 0..n-1."""
    return philox_at(np, np.arange(n, dtype=np.uint64), seed, call)


def philox_at(np, elements, seed, call, round_=0):
    """(4, len(elements)) uint32 array: the words at counters (element, call, round_, 0), the
    block the samplers (backends/cpu_samplers.py) draw for an element's round_-th try."""
    c0 = elements.astype(np.uint64)
    c1 = np.full(len(c0), call & 0xFFFFFFFF, dtype=np.uint64)
    c2 = np.full(len(c0), round_ & 0xFFFFFFFF, dtype=np.uint64)
    c3 = np.zeros(len(c0), dtype=np.uint64)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    mask = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & mask,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & mask)
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return np.stack([c0, c1, c2, c3]).astype(np.uint32)


def values(np, kind, n, seed, call, a, b):
    x = philox(np, n, seed, call)
    scale = np.float32(5.9604644775390625e-08)
    if kind == "uniform":
        u = (x[0] >> np.uint32(8)).astype(np.float32) * scale
        return np.float32(a) + (np.float32(b) - np.float32(a)) * u
    if kind == "normal":
        u1 = ((x[0] >> np.uint32(8)) + np.uint32(1)).astype(np.float32) * scale
        u2 = (x[1] >> np.uint32(8)).astype(np.float32) * scale
        z = np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(np.float32(6.283185307179586) * u2)
        return np.float32(a) + np.float32(b) * z.astype(np.float32)
    if kind == "randint":
        return (a + (x[0] % np.uint32(b)).astype(np.int64))
    if kind == "bernoulli":
        return (x[0] >> np.uint32(8)).astype(np.float32) * scale < np.float32(a)
    raise ValueError(kind)
