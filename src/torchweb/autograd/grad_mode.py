"""no_grad, enable_grad, set_grad_enabled, inference_mode: a thread-local-free global flag
(Pyodide runs one thread)."""

import functools

_state = {"enabled": True}


def is_grad_enabled():
    return _state["enabled"]


def is_inference_mode_enabled():
    return _state.get("inference", False)


class _GradMode:
    mode = True

    def __enter__(self):
        self._prev = _state["enabled"]
        _state["enabled"] = self.mode

    def __exit__(self, *exc):
        _state["enabled"] = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    mode = False


class enable_grad(_GradMode):
    mode = True


class set_grad_enabled(_GradMode):
    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = _state["enabled"]
        _state["enabled"] = self.mode  # also works as a plain call, like PyTorch's

    def __enter__(self):
        pass

    def __call__(self, fn):
        mode = self.mode
        _state["enabled"] = self._prev

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class inference_mode(_GradMode):
    def __init__(self, mode=True):
        self.mode = not mode

    def __enter__(self):
        super().__enter__()
        self._prev_inference = _state.get("inference", False)
        _state["inference"] = not self.mode

    def __exit__(self, *exc):
        _state["inference"] = self._prev_inference
        return super().__exit__(*exc)

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(not mode):
                return fn(*args, **kwargs)
        return wrapper
