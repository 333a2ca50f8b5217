"""Comparing torchweb results with PyTorch's."""

import math

import torch
import torchweb

TORCH_DTYPE = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "int32": torch.int32,
               "int64": torch.int64, "bool": torch.bool, "uint8": torch.uint8}
OUR_DTYPE = {v: getattr(torchweb, k) for k, v in TORCH_DTYPE.items()}


def ours(t, device, requires_grad=False):
    """A torchweb tensor with the values and dtype of torch tensor t."""
    if t.numel() == 0:  # nested lists cannot say (3, 0, 2)
        r = torchweb.zeros(tuple(t.shape), dtype=OUR_DTYPE[t.dtype], device=device)
    else:
        r = torchweb.tensor(t.detach().tolist(), dtype=OUR_DTYPE[t.dtype], device=device)
    if requires_grad:
        r.requires_grad_(True)
    return r


def theirs(t):
    """A torch tensor with the values and dtype of torchweb tensor t."""
    return torch.tensor(t.tolist(), dtype=TORCH_DTYPE[t.dtype.name]).reshape(tuple(t.shape))


def assert_close(got, expected, rtol=1e-5, atol=1e-5, check_dtype=True, equal_nan=True):
    """got: torchweb tensor (or tuple), expected: torch tensor (or tuple)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            assert_close(g, e, rtol, atol, check_dtype, equal_nan)
        return
    assert isinstance(got, torchweb.Tensor), f"expected a tensor, got {type(got).__name__}"
    assert tuple(got.shape) == tuple(expected.shape), f"shape {tuple(got.shape)} != {tuple(expected.shape)}"
    if check_dtype:
        assert got.dtype.name == str(expected.dtype).replace("torch.", ""), f"dtype {got.dtype} != {expected.dtype}"
    g = theirs(got) if got.numel() < 100000 else fast_theirs(got)  # big: through numpy
    if expected.dtype.is_floating_point:
        torch.testing.assert_close(g.to(expected.dtype), expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        assert torch.equal(g.to(expected.dtype), expected), f"\n got {g}\n expected {expected}"


def finite_or_nan(x):
    return x if math.isfinite(x) else float("nan")


# -- inputs ---------------------------------------------------------------------------------
_counter = [0]


def make(shape, dtype=torch.float32, low=-3.0, high=3.0, special=False, nonzero=False):
    """A deterministic torch tensor of `shape`; `special` puts NaN, +/-inf, 0 and -0 in it,
    `nonzero` keeps zero out (divisors of integer division, which PyTorch refuses)."""
    _counter[0] += 1
    g = torch.Generator().manual_seed(1234 + _counter[0])
    shape = tuple(shape)
    if dtype is torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if not dtype.is_floating_point:
        lo, hi = int(low), int(high) + 1
        if dtype is torch.uint8:
            lo = max(lo, 0)
        t = torch.randint(lo, hi, shape, generator=g).to(dtype)
        if nonzero:
            t = torch.where(t == 0, torch.ones_like(t), t)
        return t
    t = (torch.rand(shape, generator=g) * (high - low) + low).to(dtype)
    if nonzero:
        t = torch.where(t.abs() < 0.1, torch.full_like(t, 0.5), t)
    if special and t.numel():
        flat = t.reshape(-1)
        vals = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0]
        idx = torch.randperm(flat.numel(), generator=g)[:len(vals)]
        for i, v in zip(idx.tolist(), vals):
            flat[i] = v
        t = flat.reshape(shape)
    return t


LAYOUTS = ("contiguous", "transposed", "strided")


def ours_layout(t, device, layout="contiguous"):
    """A torchweb tensor equal to t, laid out as `layout`: contiguous, transposed (a permuted
    view of a contiguous buffer), or strided (every other element of a bigger buffer, with an
    offset). Layouts that a tensor's rank cannot have fall back to contiguous."""
    if layout == "transposed" and t.dim() >= 2:
        return ours(t.transpose(0, -1).contiguous(), device).transpose(0, -1)
    if layout == "strided" and t.dim() >= 1:
        big = torch.zeros(*t.shape[:-1], 2 * t.shape[-1] + 1, dtype=t.dtype)
        big[..., 1::2] = t
        return ours(big, device)[..., 1::2]
    return ours(t, device)


def fast_ours(t, device):
    """ours() for big tensors, through numpy rather than Python lists."""
    return torchweb.tensor(t.numpy(), dtype=OUR_DTYPE[t.dtype], device=device)


def fast_theirs(t):
    """theirs() for big tensors, through numpy."""
    return torch.from_numpy(t.numpy().copy())


def strip_cpu(s):
    """repr of a cpu tensor without its device='cpu' suffix (torch's default device is cpu)."""
    import re
    return re.sub(r",\s*device='cpu'", "", s)


def _convert_args(args, device, layout):
    if isinstance(args, torch.Tensor):
        return ours_layout(args, device, layout)
    if isinstance(args, (list, tuple)):
        return type(args)(_convert_args(a, device, layout) for a in args)
    return args


def check(fn, *args, device, layout="contiguous", rtol=1e-5, atol=1e-5, check_dtype=True):
    """fn(module, *args) run with torch on torch tensors and with torchweb on copies of them
    (on `device`, in `layout`): the same values and dtype, or the same exception type."""
    mine = _convert_args(args, device, layout)  # before fn(torch, ...), which may write in place
    args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
    try:
        expected = fn(torch, *args)
    except Exception as e:  # PyTorch refuses: so must we, with the same exception type
        import pytest
        with pytest.raises(type(e)):
            fn(torchweb, *mine)
        return None
    got = fn(torchweb, *mine)
    if isinstance(expected, torch.Tensor) or isinstance(expected, (tuple, list)):
        assert_close(got, expected, rtol, atol, check_dtype)
    else:
        assert type(got) is type(expected) and (got == expected or (got != got and expected != expected)), \
            (got, expected)
    return got
