"""torch.autograd: backward, grad (create_graph for higher-order gradients), Function, the
grad-mode switches, gradcheck, autograd.functional, anomaly detection and autograd.graph."""

from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from . import engine
from .differentiate import backward, grad
from .._is_tensor import is_tensor
from . import anomaly_mode, forward_ad, function, grad_mode, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .variable import Variable, variable
from .settings import (enforce_grad_layout_policy, handle_torch_function, has_torch_function,
                       is_multithreading_enabled, is_tensor_like, is_view_replay_enabled,
                       kineto_available, set_multithreading_enabled)


__all__ = ["Function", "FunctionCtx", "backward", "grad", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "once_differentiable", "Variable",
           "detect_anomaly", "set_detect_anomaly", "gradcheck", "gradgradcheck", "functional", "graph",
           "forward_ad", "is_tensor_like", "enforce_grad_layout_policy", "set_multithreading_enabled",
           "is_multithreading_enabled", "is_view_replay_enabled", "kineto_available"]


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from .._refused import module_getattr as _module_getattr  # noqa: E402
from .._deferred import deferred as _deferred  # noqa: E402
# autograd.functional and gradcheck load on first use (torchweb/_deferred.py: import time)
__getattr__, __dir__ = _deferred(__name__, globals(), {
    "functional": ".functional", "gradcheck": ".gradcheck:gradcheck", "gradgradcheck": ".gradcheck:gradgradcheck"},
    fallback=_module_getattr("autograd", "torchweb.autograd"))
