"""torchweb.vision.transforms (v1 and v2) against the real torchvision on the same inputs.

Deterministic operations must give torchvision's output (floats to float32 rounding, uint8
exactly; v2's uint8 resize, which torchvision runs through a native uint8 kernel, within 1).
torchweb's generator is not torch's, so random transforms are compared with their draw fixed
on both sides (get_params patched), and their draws are checked by property."""

import numpy as np
import pytest

from torchvision_ref import tv
import torch
import torchweb
from oracle import ours, theirs

from torchweb.vision import Image
from torchweb.vision import transforms as T
from torchweb.vision.transforms import functional as F
from torchweb.vision.transforms import v2
from torchweb.vision.transforms.v2 import functional as F2

TF, TF2, TT, TV2 = tv.transforms.functional, tv.transforms.v2.functional, tv.transforms, tv.transforms.v2
NEAREST, BILINEAR = F.InterpolationMode.NEAREST, F.InterpolationMode.BILINEAR
TNEAREST, TBILINEAR = TF.InterpolationMode.NEAREST, TF.InterpolationMode.BILINEAR


def _image(dtype, shape=(3, 13, 17), seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(shape, generator=g)
    return (x * 255).to(torch.uint8) if dtype == "uint8" else x


def _same(got, expected, atol=1e-5):
    got = theirs(got)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if expected.dtype.is_floating_point:
        torch.testing.assert_close(got, expected, atol=atol, rtol=1e-5)
    else:
        diff = (got.int() - expected.int()).abs().max().item() if got.numel() else 0
        assert diff <= atol, f"uint8 outputs differ by up to {diff}"


# (name, ours(x), theirs(x)) for one image x
CASES = [
    ("resize_down", lambda f, x: f.resize(x, [7, 9]), lambda f, x: f.resize(x, [7, 9])),
    ("resize_up", lambda f, x: f.resize(x, [20, 31]), lambda f, x: f.resize(x, [20, 31])),
    ("resize_short_side", lambda f, x: f.resize(x, 8), lambda f, x: f.resize(x, 8)),
    ("resize_max_size", lambda f, x: f.resize(x, 8, max_size=10), lambda f, x: f.resize(x, 8, max_size=10)),
    ("resize_no_antialias", lambda f, x: f.resize(x, [5, 6], antialias=False),
     lambda f, x: f.resize(x, [5, 6], antialias=False)),
    ("resize_nearest", lambda f, x: f.resize(x, [7, 9], interpolation=NEAREST),
     lambda f, x: f.resize(x, [7, 9], interpolation=TNEAREST)),
    ("center_crop", lambda f, x: f.center_crop(x, [8, 10]), lambda f, x: f.center_crop(x, [8, 10])),
    ("center_crop_padded", lambda f, x: f.center_crop(x, [20, 10]), lambda f, x: f.center_crop(x, [20, 10])),
    ("crop_outside", lambda f, x: f.crop(x, -2, 3, 9, 20), lambda f, x: f.crop(x, -2, 3, 9, 20)),
    ("resized_crop", lambda f, x: f.resized_crop(x, 1, 2, 9, 11, [6, 6]),
     lambda f, x: f.resized_crop(x, 1, 2, 9, 11, [6, 6])),
    ("pad_constant", lambda f, x: f.pad(x, 4, fill=7), lambda f, x: f.pad(x, 4, fill=7)),
    ("pad_reflect", lambda f, x: f.pad(x, [2, 3, 1, 4], padding_mode="reflect"),
     lambda f, x: f.pad(x, [2, 3, 1, 4], padding_mode="reflect")),
    ("pad_edge", lambda f, x: f.pad(x, [2, 3], padding_mode="edge"),
     lambda f, x: f.pad(x, [2, 3], padding_mode="edge")),
    ("pad_symmetric", lambda f, x: f.pad(x, [2, 3, 1, 4], padding_mode="symmetric"),
     lambda f, x: f.pad(x, [2, 3, 1, 4], padding_mode="symmetric")),
    ("hflip", lambda f, x: f.hflip(x), lambda f, x: f.hflip(x)),
    ("vflip", lambda f, x: f.vflip(x), lambda f, x: f.vflip(x)),
    ("grayscale", lambda f, x: f.rgb_to_grayscale(x), lambda f, x: f.rgb_to_grayscale(x)),
    ("grayscale3", lambda f, x: f.rgb_to_grayscale(x, 3), lambda f, x: f.rgb_to_grayscale(x, 3)),
    ("brightness", lambda f, x: f.adjust_brightness(x, 1.3), lambda f, x: f.adjust_brightness(x, 1.3)),
    ("contrast", lambda f, x: f.adjust_contrast(x, 0.7), lambda f, x: f.adjust_contrast(x, 0.7)),
    ("saturation", lambda f, x: f.adjust_saturation(x, 1.4), lambda f, x: f.adjust_saturation(x, 1.4)),
    ("hue", lambda f, x: f.adjust_hue(x, -0.2), lambda f, x: f.adjust_hue(x, -0.2)),
    ("gamma", lambda f, x: f.adjust_gamma(x, 0.8, 1.1), lambda f, x: f.adjust_gamma(x, 0.8, 1.1)),
    ("invert", lambda f, x: f.invert(x), lambda f, x: f.invert(x)),
    ("rotate_nearest", lambda f, x: f.rotate(x, 30.0), lambda f, x: f.rotate(x, 30.0)),
    ("rotate_bilinear_expand", lambda f, x: f.rotate(x, 33.0, BILINEAR, expand=True, fill=[0.0, 0.0, 0.0]),
     lambda f, x: f.rotate(x, 33.0, TBILINEAR, expand=True, fill=[0.0, 0.0, 0.0])),
]


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
@pytest.mark.parametrize("name,mine,ref", CASES, ids=[c[0] for c in CASES])
def test_functional_matches_torchvision(name, mine, ref, dtype, device):
    x = _image(dtype)
    _same(mine(F, ours(x, device)), ref(TF, x))


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_v2_functional_matches_torchvision(dtype, device):
    x = _image(dtype)
    X = ours(x, device)
    _same(F2.resize(X, [7, 9]), TF2.resize(x, [7, 9]), atol=1 if dtype == "uint8" else 1e-5)
    _same(F2.horizontal_flip(X), TF2.horizontal_flip(x))
    _same(F2.center_crop(X, [5, 5]), TF2.center_crop(x, [5, 5]))
    for ours_dt, their_dt in ((torchweb.float32, torch.float32), (torchweb.uint8, torch.uint8),
                              (torchweb.int32, torch.int32)):
        if x.dtype == torch.float32 and their_dt == torch.int32:
            continue   # refused by both (not exact in float32)
        _same(F2.to_dtype(X, ours_dt, scale=True), TF2.to_dtype(x, their_dt, scale=True))
        _same(F.convert_image_dtype(X, ours_dt), TF.convert_image_dtype(x, their_dt))
    _same(F2.to_dtype(X, torchweb.float32, scale=False), TF2.to_dtype(x, torch.float32, scale=False))


def test_batched_images(device):
    x = _image("float32", (2, 3, 9, 11))
    X = ours(x, device)
    _same(F.resize(X, [5, 4]), TF.resize(x, [5, 4]))
    _same(F.adjust_hue(X, 0.1), TF.adjust_hue(x, 0.1))
    _same(F.normalize(X, [0.5, 0.4, 0.3], [0.2, 0.3, 0.4]), TF.normalize(x, [0.5, 0.4, 0.3], [0.2, 0.3, 0.4]))


def test_to_tensor_from_pil_free_inputs(device):
    a = (np.random.default_rng(1).random((5, 6, 3)) * 255).astype(np.uint8)
    expected = TF.to_tensor(a)
    _same(F.to_tensor(a), expected)                            # numpy HWC uint8
    _same(F.to_tensor(a.tolist()), expected)                   # nested lists
    _same(F.to_tensor(ours(torch.from_numpy(a), device)), expected)   # a tensor laid out HWC
    _same(F.to_tensor(a[:, :, 0]), TF.to_tensor(a[:, :, 0]))  # HW -> 1 channel
    _same(F.to_tensor(a.astype(np.float32)), TF.to_tensor(a.astype(np.float32)))   # floats kept
    _same(F.pil_to_tensor(Image(ours(torch.from_numpy(a), device))), TF.pil_to_tensor(TF.to_pil_image(a)))
    _same(F2.to_image(a), TF2.to_image(a).as_subclass(torch.Tensor))
    _same(v2.ToImage()(ours(torch.from_numpy(a).permute(2, 0, 1), device)), torch.from_numpy(a).permute(2, 0, 1))


def test_image_goes_through_geometric_transforms_as_pil_does():
    """An Image (the PIL-free stand-in) cropped/flipped/padded gives PIL's pixels."""
    from PIL import Image as PILImage
    a = (np.random.default_rng(2).random((9, 12, 3)) * 255).astype(np.uint8)
    mine, pil = Image(ours(torch.from_numpy(a), "cpu")), PILImage.fromarray(a)
    assert mine.size == pil.size and mine.mode == pil.mode
    for f in (lambda m, img: m.hflip(img), lambda m, img: m.vflip(img), lambda m, img: m.crop(img, 1, 2, 5, 6),
              lambda m, img: m.pad(img, [1, 2], fill=3), lambda m, img: m.center_crop(img, 5)):
        got, expected = f(F, mine), f(TF, pil)
        assert isinstance(got, Image)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
    np.testing.assert_array_equal(np.asarray(mine.convert("L")), np.asarray(Image(
        F.rgb_to_grayscale(F.pil_to_tensor(mine)).permute(1, 2, 0)).convert("L")))


def test_pipeline_to_normalized_tensor(device):
    a = (np.random.default_rng(3).random((12, 10, 3)) * 255).astype(np.uint8)
    mine = T.Compose([T.ToTensor(), T.Resize(8), T.CenterCrop(6), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.2, 0.3))])
    ref = TT.Compose([TT.ToTensor(), TT.Resize(8), TT.CenterCrop(6), TT.Normalize((0.5, 0.4, 0.3), (0.2, 0.2, 0.3))])
    _same(mine(a), ref(a))
    mine2 = v2.Compose([v2.ToImage(), v2.ToDtype(torchweb.float32, scale=True), v2.Normalize([0.5] * 3, [0.25] * 3)])
    ref2 = TV2.Compose([TV2.ToImage(), TV2.ToDtype(torch.float32, scale=True), TV2.Normalize([0.5] * 3, [0.25] * 3)])
    img, label = mine2(a, 7)      # v2: the label passes through untouched
    expected, their_label = ref2(a, 7)
    assert label == their_label == 7
    _same(img, expected.as_subclass(torch.Tensor))
    _same(T.Lambda(lambda t: t * 2)(ours(torch.ones(2), device)), torch.ones(2) * 2)
    _same(T.ConvertImageDtype(torchweb.uint8)(ours(_image("float32"), device)),
          TT.ConvertImageDtype(torch.uint8)(_image("float32")))


