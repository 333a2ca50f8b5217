"""The engine switches of torch.autograd that have one answer here: torchweb's backward runs
on one thread, replays no views (a view's history is refreshed from its base instead), and
always gives gradients the contiguous layout; and the __torch_function__ helpers."""

import functools

from .._is_tensor import is_tensor

_multithreading = [True]


def is_multithreading_enabled():
    """PyTorch's default answer (True): the flag is kept, backward runs on one thread anyway."""
    return _multithreading[0]


class set_multithreading_enabled:
    """Context manager (or call) setting the multithreaded-backward flag; torchweb's backward
    runs on one thread either way (Pyodide has one)."""

    def __init__(self, mode):
        self.prev = _multithreading[0]
        _multithreading[0] = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _multithreading[0] = self.prev
        return False


def is_view_replay_enabled():
    return False


class enforce_grad_layout_policy:
    """Context manager (or decorator) for PyTorch's gradient-layout contract: torchweb's
    accumulated gradients are always contiguous, so either setting gives the same .grad."""

    def __init__(self, enable=True):
        self.enable = bool(enable)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with enforce_grad_layout_policy(self.enable):
                return fn(*args, **kwargs)
        return wrapper


def kineto_available():
    """False: no profiler backend (Kineto) in torchweb."""
    return False


def is_tensor_like(inp):
    """True for a torchweb tensor or an object whose type defines __torch_function__."""
    return is_tensor(inp) or hasattr(type(inp), "__torch_function__")


def _overriding(relevant_args):
    return [a for a in relevant_args if not is_tensor(a) and hasattr(type(a), "__torch_function__")]


def has_torch_function(relevant_args):
    """Whether one of relevant_args (not a plain tensor) defines __torch_function__."""
    return bool(_overriding(relevant_args))


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls the __torch_function__ of the first of relevant_args that defines one and does not
    return NotImplemented, as torch.overrides does."""
    overriding = _overriding(relevant_args)
    types = tuple(type(a) for a in overriding)
    for a in overriding:
        result = type(a).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(f"no implementation found for '{getattr(public_api, '__module__', '')}."
                    f"{getattr(public_api, '__name__', public_api)}' on types that implement "
                    f"__torch_function__: {list(types)}")
