"""torch.fft (torchweb/fft/, docs/complex.md) against PyTorch on both devices: every transform
with n/s, dim and norm, lengths that take each algorithm (a matmul, four-step splits, Bluestein
for a large prime), gradients, the frequency and shift helpers, and PyTorch's errors.

Tolerance: float32 transforms agree with PyTorch's to a few 1e-7 of the largest output
(rtol/atol 1e-5 relative to the output's scale below, with headroom for log n growth)."""

import math

import pytest
import torch
import torchweb

from complex_oracle import cours, cclose


def _x(*shape, seed=1, cplx=False):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=torch.cfloat if cplx else torch.float32, generator=g)


def _close(got, want, rel=2e-6):
    scale = float(want.abs().max()) if want.numel() else 1.0
    cclose(got, want, rtol=1e-5, atol=rel * max(scale, 1.0) * max(1.0, math.log2(max(want.shape[-1], 2))))


# 1 and 8: trivial and direct; 129 = 3 * 43 and 256: four-step splits; 1031 (prime > 1024): Bluestein
LENGTHS = [1, 5, 8, 100, 129, 256, 1031]


@pytest.mark.parametrize("n", LENGTHS)
def test_one_dimensional_transforms(device, n):
    x, z = _x(2, n), _x(2, n, cplx=True)
    X, Z = cours(x, device), cours(z, device)
    _close(torchweb.fft.fft(Z), torch.fft.fft(z))
    _close(torchweb.fft.fft(X), torch.fft.fft(x))
    _close(torchweb.fft.ifft(Z), torch.fft.ifft(z))
    _close(torchweb.fft.rfft(X), torch.fft.rfft(x))
    if n > 1:
        y = torch.fft.rfft(x)
        _close(torchweb.fft.irfft(cours(y, device), n=n), torch.fft.irfft(y, n=n))
        _close(torchweb.fft.irfft(cours(y, device)), torch.fft.irfft(y))
        _close(torchweb.fft.hfft(cours(y, device), n=n), torch.fft.hfft(y, n=n))
    _close(torchweb.fft.ihfft(X), torch.fft.ihfft(x))


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_norm_n_and_dim(device, norm):
    z, x = _x(3, 12, 5, cplx=True), _x(3, 12, 5)
    Z, X = cours(z, device), cours(x, device)
    for n in (None, 7, 20):
        _close(torchweb.fft.fft(Z, n=n, dim=1, norm=norm), torch.fft.fft(z, n=n, dim=1, norm=norm))
        _close(torchweb.fft.ifft(Z, n=n, dim=0, norm=norm), torch.fft.ifft(z, n=n, dim=0, norm=norm))
        _close(torchweb.fft.rfft(X, n=n, dim=-2, norm=norm), torch.fft.rfft(x, n=n, dim=-2, norm=norm))
        _close(torchweb.fft.irfft(Z, n=n, dim=1, norm=norm), torch.fft.irfft(z, n=n, dim=1, norm=norm))
        _close(torchweb.fft.hfft(Z, n=n, dim=1, norm=norm), torch.fft.hfft(z, n=n, dim=1, norm=norm))
        _close(torchweb.fft.ihfft(X, n=n, dim=0, norm=norm), torch.fft.ihfft(x, n=n, dim=0, norm=norm))


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_multi_dimensional_transforms(device, norm):
    z, x = _x(2, 6, 10, cplx=True), _x(2, 6, 10)
    Z, X = cours(z, device), cours(x, device)
    F, T = torchweb.fft, torch.fft
    _close(F.fft2(Z, norm=norm), T.fft2(z, norm=norm))
    _close(F.ifft2(Z, norm=norm), T.ifft2(z, norm=norm))
    _close(F.fftn(Z, norm=norm), T.fftn(z, norm=norm))
    _close(F.fftn(X, s=(4, 12), norm=norm), T.fftn(x, s=(4, 12), norm=norm))
    _close(F.ifftn(Z, dim=(0, 2), norm=norm), T.ifftn(z, dim=(0, 2), norm=norm))
    _close(F.rfft2(X, norm=norm), T.rfft2(x, norm=norm))
    _close(F.rfftn(X, s=(5, -1), dim=(0, 1), norm=norm), T.rfftn(x, s=(5, -1), dim=(0, 1), norm=norm))
    y = T.rfft2(x)
    _close(F.irfft2(cours(y, device), norm=norm), T.irfft2(y, norm=norm))
    _close(F.irfft2(cours(y, device), s=(6, 10), norm=norm), T.irfft2(y, s=(6, 10), norm=norm))
    _close(F.irfftn(Z, s=(3, 8), norm=norm), T.irfftn(z, s=(3, 8), norm=norm))
    _close(F.hfft2(Z, norm=norm), T.hfft2(z, norm=norm))
    _close(F.ihfft2(X, norm=norm), T.ihfft2(x, norm=norm))
    _close(F.hfftn(Z, s=(4, 6), norm=norm), T.hfftn(z, s=(4, 6), norm=norm))
    _close(F.ihfftn(X, norm=norm), T.ihfftn(x, norm=norm))


