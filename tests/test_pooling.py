"""Pooling against PyTorch, forward and backward, on both devices: max_pool1d/2d/3d (indices,
dilation, ceil_mode, NaN, ties), avg_pool1d/2d/3d (count_include_pad, divisor_override),
adaptive_avg_pool1d/2d/3d, adaptive_max_pool1d/2d/3d, lp_pool1d/2d; bad input."""

import pytest
import torch
import torch.nn.functional as F

import torchweb
import torchweb.nn.functional as TF
from oracle import assert_close, check, fast_ours, make
from test_conv import check_grad

TOL = {"rtol": 1e-4, "atol": 1e-5}


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def pool_case(name, x, device, *args, layout="contiguous", **kw):
    """Values (and indices) and the input's gradient against PyTorch."""
    exp_full = getattr(F, name)(x, *args, **kw)
    got_full = check_grad(lambda t: _first(getattr(F, name)(t, *args, **kw)),
                          lambda t: _first(getattr(TF, name)(t, *args, **kw)), [x], device, tol=TOL, layout=layout)
    if isinstance(exp_full, tuple):
        from oracle import ours_layout
        got = getattr(TF, name)(ours_layout(x, device, layout), *args, **kw)
        assert_close(got[1], exp_full[1])
    return got_full


MAX2D = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=(3, 2), stride=(2, 1)),
         dict(kernel_size=3, stride=2, ceil_mode=True), dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 1)),
         dict(kernel_size=3, stride=1, padding=1, dilation=2, ceil_mode=True),
         dict(kernel_size=2, stride=3, ceil_mode=True)]


@pytest.mark.parametrize("kw", MAX2D, ids=[str(k) for k in MAX2D])
def test_max_pool2d(device, kw):
    x = make((2, 3, 9, 8))
    out = pool_case("max_pool2d", x, device, return_indices=True, **kw)
    assert out.grad_fn.name() == "MaxPool2DWithIndicesBackward0"


def test_max_pool1d_3d(device):
    pool_case("max_pool1d", make((2, 3, 11)), device, 3, 2, 1, return_indices=True)
    pool_case("max_pool1d", make((3, 10)), device, 2, ceil_mode=True, return_indices=True)   # unbatched
    pool_case("max_pool3d", make((2, 2, 5, 6, 7)), device, 3, 2, 1, return_indices=True)
    pool_case("max_pool3d", make((2, 4, 5, 6)), device, (2, 3, 2), (1, 2, 2), dilation=(2, 1, 1), ceil_mode=True)


def test_max_pool_ties_and_nan(device):
    # ties: the first maximum in window order takes the gradient
    x = torch.tensor([[[[1.0, 1.0, 0.0], [1.0, 1.0, 2.0], [2.0, 0.0, 2.0]]]])
    pool_case("max_pool2d", x, device, 2, 1, return_indices=True)
    y = make((2, 2, 6, 6), special=True)   # NaN wins (the last NaN in window order), -inf windows
    check(lambda m, t: m.nn.functional.max_pool2d(t, 3, 1, 1, return_indices=True), y, device=device)
    z = torch.full((1, 1, 4, 4), float("-inf"))
    check(lambda m, t: m.nn.functional.max_pool2d(t, 2, 2, 1, return_indices=True), z, device=device)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_pool_non_contiguous(device, layout):
    x = make((3, 4, 6, 7))
    pool_case("max_pool2d", x, device, 3, 2, 1, layout=layout, return_indices=True)
    pool_case("avg_pool2d", x, device, 3, 2, 1, layout=layout)
    pool_case("adaptive_avg_pool2d", x, device, (4, 3), layout=layout)


AVG2D = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
         dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
         dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
         dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
         dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), divisor_override=5),
         dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)]


@pytest.mark.parametrize("kw", AVG2D, ids=[str(k) for k in AVG2D])
def test_avg_pool2d(device, kw):
    out = pool_case("avg_pool2d", make((2, 3, 9, 8)), device, **kw)
    assert out.grad_fn.name() == "AvgPool2DBackward0"


def test_avg_pool1d_3d(device):
    pool_case("avg_pool1d", make((2, 3, 11)), device, 3, 2, 1, count_include_pad=False, ceil_mode=True)
    pool_case("avg_pool1d", make((3, 11)), device, 4)
    pool_case("avg_pool3d", make((2, 2, 5, 6, 7)), device, 3, 2, 1)
    pool_case("avg_pool3d", make((2, 5, 6, 7)), device, (2, 3, 2), ceil_mode=True, divisor_override=3)


