"""nn.functional.pad (constant, reflect, replicate, circular; negative pads crop),
pixel_shuffle, pixel_unshuffle and channel_shuffle against PyTorch, forward and backward, on
both devices; bad input raises PyTorch's exception types."""

import pytest
import torch
import torch.nn.functional as F

import torchweb
import torchweb.nn.functional as TF
from oracle import check, make, ours as make_ours
from test_conv import check_grad

TOL = {"rtol": 1e-5, "atol": 1e-5}
PADS = [(1, 2), (2, 1, 0, 3), (-1, 2), (2, -1, -2, 1), (1, 1, 1, 1, 1, 1), (3, 4, 4, 3), (0, 0), (4, 4)]
MODES = ["constant", "reflect", "replicate", "circular"]


@pytest.mark.parametrize("pad", PADS, ids=[str(p) for p in PADS])
@pytest.mark.parametrize("mode", MODES)
def test_pad(device, mode, pad):
    r = len(pad) // 2
    x = make((2, 3, 5, 6)) if mode == "constant" else make((2, 3) + (4, 5, 6)[3 - r:])
    try:
        F.pad(x, pad, mode=mode)
    except Exception as e:   # PyTorch refuses (reflect past the input's size): so must we
        with pytest.raises(type(e)):
            TF.pad(make_ours(x, device), pad, mode=mode)
        return
    out = check_grad(lambda t: F.pad(t, pad, mode=mode), lambda t: TF.pad(t, pad, mode=mode), [x], device, tol=TOL)
    if mode == "constant":
        assert out.grad_fn.name() == "ConstantPadNdBackward0"


@pytest.mark.parametrize("mode", MODES)
def test_pad_unbatched_and_1d(device, mode):
    check_grad(lambda t: F.pad(t, (2, 3), mode=mode), lambda t: TF.pad(t, (2, 3), mode=mode), [make((3, 6))], device)
    check_grad(lambda t: F.pad(t, (1, 2, 2, 1), mode=mode), lambda t: TF.pad(t, (1, 2, 2, 1), mode=mode),
               [make((3, 5, 6))], device)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
@pytest.mark.parametrize("mode", MODES)
def test_pad_non_contiguous(device, mode, layout):
    check_grad(lambda t: F.pad(t, (1, 2, 2, 1), mode=mode), lambda t: TF.pad(t, (1, 2, 2, 1), mode=mode),
               [make((2, 3, 5, 6))], device, layout=layout)


def test_pad_constant_value_and_dtypes(device):
    check(lambda m, t: m.nn.functional.pad(t, (1, 2), value=2.5), make((2, 3)), device=device)
    check(lambda m, t: m.nn.functional.pad(t, (1, 2, 0, 1), value=-7), make((2, 3), dtype=torch.int64), device=device)
    check(lambda m, t: m.nn.functional.pad(t, (1, 1), value=True), make((2, 3), dtype=torch.bool), device=device)
    check(lambda m, t: m.nn.functional.pad(t, (1, 2, 3, 4, 1, 1, 1, 1)), make((2, 3, 2, 2)), device=device)
    check(lambda m, t: m.nn.functional.pad(t, (1, 1), mode="reflect"), make((2, 3, 4), dtype=torch.int64),
          device=device)
    check(lambda m, t: m.nn.functional.pad(t, (1, 1), value=float("nan")), make((2, 3)), device=device)


def test_pad_empty(device):
    check(lambda m, t: m.nn.functional.pad(t, (1, 1)), make((0, 3)), device=device)
    check(lambda m, t: m.nn.functional.pad(t, (1, 1), mode="reflect"), make((0, 3, 4)), device=device)
    check(lambda m, t: m.nn.functional.pad(t, (-2, -2)), make((2, 4)), device=device)


def test_pad_float16(device):
    if device == "webgpu" and "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("adapter without shader-f16")
    for mode in MODES:
        check(lambda m, t: m.nn.functional.pad(t, (1, 2, 2, 1), mode=mode), make((2, 3, 4, 5), dtype=torch.float16),
              device=device)


def test_pixel_shuffle(device):
    check_grad(lambda t: F.pixel_shuffle(t, 2), lambda t: TF.pixel_shuffle(t, 2), [make((2, 8, 3, 4))], device)
    check_grad(lambda t: torch.pixel_shuffle(t, 3), lambda t: torchweb.pixel_shuffle(t, 3), [make((9, 2, 2))], device)
    check_grad(lambda t: F.pixel_unshuffle(t, 2), lambda t: TF.pixel_unshuffle(t, 2), [make((2, 2, 4, 6))], device)
    check_grad(lambda t: F.pixel_unshuffle(t, 3), lambda t: TF.pixel_unshuffle(t, 3), [make((2, 1, 2, 3, 6))], device)


def test_channel_shuffle(device):
    check_grad(lambda t: F.channel_shuffle(t, 3), lambda t: TF.channel_shuffle(t, 3), [make((2, 6, 3, 4))], device)
    check_grad(lambda t: torch.channel_shuffle(t, 2), lambda t: torchweb.channel_shuffle(t, 2),
               [make((2, 4, 5))], device)


BAD = {
    "mode": lambda m: m.nn.functional.pad(m.ones(2, 4, 5, 5), (1, 1), mode="foo"),
    "reflect_too_big": lambda m: m.nn.functional.pad(m.ones(2, 4, 5, 5), (5, 5, 1, 1), mode="reflect"),
    "reflect_rank": lambda m: m.nn.functional.pad(m.ones(2, 4, 5, 5), (1, 1), mode="reflect"),
    "circular_too_big": lambda m: m.nn.functional.pad(m.ones(2, 4, 5), (6, 6), mode="circular"),
    "odd_length": lambda m: m.nn.functional.pad(m.ones(2, 4, 5, 5), (1, 1, 1)),
    "too_long": lambda m: m.nn.functional.pad(m.ones(2, 4), (1, 1, 1, 1, 1, 1)),
    "negative_size": lambda m: m.nn.functional.pad(m.ones(2, 4), (-3, -3)),
    "pixel_shuffle": lambda m: m.nn.functional.pixel_shuffle(m.ones(1, 5, 2, 2), 2),
    "pixel_unshuffle": lambda m: m.nn.functional.pixel_unshuffle(m.ones(1, 1, 3, 3), 2),
    "channel_shuffle": lambda m: m.nn.functional.channel_shuffle(m.ones(1, 5, 2, 2), 2),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input(name):
    fn = BAD[name]
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(torchweb)
    for token in ("padding (5, 5)", "size(-3)=5", "5 channels"):
        if token in str(expected.value):
            assert token in str(got.value), (str(got.value), str(expected.value))
