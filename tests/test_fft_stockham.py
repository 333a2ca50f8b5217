"""torch.fft over the backends' fft primitive (webgpu: the Stockham kernels of
backends/webgpu/kernels/fft_stockham.py; cpu: numpy.fft) against PyTorch on both devices:
every power of two from 2 to 2^20 (one pass in workgroup memory up to 4096 points, or 2048
under a browser's default limits, two passes past it), lengths with odd factors (Bluestein over power-of-two transforms), batched and
strided inputs (no copy where the batch dims merge), each norm, gradients, and the number of
dispatches of a 1M-point transform.

Tolerance: a float32 FFT's error grows as u log2 n (u = 2^-24 the unit roundoff) times the
signal's scale; cuFFT and pocketfft reach about 1e-7 log2 n of the largest output, and so do
these kernels (2.3e-7 at 2^20 against float64). Results are compared with PyTorch's float32
ones, whose own error adds in: ERR * log2 n of the largest output, ERR = 2e-7 for powers of
two (8 passes of rounding at most a pass, headroom 3x) and 4e-7 for Bluestein's three transforms
of 4n points and its chirp products."""

import math

import pytest
import torch
import torchweb

from complex_oracle import cclose

POW2 = 2e-7
BLUESTEIN = 4e-7


def _z(*shape, seed=0, cplx=True):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=torch.cfloat if cplx else torch.float32, generator=g)


def cours(t, device, requires_grad=False):
    """t's values as a torchweb leaf on device (through numpy: a million points in a blink)."""
    if t.is_complex():
        z = torchweb.view_as_complex(torchweb.as_tensor(torch.view_as_real(t.detach()).numpy().copy(), device=device))
    else:
        z = torchweb.as_tensor(t.detach().numpy().copy(), device=device)
    return z.requires_grad_(requires_grad)


def _err(got, want):
    """max |got - want| over max |want| (complex as pairs)."""
    g = torch.tensor(torchweb.view_as_real(got.resolve_conj()).cpu().numpy() if got.is_complex() else got.cpu().numpy())
    w = torch.view_as_real(want.resolve_conj()) if want.is_complex() else want
    assert tuple(g.shape) == tuple(w.shape)
    return float((g - w).abs().max() / w.abs().max())


def _bound(n, per):
    return per * max(1.0, math.log2(max(n, 2)))


@pytest.mark.parametrize("logn", range(1, 21))
def test_powers_of_two(device, logn):
    n = 1 << logn
    batch = (3,) if n <= 4096 else ()
    z = _z(*batch, n, seed=logn)
    Z = cours(z, device)
    assert _err(torchweb.fft.fft(Z), torch.fft.fft(z)) < _bound(n, POW2)
    if n <= 1 << 16:
        assert _err(torchweb.fft.ifft(Z), torch.fft.ifft(z)) < _bound(n, POW2)
        x = z.real.contiguous()
        assert _err(torchweb.fft.rfft(cours(x, device)), torch.fft.rfft(x)) < _bound(n, POW2)


@pytest.mark.parametrize("n", [3, 12, 129, 250, 1000, 1031, 4100, 6144, 12289])
def test_odd_factors(device, n):
    """Lengths past 128 that are no power of two: Bluestein over power-of-two transforms."""
    z = _z(2, n, seed=n)
    Z = cours(z, device)
    assert _err(torchweb.fft.fft(Z), torch.fft.fft(z)) < _bound(n, BLUESTEIN)
    assert _err(torchweb.fft.ifft(Z), torch.fft.ifft(z)) < _bound(n, BLUESTEIN)
    x = z.real.contiguous()
    assert _err(torchweb.fft.rfft(cours(x, device)), torch.fft.rfft(x)) < _bound(n, BLUESTEIN)
    y = torch.fft.rfft(x)
    assert _err(torchweb.fft.irfft(cours(y, device), n=n), torch.fft.irfft(y, n=n)) < _bound(n, BLUESTEIN)


