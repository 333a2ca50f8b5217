"""prod along a dim of float tensors holding NaN and zero (issue 22, item 7): NaN * 0 is NaN, so
any row with a NaN must give NaN whatever zeros it holds, on every path of the reduction
kernels (backends/webgpu/kernels/reduction.py): a thread per output (short rows), the workgroup
tree (long rows), its vec4 loads (rows a multiple of 4), the column kernel (a strided dim over
32+ outputs), the barrier-free path SwiftShader takes, a grid of more than 65535 workgroups, and the two-pass
split of long rows over few outputs (ops/lowering.py: partial products per chunk, then theirs). NaN and zero are put
in the same and in different threads, vec4 lanes and chunks, in both orders, first and last."""

import pytest
import torch

import torchweb
from oracle import assert_close, fast_ours
from torchweb.backends.webgpu.kernels import reduction as RED

# (shape, dim): which kernel path each takes is in the comment
CASES = [
    ((40, 7), 1),          # thread per output, short rows
    ((3, 300), 1),         # workgroup tree, vec4 loads (300 % 4 == 0)
    ((3, 301), 1),         # workgroup tree, scalar loads
    ((5, 1024), 1),        # vec4 loads, a full workgroup of them
    ((1024, 40), 0),       # column kernel (strided dim, 40 neighbouring outputs)
    ((300, 3), 0),         # strided dim, few outputs: workgroup tree with strided loads
    ((2, 70000), 1),       # split in two passes (9 chunks of 7778)
    ((70001,), 0),         # split, one output, a ragged last chunk
    ((3, 5, 4100), 2),     # three dims, the last reduced
    ((4100, 2, 3), 0),     # the first of three reduced: strided
    ((66000, 256), 1),     # more workgroups than one grid dimension holds (a 2D grid)
]


def _positions(n, chunk):
    """(nan_at, zero_at) pairs along a row of n: same/other thread, lane, chunk, both orders."""
    pairs = {(0, n - 1), (n - 1, 0), (0, 1), (1, 0), (3, 4), (n // 2, n // 2 + 1), (n // 2 + 1, n // 2),
             (5, 5 + 256), (min(n - 1, chunk + 3), 2), (2, min(n - 1, chunk + 3))}
    return sorted((a, b) for a, b in pairs if a != b and a < n and b < n)


@pytest.mark.parametrize("shape,dim", CASES, ids=[f"{'x'.join(map(str, s))}-d{d}" for s, d in CASES])
def test_prod_nan_and_zero(device, shape, dim, monkeypatch):
    g = torch.Generator().manual_seed(sum(shape) + dim)
    n = shape[dim]
    base = torch.empty(shape).uniform_(0.5, 1.5, generator=g)
    rows = base.numel() // n
    positions = _positions(n, 8192 if n >= 65536 else 256)
    if base.numel() > 1 << 20:     # a big tensor: its path, not every pair again (seconds each)
        positions = positions[:2]
    # the kernels a GPU takes, and the barrier-free ones SwiftShader takes
    for few_barriers in ([False, True] if device == "webgpu" else [None]):
        monkeypatch.setitem(RED.FAST, "few_barriers", few_barriers)
        for nan_at, zero_at in positions:
            x = base.clone().movedim(dim, -1).reshape(rows, n)
            # row 0: NaN and zero; row 1: zero only; row 2 (if any): NaN only; others: neither
            x[0, nan_at], x[0, zero_at] = float("nan"), 0.0
            if rows > 1:
                x[1, zero_at] = 0.0
            if rows > 2:
                x[2, nan_at] = float("nan")
            x = x.reshape(*[s for i, s in enumerate(shape) if i != dim], n).movedim(-1, dim).contiguous()
            want = x.prod(dim)
            got = fast_ours(x, device).prod(dim)
            first = got.reshape(-1)[0].item()
            assert first != first, (f"NaN at {nan_at}, 0 at {zero_at} (few_barriers {few_barriers}): "
                                    f"prod gave {first}, PyTorch NaN")
            assert_close(got, want, rtol=2e-3, atol=1e-30)


def test_prod_nan_and_zero_keeps_dims_of_a_permuted_view(device):
    """A non-contiguous input (a transposed view) through the same kernels."""
    x = torch.empty(600, 48).uniform_(0.5, 1.5, generator=torch.Generator().manual_seed(1))
    x[17, 3], x[500, 3] = float("nan"), 0.0
    x[0, 5] = 0.0
    t = fast_ours(x, device).t()
    want = x.t().prod(1, keepdim=True)
    assert_close(t.prod(1, keepdim=True), want, rtol=2e-3, atol=1e-30)
    assert torchweb.isnan(t.prod(1)).tolist()[3]
