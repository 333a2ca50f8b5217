"""Sizes that need more than 65535 workgroups in a grid dimension (WebGPU's limit per
dimension, maxComputeWorkgroupsPerDimension): kernels must fold their grid and skip the excess
threads, or results past the limit come out silently wrong. Compared with PyTorch in full."""

import pytest
import torch

import torchweb
from oracle import assert_close, fast_ours

WG = 256                       # threads per workgroup of the elementwise and reduction kernels
LIMIT = 65535                  # workgroups per grid dimension (browser default)
N = 77 * 217891                # 16777607: past the limit, 65538 workgroups, the last partial


@pytest.fixture(scope="module")
def big():
    g = torch.Generator().manual_seed(7)
    return torch.rand(N, generator=g) * 4 - 2


@pytest.fixture(scope="module")
def big_ours(big):
    return {"cpu": fast_ours(big, "cpu"), "webgpu": fast_ours(big, "webgpu")}


def test_elementwise_past_65535_workgroups(device, big, big_ours):
    x = big_ours[device]
    assert_close(x.sigmoid(), big.sigmoid(), rtol=1e-5, atol=1e-6)
    y = torchweb.where(x > 0.5, x * 2, -x)  # compare, mul, neg and a 3-operand where
    assert_close(y, torch.where(big > 0.5, big * 2, -big), rtol=0, atol=0)
    assert_close((x > 0), big > 0)


def test_elementwise_large_broadcast_and_inplace(device, big, big_ours):
    x = big_ours[device].view(-1, 77)                   # (217891, 77)
    row = torch.linspace(-1, 1, 77)
    expected = big.view(-1, 77) * row
    assert_close(x * fast_ours(row, device), expected, rtol=0, atol=0)
    c = x.clone()
    c.sub_(1.5)
    assert_close(c, big.view(-1, 77) - 1.5, rtol=0, atol=0)


def test_elementwise_large_strided(device):
    a = torch.rand(4099, 4097, generator=torch.Generator().manual_seed(3))   # 16.8M elements
    x = fast_ours(a, device)
    assert_close(x.t().contiguous(), a.t().contiguous(), rtol=0, atol=0)
    assert_close(x[::2, 1:].exp(), a[::2, 1:].exp(), rtol=1e-5, atol=1e-6)


ROWS = (LIMIT + 2) * WG                                 # 65537 outputs of 256 elements each


def test_reduction_workgroup_per_output_past_65535(device, big, big_ours):
    x, e = big_ours[device][:ROWS].view(-1, WG), big[:ROWS].view(-1, WG)
    # float32 sums of 256 terms in another order: ~1e-6 of the magnitudes summed
    assert_close(x.sum(1), e.sum(1), rtol=1e-5, atol=2e-5)


def test_arg_reduction_workgroup_per_output_past_65535(device, big, big_ours):
    x, e = big_ours[device][:ROWS].view(-1, WG), big[:ROWS].view(-1, WG)
    assert_close(x.argmax(1), e.argmax(1))


def test_reduction_thread_per_output_past_65535_workgroups(device, big, big_ours):
    x = big_ours[device].view(-1, 1)                    # N outputs of one element: a thread each
    assert_close(x.sum(1), big, rtol=0, atol=0)
    assert_close(x.argmin(1), torch.zeros(N, dtype=torch.int64))
    y = big_ours[device][:N - N % 3].view(-1, 3)        # 5.6M short reductions
    assert_close(y.amax(1), big[:N - N % 3].view(-1, 3).amax(1), rtol=0, atol=0)


def test_reduction_of_everything(device, big, big_ours):
    x = big_ours[device]
    # 16.8M float32 terms: orders differ (PyTorch cascades, the GPU splits then trees), each
    # with an error of ~1e-7 of sqrt(N) * |terms|: absolute 1e-1 on a sum of magnitude ~1e3
    assert_close(x.sum(), big.sum(), rtol=1e-4, atol=1e-1)
    assert_close(x.mean(), big.mean(), rtol=1e-4, atol=1e-6)
    assert_close(x.max(), big.max(), rtol=0, atol=0)
    assert_close(x.argmax(), big.argmax())
    assert_close((x > -3).all(), (big > -3).all())


