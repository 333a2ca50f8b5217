"""torchvision.transforms on torchweb tensors (see transforms.py and functional.py)."""

from . import functional  # noqa: F401
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _names

__all__ = list(_names)
