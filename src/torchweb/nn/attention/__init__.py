"""torch.nn.attention: SDPBackend and the sdpa_kernel context manager.

torchweb chooses scaled_dot_product_attention's kernel itself (its tiled flash-style kernel
where it fits, the composite softmax(q k^T) v otherwise; docs/design.md), and every choice gives
the same results up to rounding. So sdpa_kernel accepts PyTorch's backends, checks its
arguments as PyTorch does, and changes nothing: code that pins a backend for speed or
reproducibility runs, with torchweb's choice."""

import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """PyTorch's scaled_dot_product_attention backends (the same names and values)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Accepted for PyTorch's code; torchweb picks the kernel (see the module's docstring)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    for b in [backends] if isinstance(backends, SDPBackend) else backends:
        if not isinstance(b, SDPBackend):
            raise AssertionError(f"Backend must be an instance of SDPBackend, got {type(b).__name__}")
    yield {}