@pytest.mark.parametrize("n", [16, 2048, 8192])
def test_batched_and_strided(device, n):
    """The transformed dim strided (fft along dim 0), batch dims that merge into one or two
    strides, and ones that do not (a copy), against PyTorch."""
    z = _z(n, 3, 2, seed=2)
    Z = cours(z, device)
    for dim in (0, 1, 2):
        assert _err(torchweb.fft.fft(Z, dim=dim), torch.fft.fft(z, dim=dim)) < _bound(n, POW2)
    zp = _z(2, 3, 4, n, seed=3)
    Zp = cours(zp, device)
    perm = (2, 0, 1, 3)   # (batch dims that do not merge: strides 1*n, 12*n, 4*n)
    got = torchweb.fft.ifft(Zp.permute(*perm), norm="ortho")
    assert _err(got, torch.fft.ifft(zp.permute(*perm), norm="ortho")) < _bound(n, POW2)
    got = torchweb.fft.fft(Zp[:, 1:, ::2], dim=-1)   # a slice and a step: offset and strides
    assert _err(got, torch.fft.fft(zp[:, 1:, ::2], dim=-1)) < _bound(n, POW2)
    x = _z(5, n, seed=4, cplx=False)
    X = cours(x, device)
    assert _err(torchweb.fft.rfft(X.t(), dim=0), torch.fft.rfft(x.t(), dim=0)) < _bound(n, POW2)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [64, 4096, 1000])
