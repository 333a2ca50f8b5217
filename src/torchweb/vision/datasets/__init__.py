"""torchvision.datasets: MNIST-style IDX files, CIFAR's pickle batches and class folders of images
(ImageFolder, DatasetFolder) (see docs/libraries.md)."""

from .cifar import CIFAR10, CIFAR100  # noqa: F401
from .folder import DatasetFolder, ImageFolder  # noqa: F401
from .mnist import MNIST, FashionMNIST, KMNIST  # noqa: F401
from .vision import VisionDataset  # noqa: F401

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "CIFAR10", "CIFAR100", "VisionDataset", "DatasetFolder", "ImageFolder"]
