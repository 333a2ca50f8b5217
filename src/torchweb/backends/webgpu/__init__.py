"""The webgpu device: runtime, drivers and kernels."""

from .runtime import get_runtime, in_browser


def is_available():
    """Whether a WebGPU adapter can be had (starting the runtime if it is not started yet).
    A page that cannot block answers from `navigator.gpu`: its adapter request is async."""
    try:
        get_runtime()
        return True
    except RuntimeError:
        if in_browser():
            from pyodide.ffi import can_run_sync
            if not can_run_sync():
                import js
                return bool(getattr(js.navigator, "gpu", None))
        return False
