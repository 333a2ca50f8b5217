"""Window functions (torch.hann_window, hamming_window, blackman_window, bartlett_window,
kaiser_window), computed as PyTorch computes them: from arange in the requested dtype, with a
periodic window being the symmetric window one longer with its last sample dropped."""

import math
import operator

from ..elementwise import call
from ..registry import define
from ... import _dtype as D
from ..._creation import arange, ones, tensor
from ..join import cat


def _window(name, window_length, periodic, dtype, device, requires_grad, body):
    dtype = D.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        w = ones(window_length, dtype=dtype, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        w = body(arange(n, dtype=dtype, device=device), n)
        if periodic:
            w = w.narrow(0, 0, window_length).contiguous()
    return w.requires_grad_(requires_grad) if requires_grad else w


def _length(name, window_length):
    """window_length as an int (anything with __index__: a numpy integer, a 0-d integer tensor)."""
    try:
        if isinstance(window_length, bool):
            raise TypeError
        return operator.index(window_length)
    except TypeError:
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}") from None


def _hamming_body(alpha, beta):
    def body(n, N):
        return call("cos", n * (math.pi * 2.0 / (N - 1))) * -beta + alpha
    return body


@define("hann_window", "creation", method=False,
        doc="hann_window(window_length, periodic=True, *, dtype=None, layout=torch.strided, device=None, "
            "requires_grad=False) -> Tensor\n\n0.5 - 0.5 cos(2 pi n / (N - 1)); periodic: N = window_length + 1 "
            "with the last sample dropped.")
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                pin_memory=False):
    n = _length("hann_window", window_length)
    return _window("hann_window", n, periodic, dtype, device, requires_grad, _hamming_body(0.5, 0.5))


@define("hamming_window", "creation", method=False,
        doc="hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, "
            "layout=torch.strided, device=None, requires_grad=False) -> Tensor\n\n"
            "alpha - beta cos(2 pi n / (N - 1)).")
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    n = _length("hamming_window", window_length)
    return _window("hamming_window", n, periodic, dtype, device, requires_grad,
                   _hamming_body(float(alpha), float(beta)))


def _blackman(n, N):
    step = n * (math.pi / (N - 1))
    return call("cos", step * 4) * 0.08 - call("cos", step * 2) * 0.5 + 0.42


@define("blackman_window", "creation", method=False,
        doc="blackman_window(window_length, periodic=True, *, dtype=None, layout=torch.strided, device=None, "
            "requires_grad=False) -> Tensor\n\n0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1)).")
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    n = _length("blackman_window", window_length)
    return _window("blackman_window", n, periodic, dtype, device, requires_grad, _blackman)


def _bartlett(n, N):
    w = n * (2.0 / (N - 1))
    half = ((N - 1) >> 1) + 1          # the rising half; the rest is 2 - w
    return cat([w.narrow(0, 0, half), 2 - w.narrow(0, half, N - half)])


@define("bartlett_window", "creation", method=False,
        doc="bartlett_window(window_length, periodic=True, *, dtype=None, layout=torch.strided, device=None, "
            "requires_grad=False) -> Tensor\n\nThe triangular window 1 - |2n / (N - 1) - 1|.")
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    n = _length("bartlett_window", window_length)
    return _window("bartlett_window", n, periodic, dtype, device, requires_grad, _bartlett)


def _kaiser_body(beta):
    def body(n, N):
        alpha = (N - 1) / 2.0
        r = (n - alpha) / alpha
        arg = call("sqrt", call("clamp_min", 1 - r * r, 0.0)) * beta
        return call("i0", arg) / call("i0", tensor(beta, dtype=n.dtype, device=n.device))
    return body


@define("kaiser_window", "creation", method=False,
        doc="kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=torch.strided, "
            "device=None, requires_grad=False) -> Tensor\n\n"
            "I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta), N = window_length - 1.")
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    n = _length("kaiser_window", window_length)
    return _window("kaiser_window", n, periodic, dtype, device, requires_grad, _kaiser_body(float(beta)))
