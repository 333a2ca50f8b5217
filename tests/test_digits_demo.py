"""The "Train" demo (issue 10): site/demos/digits/train.py, plain PyTorch code, trains a small CNN on
scikit-learn's 8x8 handwritten digits (1797 images, taken out of the scikit-learn wheel by
scripts/fetch_digits.py, cached in .cache/digits/) and must reach at least 95% test accuracy
with its default settings, on torchweb's webgpu device (lavapipe here) and on PyTorch (the same
file, executed unchanged with `torch` bound to each library). Curves differ between the two
(their generators differ: initial weights and batch order), but the split is the same images.

Skipped, saying why, only when the data cannot be fetched."""

import importlib.util
import os
import time

import pytest
import torch

import torchweb as tw
from model_files import load_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN_PY = os.path.join(ROOT, "site", "demos", "digits", "train.py")
MIN_ACCURACY = 0.95


def _import_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fetch_digits = _import_path("fetch_digits", os.path.join(ROOT, "scripts", "fetch_digits.py"))


def load_train_file(lib):
    """Execute train.py unchanged with `import torch` (and its submodules) resolving to lib."""
    return load_file(TRAIN_PY, lib)


@pytest.fixture(scope="module")
def digits():
    try:
        path = fetch_digits.fetch()
        return fetch_digits.load(path)
    except (fetch_digits.FetchError, OSError) as e:
        pytest.skip(f"scikit-learn's digits cannot be fetched (scripts/fetch_digits.py): {e}")


def test_data(digits):
    images, labels = digits
    assert len(images) == len(labels) == 1797
    assert all(len(im) == 64 and all(0 <= v <= 16 for v in im) for im in images)
    assert sorted(set(labels)) == list(range(10))
    # scikit-learn's first digit is a 0 (load_digits().images[0])
    assert labels[0] == 0 and images[0][:8] == [0, 0, 5, 13, 9, 1, 0, 0]


def test_parse_errors():
    with pytest.raises(fetch_digits.FetchError, match="65"):
        fetch_digits.parse_csv("1,2,3\n")
    with pytest.raises(fetch_digits.FetchError, match="1797"):
        fetch_digits.check([[0] * 64], [0])


def test_split_is_fixed(digits):
    ours, theirs = load_train_file(tw), load_train_file(torch)
    images, labels = digits
    (tr_i, tr_l), (te_i, te_l) = ours.split(images, labels)
    assert (len(tr_l), len(te_l)) == (1437, 360)
    assert ours.split(images, labels) == theirs.split(images, labels)
    assert sorted(tr_l + te_l) == sorted(labels)


def _train(lib, digits, device):
    mod = load_train_file(lib)
    seen = []
    start = time.perf_counter()
    model, history = mod.train(*digits, device=device,
                               progress=lambda e, loss, acc: seen.append((e, loss, acc)))
    elapsed = time.perf_counter() - start
    assert [(h["epoch"], h["loss"], h["accuracy"]) for h in history] == seen
    assert [e for e, _, _ in seen] == list(range(1, len(seen) + 1))
    losses = [loss for _, loss, _ in seen]
    assert all(isinstance(v, float) for v in losses) and losses[-1] < losses[0]
    print(f"\n{lib.__name__} {device or 'cpu'}: "
          + ", ".join(f"epoch {e} loss {loss:.4f} acc {acc:.4f}" for e, loss, acc in seen)
          + f" ({elapsed:.1f} s)")
    return model, history


def test_trains_on_webgpu(digits):
    if not tw.webgpu.is_available():
        pytest.skip("no WebGPU adapter")
    model, history = _train(tw, digits, "webgpu")
    assert history[-1]["accuracy"] >= MIN_ACCURACY, history
    assert next(model.parameters()).device.type == "webgpu"


def test_trains_on_pytorch(digits):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)            # tiny convolutions: threads only contend on a shared box
    try:
        _, history = _train(torch, digits, None)
    finally:
        torch.set_num_threads(threads)
    assert history[-1]["accuracy"] >= MIN_ACCURACY, history
