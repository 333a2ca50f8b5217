"""torchweb.vision.datasets.ImageFolder / DatasetFolder against the real torchvision 0.28, on a
small tree of images made here with Pillow: classes and class_to_idx (sorted), samples (files
walked in sorted order, nested folders), targets, extensions, is_valid_file, allow_empty and the
errors; items through transforms equal torchvision's, with Pillow (the loader opens the file with it,
as torchvision's, and hands out its RGB pixels as a torchweb.vision.Image) and without it (the loader's own PNG/PPM/PGM decoding gives Pillow's pixels), on both
devices."""

import os

import numpy as np
import pytest

from torchvision_ref import tv
import torchweb
from torchweb.vision import datasets, transforms
from torchweb.vision.datasets import _decode, folder

Image = pytest.importorskip("PIL.Image")


def _pixels(h, w, seed, channels=3):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (h, w, channels) if channels > 1 else (h, w), dtype=np.uint8)


@pytest.fixture
def tree(tmp_path):
    """root/<class>/...: PNGs in several modes, a nested folder, a PPM, files to skip, an empty class
    folder only under allow_empty, class names whose sorted order differs from creation order."""
    root = tmp_path / "tree"
    files = {
        "zebra/b.png": Image.fromarray(_pixels(5, 7, 1)),
        "zebra/a.png": Image.fromarray(_pixels(5, 7, 2, 4), "RGBA"),
        "zebra/deep/c.PNG": Image.fromarray(_pixels(5, 7, 3, 1), "L"),
        "Ant/x.png": Image.fromarray(_pixels(5, 7, 4)).convert("P", palette=Image.Palette.ADAPTIVE, colors=7),
        "Ant/y.ppm": Image.fromarray(_pixels(5, 7, 5)),
        "cat/z.png": Image.fromarray(_pixels(5, 7, 6, 2), "LA"),
    }
    for rel, img in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        img.save(path)
    (root / "cat" / "notes.txt").write_text("not an image")
    (root / "cat" / "w.npy").write_bytes(b"\x93NUMPY")
    (root / "stray.png").write_bytes((root / "cat" / "z.png").read_bytes())   # not in a class folder
    return root


def _rel(samples, root):
    return [(os.path.relpath(p, root), c) for p, c in samples]


def test_classes_samples_and_targets_as_torchvision(tree):
    mine, ref = datasets.ImageFolder(str(tree)), tv.datasets.ImageFolder(str(tree))
    assert mine.classes == ref.classes == ["Ant", "cat", "zebra"]
    assert mine.class_to_idx == ref.class_to_idx
    assert _rel(mine.samples, tree) == _rel(ref.samples, tree) and mine.imgs is mine.samples
    assert mine.targets == ref.targets and len(mine) == len(ref) == 6 and repr(mine) == repr(ref)
    assert folder.find_classes(str(tree)) == tv.datasets.folder.find_classes(str(tree))
    by_path = datasets.ImageFolder(tree)   # a pathlib.Path root, as torchvision takes
    assert by_path.samples == tv.datasets.ImageFolder(tree).samples and by_path.root == tree
    assert folder.IMG_EXTENSIONS == tv.datasets.folder.IMG_EXTENSIONS
    for name in ("a.PNG", "b.jpeg", "c.txt", "d.tiff"):
        assert folder.is_image_file(name) == tv.datasets.folder.is_image_file(name)


def test_items_with_pillow_equal_torchvisions(tree, device):
    torchweb.set_default_device(device)
    try:
        mine = datasets.ImageFolder(str(tree), transform=transforms.Compose([
            transforms.CenterCrop(4), transforms.ToTensor(), transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))]),
            target_transform=lambda t: t * 10)
        ref = tv.datasets.ImageFolder(str(tree), transform=tv.transforms.Compose([
            tv.transforms.CenterCrop(4), tv.transforms.ToTensor(),
            tv.transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))]), target_transform=lambda t: t * 10)
        for i in range(len(ref)):
            (a, la), (b, lb) = mine[i], ref[i]
            assert la == lb
            assert a.device.type == device and tuple(a.shape) == (3, 4, 4)
            np.testing.assert_allclose(np.array(a.tolist()), b.numpy(), rtol=1e-6, atol=1e-6)
        for (raw, _), (want, _) in zip(datasets.ImageFolder(str(tree)), ref.__class__(str(tree))):
            # Pillow's RGB image as a torchweb.vision.Image (which torchweb's transforms take)
            assert isinstance(raw, torchweb.vision.Image) and raw.mode == want.mode == "RGB"
            assert raw.size == want.size and raw.hwc.device.type == device
            np.testing.assert_array_equal(np.asarray(raw), np.asarray(want))
        assert isinstance(folder.pil_loader(mine.samples[0][0]), Image.Image)
    finally:
        torchweb.set_default_device(None)


