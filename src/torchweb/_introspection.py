"""torch.* questions scripts ask about objects: typename, is_storage, is_complex,
get_device_module, detach (the Tensor-flag forms, is_conj, get_device, ..., are in
_tensor_info.py and the op registry)."""

from ._is_tensor import is_tensor
from . import cuda, webgpu
from ._device import as_device, get_default_device


def typename(obj, /):
    """'torch.FloatTensor' for a float32 tensor, else the object's qualified type name."""
    if is_tensor(obj):
        return obj.type()
    t = type(obj)
    module = t.__module__
    return t.__qualname__ if module in ("builtins", "__builtin__") else f"{module}.{t.__qualname__}"


def is_storage(obj, /):
    """False: torchweb has no Storage objects (tensors hold device buffers)."""
    return False


def is_complex(input):
    return input.dtype.is_complex


def get_device_module(device=None):
    """The module of a device type: torch.webgpu (torch.cuda answers for it under the alias)."""
    d = get_default_device() if device is None else as_device(device)
    if d.type == "cpu":
        raise RuntimeError("Device 'cpu' does not have a corresponding module registered as 'torch.cpu'.")
    return cuda if d.type == "cuda" else webgpu


def detach(input):
    return input.detach()
