# Stand-ins for the parts of torchvision the vendored model files import but the corpus test never
# reaches (pretrained-weight metadata, preset transforms, API-usage logging, URL loading), and the
# small helpers they do call, copied from torchvision 0.29.1 (BSD-3-Clause, Copyright (c) Soumith
# Chintala 2016): _make_ntuple (torchvision/utils.py), sequence_to_str (torchvision/_utils.py).
# The datasets/transforms/utils namespaces scripts import: FakeData gives deterministic images.
import collections.abc
import enum
import math
import types
from itertools import repeat

import torch


def _log_api_usage_once(obj):
    pass


def _make_ntuple(x, n):
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return tuple(repeat(x, n))


def sequence_to_str(seq, separate_last=""):
    if not seq:
        return ""
    if len(seq) == 1:
        return f"'{seq[0]}'"
    head = "'" + "', '".join([str(item) for item in seq[:-1]]) + "'"
    tail = f"{'' if separate_last and len(seq) == 2 else ','} {separate_last}'{seq[-1]}'"
    return head + tail


def load_state_dict_from_url(*args, **kwargs):
    raise RuntimeError("the corpus test has no network: pretrained weights are not available")


_IMAGENET_CATEGORIES = [f"class{i}" for i in range(1000)]
_COCO_CATEGORIES = _IMAGENET_CATEGORIES


class InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


class ImageClassification:
    def __init__(self, *args, **kwargs):
        pass


def save_image(*args, **kwargs):
    pass


class FakeData:
    """torchvision.datasets.FakeData's interface with images from a formula (no random numbers,
    so both libraries see the same batches)."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        self.size, self.image_size, self.num_classes = size, tuple(image_size), num_classes

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        n = math.prod(self.image_size)
        values = [math.sin(0.37 * i + 1.3 * index) * 0.5 + 0.5 for i in range(n)]
        return torch.tensor(values).reshape(self.image_size), index % self.num_classes




def _no_transform(*args, **kwargs):
    return None


class MNIST:
    """torchvision.datasets.MNIST's interface over 8 training (4 test) images from a formula,
    values in [0, 1] as ToTensor gives them; nothing is downloaded."""

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.size, self.shift = (8, 0) if train else (4, 100)

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        k = index + self.shift
        values = [math.sin(0.11 * i * (1 + k % 3) + k) * 0.5 + 0.5 for i in range(784)]
        return torch.tensor(values).reshape(1, 28, 28), (3 * k + 1) % 10


CIFAR10 = FakeData
Compose = ToTensor = Normalize = Lambda = Resize = CenterCrop = _no_transform


class _Transforms(types.SimpleNamespace):
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


datasets = types.SimpleNamespace(FakeData=FakeData, MNIST=MNIST, CIFAR10=FakeData)
transforms = _Transforms()
utils = types.SimpleNamespace(save_image=save_image)