def test_without_pillow_decoded_pixels_equal_pillows(tree, device, monkeypatch):
    """default_loader without Pillow: a torchweb.vision.Image in RGB whose pixels are PIL's."""
    import builtins
    real_import = builtins.__import__

    def no_pil(name, *args, **kw):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("No module named 'PIL'")
        return real_import(name, *args, **kw)

    torchweb.set_default_device(device)
    try:
        monkeypatch.setattr(builtins, "__import__", no_pil)
        mine = datasets.ImageFolder(str(tree))
        images = [mine[i] for i in range(len(mine))]
        tensors = [datasets.ImageFolder(str(tree), transform=transforms.ToTensor())[i][0] for i in range(2)]
        monkeypatch.setattr(builtins, "__import__", real_import)
        ref = tv.datasets.ImageFolder(str(tree))
        for (img, label), (want, want_label) in zip(images, ref):
            assert label == want_label and isinstance(img, torchweb.vision.Image)
            assert img.mode == "RGB" and img.size == want.size
            np.testing.assert_array_equal(np.asarray(img), np.asarray(want))
        for got, (want, _) in zip(tensors, tv.datasets.ImageFolder(str(tree), transform=tv.transforms.ToTensor())):
            np.testing.assert_allclose(np.array(got.tolist()), want.numpy(), rtol=1e-6)
    finally:
        torchweb.set_default_device(None)


@pytest.mark.parametrize("mode,depth", [("1", 1), ("L", 8), ("RGB", 8), ("RGBA", 8), ("LA", 8), ("P", 8),
                                        ("P", 4), ("P", 2), ("L", 4), ("L", 2), ("I;16", 16), ("RGB", 16)])
def test_png_decoder_matches_pillow(tmp_path, mode, depth):
    """Every colour type and bit depth Pillow writes, rows long enough for each PNG filter."""
    h, w = 6, 37
    if mode == "1":
        img = Image.fromarray(_pixels(h, w, 7, 1) > 128)
    elif mode == "I;16":
        img = Image.fromarray((_pixels(h, w, 8, 1).astype(np.uint16) * 257 + np.arange(w, dtype=np.uint16)))
    elif mode == "P":
        img = Image.fromarray(_pixels(h, w, 9)).convert("P", palette=Image.Palette.ADAPTIVE, colors=1 << depth)
    elif mode in ("L", "LA", "RGBA", "RGB"):
        channels = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}[mode]
        px = _pixels(h, w, 10, channels)
        if depth < 8:   # values Pillow's low-depth grey keeps exactly
            px = (px >> (8 - depth)) * (255 // ((1 << depth) - 1))
        img = Image.fromarray(px, mode)
    path = tmp_path / "img.png"
    kw = {"bits": depth} if mode in ("P", "L") and depth < 8 else {}
    if mode == "RGB" and depth == 16:   # Pillow writes no 16-bit RGB: written here
        path.write_bytes(_png_rgb16(_pixels(h, w, 11, 3).astype(np.uint16) * 257 + 3))
    else:
        img.save(path, optimize=False, **kw)
    got = _decode.read_image_file(str(path)).convert("RGB")
    with Image.open(path) as want:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want.convert("RGB")))


