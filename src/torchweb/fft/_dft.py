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
from ..backends import backend_for
from ..ops.join import cat, stack
from ._transform import fits, transform

DIRECT_MAX = 128

_CACHE = {}


def _cached(key, make):
    m = _CACHE.get(key)
    if m is None:
        if key[-1].type == "webgpu" and not _WATCHED:   # (a lost device's matrices go with it)
            _WATCHED.append(True)
            backend_for("webgpu").on_device_lost(lambda _rt: _CACHE.clear())
        m = _CACHE[key] = make()
    return m


_WATCHED = []   # (True once the webgpu device's loss clears _CACHE)


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


def _times(a, b, b_rot):
    """The complex product of the pairs a and b, given b_rot = i b (two products and a sum:
    one fused elementwise kernel)."""
    return a.narrow(-1, 0, 1) * b + a.narrow(-1, 1, 1) * b_rot


def _rot(b):
    """i b of the pairs b."""
    return b.flip(-1) * tensor([-1.0, 1.0], device=b.device)


def _sized(x, dim, n):
    """(n or x's length along dim, x trimmed to n there)."""
    size = x.shape[dim]
    n = size if n is None else n
    return n, (x.narrow(dim, 0, n) if n < size else x)


def _padded(x, dim, n):
    """x zero-padded to n along dim."""
    size = x.shape[dim]
    if n <= size:
        return x
    shape = list(x.shape)
    shape[dim] = n - size
    return cat([x, zeros(*shape, device=x.device)], dim)


def dft(r, sign, n=None):
    """The transform of the pairs r (..., size, 2) along dim -2, trimmed or zero-padded to n."""
    n, r = _sized(r, -2, n)
    if n > 1 and fits(r, n):
        return transform(r, sign, n=n)
    if n > DIRECT_MAX:
        return _bluestein(r, n, sign)
    r = _padded(r, -2, n)
    if n == 1:
        return r
    lead = r.shape[:-2]
    return (r.reshape(-1, 2 * n) @ _complex_matrix(n, sign, r.device)).reshape(*lead, n, 2)


def dft_real(x, sign, m=None, n=None):
    """The first m (all n by default) outputs of the transform of real x (..., size) along
    dim -1, trimmed or zero-padded to n, as pairs (..., m, 2)."""
    n, x = _sized(x, -1, n)
    m = n if m is None else m
    if n > 1 and fits(x, n):
        q = transform(x, sign, real=True, n=n)
        return q.narrow(-2, 0, m) if m < n else q
    if n > DIRECT_MAX:
        return _bluestein(x, n, sign, real=True).narrow(-2, 0, m)
    x = _padded(x, -1, n)
    lead = x.shape[:-1]
    return (x.reshape(-1, n) @ _real_matrix(n, m, sign, x.device)).reshape(*lead, m, 2)


def _chirp(n, sign, device):
    """(n, 2): exp(sign i pi j^2 / n), its angle reduced exactly (j^2 mod 2n) in Python."""
    def make():
        vals = []
        for j in range(n):
            t = math.pi * ((j * j) % (2 * n)) / n
            vals += (math.cos(t), sign * math.sin(t))
        return tensor(vals, device=device).reshape(n, 2)
    return _cached(("chirp", n, sign, device), make)


def _bluestein(r, n, sign, real=False):
    """X_k = c_k sum_j (x_j c_j) conj(c_{k-j}), c_j = exp(sign i pi j^2 / n): a convolution,
    by transforms of a power of two M >= 2n - 1 (r: pairs (..., m, 2), or real (..., m), m <= n
    points, the rest zeros)."""
    size = 1 << (2 * n - 2).bit_length()
    if not fits(r, size):
        raise RuntimeError(f"torchweb's fft of {n} points would need a {size}-point transform, "
                           "longer than this device's fft kernel takes")
    dev = r.device
    c = _chirp(n, sign, dev)

    def kernel():   # the transform of conj(c) laid out circularly over M, and i times it
        b = c * tensor([1.0, -1.0], device=dev)
        ext = cat([b, zeros(size - 2 * n + 1, 2, device=dev), b[1:].flip(0)], 0)
        f = dft(ext, -1)
        return f, _rot(f)

    def scaled():   # c / M and i times it: the last product and the inverse's 1 / M at once
        s = c * (1.0 / size)
        return s, _rot(s)
    spectrum, spectrum_rot = _cached(("blue", n, sign, dev), kernel)
    m = r.shape[-1 if real else -2]
    if real:
        a = r.unsqueeze(-1) * c.narrow(0, 0, m)
    else:
        a = _times(r, c.narrow(0, 0, m), _cached(("chirp_rot", n, sign, dev), lambda: _rot(c)).narrow(0, 0, m))
    conv = dft(_times(dft(a, -1, size), spectrum, spectrum_rot), 1).narrow(-2, 0, n)
    return _times(conv, *_cached(("chirp_scaled", n, sign, dev), scaled))


def c2r(r, n):
    """The real inverse transform (unnormalized) of length n of the half spectrum r
    (..., n // 2 + 1, 2): a matmul for short lengths without a primitive, else the real part
    of the complex transform of the half spectrum (zero-padded to n) weighted 2 where its
    conjugate mirror image would be: the mirror's terms are the conjugates of these, so the
    real part of the full sum is the same (the imaginary parts of X_0 and X_{n/2} drop out,
    as PyTorch's C2R transforms ignore them)."""
    m = r.shape[-2]
    if n <= DIRECT_MAX and not fits(r, n):
        lead = r.shape[:-2]
        return (r.reshape(-1, 2 * m) @ _c2r_matrix(m, n, r.device)).reshape(*lead, n)
    return dft(r * _hermitian_weights(m, n, r.device), 1, n).select(-1, 0)


def _hermitian_weights(m, n, device):
    """(m, 1): 1 for X_0 and X_{n/2}, which have no mirror image, 2 for the others."""
    return _cached(("hw", m, n, device), lambda: tensor(
        [[1.0] if k == 0 or 2 * k == n else [2.0] for k in range(m)], device=device))
