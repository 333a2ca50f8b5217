"""The discrete Fourier transform on pair tensors: a complex signal along dim -2 of r (..., n, 2),
the layout of a complex tensor's view_as_real, so no transposes at the edges.

- a length the device's fft primitive takes (webgpu: powers of two, Stockham kernels; cpu:
  any, numpy.fft): that primitive, as an autograd op (_transform.py);
- other lengths up to DIRECT_MAX: one matmul with the cached (2n, 2n) matrix of cos/sin pairs
  (interleaved rows and columns);
- longer ones: Bluestein's chirp-z, a convolution by transforms of a power of two (the primitive).
Real input takes the real matrices (n, 2m): half the work of the complex ones, or the
primitive's real-input form. Transforms are unnormalized; sign -1 is the forward transform,
+1 the inverse."""

import math

from .._creation import arange, tensor, zeros
from ..ops.join import cat, stack
from ._transform import fits, transform

DIRECT_MAX = 128

_CACHE = {}


def _cached(key, make):
    m = _CACHE.get(key)
    if m is None:
        m = _CACHE[key] = make()
    return m


def _angles(rows, cols, n, device):
    """2 pi (j k mod n) / n for j < rows, k < cols, reduced to (-pi, pi] before it is rounded to
    float32 (so cos/sin see small arguments)."""
    j = arange(rows, device=device).reshape(-1, 1)
    k = arange(cols, device=device).reshape(1, -1)
    m = (j * k) % n   # (rows * cols < 2**31: the GPU holds int64 in 32 bits)
    m = m - (m > n // 2).long() * n
    return m.float() * (2 * math.pi / n)


def _complex_matrix(n, sign, device):
    """(2n, 2n): [a0 b0 a1 b1 ...] @ M = the transform's pairs, for x = a + ib."""
    def make():
        t = _angles(n, n, n, device)
        c, s = t.cos(), t.sin() * sign
        return stack([stack([c, s], -1), stack([-s, c], -1)], 1).reshape(2 * n, 2 * n)
    return _cached(("c", n, sign, device), make)


def _real_matrix(n, m, sign, device):
    """(n, 2m): a real row @ M = the first m outputs' pairs."""
    def make():
        t = _angles(n, m, n, device)
        return stack([t.cos(), t.sin() * sign], -1).reshape(n, 2 * m)
    return _cached(("r", n, m, sign, device), make)


def _c2r_matrix(m, n, device):
    """(2m, n): the pairs of X_0..X_{m-1} (the half of a Hermitian spectrum) @ M = the real
    inverse transform of length n (unnormalized). The imaginary parts of X_0 and X_{n/2} meet
    sin 0 and sin(pi j): ignored, as PyTorch's C2R transforms do."""
    def make():
        t = _angles(m, n, n, device)
        w = tensor([1.0 if k == 0 or 2 * k == n else 2.0 for k in range(m)], device=device).reshape(m, 1)
        return stack([t.cos() * w, -(t.sin() * w)], 1).reshape(2 * m, n)
    return _cached(("c2r", m, n, device), make)


def _mul_pairs(a, b):
    """The complex product of pair tensors (broadcasting)."""
    ar, ai, br, bi = a.select(-1, 0), a.select(-1, 1), b.select(-1, 0), b.select(-1, 1)
    return stack([ar * br - ai * bi, ar * bi + ai * br], -1)


def dft(r, sign):
    """The transform of the pairs r (..., n, 2) along dim -2."""
    n = r.shape[-2]
    if n == 1:
        return r
    if fits(r, n):
        return transform(r, sign)
    if n > DIRECT_MAX:
        return _bluestein(r, n, sign)
    lead = r.shape[:-2]
    return (r.reshape(-1, 2 * n) @ _complex_matrix(n, sign, r.device)).reshape(*lead, n, 2)


def dft_real(x, sign, m=None):
    """The first m (all n by default) outputs of the transform of real x (..., n) along dim -1,
    as pairs (..., m, 2)."""
    n = x.shape[-1]
    m = n if m is None else m
    if n > 1 and fits(x, n):
        q = transform(x, sign, real=True)
        return q.narrow(-2, 0, m) if m < n else q
    if n > DIRECT_MAX:
        return dft(stack([x, zeros(x.shape, device=x.device)], -1), sign).narrow(-2, 0, m)
    lead = x.shape[:-1]
    return (x.reshape(-1, n) @ _real_matrix(n, m, sign, x.device)).reshape(*lead, m, 2)


def _chirp(n, sign, device):
    """(n, 2): exp(sign i pi j^2 / n), its angle reduced exactly (j^2 mod 2n) in Python."""
    def make():
        vals = []
        for j in range(n):
            t = math.pi * ((j * j) % (2 * n)) / n
            vals.append([math.cos(t), sign * math.sin(t)])
        return tensor(vals, device=device)
    return _cached(("chirp", n, sign, device), make)


def _bluestein(r, n, sign):
    """X_k = c_k sum_j (x_j c_j) conj(c_{k-j}), c_j = exp(sign i pi j^2 / n): a convolution,
    by transforms of a power of two M >= 2n - 1."""
    size = 1 << (2 * n - 2).bit_length()
    c = _chirp(n, sign, r.device)

    def kernel():   # the transform of conj(c) laid out circularly over M
        b = c * tensor([1.0, -1.0], device=r.device)
        ext = cat([b, zeros(size - 2 * n + 1, 2, device=r.device), b[1:].flip(0)], 0)
        return dft(ext, -1)
    spectrum = _cached(("blue", n, sign, r.device), kernel)
    a = _mul_pairs(r, c)
    a = cat([a, zeros(*a.shape[:-2], size - n, 2, device=r.device)], -2)
    conv = dft(_mul_pairs(dft(a, -1), spectrum), 1).narrow(-2, 0, n) * (1.0 / size)
    return _mul_pairs(conv, c)


def c2r(r, n):
    """The real inverse transform (unnormalized) of length n of the half spectrum r
    (..., n // 2 + 1, 2): a matmul for short lengths without a primitive, else the full
    spectrum's complex transform (whose real part ignores the imaginary parts of X_0 and
    X_{n/2}, as the matrix does)."""
    m = r.shape[-2]
    if n <= DIRECT_MAX and not fits(r, n):
        lead = r.shape[:-2]
        return (r.reshape(-1, 2 * m) @ _c2r_matrix(m, n, r.device)).reshape(*lead, n)
    tail = r.narrow(-2, 1, (n - 1) // 2).flip(-2) * tensor([1.0, -1.0], device=r.device)
    full = cat([r.narrow(-2, 0, n // 2 + 1), tail], -2)
    return dft(full, 1).select(-1, 0)
