"""The lazy layer's fusing scope (lazy/scope.py): in-place and fresh elementwise ops traced and
written by one kernel at the end, with eager order kept wherever something reads or writes in
between, on both devices against PyTorch."""

import pytest
import torch

import torchweb
from torchweb.lazy import fusing
from oracle import ours, theirs


def _tensors(device, n=3):
    g = torch.Generator().manual_seed(3)
    ts = [torch.rand(4, 5, generator=g) + 0.1 for _ in range(n)]   # (positive: sqrt of them)
    return ts, [ours(t, device) for t in ts]


def _step(lib, a, b, c):
    """A step in PyTorch's single-tensor style: in place, fresh temporaries, composites."""
    b.lerp_(a, 0.1)
    c.mul_(0.9).addcmul_(a, a, value=0.1)
    denom = (c.sqrt() / 0.7).add_(1e-3)
    a.addcdiv_(b, denom, value=-0.01)
    a.add_(b, alpha=0.5)
    return denom


def _run(device, body):
    """body(lib, tensors) run eagerly by PyTorch and in a fusing scope by torchweb (no_grad, as
    an optimizer's step): the tensors afterwards, and what body returned, for both."""
    ts, ws = _tensors(device)
    expected = body(torch, ts)
    with torchweb.no_grad():
        with fusing():
            got = body(torchweb, ws)
    return ts, ws, expected, got


def _same(a, b):
    torch.testing.assert_close(theirs(a), b, rtol=1e-5, atol=1e-6)


def test_a_step_is_one_kernel_and_matches_pytorch(device):
    ts, ws = _tensors(device)
    _step(torch, *ts)
    if device == "webgpu":
        from torchweb.backends.webgpu import runtime as RT
        rt = RT.get_runtime()
        torchweb.webgpu.synchronize()
        saved, RT.FLUSH_AFTER_S = RT.FLUSH_AFTER_S, float("inf")
        before = rt.stream.dispatches
    with torchweb.no_grad():
        with fusing():
            _step(torchweb, *ws)
    if device == "webgpu":
        assert rt.stream.dispatches - before == 1   # (the temporary denom died: not written)
        RT.FLUSH_AFTER_S = saved
    for w, t in zip(ws, ts):
        _same(w, t)


def test_a_live_temporary_is_written_too(device):
    ts, ws, expected, got = _run(device, lambda lib, t: _step(lib, *t))
    _same(got, expected)
    for w, t in zip(ws, ts):
        _same(w, t)


def test_a_read_inside_the_scope_sees_the_writes_so_far(device):
    def body(lib, t):
        t[0].mul_(2.0)
        seen = t[0].sum().item()        # a reduction (and a readback) in the middle
        t[0].add_(t[1])
        t[1].copy_(t[0])
        return seen
    ts, ws, expected, got = _run(device, body)
    assert got == pytest.approx(expected, rel=1e-6)
    for w, t in zip(ws, ts):
        _same(w, t)


def test_what_cannot_be_traced_runs_in_order(device):
    def body(lib, t):
        t[0].mul_(3.0)
        t[1].t().add_(t[2].t())         # a transposed target: run as it is, after the writes so far
        t[2][1:].mul_(2.0)              # a view of part of a storage
        t[0].add_(t[1][0])              # a broadcast operand
        t[1].addcdiv_(t[0], t[2].abs() + 1.0, value=0.5)
    ts, ws, _, _ = _run(device, body)
    for w, t in zip(ws, ts):
        _same(w, t)


def test_an_out_argument_inside_the_scope(device):
    def body(lib, t):
        t[1].mul_(0.5)
        lib.maximum(t[0], t[1], out=t[0])
        t[2].lerp_(t[0], 0.8)
    ts, ws, _, _ = _run(device, body)
    for w, t in zip(ws, ts):
        _same(w, t)


def test_pending_values_from_before_the_scope_are_kept(device):
    ts, ws = _tensors(device)
    before = ws[0] * 2.0                 # pending: reads a's old values
    expected = ts[0] * 2.0
    with torchweb.no_grad():
        with fusing():
            ws[0].add_(1.0)
            fill = torchweb.zeros_like(ws[1])
            fill.add_(ws[2])             # a new tensor's zeros taken into the kernel
    _same(before, expected)
    _same(ws[0], ts[0] + 1.0)
    _same(fill, ts[2])
