"""Comparing complex torchweb results with PyTorch's: through view_as_real on both sides."""

import torch
import torchweb

from oracle import assert_close


def cours(t, device, requires_grad=False):
    """A torchweb tensor with t's values (complex64 or real), a leaf."""
    if t.is_complex() and t.numel() == 0:
        z = torchweb.zeros(tuple(t.shape), dtype=torchweb.complex64, device=device)
    elif t.is_complex():
        r = torchweb.tensor(torch.view_as_real(t.detach()).tolist(), device=device)
        z = torchweb.view_as_complex(r).clone().detach()
    else:
        z = torchweb.tensor(t.detach().tolist(), device=device)
    return z.requires_grad_(requires_grad)


def cclose(got, expected, rtol=1e-5, atol=1e-5):
    """got (torchweb) matches expected (torch), complex or real, tuples too."""
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            cclose(g, e, rtol, atol)
        return
    assert got.is_complex() == expected.is_complex(), (got.dtype, expected.dtype)
    assert tuple(got.shape) == tuple(expected.shape), (tuple(got.shape), tuple(expected.shape))
    if expected.is_complex():
        assert got.dtype == torchweb.complex64
        assert_close(torchweb.view_as_real(got.detach().resolve_conj()), torch.view_as_real(expected.detach().resolve_conj()),
                     rtol, atol)
    else:
        assert_close(got.detach(), expected.detach(), rtol, atol)
