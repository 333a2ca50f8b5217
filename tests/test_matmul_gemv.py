"""float32 products of 1-4 rows (a decode step's linears) go to kernels/matmul_gemv.py on
webgpu: against PyTorch for both thread layouts (an nn.Linear's weight.T, GPT-2's Conv1D weight),
strided operands, addmm with a bias, and the kernel the backend picks."""

import numpy as np
import pytest
import torch

import torchweb as tw


def theirs(t):
    return torch.tensor(t.tolist())


@pytest.mark.parametrize("m", [1, 2, 4])
@pytest.mark.parametrize("k,n", [(33, 97), (768, 2304), (3072, 64)])
def test_few_rows_match_pytorch(device, m, k, n):
    rng = np.random.default_rng(m * k + n)
    a = rng.standard_normal((m, 2 * k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    A, W, Bias = (tw.tensor(x, device=device) for x in (a, w, bias))
    ref_a, ref_w = torch.tensor(a)[:, k:], torch.tensor(w)
    want = ref_a @ ref_w.T
    for b in (W.T, W.T.contiguous(), tw.cat([W, W], 1)[:, :k].T):    # rows, cols, a strided view
        got = theirs(A[:, k:] @ b)
        assert torch.allclose(got, want, atol=1e-4 * k ** 0.5, rtol=1e-4), (got - want).abs().max()
    got = theirs(tw.addmm(Bias, A[:, k:], W.T.contiguous()))
    assert torch.allclose(got, want + torch.tensor(bias), atol=1e-4 * k ** 0.5, rtol=1e-4)
    got = theirs(tw.nn.functional.linear(A[:, k:], W, Bias))
    assert torch.allclose(got, torch.nn.functional.linear(ref_a, ref_w, torch.tensor(bias)),
                          atol=1e-4 * k ** 0.5, rtol=1e-4)


def test_backend_picks_gemv_for_one_row_only():
    from torchweb.backends.webgpu import backend as B
    from torchweb.backends.webgpu.runtime import get_runtime
    a = tw.randn(1, 768, device="webgpu")
    for w in (tw.randn(768, 2304, device="webgpu"), tw.randn(2304, 768, device="webgpu").T):
        out = a @ w
        out.tolist()
        assert B._choose_matmul(get_runtime(), out, a, w) == "gemv"
    a8 = tw.randn(8, 768, device="webgpu")
    assert B._choose_matmul(get_runtime(), a8 @ w, a8, w) != "gemv"             # prompts: the tiles
    half = tw.randn(1, 768, device="webgpu").half()
    assert B._choose_matmul(get_runtime(), half @ w.half(), half, w.half()) != "gemv"   # float32 only


def test_one_row_against_a_weight_past_the_binding_limit():
    """GPT-2's lm head (154 MB) passes browsers' 128 MiB binding limit: here the limit is
    lowered to 1 MiB and a 2.4 MB weight is split into windows, each still a one-row product."""
    from torchweb.backends.webgpu.runtime import get_runtime
    rt = get_runtime()
    rt.synchronize()
    saved = rt.max_binding
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((1, 200)).astype(np.float32), rng.standard_normal((3000, 200)).astype(np.float32)
    X, W = tw.tensor(x, device="webgpu"), tw.tensor(w, device="webgpu")
    rt.set_binding_limit(1 << 20)
    try:
        got = [theirs(X @ W.T), theirs(X @ W.T.contiguous())]
        rt.synchronize()
    finally:
        rt.set_binding_limit(saved)
    want = torch.tensor(x) @ torch.tensor(w).T
    for g in got:
        assert torch.allclose(g, want, atol=1e-4, rtol=1e-4), (g - want).abs().max()
