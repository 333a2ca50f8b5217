"""Fractional max pooling (Graham, "Fractional Max-Pooling"): windows of kernel_size placed at
pseudo-random starts, one sample in [0, 1) per plane and dim (`_random_samples`, drawn when not
given, as PyTorch does). Composed from registered ops: the window starts are computed on the
device in float32 as ATen's generate_intervals does, every window element is gathered from the
flattened plane and the max taken over them, so the gradient comes from gather and max."""

from .. import _dtype as D
from .operands import is_tensor
from .registry import define
from .._creation import arange, full, tensor, rand
from .join import cat

# the spatial dim each column of _random_samples drives (ATen: 2d takes (w, h), 3d (t, h, w))
_SAMPLE_DIM = {2: (1, 0), 3: (0, 1, 2)}
_DIM_WORD = {2: ("height", "width"), 3: ("time", "height", "width")}


def _tuple(v, r, what, name):
    t = tuple(v) if isinstance(v, (list, tuple)) else (v,) * r
    if len(t) == 1:
        t = t * r
    if len(t) != r:
        raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of Ints")
    return tuple(int(x) for x in t)


def _starts(u, in_size, out_size, k):
    """ATen's generate_intervals for one dim: (N, C) samples -> (N, C, out_size) int64 starts,
    int((i + u) * alpha) - int(u * alpha), the last start in_size - k."""
    n, c = u.shape
    last = full((n, c, 1) if out_size else (n, c, 0), in_size - k, dtype=D.int64, device=u.device)
    if out_size <= 1:
        return last
    alpha = (in_size - k) / (out_size - 1)
    alpha = u.new_full((), alpha)                  # rounded to float32 as ATen's scalar_t
    i = arange(out_size - 1, device=u.device).to(u.dtype)
    us = u.unsqueeze(-1)
    seq = ((i + us) * alpha).to(D.int64) - (us * alpha).to(D.int64)
    return cat([seq, last], -1)


def _fractional(r, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    name = f"fractional_max_pool{r}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if not is_tensor(input):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if output_size is None:
        if r == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * r
        ratio = ratio * r if len(ratio) == 1 else ratio
        output_size = [int(input.size(-r + d) * ratio[d]) for d in range(r)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == r + 1 else input.size(0)
        _random_samples = rand(n_batch, input.size(-r - 1), r, dtype=input.dtype,
                                       device=input.device)
    k = _tuple(kernel_size, r, "kernel_size", name)
    o = _tuple(output_size, r, "output_size", name)
    if input.dim() not in (r + 1, r + 2) or any(s == 0 for s in input.shape[1:]):
        raise RuntimeError(f"{name}(): Expected {r + 1}D or {r + 2}D tensor, but got: {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{input.dtype.word}'")
    batched = input.dim() == r + 2
    x = input if batched else input.unsqueeze(0)
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    if _random_samples.dim() != 3 or _random_samples.size(2) != r:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {r}; got {_random_samples.size(2)}.")
    if _random_samples.size(0) < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if _random_samples.size(1) != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    for d in range(r):
        if o[d] + k[d] - 1 > spatial[d]:
            where = name if r == 2 else f"{name}_out"
            raise RuntimeError(f"{where}(): pool {_DIM_WORD[r][d]} {k[d]} too large relative to input "
                               f"{_DIM_WORD[r][d]} {spatial[d]}")
    samples = _random_samples[:n].to(x.dtype)
    plane = 1
    for s in spatial:
        plane *= s
    # base[n, c, *o]: each window's flat start in its plane; koff[K]: the window's own offsets
    base, koff, stride = None, tensor([0], dtype=D.int64, device=x.device), plane
    for d in range(r):
        stride //= spatial[d]
        st = _starts(samples[:, :, _SAMPLE_DIM[r][d]], spatial[d], o[d], k[d]) * stride
        st = st.reshape((n, c) + tuple(o[j] if j == d else 1 for j in range(r)))
        base = st if base is None else base + st
        koff = (koff.unsqueeze(-1) + arange(k[d], device=x.device) * stride).reshape(-1)
    idx = (base.unsqueeze(-1) + koff).reshape(n, c, -1)                 # (n, c, P * K)
    K = koff.numel()
    vals = x.reshape(n, c, plane).gather(2, idx).reshape((n, c) + o + (K,))
    out, arg = vals.max(-1)
    indices = idx.reshape((n, c) + o + (K,)).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    if not batched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def _register(r):
    names = "(kH, kW)" if r == 2 else "(kT, kH, kW)"

    def fractional_max_pool(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                            _random_samples=None):
        return _fractional(r, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)

    def fractional_max_pool_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                         return_indices=False, _random_samples=None):
        return _fractional(r, input, kernel_size, output_size, output_ratio, True, _random_samples)

    sig = ("(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, "
           "_random_samples=None)")
    for fn, suffix, what in ((fractional_max_pool, "", "Tensor"),
                             (fractional_max_pool_with_indices, "_with_indices", "(Tensor, Tensor)")):
        name = f"fractional_max_pool{r}d{suffix}"
        fn.__name__ = fn.__qualname__ = name
        define(name, "pooling", torch=False, method=False, functional=True,
               doc=f"{name}{sig} -> {what}\n\nThe max over {names} windows at pseudo-random starts that "
                   f"give output_size (or output_ratio of the input size); _random_samples, (N, C, {r}) "
                   f"in [0, 1), fixes the starts.")(fn)
    return fractional_max_pool, fractional_max_pool_with_indices


(fractional_max_pool2d, fractional_max_pool2d_with_indices), (fractional_max_pool3d,
                                                              fractional_max_pool3d_with_indices) = (
    _register(2), _register(3))
