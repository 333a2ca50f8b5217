"""nn.functional.interpolate against PyTorch, forward and backward, on both devices: nearest,
nearest-exact, linear, bilinear, bicubic, trilinear, area; size and scale_factor,
align_corners, recompute_scale_factor; the upsample aliases; bad input."""

import pytest
import torch
import torch.nn.functional as F

import torchweb
import torchweb.nn.functional as TF
from oracle import check, fast_ours, make
from test_conv import check_grad

TOL = {"rtol": 1e-4, "atol": 1e-5}

CASES = [
    ((2, 3, 5), dict(size=9, mode="nearest")),
    ((2, 3, 5), dict(scale_factor=2, mode="nearest")),
    ((2, 3, 9), dict(size=4, mode="nearest")),
    ((2, 3, 5, 6), dict(scale_factor=1.7, mode="nearest")),
    ((2, 3, 5, 6), dict(size=(10, 12), mode="nearest")),
    ((2, 3, 5, 6), dict(size=(7, 3), mode="nearest-exact")),
    ((1, 2, 3, 4, 5), dict(scale_factor=(2, 1.5, 0.6), mode="nearest-exact")),
    ((2, 3, 5), dict(size=9, mode="linear")),
    ((2, 3, 5), dict(size=9, mode="linear", align_corners=True)),
    ((1, 1, 40), dict(size=3, mode="linear")),
    ((2, 3, 5, 6), dict(size=(8, 4), mode="bilinear")),
    ((2, 3, 5, 6), dict(scale_factor=(2.5, 0.5), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 6), dict(scale_factor=3.3, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 5, 6), dict(size=(1, 1), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 6), dict(size=(9, 13), mode="bicubic")),
    ((2, 3, 5, 6), dict(size=(3, 4), mode="bicubic", align_corners=True)),
    ((2, 3, 1, 1), dict(size=(4, 3), mode="bicubic")),
    ((1, 2, 16, 16), dict(scale_factor=0.25, mode="bicubic")),
    ((1, 2, 3, 4, 5), dict(size=(5, 3, 7), mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(scale_factor=2, mode="trilinear", align_corners=True)),
    ((1, 2, 3, 4, 5), dict(scale_factor=2, mode="nearest")),
    ((2, 3, 8, 6), dict(size=(3, 4), mode="area")),
    ((2, 3, 9), dict(scale_factor=0.5, mode="area")),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{s}-{k}" for s, k in CASES])
def test_interpolate(device, case):
    shape, kw = case
    out = check_grad(lambda t: F.interpolate(t, **kw), lambda t: TF.interpolate(t, **kw), [make(shape)], device,
                     tol=TOL)
    if kw["mode"] == "bilinear":
        assert out.grad_fn.name() == "UpsampleBilinear2DBackward0"


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_interpolate_non_contiguous(device, layout):
    for mode in ("nearest", "bilinear", "bicubic"):
        check_grad(lambda t: F.interpolate(t, size=(7, 4), mode=mode), lambda t: TF.interpolate(t, size=(7, 4), mode=mode),
                   [make((2, 3, 5, 6))], device, tol=TOL, layout=layout)


def test_interpolate_special_values(device):
    x = make((1, 2, 4, 5), special=True)
    for mode in ("nearest", "bilinear"):
        check(lambda m, t: m.nn.functional.interpolate(t, size=(6, 7), mode=mode), x, device=device, **TOL)


def test_upsample_aliases(device):
    x = make((2, 3, 4, 5))
    check(lambda m, t: m.nn.functional.upsample(t, scale_factor=2, mode="bilinear"), x, device=device, **TOL)
    check(lambda m, t: m.nn.functional.upsample_nearest(t, size=(6, 7)), x, device=device)
    check(lambda m, t: m.nn.functional.upsample_bilinear(t, scale_factor=2), x, device=device, **TOL)


def test_interpolate_empty_batch(device):
    check(lambda m, t: m.nn.functional.interpolate(t, size=(6, 7), mode="bilinear"), make((0, 3, 4, 5)), device=device)


def test_interpolate_float16(device):
    if device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("adapter without shader-f16")
    x = make((1, 2, 4, 5), dtype=torch.float16)
    for mode in ("nearest", "bilinear", "bicubic"):
        check(lambda m, t: m.nn.functional.interpolate(t, size=(6, 7), mode=mode), x, device=device,
              rtol=1e-3, atol=2e-3)


def test_interpolate_past_the_grid_limit():
    """More than 65535 * 256 outputs: the grid folds into 2-D (forward and backward)."""
    x = torch.arange(1 * 1 * 1024 * 1024, dtype=torch.float32).reshape(1, 1, 1024, 1024) % 13
    xo = fast_ours(x, "webgpu").requires_grad_(True)
    got = TF.interpolate(xo, scale_factor=4.1, mode="nearest")
    exp = F.interpolate(x, scale_factor=4.1, mode="nearest")
    assert got.numel() > 65535 * 256
    assert torch.equal(torch.from_numpy(got.detach().numpy()), exp)
    got.sum().backward()
    xr = x.clone().requires_grad_(True)
    F.interpolate(xr, scale_factor=4.1, mode="nearest").sum().backward()
    assert torch.equal(torch.from_numpy(xo.grad.numpy()), xr.grad)


BAD = {
    "both": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4), size=3, scale_factor=2),
    "neither": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4)),
    "align_nearest": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4), size=3, align_corners=True),
    "size_length": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, 4), size=[3]),
    "scale_length": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, 4), scale_factor=[3, 2, 1]),
    "linear_4d": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, 4), size=3, mode="linear"),
    "bilinear_3d": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4), size=3, mode="bilinear"),
    "bad_mode": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4), size=3, mode="foo"),
    "2d_input": lambda m: m.nn.functional.interpolate(m.ones(4, 4), size=3),
    "int": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, dtype=m.int64), size=3),
    "zero_size": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4), size=0),
    "recompute_with_size": lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4), size=3, recompute_scale_factor=True),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input(name):
    fn = BAD[name]
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)):
        fn(torchweb)


AA = [((2, 3, 16, 13), dict(size=(5, 4))), ((1, 2, 9, 10), dict(size=(4, 17))), ((1, 2, 9, 10), dict(scale_factor=0.3)),
      ((1, 2, 9, 10), dict(size=(3, 4), align_corners=True)), ((1, 1, 40, 7), dict(size=(6, 3))),
      ((1, 1, 5, 6), dict(size=(10, 12)))]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("case", AA, ids=[f"{s}-{k}" for s, k in AA])
def test_interpolate_antialias(device, mode, case):
    shape, kw = case
    out = check_grad(lambda t: F.interpolate(t, mode=mode, antialias=True, **kw),
                     lambda t: TF.interpolate(t, mode=mode, antialias=True, **kw), [make(shape)], device, tol=TOL)
    assert out.grad_fn.name() == ("UpsampleBilinear2DAaBackward0" if mode == "bilinear" else "UpsampleBicubic2DAaBackward0")


def test_interpolate_antialias_bad_mode():
    with pytest.raises(ValueError):
        F.interpolate(torch.ones(1, 1, 4), size=3, mode="linear", antialias=True)
    with pytest.raises(ValueError):
        TF.interpolate(torchweb.ones(1, 1, 4), size=3, mode="linear", antialias=True)
