"""torch.nn.utils.clip_grad: clip_grad_norm_, clip_grad_value_, get_total_norm,
clip_grads_with_norm_ (PyTorch's signatures, errors and results).

torchweb has no _foreach kernels: every gradient is handled on its own (PyTorch's path for
devices without foreach support); foreach=True is accepted on both devices, with the same result."""

import functools
import types
import warnings

from ... import _creation as C
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...linalg import vector_norm
from ...ops.join import stack

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _no_grad(func):
    def _no_grad_wrapper(*args, **kwargs):
        with no_grad():
            return func(*args, **kwargs)
    functools.update_wrapper(_no_grad_wrapper, func)
    return _no_grad_wrapper


def _group_by_device_and_dtype(tensors):
    groups = {}
    for t in tensors:
        groups.setdefault((t.device.type, t.dtype.name), []).append(t)
    return groups


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of tensors (as if they were concatenated into one vector), as a
    0-d tensor on the first tensor's device. RuntimeError if error_if_nonfinite and it is NaN
    or infinite."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    else:
        tensors = list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return C.tensor(0.0)
    first_device = tensors[0].device
    norms = []
    for _key, group in _group_by_device_and_dtype(tensors).items():
        norms.extend(vector_norm(g, norm_type) for g in group)
    total_norm = vector_norm(stack([n.to(first_device) for n in norms]), norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients of parameters by min(1, max_norm / (total_norm + 1e-6)), in place
    (no read-back: the factor stays a tensor)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = clip_coef.clamp(max=1.0)
    for _key, group in _group_by_device_and_dtype(grads).items():
        coef = clip_coef_clamped.to(group[0].device)
        for g in group:
            g.mul_(coef)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clips the gradient norm of parameters (a tensor or an iterable of them) to max_norm, in
    place; returns the total norm (as one vector) of the gradients before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated: clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps the gradients of parameters to [-clip_value, clip_value], in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    for _key, group in _group_by_device_and_dtype(grads).items():
        for grad in group:
            grad.clamp_(min=-clip_value, max=clip_value)