def test_pool_int(device):
    x = make((2, 3, 6, 7), dtype=torch.int64, low=-9, high=9)
    check(lambda m, t: m.nn.functional.max_pool2d(t, 3, 2, 1, return_indices=True), x, device=device)
    check(lambda m, t: m.nn.functional.avg_pool2d(t, 2, count_include_pad=False), x, device=device)


@pytest.mark.parametrize("size", [(4, 3), 1, (9, 8), (5, None), (13, 11)])
def test_adaptive_pool2d(device, size):
    x = make((2, 3, 9, 8))
    out = pool_case("adaptive_avg_pool2d", x, device, size)
    assert out.grad_fn.name() == "AdaptiveAvgPool2DBackward0"
    out = pool_case("adaptive_max_pool2d", x, device, size, return_indices=True)
    assert out.grad_fn.name() == "AdaptiveMaxPool2DBackward0"


def test_adaptive_pool1d_3d(device):
    pool_case("adaptive_avg_pool1d", make((2, 3, 11)), device, 4)
    pool_case("adaptive_max_pool1d", make((3, 11)), device, 5, return_indices=True)
    pool_case("adaptive_avg_pool3d", make((2, 2, 5, 6, 7)), device, (2, 3, 4))
    pool_case("adaptive_max_pool3d", make((2, 5, 6, 7)), device, 3, return_indices=True)


def test_lp_pool(device):
    x = make((2, 3, 9, 8), low=0.1, high=2.0)
    pool_case("lp_pool2d", x, device, 2, 3, 2)
    pool_case("lp_pool2d", x, device, 3.0, (2, 3), ceil_mode=True)
    pool_case("lp_pool1d", make((2, 3, 10), low=0.1, high=2.0), device, 2, 3)


def test_pool_empty_batch(device):
    check(lambda m, t: m.nn.functional.max_pool2d(t, 2), make((0, 3, 4, 4)), device=device)
    check(lambda m, t: m.nn.functional.avg_pool2d(t, 2), make((0, 3, 4, 4)), device=device)
    check(lambda m, t: m.nn.functional.adaptive_avg_pool2d(t, 2), make((0, 3, 4, 4)), device=device)


def test_pool_float16(device):
    if device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("adapter without shader-f16")
    x = make((2, 3, 6, 6), dtype=torch.float16)
    check(lambda m, t: m.nn.functional.max_pool2d(t, 2, return_indices=True), x, device=device)
    check(lambda m, t: m.nn.functional.avg_pool2d(t, 3, 1, 1), x, device=device, rtol=1e-3, atol=1e-3)


def test_max_pool_past_the_grid_limit():
    """A pool with more than 65535 * 256 outputs (and its backward, one thread per input)."""
    device = "webgpu"
    x = torch.arange(17 * 1024 * 1024, dtype=torch.float32).reshape(1, 1, -1) % 89
    xo = fast_ours(x, device).requires_grad_(True)
    got, idx = TF.max_pool1d(xo, 1, return_indices=True)
    assert got.numel() > 65535 * 256
    got.sum().backward()
    assert torch.equal(torch.from_numpy(got.detach().numpy()), x)
    assert torch.equal(torch.from_numpy(idx.numpy()), torch.arange(x.numel()).reshape(x.shape))
    assert float(xo.grad.sum().item()) == x.numel()


