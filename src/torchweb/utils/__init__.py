"""torchweb.utils: PyTorch's torch.utils (the data loading utilities)."""

from . import data  # noqa: F401
from . import checkpoint  # noqa: F401,E402
