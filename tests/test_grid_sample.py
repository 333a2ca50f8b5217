"""grid_sample (bilinear, nearest, bicubic; zeros, border, reflection; align_corners; 2-D and
3-D) and affine_grid against PyTorch, forward and backward (input and grid), on both devices."""

import pytest
import torch
import torch.nn.functional as F

import torchweb
import torchweb.nn.functional as TF
from oracle import check, make
from test_conv import check_grad

TOL = {"rtol": 1e-3, "atol": 1e-4}
MODES = [(m, p, a) for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection")
         for a in (False, True)]


@pytest.mark.parametrize("case", MODES, ids=[f"{m}-{p}-{a}" for m, p, a in MODES])
def test_grid_sample_2d(device, case):
    mode, pad, align = case
    kw = dict(mode=mode, padding_mode=pad, align_corners=align)
    x, g = make((2, 3, 5, 6)), make((2, 4, 7, 2), low=-1.3, high=1.3)
    out = check_grad(lambda a, b: F.grid_sample(a, b, **kw), lambda a, b: TF.grid_sample(a, b, **kw), [x, g], device,
                     tol=TOL)
    assert out.grad_fn.name() == "GridSampler2DBackward0"


@pytest.mark.parametrize("case", [c for c in MODES if c[0] != "bicubic"], ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_grid_sample_3d(device, case):
    mode, pad, align = case
    kw = dict(mode=mode, padding_mode=pad, align_corners=align)
    x, g = make((1, 2, 3, 4, 5)), make((1, 2, 3, 4, 3), low=-1.3, high=1.3)
    check_grad(lambda a, b: F.grid_sample(a, b, **kw), lambda a, b: TF.grid_sample(a, b, **kw), [x, g], device,
               tol=TOL)


def test_grid_sample_grad_of_one_input(device):
    from oracle import ours
    x, g = make((2, 3, 5, 6)), make((2, 4, 7, 2), low=-1.1, high=1.1)
    check_grad(lambda a: F.grid_sample(a, g, align_corners=False), lambda a: TF.grid_sample(a, ours(g, device),
               align_corners=False), [x], device, tol=TOL)
    check_grad(lambda b: F.grid_sample(x, b, align_corners=False), lambda b: TF.grid_sample(ours(x, device), b,
               align_corners=False), [g], device, tol=TOL)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_grid_sample_non_contiguous(device, layout):
    x, g = make((2, 3, 5, 6)), make((2, 4, 7, 2), low=-1.2, high=1.2)
    check_grad(lambda a, b: F.grid_sample(a, b, align_corners=True), lambda a, b: TF.grid_sample(a, b, align_corners=True),
               [x, g], device, tol=TOL, layout=layout)


def test_grid_sample_float16(device):
    if device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("adapter without shader-f16")
    x, g = make((1, 2, 4, 5), dtype=torch.float16), make((1, 3, 3, 2), dtype=torch.float16, low=-1, high=1)
    check(lambda m, a, b: m.nn.functional.grid_sample(a, b, align_corners=False), x, g, device=device,
          rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(device, align):
    check_grad(lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=align),
               lambda t: TF.affine_grid(t, (2, 3, 4, 5), align_corners=align), [make((2, 2, 3))], device)
    check_grad(lambda t: F.affine_grid(t, (1, 3, 2, 4, 3), align_corners=align),
               lambda t: TF.affine_grid(t, (1, 3, 2, 4, 3), align_corners=align), [make((1, 3, 4))], device)
    check_grad(lambda t: F.affine_grid(t, (1, 1, 1, 3), align_corners=align),
               lambda t: TF.affine_grid(t, (1, 1, 1, 3), align_corners=align), [make((1, 2, 3))], device)


def test_affine_grid_then_grid_sample(device):
    th, x = make((2, 2, 3), low=-1, high=1), make((2, 3, 6, 6))
    check_grad(lambda t, a: F.grid_sample(a, F.affine_grid(t, (2, 3, 4, 5), align_corners=False), align_corners=False),
               lambda t, a: TF.grid_sample(a, TF.affine_grid(t, (2, 3, 4, 5), align_corners=False), align_corners=False),
               [th, x], device, tol=TOL)


BAD = {
    "mode": lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.zeros(1, 2, 2, 2), mode="foo"),
    "padding_mode": lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.zeros(1, 2, 2, 2), padding_mode="foo"),
    "rank": lambda m: m.nn.functional.grid_sample(m.ones(1, 3, 3), m.zeros(1, 2, 2)),
    "grid_last": lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.zeros(1, 2, 2, 3)),
    "batch": lambda m: m.nn.functional.grid_sample(m.ones(2, 1, 3, 3), m.zeros(1, 2, 2, 2)),
    "bicubic_3d": lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 3, 3, 3), m.zeros(1, 2, 2, 2, 3), mode="bicubic"),
    "empty_spatial": lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 0, 3), m.zeros(1, 2, 2, 2)),
    "affine_shape": lambda m: m.nn.functional.affine_grid(m.zeros(1, 3, 3), (1, 1, 2, 2)),
    "affine_size": lambda m: m.nn.functional.affine_grid(m.zeros(1, 2, 3), (1, 2, 2)),
    "affine_int": lambda m: m.nn.functional.affine_grid(m.zeros(1, 2, 3, dtype=m.int64), (1, 1, 2, 2)),
    "affine_zero": lambda m: m.nn.functional.affine_grid(m.zeros(1, 2, 3), (1, 1, 0, 2)),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input(name):
    fn = BAD[name]
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)):
        fn(torchweb)
