"""detect_anomaly / set_detect_anomaly: while on, the engine checks each backward rule's
gradients for NaN (check_nan) and names the node that made one, as PyTorch does. The check
reads every gradient back, so it is for debugging; off (the default), the engine's loop does
not look at it (engine.run_backward decides once per pass)."""

import functools
import warnings
from .._is_tensor import is_tensor

_state = {"enabled": False, "check_nan": True}


def is_anomaly_enabled():
    return _state["enabled"]


def is_anomaly_check_nan_enabled():
    return _state["check_nan"]


def set_anomaly_enabled(mode, check_nan=True):
    """torch.set_anomaly_enabled: anomaly detection on or off (as set_detect_anomaly, without
    restoring)."""
    _state["enabled"], _state["check_nan"] = bool(mode), bool(check_nan)


_set = set_anomaly_enabled


class detect_anomaly:
    """Context manager (or decorator) that turns anomaly detection on."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should "
                      "only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = (_state["enabled"], _state["check_nan"])
        _set(True, self.check_nan)

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turns anomaly detection on or off, as a call or a context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_state["enabled"], _state["check_nan"])
        _set(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(*self.prev)
        return False


def check_nan(node, results):
    """RuntimeError naming the node if one of its gradients holds a NaN."""
    for i, r in enumerate(results):
        if is_tensor(r) and r.dtype.is_floating_point and r.numel() and bool(r.detach().isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
