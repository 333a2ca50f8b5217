"""torchweb.utils: PyTorch's torch.utils (the data loading utilities)."""

from . import data  # noqa: F401
