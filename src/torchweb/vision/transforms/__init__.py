"""torchvision.transforms on torchweb tensors (see transforms.py and functional.py)."""

from . import functional  # noqa: F401
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _names

__all__ = list(_names)


def __getattr__(name):
    # a transform the subset lacks (GaussianBlur, RandomAffine, AutoAugment, ...): say so plainly
    raise AttributeError(f"module 'torchvision.transforms' has no attribute {name!r}: torchweb's "
                         f"torchvision subset does not have it (it has {', '.join(__all__)})")