def _png_rgb16(px):
    """A 16-bit RGB PNG of px (H, W, 3) whose lines use the five filters in turn."""
    import struct
    import zlib
    h, w, _ = px.shape
    lines = [px[y].astype(">u2").tobytes() for y in range(h)]
    rows = b"".join(bytes([y % 5]) + _filter(lines[y], lines[y - 1] if y else bytes(w * 6), y % 5, 6)
                    for y in range(h))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (_decode.PNG_SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _filter(line, prev, kind, bpp):
    """PNG's filter `kind` applied to one line (the encoder side, to test every decoder branch)."""
    out = bytearray(len(line))
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
        p = a + b - c
        pred = [0, a, b, (a + b) >> 1,
                a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c][kind]
        out[i] = (line[i] - pred) & 255
    return bytes(out)


@pytest.mark.parametrize("kind", ["P5", "P6", "P2", "P3", "P5_maxval_100"])
def test_pnm_decoder_matches_pillow(tmp_path, kind):
    h, w = 4, 5
    channels = 3 if kind in ("P3", "P6") else 1
    maxval = 100 if kind.endswith("100") else 255
    px = (_pixels(h, w, 12, channels).astype(np.int64) % (maxval + 1)).astype(np.uint8)
    head = f"{kind[:2]}\n# a comment\n{w} {h}\n{maxval}\n".encode()
    body = px.tobytes() if kind[:2] in ("P5", "P6") else " ".join(map(str, px.flatten())).encode() + b"\n"
    path = tmp_path / "img.pnm"
    path.write_bytes(head + body)
    got = _decode.read_image_file(str(path)).convert("RGB")
    with Image.open(path) as want:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want.convert("RGB")))


def test_extensions_is_valid_file_and_allow_empty(tree):
    (tree / "empty_class").mkdir()
    with pytest.raises(FileNotFoundError) as e_ref:
        tv.datasets.ImageFolder(str(tree))
    with pytest.raises(FileNotFoundError) as e:
        datasets.ImageFolder(str(tree))
    assert str(e.value) == str(e_ref.value)
    mine, ref = datasets.ImageFolder(str(tree), allow_empty=True), tv.datasets.ImageFolder(str(tree), allow_empty=True)
    assert mine.classes == ref.classes and mine.class_to_idx == ref.class_to_idx
    assert _rel(mine.samples, tree) == _rel(ref.samples, tree)

    def valid(path):
        return "a" in os.path.basename(path) or path.endswith(".ppm")
    mine = datasets.ImageFolder(str(tree), is_valid_file=valid, allow_empty=True)
    ref = tv.datasets.ImageFolder(str(tree), is_valid_file=valid, allow_empty=True)
    assert _rel(mine.samples, tree) == _rel(ref.samples, tree) and mine.targets == ref.targets

    def loader(path):
        return os.path.getsize(path)
    for exts in ((".ppm", ".txt"), ".npy"):
        mine = datasets.DatasetFolder(str(tree), loader, extensions=exts, allow_empty=True)
        ref = tv.datasets.DatasetFolder(str(tree), loader, extensions=exts, allow_empty=True)
        assert _rel(mine.samples, tree) == _rel(ref.samples, tree) and mine.extensions == ref.extensions
        assert [mine[i] for i in range(len(mine))] == [ref[i] for i in range(len(ref))]
    with pytest.raises(FileNotFoundError) as e:
        datasets.DatasetFolder(str(tree), loader, extensions=(".ppm",))
    with pytest.raises(FileNotFoundError) as e_ref:
        tv.datasets.DatasetFolder(str(tree), loader, extensions=(".ppm",))
    assert str(e.value) == str(e_ref.value)


def test_bad_arguments_raise_as_torchvision(tmp_path, tree):
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "a.png").write_bytes(b"")
    for call in (lambda d: d.ImageFolder(str(tmp_path / "flat")),
                 lambda d: d.DatasetFolder(str(tree), len),
                 lambda d: d.DatasetFolder(str(tree), len, extensions=(".png",), is_valid_file=bool),
                 lambda d: d.folder.make_dataset(str(tree), {}, extensions=".png"),
                 lambda d: d.DatasetFolder.make_dataset(str(tree), None, extensions=".png")):
        with pytest.raises(Exception) as e_ref:
            call(tv.datasets)
        with pytest.raises(type(e_ref.value)) as e:
            call(datasets)
        assert str(e.value) == str(e_ref.value)


def test_overridden_find_classes_is_used(tree):
    """A subclass picking its classes (the documented way to customize) gets its own mapping."""
    def subclass(base):
        class Two(base):
            def find_classes(self, directory):
                return ["zebra", "cat"], {"zebra": 0, "cat": 1}
        return Two
    mine, ref = subclass(datasets.ImageFolder)(str(tree)), subclass(tv.datasets.ImageFolder)(str(tree))
    assert mine.class_to_idx == ref.class_to_idx and _rel(mine.samples, tree) == _rel(ref.samples, tree)
    assert mine.targets == ref.targets


def test_under_the_alias_torchvision_imagefolder_is_ours():
    import torchweb.vision as vision
    assert vision.datasets.ImageFolder is folder.ImageFolder
    assert vision.datasets.folder.default_loader is folder.default_loader
