"""torch.fft: discrete Fourier transforms of any length, in float32 (complex64), with gradients,
on both devices (_dft.py: the algorithms), and the frequency and shift helpers."""

import math

from .. import _dtype as D
from .._complex_tensor import ComplexTensor, wrap, pairs
from .._creation import tensor as _tensor, zeros
from .._size import wrap_dim
from ..ops.join import cat, stack
from . import _dft

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _swap(norm):
    """The norm of the transform hfft/ihfft are written with (their direction is the other's)."""
    return _SWAP.get(norm, norm)


def _out(result, out):
    """out= as PyTorch's: the result written there (its shape must match)."""
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape) or out.is_complex() != result.is_complex():
        raise RuntimeError(f"out= must have the result's shape {list(result.shape)} and dtype {result.dtype} "
                           "in torchweb's torch.fft")
    return out.copy_(result)


def _scale(norm, n, forward):
    """The factor norm= puts on a transform of n points."""
    if norm is None or norm == "backward":
        return 1.0 if forward else 1.0 / n
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if norm == "forward":
        return 1.0 / n if forward else 1.0
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _real_input(x, name):
    if isinstance(x, ComplexTensor):
        raise RuntimeError(f"{name} expects a real input tensor, but got ComplexFloat")
    return _float(x)


def _float(x):
    if x.dtype is D.float64:
        raise RuntimeError("torch.fft of float64 would be complex128, which torchweb does not have "
                           "(WebGPU has no 64-bit floats); cast with .float()")
    if x.dtype is D.float16:
        raise RuntimeError("Unsupported dtype Half")
    return x if x.dtype is D.float32 else x.float()


def _points(n, size):
    n = size if n is None else n
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _resize(x, n, d):
    """x trimmed or zero-padded to n along dim d."""
    size = x.shape[d]
    if n < size:
        return x.narrow(d, 0, n)
    if n > size:
        shape = list(x.shape)
        shape[d] = n - size
        return cat([x, zeros(*shape, device=x.device)], d)
    return x


def _scaled(r, factor):
    return r if factor == 1.0 else r * factor


def _c2c(x, n, dim, norm, forward):
    """One complex transform along dim (real x is taken as complex, at half the work)."""
    d = wrap_dim(dim, x.dim())
    n = _points(n, x.shape[d])
    sign = -1 if forward else 1
    if isinstance(x, ComplexTensor):
        r = _dft.dft(x._r.movedim(d, -2), sign, n)
    else:
        r = _dft.dft_real(_float(x).movedim(d, -1), sign, n=n)
    return wrap(pairs(_scaled(r, _scale(norm, n, forward)).movedim(-2, d)))


