"""torch.nn.utils.convert_parameters: parameters_to_vector and vector_to_parameters."""

from ..._tensor import Tensor
from ...ops.join import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's values, flattened, in order."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Copies the slices of a 1-D tensor into the parameters (their .data is replaced by
    views of vec, as PyTorch does)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _typename(obj):
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


def _check_param_device(param, old_param_device):
    """The device type of the parameters so far; TypeError when param is on another one."""
    if old_param_device is None:
        return param.device.type
    if param.device.type != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_param_device
