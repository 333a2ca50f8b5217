"""The webgpu device: runtime, drivers and kernels."""

from .runtime import get_runtime, in_browser


def is_available():
    """Whether a WebGPU adapter can be had (starting the runtime if it is not started yet)."""
    try:
        get_runtime()
        return True
    except RuntimeError:
        return False