def _r2c(x, n, dim, norm, forward, name):
    d = wrap_dim(dim, x.dim())
    x = _real_input(x, name)
    n = _points(n, x.shape[d])
    r = _dft.dft_real(x.movedim(d, -1), -1 if forward else 1, n // 2 + 1, n)
    return wrap(pairs(_scaled(r, _scale(norm, n, forward)).movedim(-2, d)))


def _c2r(x, n, dim, norm, forward):
    d = wrap_dim(dim, x.dim())
    if not isinstance(x, ComplexTensor):
        x = wrap(_real_pairs(_float(x)))
    n = _points(n, 2 * (x.shape[d] - 1))
    r = _resize(x._r.movedim(d, -2), n // 2 + 1, -2)
    out = _dft.c2r(r, n)
    return _scaled(out, _scale(norm, n, forward)).movedim(-1, d)


def _real_pairs(x):
    return stack([x, zeros(x.shape, device=x.device)], -1)


def _conj(z):
    return wrap(z._r * _tensor([1.0, -1.0], device=z.device))


# -- one dimension ---------------------------------------------------------------------------
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """fft(input, n=None, dim=-1, norm=None) -> Tensor: the one-dimensional discrete Fourier
    transform (complex64; real input is taken as complex)."""
    return _out(_c2c(input, n, dim, norm, True), out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """ifft(input, n=None, dim=-1, norm=None) -> Tensor: the inverse of fft."""
    return _out(_c2c(input, n, dim, norm, False), out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """rfft(input, n=None, dim=-1, norm=None) -> Tensor: the fft of real input, its n // 2 + 1
    non-negative frequencies."""
    return _out(_r2c(input, n, dim, norm, True, "rfft"), out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """irfft(input, n=None, dim=-1, norm=None) -> Tensor: the real inverse of rfft, of length
    n (2 * (input.size(dim) - 1) by default)."""
    return _out(_c2r(input, n, dim, norm, False), out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """hfft(input, n=None, dim=-1, norm=None) -> Tensor: the fft of a Hermitian-symmetric signal
    given by its first half: a real result of length n."""
    z = input if isinstance(input, ComplexTensor) else wrap(_real_pairs(_float(input)))
    return _out(_c2r(_conj(z), n, dim, _swap(norm), False), out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """ihfft(input, n=None, dim=-1, norm=None) -> Tensor: the inverse of hfft, of real input."""
    # (PyTorch's result is a conjugate view of the forward transform: is_conj() True)
    return _out(_r2c(input, n, dim, _swap(norm), True, "ihfft").conj(), out)


# -- several dimensions ----------------------------------------------------------------------
def _dims(x, s, dim):
    """(sizes, dims) of an n-dimensional transform, as PyTorch reads s and dim."""
    if dim is None:
        dims = list(range(x.dim())) if s is None else list(range(x.dim() - len(s), x.dim()))
    else:
        dims = [wrap_dim(d, x.dim()) for d in ((dim,) if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is None:
        s = [x.shape[d] for d in dims]
    else:
        s = list(s)
        if len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        s = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    return s, dims


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """fftn(input, s=None, dim=None, norm=None) -> Tensor: the transform over several dims."""
    s, dims = _dims(input, s, dim)
    for n, d in zip(s, dims):
        input = _c2c(input, n, d, norm, True)
    return _out(input if isinstance(input, ComplexTensor) else input.to(D.complex64), out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """ifftn(input, s=None, dim=None, norm=None) -> Tensor: the inverse of fftn."""
    s, dims = _dims(input, s, dim)
    for n, d in zip(s, dims):
        input = _c2c(input, n, d, norm, False)
    return _out(input if isinstance(input, ComplexTensor) else input.to(D.complex64), out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """rfftn(input, s=None, dim=None, norm=None) -> Tensor: fftn of real input, the last dim's
    non-negative frequencies only."""
    s, dims = _dims(input, s, dim)
    z = _r2c(input, s[-1], dims[-1], norm, True, "rfftn")
    for n, d in zip(s[:-1], dims[:-1]):
        z = _c2c(z, n, d, norm, True)
    return _out(z, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """irfftn(input, s=None, dim=None, norm=None) -> Tensor: the real inverse of rfftn."""
    given = s is not None
    s, dims = _dims(input, s, dim)
    z = input
    for n, d in zip(s[:-1], dims[:-1]):
        z = _c2c(z, n, d, norm, False)
    last = s[-1] if given else 2 * (input.shape[dims[-1]] - 1)
    return _out(_c2r(z, last, dims[-1], norm, False), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """hfftn(input, s=None, dim=None, norm=None) -> Tensor: the n-dimensional hfft (a real result)."""
    z = input if isinstance(input, ComplexTensor) else wrap(_real_pairs(_float(input)))
    return _out(irfftn(_conj(z), s, dim, _swap(norm)), out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """ihfftn(input, s=None, dim=None, norm=None) -> Tensor: the inverse of hfftn, of real input."""
    return _out(_conj(rfftn(input, s, dim, _swap(norm))), out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor."""
    return _out(fftn(input, s, dim, norm), out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor."""
    return _out(ifftn(input, s, dim, norm), out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor."""
    return _out(rfftn(input, s, dim, norm), out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor."""
    return _out(irfftn(input, s, dim, norm), out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """hfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor."""
    return _out(hfftn(input, s, dim, norm), out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ihfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor."""
    return _out(ihfftn(input, s, dim, norm), out)


# -- helpers ---------------------------------------------------------------------------------
def _freqs(values, n, d, dtype, device, requires_grad):
    t = _tensor(values, dtype=D.float32, device=device) * (1.0 / (n * d))
    if dtype is not None and D.as_dtype(dtype) is not D.float32:
        t = t.to(D.as_dtype(dtype))
    return t.requires_grad_(requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False):
    """fftfreq(n, d=1.0) -> Tensor: the sample frequencies of fft(n points), in cycles per unit
    of d: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)."""
    values = list(range((n - 1) // 2 + 1)) + list(range(-(n // 2), 0))
    return _freqs(values, n, d, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """rfftfreq(n, d=1.0) -> Tensor: the frequencies of rfft(n points): [0, ..., n // 2] / (d n)."""
    return _freqs(list(range(n // 2 + 1)), n, d, dtype, device, requires_grad)


def _shift(input, dim, half):
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    return input.roll([half(input.shape[d]) for d in dims], dims) if dims else input


def fftshift(input, dim=None):
    """fftshift(input, dim=None) -> Tensor: the zero frequency moved to the middle."""
    return _shift(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """ifftshift(input, dim=None) -> Tensor: the inverse of fftshift."""
    return _shift(input, dim, lambda n: (n + 1) // 2)