def test_each_norm(device, norm, n):
    z = _z(2, n, seed=5)
    x = z.real.contiguous()
    Z, X = cours(z, device), cours(x, device)
    F, T = torchweb.fft, torch.fft
    per = POW2 if n & (n - 1) == 0 else BLUESTEIN
    for got, want in [(F.fft(Z, norm=norm), T.fft(z, norm=norm)),
                      (F.ifft(Z, norm=norm), T.ifft(z, norm=norm)),
                      (F.rfft(X, norm=norm), T.rfft(x, norm=norm)),
                      (F.irfft(Z, norm=norm), T.irfft(z, norm=norm)),
                      (F.hfft(Z, norm=norm), T.hfft(z, norm=norm)),
                      (F.ihfft(X, norm=norm), T.ihfft(x, norm=norm)),
                      (F.fft2(Z.reshape(2, 2, n // 2), norm=norm), T.fft2(z.reshape(2, 2, n // 2), norm=norm))]:
        assert _err(got, want) < _bound(n, per)


def _same_gradient(loss, x, device, atol=1e-4):
    """loss's gradient at x (real or complex) on device, against PyTorch's."""
    tx = x.clone().requires_grad_()
    loss(torch, tx).backward()
    X = cours(x, device, True)
    loss(torchweb, X).backward()
    cclose(X.grad, tx.grad, rtol=1e-4, atol=atol)


@pytest.mark.parametrize("n", [256, 4096])
def test_gradients_through_the_kernel(device, n):
    w = _z(2, n, seed=7)
    W = cours(w, device)
    _same_gradient(lambda lib, t: (lib.fft.fft(t, norm="ortho") * (w if lib is torch else W)).real.sum(),
                   _z(2, n, seed=6), device, 1e-5)
    _same_gradient(lambda lib, t: lib.fft.rfft(t).abs().sum(), _z(2, n, seed=6, cplx=False), device, 1e-3)


GRADIENT_CASES = {
    "fft_padded": lambda lib, t: lib.view_as_real(lib.fft.fft(t, n=64)).pow(2).sum(),
    "rfft_padded": lambda lib, t: lib.fft.rfft(t, n=128, norm="forward").abs().sum(),
    "irfft": lambda lib, t: lib.fft.irfft(lib.fft.rfft(t) * 1j, n=64).sin().sum(),
    "hfft_bluestein": lambda lib, t: lib.fft.hfft(lib.fft.rfft(t), n=300).pow(2).sum() / 300,
    "ifft_dim0": lambda lib, t: lib.fft.ifft(t.reshape(2, 25).t(), dim=0, norm="ortho").abs().sum(),
}


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_more_gradients(device, case):
    """Zero padding in the kernel (its backward keeps the given points), the weighted half
    spectrum of irfft/hfft, Bluestein's products, a strided transform."""
    _same_gradient(GRADIENT_CASES[case], _z(50, seed=10, cplx=False), device)


def test_double_backward(device):
    x = _z(32, seed=8, cplx=False)
    tx = x.clone().requires_grad_()
    g, = torch.autograd.grad(torch.fft.rfft(tx).abs().pow(2).sum(), tx, create_graph=True)
    g.pow(2).sum().backward()
    X = cours(x, device, True)
    G, = torchweb.autograd.grad(torchweb.fft.rfft(X).abs().pow(2).sum(), X, create_graph=True)
    G.pow(2).sum().backward()
    cclose(G, g, rtol=1e-4, atol=1e-3)
    cclose(X.grad, tx.grad, rtol=1e-4, atol=1e-2)


def _count_dispatches(fn):
    """(the webgpu dispatches recorded while fn runs and its result is realized, that result)."""
    from torchweb.backends.webgpu.runtime import get_runtime
    rt = get_runtime()
    torchweb.webgpu.synchronize()
    recorded = []
    rt.record = lambda *args, **kw: (recorded.append(args[0][1]), type(rt).record(rt, *args, **kw))[1]
    try:
        out = fn()
        torchweb.webgpu.synchronize()
    finally:
        del rt.record   # (the class's method again)
    return len(recorded), out


def test_a_million_points_in_two_dispatches():
    """fft of 2^20 complex points: two Stockham passes of 1024 points each; rfft the same
    (the kernel reads the real input as pairs with zero imaginary parts)."""
    z = _z(1 << 20, seed=9)
    Z = cours(z, "webgpu")
    count, got = _count_dispatches(lambda: torchweb.fft.fft(Z))
    assert count == 2
    assert _err(got, torch.fft.fft(z)) < _bound(1 << 20, POW2)
    x = z.real.contiguous()
    X = cours(x, "webgpu")
    count, got = _count_dispatches(lambda: torchweb.fft.rfft(X))
    assert count == 2
    B = cours(_z(64, 4096), "webgpu")
    count, _ = _count_dispatches(lambda: torchweb.fft.fft(B))
    assert count <= 2   # (64 x 4096 batched: one pass with 32 KiB of workgroup memory, else two of 64)


@pytest.mark.parametrize("shared", [16, 128, 2048])
def test_smaller_workgroups_take_more_passes(monkeypatch, shared):
    """Workgroups of fewer points (a browser's 16 KiB: 2048; 16 and 128 force two to five
    passes, the scratch and the output taking turns): the same transforms, a dispatch a pass."""
    from torchweb.backends.webgpu.kernels import fft_stockham
    monkeypatch.setattr(fft_stockham, "shared_points", lambda rt: shared)
    for logn in (4, 10, 13):
        n = 1 << logn
        passes = len(fft_stockham.radices(n, shared))
        z = _z(3, n, seed=logn)
        Z = cours(z, "webgpu").transpose(0, 1)          # (strided along the transformed dim)
        count, got = _count_dispatches(lambda: torchweb.fft.ifft(Z, dim=0, norm="forward"))
        assert count == passes
        assert _err(got, torch.fft.ifft(z.t(), dim=0, norm="forward")) < _bound(n, POW2)
        x = z.real[:, :n - 3].contiguous()              # (zero-padded to n as the first pass reads)
        X = cours(x, "webgpu")
        count, got = _count_dispatches(lambda: torchweb.fft.rfft(X, n=n))
        assert count == passes
        assert _err(got, torch.fft.rfft(x, n=n)) < _bound(n, POW2)