def _fix(monkeypatch, name, mine_value, their_value):
    monkeypatch.setattr(getattr(T, name), "get_params", staticmethod(lambda *a, **k: mine_value))
    monkeypatch.setattr(getattr(TT, name), "get_params", staticmethod(lambda *a, **k: their_value))


def test_random_transforms_with_the_same_draw(monkeypatch, device):
    x = _image("float32", (3, 20, 24))
    X = ours(x, device)
    _fix(monkeypatch, "RandomCrop", (3, 5, 16, 16), (3, 5, 16, 16))
    _same(T.RandomCrop(16, padding=4, padding_mode="reflect")(X), TT.RandomCrop(16, padding=4, padding_mode="reflect")(x))
    _same(T.RandomCrop(22, pad_if_needed=True)(X), TT.RandomCrop(22, pad_if_needed=True)(x))
    _fix(monkeypatch, "RandomResizedCrop", (2, 3, 12, 15), (2, 3, 12, 15))
    _same(T.RandomResizedCrop(8)(X), TT.RandomResizedCrop(8)(x))
    _fix(monkeypatch, "RandomRotation", 25.0, 25.0)
    _same(T.RandomRotation(30)(X), TT.RandomRotation(30)(x))
    params = ([2, 0, 3, 1], 1.2, 0.8, 1.3, 0.1)
    _fix(monkeypatch, "ColorJitter", (torchweb.tensor(params[0]),) + params[1:],
         (torch.tensor(params[0]),) + params[1:])
    _same(T.ColorJitter(0.5, 0.5, 0.5, 0.2)(X), TT.ColorJitter(0.5, 0.5, 0.5, 0.2)(x))
    _same(v2.ColorJitter(0.5, 0.5, 0.5, 0.2)(X), TT.ColorJitter(0.5, 0.5, 0.5, 0.2)(x))


