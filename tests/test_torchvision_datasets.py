"""torchweb.vision.datasets against the real torchvision, on tiny files made here in the
original formats: IDX (plain and gzipped) for MNIST/FashionMNIST, python pickle batches
(protocols 2, 4 and 5) for CIFAR-10/100, and download=True from a local HTTP server."""

import gzip
import hashlib
import os
import pickle

import numpy as np
import pytest

from torchvision_ref import served, tv  # noqa: F401  (served: a fixture)
import torch
import torchweb

from torchweb.vision import datasets, transforms
from torchweb.vision.datasets import _safe_pickle


def _idx(arr, code=8):
    return bytes([0, 0, code, arr.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in arr.shape) + arr.tobytes()


def _mnist_files(folder, n=6, gz=False):
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, n, dtype=np.uint8)
    os.makedirs(folder, exist_ok=True)
    for split in ("train", "t10k"):
        for kind, arr in (("images-idx3-ubyte", imgs), ("labels-idx1-ubyte", labels)):
            name = os.path.join(folder, f"{split}-{kind}")
            data = _idx(arr)
            with open(name + (".gz" if gz else ""), "wb") as f:
                f.write(gzip.compress(data) if gz else data)
    return imgs, labels


def _assert_same_items(mine, ref):
    assert len(mine) == len(ref)
    for i in range(len(ref)):
        (a, la), (b, lb) = mine[i], ref[i]
        assert la == lb
        np.testing.assert_array_equal(np.array(a.tolist()), b.numpy())


@pytest.mark.parametrize("cls", ["MNIST", "FashionMNIST"])
@pytest.mark.parametrize("train", [True, False])
def test_mnist_formats_read_as_torchvision_reads_them(tmp_path, cls, train):
    _mnist_files(str(tmp_path / cls / "raw"))
    mine = getattr(datasets, cls)(str(tmp_path), train=train, transform=transforms.ToTensor())
    ref = getattr(tv.datasets, cls)(str(tmp_path), train=train, transform=tv.transforms.ToTensor())
    _assert_same_items(mine, ref)
    assert mine.data.dtype == torchweb.uint8 and tuple(mine.data.shape) == tuple(ref.data.shape)
    assert mine.targets.tolist() == ref.targets.tolist() and mine.targets.dtype == torchweb.int64
    assert mine.classes == ref.classes and mine.class_to_idx == ref.class_to_idx
    img, _ = type(mine)(str(tmp_path), train=train)[0]   # no transform: the PIL-free image, mode L
    np.testing.assert_array_equal(np.asarray(img), np.asarray(ref.__class__(str(tmp_path), train=train)[0][0]))
    assert img.mode == "L" and img.size == (28, 28)


def test_mnist_reads_gzipped_files_and_checks_the_format(tmp_path):
    imgs, labels = _mnist_files(str(tmp_path / "MNIST" / "raw"), gz=True)
    mine = datasets.MNIST(str(tmp_path))
    np.testing.assert_array_equal(np.array(mine.data.tolist()), imgs)
    assert mine.targets.tolist() == labels.tolist()
    with open(tmp_path / "MNIST" / "raw" / "train-labels-idx1-ubyte.gz", "wb") as f:
        f.write(gzip.compress(b"\x01\x02\x08\x01" + b"\0" * 8))
    with pytest.raises(RuntimeError, match="not an IDX file"):
        datasets.MNIST(str(tmp_path))
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.MNIST(str(tmp_path / "elsewhere"))


