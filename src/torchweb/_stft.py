"""torch.stft and torch.istft: frames (Tensor.unfold, a view) times the window, then torch.fft
along each frame; the inverse overlap-adds the frames' inverse transforms with F.fold and divides
by the summed squared window. PyTorch's argument checks and errors."""

import warnings

from ._complex_tensor import ComplexTensor, wrap
from ._creation import ones, zeros
from .ops.conv import fold
from .ops.join import cat
from .ops.padding import pad as _pad


def _window(window, win_length, n_fft, device, name):
    if window is None:
        why = ("which is known to cause spectral leakage. Other windows such as torch.hann_window or "
               "torch.hamming_window are recommended to reduce spectral leakage." if name == "stft" else
               "Please provide the same window used by stft to make the inversion lossless.")
        warnings.warn(f"A window was not provided. A rectangular window will be applied,{why}To suppress this "
                      "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
                      "device=<device>)`.", UserWarning, stacklevel=3)
        window = ones(win_length, device=device)
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to win_length={win_length}, "
                           f"but got window with size {list(window.shape)}")
    if isinstance(window, ComplexTensor):
        raise NotImplementedError(f"{name} with a complex window is not implemented in torchweb")
    left = (n_fft - win_length) // 2
    if left or win_length < n_fft:
        window = cat([zeros(left, device=window.device), window.float(),
                      zeros(n_fft - win_length - left, device=window.device)])
    return window.float()


def _lengths(n_fft, hop_length, win_length, name):
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if hop <= 0:
        raise RuntimeError(f"{name}: expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got win_length={win}")
    return hop, win


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
    pad_mode='reflect', normalized=False, onesided=None, return_complex=None) -> Tensor

    The short-time Fourier transform of a 1D or 2D (batch, time) signal: (batch?, freq, frames)."""
    is_complex = isinstance(input, ComplexTensor)
    if return_complex is None:
        if not is_complex:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and "
                               "will further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    elif not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will "
                      "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
                      "Note: you can still call torch.view_as_real on the complex output to recover the old "
                      "return format.", UserWarning, stacklevel=2)
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D tensor")
    hop, win = _lengths(n_fft, hop_length, win_length, "stft")
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    if center:
        x = _center_pad(x, n_fft // 2, pad_mode)
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    w = _window(window, win, n_fft, input.device, "stft")
    onesided = not is_complex if onesided is None else onesided
    if onesided and is_complex:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if is_complex:   # (batch, frames, n_fft) pairs: the frames of each part
        frames = wrap(x._r.unfold(-2, n_fft, hop).movedim(-2, -1) * w.reshape(n_fft, 1))
    else:
        frames = x.float().unfold(-1, n_fft, hop) * w
    norm = "ortho" if normalized else "backward"
    from . import fft as _fft  # deferred: load time (torch.fft on first use)
    out = (_fft.rfft if onesided else _fft.fft)(frames, dim=-1, norm=norm).transpose(-1, -2)
    if not batched:
        out = out.squeeze(0)
    return out if return_complex else out._r.view(out._r.shape)


def _center_pad(x, p, pad_mode):
    """x (batch, time) padded by p on each side, as PyTorch pads it (a 3D view, F.pad)."""
    if isinstance(x, ComplexTensor):
        r = x._r.transpose(-1, -2)                                   # (batch, 2, time)
        return wrap(_pad(r, [p, p], pad_mode).transpose(-1, -2).contiguous())
    return _pad(x.unsqueeze(0), [p, p], pad_mode).squeeze(0)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
    normalized=False, onesided=None, length=None, return_complex=False) -> Tensor

    The inverse of stft: the frames' inverse transforms overlap-added, divided by the summed
    squared window (which must not vanish: NOLA)."""
    if not isinstance(input, ComplexTensor):
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft "
                           "with return_complex=True.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex, but got {input.dim()}")
    hop, win = _lengths(n_fft, hop_length, win_length, "istft")
    batched = input.dim() == 3
    z = input if batched else input.unsqueeze(0)
    n_freq, n_frames = z.shape[-2], z.shape[-1]
    onesided = n_freq != n_fft if onesided is None else onesided
    if onesided:
        if n_fft // 2 + 1 != n_freq:
            raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor "
                               f"to match n_fft / 2 + 1 when onesided=True, but got {n_freq}")
        if return_complex:
            raise RuntimeError("cannot have onesided output if window or input is complex")
    elif n_fft != n_freq:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft when onesided=False, but got {n_freq}")
    w = _window(window, win, n_fft, input.device, "istft")
    norm = "ortho" if normalized else "backward"
    spec = z.transpose(-1, -2)                                       # (batch, frames, freq)
    from . import fft as _fft  # deferred: load time (torch.fft on first use)
    if onesided:
        frames = _fft.irfft(spec, n=n_fft, dim=-1, norm=norm)
    else:
        frames = _fft.ifft(spec, n=n_fft, dim=-1, norm=norm)
        if not return_complex:
            frames = frames._r.select(-1, 0)
    total = n_fft + hop * (n_frames - 1)
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    env = _overlap_add((w * w).expand(1, n_frames, n_fft), total, n_fft, hop)[0, :min(end, total)][start:]
    if env.numel() and env.abs().min().item() < 1e-11:
        raise RuntimeError(f"istft(n_fft={n_fft}, hop_length={hop}, win_length={win}, center={int(center)}, "
                           f"normalized={int(normalized)}, onesided={onesided}, length={length}) window "
                           f"overlap add min: {env.abs().min().item():g}")
    if isinstance(frames, ComplexTensor):
        r = frames._r * w.reshape(n_fft, 1)                          # (batch, frames, n_fft, 2)
        y = _overlap_add(r.movedim(-1, 1).reshape(-1, n_frames, n_fft), total, n_fft, hop)
        y = wrap(y.reshape(-1, 2, total).movedim(1, -1).contiguous())
        y = y[:, start:min(end, total)] / env
    else:
        y = _overlap_add(frames * w, total, n_fft, hop)[:, start:min(end, total)] / env
    if end > total:   # (length past the frames: zeros, as PyTorch's)
        if isinstance(y, ComplexTensor):
            y = wrap(cat([y._r, zeros(y.shape[0], end - total, 2, device=y.device)], 1))
        else:
            y = _pad(y, [0, end - total])
    return y if batched else y.squeeze(0)


def _overlap_add(frames, total, n_fft, hop):
    """frames (batch, n_frames, n_fft) summed at hop strides into (batch, total) (F.fold)."""
    out = fold(frames.transpose(1, 2), (1, total), (1, n_fft), stride=(1, hop))
    return out.reshape(frames.shape[0], total)