def test_argmax_of_everything_nan_and_ties(device):
    e = torch.zeros(N)
    e[[5, N - 3, 9000001]] = 1.0                       # ties: the first index wins
    x = fast_ours(e, device)
    assert_close(x.argmax(), e.argmax())
    assert_close(x.argmin(), e.argmin())
    e[[12345678, 16000000]] = float("nan")             # NaN wins, first NaN
    assert_close(fast_ours(e, device).argmax(), e.argmax())
    assert_close(fast_ours(e, device).argmin(), e.argmin())


def test_long_dot_products(device):
    # K = 300000: the K loop of the tiled kernel runs K / 16 times (lavapipe's loop guard cut
    # inner loops short once K passed ~36000 before they were unrolled)
    g = torch.Generator().manual_seed(9)
    a, b = torch.rand(300000, generator=g) - 0.5, torch.rand(300000, generator=g) - 0.5
    assert_close(fast_ours(a, device) @ fast_ours(b, device), a @ b, rtol=1e-4, atol=1e-3)
    m, n = torch.rand(3, 40000, generator=g) - 0.5, torch.rand(40000, 5, generator=g) - 0.5
    assert_close(fast_ours(m, device) @ fast_ours(n, device), m @ n, rtol=1e-4, atol=1e-3)


def test_batched_matmul_past_65535(device):
    g = torch.Generator().manual_seed(5)
    a, b = torch.rand(LIMIT + 5, 4, 5, generator=g), torch.rand(LIMIT + 5, 5, 3, generator=g)
    assert_close(fast_ours(a, device) @ fast_ours(b, device), a @ b, rtol=1e-5, atol=1e-5)


def test_batched_matmul_broadcast_large(device):
    g = torch.Generator().manual_seed(6)
    a, b = torch.rand(3, 1, 130, 70, generator=g), torch.rand(4, 70, 129, generator=g)
    assert_close(fast_ours(a, device) @ fast_ours(b, device), a @ b, rtol=1e-5, atol=1e-4)


@pytest.fixture
def small_grid(monkeypatch):
    """The webgpu runtime with a grid limit of 20 workgroups per dimension: every folding and
    multi-dispatch path runs at small sizes (the kernels read the limit from the runtime)."""
    rt = torchweb.backends.webgpu.runtime.get_runtime()
    monkeypatch.setattr(rt, "max_workgroups", 20)
    monkeypatch.setattr(rt, "defer_numel", rt.max_fused_numel())   # (what lazy/record.py checks past)
    return rt


def test_small_grid_limit_paths(small_grid):
    g = torch.Generator().manual_seed(8)
    a = torch.rand(60, 300, generator=g) - 0.5          # 71 workgroups: a folded 18x4 grid
    x = fast_ours(a, "webgpu")
    assert_close(x * 3 + 1, a * 3 + 1, rtol=0, atol=0)
    assert_close(x.t().contiguous(), a.t().contiguous())
    assert_close(x.sum(1), a.sum(1), rtol=1e-5, atol=1e-5)      # workgroup per output
    assert_close(x.view(-1, 2).sum(1), a.view(-1, 2).sum(1))    # thread per output
    assert_close(x.argmax(0), a.argmax(0))                      # 300 workgroups
    assert_close(x.sum(), a.sum(), rtol=1e-5, atol=1e-4)                     # split in chunks
    # batches beyond the grid's z limit: the tiled kernel (17x18) in several dispatches, and
    # the small-matrix kernel over a folded grid
    for m, k, n in ((17, 9, 18), (3, 4, 5)):
        p, q = torch.rand(45, m, k, generator=g), torch.rand(45, k, n, generator=g)
        assert_close(fast_ours(p, "webgpu") @ fast_ours(q, "webgpu"), p @ q, rtol=1e-5, atol=1e-5)
    # past limit^2 workgroups a 2-D grid cannot fold further: refused, and the device carries on
    with pytest.raises(RuntimeError, match="exceed this adapter's grid"):
        torchweb.zeros(20 * 20 * 256 + 1, device="webgpu")
    assert_close(x + 1, a + 1, rtol=0, atol=0)


def test_matmul_long_inner_dimension(device):
    """A K of several 2^16 slices, whose products are added (a software driver's loop guard
    truncated a single long loop silently)."""
    k = 3 * (1 << 16) + 5
    g = torch.Generator().manual_seed(5)
    a = torch.randint(-2, 3, (2, k), generator=g).float()
    b = torch.randint(-2, 3, (k, 3), generator=g).float()
    assert_close(fast_ours(a, device) @ fast_ours(b, device), a @ b, rtol=0, atol=0)
    ones = torchweb.ones(k, device=device)
    assert torchweb.dot(ones, ones).item() == float(k)
