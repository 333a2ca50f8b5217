"""torch.* questions scripts ask about objects: typename, is_storage, is_complex, is_conj,
is_neg, is_inference, get_device, is_distributed, get_device_module, detach."""

from ._is_tensor import is_tensor


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


def is_conj(input):
    return False   # (no complex tensors, so never a lazy conjugate)


def is_neg(input):
    return False


def is_inference(input):
    return False


def is_distributed(input):
    return False


def get_device(input):
    """-1 for a cpu tensor, the device index (0) otherwise, as PyTorch's."""
    return -1 if input.device.type == "cpu" else (input.device.index or 0)


def get_device_module(device=None):
    """The module of a device type: torch.webgpu (torch.cuda answers for it under the alias)."""
    from . import cuda, webgpu
    from ._device import as_device, get_default_device
    d = get_default_device() if device is None else as_device(device)
    if d.type == "cpu":
        raise RuntimeError("Device 'cpu' does not have a corresponding module registered as 'torch.cpu'.")
    return cuda if d.type == "cuda" else webgpu


def detach(input):
    return input.detach()