def test_random_draws_by_property():
    torchweb.manual_seed(0)
    x = ours(_image("float32", (3, 20, 24)), "cpu")
    padded = TF.pad(theirs(x), 4)
    for _ in range(5):   # RandomCrop(padding=4): one of the crops of the padded image
        got = theirs(T.RandomCrop(16, padding=4)(x))
        assert any(torch.equal(got, padded[:, i:i + 16, j:j + 16]) for i in range(13) for j in range(17))
    flips = [bool(torchweb.equal(T.RandomHorizontalFlip()(x), F.hflip(x))) for _ in range(200)]
    assert 0.35 < sum(flips) / 200 < 0.65
    assert torchweb.equal(T.RandomHorizontalFlip(p=1.0)(x), F.hflip(x))
    assert torchweb.equal(T.RandomVerticalFlip(p=0.0)(x), x)
    for _ in range(50):
        i, j, h, w = T.RandomResizedCrop.get_params(x, (0.08, 1.0), (3 / 4, 4 / 3))
        assert 0 <= i <= 20 - h and 0 <= j <= 24 - w and 0 < h <= 20 and 0 < w <= 24
    order, b, c, s, h = T.ColorJitter.get_params((0.5, 1.5), (0.6, 1.4), None, (-0.1, 0.1))
    assert sorted(order.tolist()) == [0, 1, 2, 3] and 0.5 <= b <= 1.5 and 0.6 <= c <= 1.4 and s is None
    assert -0.1 <= h <= 0.1
    angle = T.RandomRotation.get_params([-10.0, 10.0])
    assert -10 <= angle <= 10


