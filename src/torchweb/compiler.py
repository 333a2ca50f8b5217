"""torch.compiler: the entry points scripts call around torch.compile."""

from ._settings import compile  # noqa: F401

# how many compiled calls are being captured now (their Python runs once, recorded)
_CAPTURING = [0]


def reset():
    """Forget every captured call; they are captured again on the next calls."""
    from ._compile import reset as _reset  # deferred: load time (the capture machinery, with the first torch.compile)
    _reset()


def is_compiling():
    """True while torch.compile captures a call: its Python runs then to record the GPU work
    that later calls replay without running it, as PyTorch's traced Python runs once. So a
    branch under `if not torch.compiler.is_compiling():` (logging, a readback) runs in eager
    calls and stays out of the captured program, as it stays out of PyTorch's graph."""
    return _CAPTURING[0] > 0


is_dynamo_compiling = is_compiling


def is_exporting():
    """False: torchweb has no torch.export."""
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable: the function runs eagerly (it always may)."""
    return fn if fn is not None else (lambda f: f)


def allow_in_graph(fn):
    """The function itself: a captured call runs any Python it calls."""
    return fn


def assume_constant_result(fn):
    return fn


def cudagraph_mark_step_begin():
    """Nothing to mark: each replay is one whole captured call."""