BAD = {
    "max_pad": lambda m: m.nn.functional.max_pool2d(m.ones(2, 4, 5, 5), 2, padding=2),
    "max_small": lambda m: m.nn.functional.max_pool2d(m.ones(2, 4, 5, 5), 6),
    "max_rank": lambda m: m.nn.functional.max_pool2d(m.ones(5), 2),
    "max_stride0": lambda m: m.nn.functional.max_pool2d(m.ones(2, 4, 5, 5), 2, stride=0),
    "max_tuple": lambda m: m.nn.functional.max_pool2d(m.ones(2, 4, 5, 5), (2, 2, 2)),
    "avg_pad": lambda m: m.nn.functional.avg_pool2d(m.ones(2, 4, 5, 5), 2, padding=2),
    "avg_small": lambda m: m.nn.functional.avg_pool2d(m.ones(2, 4, 5, 5), 6),
    "avg_divisor0": lambda m: m.nn.functional.avg_pool2d(m.ones(2, 4, 5, 5), 2, divisor_override=0),
    "adaptive_rank": lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(5), 2),
    "adaptive_empty": lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(1, 0, 4), 2),
    "adaptive_int": lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(1, 4, 4, dtype=m.int64), 2),
    "adaptive_max_int": lambda m: m.nn.functional.adaptive_max_pool2d(m.ones(1, 4, 4, dtype=m.int64), 2),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input(name):
    fn = BAD[name]
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(torchweb)
    for token in ("pad=2, kernel_size=2", "(4x0x0)", "[1, 0, 4]"):
        if token in str(expected.value):
            assert token in str(got.value), (str(got.value), str(expected.value))


# -- max_unpool ----------------------------------------------------------------------------------
def test_max_unpool(device):
    from oracle import ours
    x = make((2, 3, 6, 8))
    o, i = F.max_pool2d(x, 2, return_indices=True)
    out = check_grad(lambda t: F.max_unpool2d(t, i, 2), lambda t: TF.max_unpool2d(t, ours(i, device), 2), [o], device)
    assert out.grad_fn.name() == "MaxUnpool2DBackward0"
    check_grad(lambda t: F.max_unpool2d(t, i, 2, output_size=(7, 9)),
               lambda t: TF.max_unpool2d(t, ours(i, device), 2, output_size=(7, 9)), [o], device)
    x1 = make((2, 3, 9))
    o1, i1 = F.max_pool1d(x1, 3, 2, 1, return_indices=True)
    check_grad(lambda t: F.max_unpool1d(t, i1, 3, 2, 1), lambda t: TF.max_unpool1d(t, ours(i1, device), 3, 2, 1),
               [o1], device)
    x3 = make((1, 2, 4, 4, 6))
    o3, i3 = F.max_pool3d(x3, 2, return_indices=True)
    out = check_grad(lambda t: F.max_unpool3d(t, i3, 2), lambda t: TF.max_unpool3d(t, ours(i3, device), 2), [o3], device)
    assert out.grad_fn.name() == "MaxUnpool3DBackward0"


def test_max_unpool_invalid_index(device):
    from oracle import ours
    o, i = F.max_pool2d(make((1, 1, 4, 4)), 2, return_indices=True)
    with pytest.raises(RuntimeError):
        F.max_unpool2d(o, i + 100, 2)
    with pytest.raises((RuntimeError, IndexError)):   # webgpu: found by the kernel, raised at readback
        TF.max_unpool2d(ours(o, device), ours(i + 100, device), 2).tolist()


BAD_UNPOOL = {
    "output_size": lambda m, o, i: m.nn.functional.max_unpool2d(o, i, 2, output_size=(6, 6)),
    "indices_shape": lambda m, o, i: m.nn.functional.max_unpool2d(o, i[:, :, :1], 2),
    "indices_dtype": lambda m, o, i: m.nn.functional.max_unpool2d(o, i.int(), 2),
}


@pytest.mark.parametrize("name", sorted(BAD_UNPOOL))
def test_max_unpool_bad_input(name):
    from oracle import ours
    o, i = F.max_pool2d(make((1, 1, 4, 4)), 2, return_indices=True)
    with pytest.raises(Exception) as expected:
        BAD_UNPOOL[name](torch, o, i)
    with pytest.raises(type(expected.value)):
        BAD_UNPOOL[name](torchweb, ours(o, "cpu"), ours(i, "cpu"))


def test_torch_namespace_forms(device):
    x = make((2, 3, 9, 8))
    check(lambda m, t: m.max_pool2d(t, 3, 2, 1), x, device=device)
    check(lambda m, t: m.max_pool1d(t[0], 2), x, device=device)
    check(lambda m, t: m.max_pool3d(t, 2), x, device=device)
    check(lambda m, t: m.avg_pool1d(t[0], 3, 2, 1, True, False), x, device=device, **TOL)
    check(lambda m, t: m.adaptive_avg_pool1d(t[0], 4), x, device=device, **TOL)
    check(lambda m, t: m.adaptive_max_pool1d(t[0], 4), x, device=device)