@pytest.mark.parametrize("call", [
    lambda m: m.transforms.functional.to_tensor(5),
    lambda m: m.transforms.functional.normalize(torch_uint8(m), [0.5], [0.5]),
    lambda m: m.transforms.functional.adjust_hue(torch_float(m), 0.7),
    lambda m: m.transforms.functional.adjust_brightness(torch_float(m), -1),
    lambda m: m.transforms.functional.pad(torch_float(m), [1, 2, 3]),
    lambda m: m.transforms.functional.pad(torch_float(m), 1, padding_mode="wrap"),
    lambda m: m.transforms.functional.normalize(torch_float(m), [0.5], [0.0]),
    lambda m: m.transforms.ColorJitter(brightness=-1),
    lambda m: m.transforms.RandomCrop(50)(torch_float(m)),
    lambda m: m.transforms.functional.convert_image_dtype(torch_float(m), m_int64(m)),
])
def test_bad_input_raises_torchvisions_exception(call):
    import torchweb.vision as ours_tv
    with pytest.raises(Exception) as theirs_err:
        call(tv)
    with pytest.raises(theirs_err.type):
        call(ours_tv)


def _backend(m):
    return torch if m is tv else torchweb


def torch_float(m):
    return _backend(m).ones(3, 4, 4)


def torch_uint8(m):
    return _backend(m).ones(3, 4, 4, dtype=_backend(m).uint8)


def m_int64(m):
    return _backend(m).int64


def test_a_missing_transform_says_the_subset_lacks_it():
    import torchweb.vision.transforms as T
    import torchweb.vision.transforms.v2 as V2
    for module, name in ((T, "transforms"), (V2, "transforms.v2")):
        with pytest.raises(AttributeError, match=f"torchvision.{name}' has no attribute 'GaussianBlur': "
                                                 "torchweb's torchvision subset does not have it"):
            module.GaussianBlur
        assert not hasattr(module, "AutoAugment") and hasattr(module, "Compose")
