"""Casts of float64 tensors, and other tensors cast to float64.

A float64 tensor's cast to another dtype leaves the host: it becomes an ordinary tensor on
the device asked for, else on torchweb's default device (webgpu where an adapter exists), so
`.float()` and `.to(torch.float32)` put a float64 computation's result on the GPU. `.to(device)`
to the webgpu device gives float32 there (the GPU has no float64). A tensor cast to float64
(`.double()`, `.to(torch.float64)`) is read back onto the host."""

from .. import _dtype as D
from .tensor import from_values, is_host64
from .._device import as_device, device as device_cls, get_default_device
from .._is_tensor import is_tensor
from .._creation import tensor
from .._float64 import refusal


def _parse(args, kwargs):
    dtype, dev = kwargs.pop("dtype", None), kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    for k in ("non_blocking", "memory_format"):
        kwargs.pop(k, None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if is_tensor(a):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, device_cls)) or (isinstance(a, int) and not isinstance(a, bool)):
            dev = a
        elif isinstance(a, bool):
            copy = a
        elif a is not None:
            dtype = a
    return (D.as_dtype(dtype) if dtype is not None else None), dev, copy


def to(x, *args, **kwargs):
    """x.to(...) for a float64 tensor x."""
    dtype, dev, copy = _parse(args, kwargs)
    dev = as_device(dev) if dev is not None else None
    if dtype in (None, D.float64) and (dev is None or dev.type == "cpu"):
        return x.clone() if copy else x
    if dtype in (None, D.float64):
        dtype = D.float32     # to the GPU: float32 (WebGPU has no float64)
    values = x._flat_values()
    if not dtype.is_floating_point and dtype is not D.bool:
        for v in values:
            if v != v or v in (float("inf"), float("-inf")):
                raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow: {v}")
        values = [int(v) for v in values]
    return tensor(values, dtype=dtype, device=dev or get_default_device()).reshape(tuple(x.shape))


def to_float64(x):
    """Any tensor's values as a float64 tensor on the host (x.double(), x.to(torch.float64))."""
    if is_host64(x):
        return x
    if x.requires_grad:
        raise refusal("autograd (a float64 copy of a tensor that requires grad)")
    return from_values((float(v) for v in x.detach()._flat_values()), tuple(x.shape))
