"""The discrete Fourier transform as float32 tensor ops (so autograd and both devices come with
it), on pair tensors: a complex signal along dim -2 of r (..., n, 2), the layout of a complex
tensor's view_as_real, so no transposes at the edges.

- n <= DIRECT_MAX, or a length with no factor up to PRIME_DIRECT_MAX: one matmul with the
  cached (2n, 2n) matrix of cos/sin pairs (interleaved rows and columns);
- n = n1 * n2 (n1 the largest factor <= sqrt n): the four-step Cooley-Tukey split: transforms
  of length n1, a twiddle multiply, transforms of length n2, a transpose; recursively;
- a length past PRIME_DIRECT_MAX with no split (a large prime): Bluestein's chirp-z, a
  convolution by transforms of a power of two.
Real input takes the real matrices (n, 2m): half the work of the complex ones. Transforms are
unnormalized; sign -1 is the forward transform, +1 the inverse."""

import math

from .._creation import arange, tensor, zeros
from ..ops.join import cat, stack

DIRECT_MAX = 128
PRIME_DIRECT_MAX = 1024

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


def _twiddles(n2, n1, sign, device):
    """(n2, n1, 2): exp(sign 2 pi i j2 k1 / n)."""
    def make():
        t = _angles(n2, n1, n2 * n1, device)
        return stack([t.cos(), t.sin() * sign], -1)
    return _cached(("t", n2, n1, sign, device), make)


def _split(n):
    """The largest factor of n up to sqrt(n) (1 for a prime)."""
    for f in range(math.isqrt(n), 1, -1):
        if n % f == 0:
            return f
    return 1


def _mul_pairs(a, b):
    """The complex product of pair tensors (broadcasting)."""
    ar, ai, br, bi = a.select(-1, 0), a.select(-1, 1), b.select(-1, 0), b.select(-1, 1)
    return stack([ar * br - ai * bi, ar * bi + ai * br], -1)


def dft(r, sign):
    """The transform of the pairs r (..., n, 2) along dim -2."""
    n = r.shape[-2]
    if n == 1:
        return r
    n1 = _split(n) if n > DIRECT_MAX else 1
    if n1 == 1 and n > PRIME_DIRECT_MAX:
        return _bluestein(r, n, sign)
    if n1 == 1:
        lead = r.shape[:-2]
        return (r.reshape(-1, 2 * n) @ _complex_matrix(n, sign, r.device)).reshape(*lead, n, 2)
    return _four_step(r, n, n1, sign, None)


def dft_real(x, sign, m=None):
    """The first m (all n by default) outputs of the transform of real x (..., n) along dim -1,
    as pairs (..., m, 2)."""
    n = x.shape[-1]
    m = n if m is None else m
    n1 = _split(n) if n > DIRECT_MAX else 1
    if n1 == 1 and n > PRIME_DIRECT_MAX:
        return dft(stack([x, zeros(x.shape, device=x.device)], -1), sign).narrow(-2, 0, m)
    lead = x.shape[:-1]
    if n1 == 1:
        return (x.reshape(-1, n) @ _real_matrix(n, m, sign, x.device)).reshape(*lead, m, 2)
    return _four_step(x, n, n1, sign, m)


def _four_step(x, n, n1, sign, m):
    """j = n2 j1 + j2, k = k1 + n1 k2: length-n1 transforms over j1, the twiddles, length-n2
    transforms over j2. x: pairs (..., n, 2), or real (..., n) when m (outputs kept) is given."""
    n2 = n // n1
    real = m is not None
    lead = x.shape[:-1] if real else x.shape[:-2]
    if real:
        q = x.reshape(*lead, n1, n2).transpose(-1, -2)          # (..., j2, j1)
        q = dft_real(q, sign)                                   # (..., j2, k1, 2)
    else:
        q = x.reshape(*lead, n1, n2, 2).transpose(-3, -2)       # (..., j2, j1, 2)
        q = dft(q, sign)
    q = _mul_pairs(q, _twiddles(n2, n1, sign, x.device))
    q = dft(q.transpose(-3, -2), sign)                          # (..., k1, k2, 2)
    q = q.transpose(-3, -2).reshape(*lead, n, 2)                # k = k1 + n1 k2
    return q.narrow(-2, 0, m) if real and m < n else q


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
    (..., n // 2 + 1, 2): a matmul, or the full spectrum's complex transform."""
    m = r.shape[-2]
    if n <= PRIME_DIRECT_MAX and (n <= DIRECT_MAX or _split(n) == 1):
        lead = r.shape[:-2]
        return (r.reshape(-1, 2 * m) @ _c2r_matrix(m, n, r.device)).reshape(*lead, n)
    tail = r.narrow(-2, 1, (n - 1) // 2).flip(-2) * tensor([1.0, -1.0], device=r.device)
    full = cat([r.narrow(-2, 0, n // 2 + 1), tail], -2)
    return dft(full, 1).select(-1, 0)
