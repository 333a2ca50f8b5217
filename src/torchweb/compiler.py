"""torch.compiler: the few entry points scripts call around torch.compile."""

from ._settings import compile  # noqa: F401


def reset():
    """Forget every captured call; they are captured again on the next calls."""
    from ._compile import reset as _reset
    _reset()


def is_compiling():
    """False: a captured call runs the function's Python eagerly, never traced."""
    return False


def disable(fn=None, recursive=True):
    """torch.compiler.disable: the function runs eagerly (it always may)."""
    return fn if fn is not None else (lambda f: f)
