"""torch.stft / torch.istft (torchweb/_stft.py) against PyTorch on both devices: options,
round trips, a log-mel front end, gradients, and PyTorch's errors and warnings."""

import math
import warnings

import pytest
import torch
import torchweb

from complex_oracle import cours, cclose


def _signal(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


CASES = [
    dict(n_fft=400, hop_length=160, window="hann"),
    dict(n_fft=64, window="hann", center=False),
    dict(n_fft=64, hop_length=16, win_length=40, window="hamming", pad_mode="constant", normalized=True),
    dict(n_fft=64, onesided=False, window="hann"),
    dict(n_fft=30, hop_length=7, window="blackman"),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_stft_and_istft_match(device, case):
    kw = dict(CASES[case])
    wname = kw.pop("window")
    wl = kw.get("win_length", kw["n_fft"])
    x = _signal(2, 1000)
    tw, ww = getattr(torch, wname + "_window")(wl), getattr(torchweb, wname + "_window")(wl, device=device)
    want = torch.stft(x, window=tw, return_complex=True, **kw)
    got = torchweb.stft(cours(x, device), window=ww, return_complex=True, **kw)
    cclose(got, want, rtol=1e-4, atol=1e-4)
    cclose(torchweb.stft(cours(x[0], device), window=ww, return_complex=True, **kw),
           torch.stft(x[0], window=tw, return_complex=True, **kw), rtol=1e-4, atol=1e-4)
    kw.pop("pad_mode", None)
    if kw.get("center", True):   # (hann without centering: its zero end fails NOLA in both)
        ia = torch.istft(want, window=tw, length=1000, **kw)
        ib = torchweb.istft(got, window=ww, length=1000, **kw)
        cclose(ib, ia, rtol=1e-4, atol=1e-4)
        cclose(torchweb.istft(got, window=ww, **kw), torch.istft(want, window=tw, **kw), rtol=1e-4, atol=1e-4)


def test_return_complex_false_and_complex_input(device):
    x = _signal(300)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        got = torchweb.stft(cours(x, device), 32, window=torchweb.hann_window(32, device=device), return_complex=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.stft(x, 32, window=torch.hann_window(32), return_complex=False)
    cclose(got, want, rtol=1e-4, atol=1e-4)
    z = torch.complex(x, x.flip(0))
    cclose(torchweb.stft(cours(z, device), 32, hop_length=5, window=torchweb.hann_window(32, device=device)),
           torch.stft(z, 32, hop_length=5, window=torch.hann_window(32), return_complex=True), rtol=1e-4, atol=1e-4)


def test_log_mel_front_end_matches_to_1e4(device):
    """whisper's log_mel_spectrogram: Hann window, STFT, |.|^2, a mel filter bank, log10, clamp."""
    t = torch.arange(4000.0) / 16000
    audio = 0.5 * torch.sin(2 * math.pi * 440 * t) + 0.2 * torch.sin(2 * math.pi * 1250 * t)
    filters = torch.rand(80, 201, generator=torch.Generator().manual_seed(3))

    def mel(lib, a, f):
        stft = lib.stft(a, 400, 160, window=lib.hann_window(400, device=a.device), return_complex=True)
        mags = stft[..., :-1].abs() ** 2
        log_spec = lib.clamp(f @ mags, min=1e-10).log10()
        log_spec = lib.maximum(log_spec, log_spec.max() - 8.0)
        return (log_spec + 4.0) / 4.0

    want = mel(torch, audio, filters)
    got = mel(torchweb, cours(audio, device), cours(filters, device))
    cclose(got, want, rtol=1e-4, atol=1e-4)


def test_gradient_through_stft_and_istft(device):
    x = _signal(2, 200)
    losses = {}
    for lib in (torch, torchweb):
        xs = x.clone().requires_grad_() if lib is torch else cours(x, device, True)
        w = lib.hann_window(32) if lib is torch else lib.hann_window(32, device=device)
        s = lib.stft(xs, 32, 8, window=w, return_complex=True)
        loss = s.abs().sum() + lib.istft(s * 0.5, 32, 8, window=w, length=200).pow(2).sum()
        loss.backward()
        losses[lib] = (loss.item(), xs.grad)
    assert losses[torchweb][0] == pytest.approx(losses[torch][0], rel=1e-5)
    cclose(losses[torchweb][1], losses[torch][1], rtol=1e-4, atol=1e-4)


def test_errors_and_warnings_match(device):
    x = _signal(100)
    X = cours(x, device)
    cases = [
        lambda lib, t: lib.stft(t, 16),
        lambda lib, t: lib.stft(t, 200, return_complex=True, window=lib.ones(200, device=t.device)),
        lambda lib, t: lib.stft(t, 16, window=lib.ones(8, device=t.device), return_complex=True),
        lambda lib, t: lib.stft(t, 16, hop_length=0, window=lib.ones(16, device=t.device), return_complex=True),
        lambda lib, t: lib.istft(t, 16),
        lambda lib, t: lib.istft(lib.stft(t, 16, window=lib.ones(16, device=t.device), return_complex=True)[:5], 16),
        lambda lib, t: lib.istft(lib.stft(t, 16, window=lib.ones(16, device=t.device), return_complex=True), 16,
                                 window=lib.zeros(16, device=t.device)),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch, x)
        with pytest.raises(RuntimeError) as ours:
            case(torchweb, X)
        # (PyTorch's messages start with the call's arguments: "stft(...) : expected ...")
        a, b = str(theirs.value).split(" : ")[-1], str(ours.value)
        assert b.endswith(a) or "window overlap add min" in a and "window overlap add min" in b, (a, b)
    with pytest.warns(UserWarning, match="A window was not provided"):
        torchweb.stft(X, 16, return_complex=True)


def test_istft_return_complex_and_length_past_the_frames(device):
    z = torch.complex(_signal(300), _signal(300, seed=2))
    w = torch.hann_window(32)
    s = torch.stft(z, 32, 8, window=w, return_complex=True)
    S, W = cours(s, device), torchweb.hann_window(32, device=device)
    for length in (None, 250, 320):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = torch.istft(s, 32, 8, window=w, return_complex=True, onesided=False, length=length)
        got = torchweb.istft(S, 32, 8, window=W, return_complex=True, onesided=False, length=length)
        cclose(got, want, rtol=1e-4, atol=1e-4)
    x = _signal(300)
    s = torch.stft(x, 32, 8, window=w, return_complex=True)
    cclose(torchweb.istft(cours(s, device), 32, 8, window=W, length=330),
           torch.istft(s, 32, 8, window=w, length=330), rtol=1e-4, atol=1e-4)