def test_large_transform_accuracy(device):
    """2**16 points: three levels of four-step split (256 x 256, each 16 x 16)."""
    n = 1 << 16
    z = _x(n, cplx=True, seed=7)
    Z = torchweb.view_as_complex(torchweb.tensor(torch.view_as_real(z).tolist(), device=device))
    got = torchweb.view_as_real(torchweb.fft.fft(Z)).cpu().numpy()
    want = torch.view_as_real(torch.fft.fft(z)).numpy()
    import numpy as np
    assert float(np.abs(got - want).max() / np.abs(want).max()) < 2e-6


def test_round_trips(device):
    z = _x(4, 360, cplx=True)
    Z = cours(z, device)
    cclose(torchweb.fft.ifft(torchweb.fft.fft(Z)), z, rtol=1e-5, atol=1e-5)
    x = _x(3, 77)
    X = cours(x, device)
    cclose(torchweb.fft.irfft(torchweb.fft.rfft(X), n=77), x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", ["fft", "rfft", "irfft", "ifft", "fft2_abs", "hfft"])
def test_gradients_match(device, fn):
    x, w = _x(3, 10), _x(3, 10, seed=4)
    losses = {
        "fft": lambda lib, t: lib.fft.fft(t).abs().sum(),
        "rfft": lambda lib, t: (lib.view_as_real(lib.fft.rfft(t, norm="ortho")) * lib.arange(12.0, device=t.device).reshape(6, 2)).sum(),
        "irfft": lambda lib, t: (lib.fft.irfft(lib.fft.rfft(t) * 1j, n=10) ** 2).sum(),
        "ifft": lambda lib, t: lib.view_as_real(lib.fft.ifft(lib.complex(t, t.flip(-1)), n=7)).pow(2).sum(),
        "fft2_abs": lambda lib, t: lib.fft.fft2(t).abs().pow(2).mean(),
        "hfft": lambda lib, t: lib.fft.hfft(lib.fft.rfft(t), n=10).sin().sum(),
    }
    tx = x.clone().requires_grad_()
    losses[fn](torch, tx).backward()
    wx = cours(x, device, True)
    losses[fn](torchweb, wx).backward()
    cclose(wx.grad, tx.grad, rtol=1e-4, atol=1e-4)


def test_complex_input_gradient(device):
    z = _x(2, 9, cplx=True)
    tz = z.clone().requires_grad_()
    torch.fft.fft(tz, norm="ortho").abs().sum().backward()
    wz = cours(z, device, True)
    torchweb.fft.fft(wz, norm="ortho").abs().sum().backward()
    cclose(wz.grad, tz.grad, rtol=1e-4, atol=1e-5)


def test_freqs_and_shifts(device):
    for n in (1, 6, 7):
        for d in (1.0, 0.1):
            cclose(torchweb.fft.fftfreq(n, d, device=device), torch.fft.fftfreq(n, d))
            cclose(torchweb.fft.rfftfreq(n, d, device=device), torch.fft.rfftfreq(n, d))
    x, z = _x(5, 6), _x(5, 6, cplx=True)
    for dim in (None, 0, (0, 1), -1):
        cclose(torchweb.fft.fftshift(cours(x, device), dim), torch.fft.fftshift(x, dim))
        cclose(torchweb.fft.ifftshift(cours(z, device), dim), torch.fft.ifftshift(z, dim))


def test_errors_match(device):
    z, x = _x(8, cplx=True), _x(8)
    cases = [
        lambda lib, Z, X: lib.fft.rfft(Z),
        lambda lib, Z, X: lib.fft.fft(X, norm="bad"),
        lambda lib, Z, X: lib.fft.fft(X, n=0),
        lambda lib, Z, X: lib.fft.fftn(X, s=(2, 2), dim=(0,)),
        lambda lib, Z, X: lib.fft.ihfft(Z),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch, z, x)
        with pytest.raises(RuntimeError) as ours:
            case(torchweb, cours(z, device), cours(x, device))
        assert str(ours.value) == str(theirs.value).split("\n")[0]
    with pytest.raises(RuntimeError, match="complex128"):
        torchweb.fft.fft(torchweb.ones(4, dtype=torchweb.float64))


def test_namespace_is_complete():
    assert sorted(n for n in dir(torch.fft) if not n.startswith("_") and n != "Tensor" and callable(getattr(torch.fft, n))) == \
        sorted(torchweb.fft.__all__)


def test_out_and_empty_dims(device):
    z = _x(6, cplx=True)
    Z = cours(z, device)
    out = torchweb.zeros(6, dtype=torchweb.cfloat, device=device)
    r = torchweb.fft.fft(Z, out=out)
    assert r is out
    _close(out, torch.fft.fft(z))
    x = _x(2, 3)
    _close(torchweb.fft.fftn(cours(x, device), dim=()), torch.fft.fftn(x, dim=()))
