"""MNIST, FashionMNIST and KMNIST from their IDX files (torchvision.datasets.mnist's layout:
root/<ClassName>/raw/train-images-idx3-ubyte ...; download=True fetches the .gz files from
`mirrors` (a class attribute a page may point at its own URL) and checks their md5)."""

import gzip
import os

import torchweb as torch

from .._image import Image
from ._files import check_integrity, download_and_extract_archive, tensor_from_bytes
from .vision import VisionDataset

# IDX element types (the third magic byte) as safetensors names; IDX stores big-endian
_IDX_TYPES = {8: "U8", 9: "I8", 11: "I16", 12: "I32", 13: "F32", 14: "F64"}


def read_sn3_pascalvincent_tensor(path, strict=True):
    """An IDX file (plain or .gz) as a tensor of its dtype and shape."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise RuntimeError(f"{path} is not an IDX file (bad magic number)")
    ty, nd = data[2], data[3]
    if ty not in _IDX_TYPES or not 1 <= nd <= 3:
        raise RuntimeError(f"{path}: unsupported IDX type {ty} or rank {nd}")
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    body = memoryview(data)[4 * (nd + 1):]
    if strict:
        numel = 1
        for s in shape:
            numel *= s
        size = {"U8": 1, "I8": 1, "I16": 2, "I32": 4, "F32": 4, "F64": 8}[_IDX_TYPES[ty]]
        if len(body) != numel * size:
            raise RuntimeError(f"{path}: {len(body)} data bytes for shape {shape}")
    return tensor_from_bytes(body, _IDX_TYPES[ty], shape, big_endian=True)


def read_label_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != torch.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"x should have 1 dimension instead of {x.ndim}")
    return x.long()


def read_image_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != torch.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndim != 3:
        raise ValueError(f"x should have 3 dimension instead of {x.ndim}")
    return x


class MNIST(VisionDataset):
    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        self.data, self.targets = self._load_data()

    def _raw(self, kind):
        """The raw file of this split: extracted, or else still gzipped."""
        path = os.path.join(self.raw_folder, f"{'train' if self.train else 't10k'}-{kind}")
        return path if os.path.isfile(path) or not os.path.isfile(path + ".gz") else path + ".gz"

    def _load_data(self):
        return read_image_file(self._raw("images-idx3-ubyte")), read_label_file(self._raw("labels-idx1-ubyte"))

    def __getitem__(self, index):
        img, target = Image(self.data[index], mode="L"), int(self.targets[index])
        return self._apply(img, target)

    def __len__(self):
        return len(self.data)

    @property
    def raw_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "processed")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def _check_exists(self):
        return all(check_integrity(os.path.join(self.raw_folder, os.path.splitext(name)[0])) or
                   check_integrity(os.path.join(self.raw_folder, name)) for name, _ in self.resources)

    def download(self):
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors = []
            for mirror in self.mirrors:
                try:
                    download_and_extract_archive(f"{mirror}{filename}", download_root=self.raw_folder,
                                                 filename=filename, md5=md5)
                except (RuntimeError, OSError) as e:
                    errors.append(e)
                    continue
                break
            else:
                raise RuntimeError(f"Error downloading {filename}:\n" + "".join(
                    f"Tried {m}, got:\n{e}\n" for m, e in zip(self.mirrors, errors)))

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
        ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
        ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
        ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134"),
    ]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