def _cifar_files(folder, names, key, protocol, n=4):
    rng = np.random.default_rng(protocol)
    os.makedirs(folder, exist_ok=True)
    for name in names:
        batch = {"batch_label": "b", "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                 key: rng.integers(0, 10, n).tolist(), "filenames": [f"{i}.png" for i in range(n)]}
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump(batch, f, protocol=protocol)


def _unchecked(base, train_list, test_list, meta):
    """The class with no md5 (the tiny files made here are not the originals)."""
    return type(base.__name__, (base,), {"train_list": [[n, None] for n in train_list],
                                         "test_list": [[n, None] for n in test_list],
                                         "meta": dict(meta, md5=None)})


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_cifar10_batches_read_as_torchvision_reads_them(tmp_path, protocol):
    folder = str(tmp_path / "cifar-10-batches-py")
    _cifar_files(folder, ["data_batch_1", "data_batch_2", "test_batch"], "labels", protocol)
    with open(os.path.join(folder, "batches.meta"), "wb") as f:
        pickle.dump({"label_names": [f"class{i}" for i in range(10)], "num_vis": 3072}, f, protocol=protocol)
    for train in (True, False):
        args = (["data_batch_1", "data_batch_2"], ["test_batch"], datasets.CIFAR10.meta)
        mine = _unchecked(datasets.CIFAR10, *args)(str(tmp_path), train=train, transform=transforms.ToTensor())
        ref = _unchecked(tv.datasets.CIFAR10, *args)(str(tmp_path), train=train, transform=tv.transforms.ToTensor())
        _assert_same_items(mine, ref)
        np.testing.assert_array_equal(np.array(mine.data.tolist()), ref.data)
        assert mine.targets == ref.targets and mine.classes == ref.classes


def test_cifar100_fine_labels(tmp_path):
    folder = str(tmp_path / "cifar-100-python")
    _cifar_files(folder, ["train", "test"], "fine_labels", 2)
    with open(os.path.join(folder, "meta"), "wb") as f:
        pickle.dump({"fine_label_names": [f"c{i}" for i in range(100)]}, f, protocol=2)
    args = (["train"], ["test"], datasets.CIFAR100.meta)
    mine = _unchecked(datasets.CIFAR100, *args)(str(tmp_path))
    ref = _unchecked(tv.datasets.CIFAR100, *args)(str(tmp_path))
    assert mine.targets == ref.targets and mine.classes == ref.classes
    np.testing.assert_array_equal(np.asarray(mine[1][0]), np.asarray(ref[1][0]))


def test_cifar_checks_the_real_checksums(tmp_path):
    _cifar_files(str(tmp_path / "cifar-10-batches-py"), ["data_batch_1"], "labels", 2)
    with pytest.raises(RuntimeError, match="not found or corrupted"):
        datasets.CIFAR10(str(tmp_path))
    assert datasets.CIFAR10.train_list == tv.datasets.CIFAR10.train_list
    assert datasets.CIFAR10.tgz_md5 == tv.datasets.CIFAR10.tgz_md5 and datasets.CIFAR10.url == tv.datasets.CIFAR10.url
    for cls in ("MNIST", "FashionMNIST", "KMNIST"):
        assert getattr(datasets, cls).resources == getattr(tv.datasets, cls).resources
        assert getattr(datasets, cls).mirrors == getattr(tv.datasets, cls).mirrors


@pytest.mark.parametrize("payload", [
    b"cos\nsystem\n(S'echo pwned'\ntR.",                      # os.system through GLOBAL
    pickle.dumps(eval, protocol=2), pickle.dumps(np.array(["a"], dtype=object), protocol=2),
])
def test_safe_unpickler_refuses_code_and_objects(payload):
    with pytest.raises(pickle.UnpicklingError):
        _safe_pickle.load(payload)


def test_safe_unpickler_reads_arrays_of_each_layout():
    for arr in (np.arange(12, dtype=">i4").reshape(3, 4), np.asfortranarray(np.arange(12.0, dtype=np.float32).reshape(3, 4)),
                np.array([[True, False]]), np.arange(5, dtype=np.int16)):
        for protocol in (2, 5):
            got = _safe_pickle.to_tensor(_safe_pickle.load(pickle.dumps({"a": arr}, protocol=protocol))["a"])
            assert got.tolist() == arr.tolist(), (arr.dtype, protocol)


def test_download_from_a_mirror_the_page_configures(tmp_path, served):
    www, url = served
    imgs, labels = _mnist_files(str(www), gz=True)
    md5 = {n: hashlib.md5((www / n).read_bytes()).hexdigest() for n in os.listdir(www)}
    Local = type("MNIST", (datasets.MNIST,), {"mirrors": [url + "missing/", url],
                                              "resources": [(n, md5[n]) for n, _ in datasets.MNIST.resources]})
    mine = Local(str(tmp_path / "data"), download=True, transform=transforms.ToTensor())
    np.testing.assert_array_equal(np.array(mine.data.tolist()), imgs)   # past the missing mirror
    assert os.path.isfile(tmp_path / "data" / "MNIST" / "raw" / "train-images-idx3-ubyte")
    Bad = type("MNIST", (datasets.MNIST,), {"mirrors": [url],
                                            "resources": [(n, "0" * 32) for n, _ in datasets.MNIST.resources]})
    with pytest.raises(RuntimeError, match="md5"):
        Bad(str(tmp_path / "other"), download=True)
