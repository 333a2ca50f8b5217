"""Tensor.to(): dtype casts and moves between the cpu and webgpu devices, differentiable."""

from .. import _dtype as D
from .._float64 import ROUTES as FLOAT64
from .._complex_routes import ROUTES as COMPLEX
from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends.cpu_arrays import storage_from_array, view
from .operands import empty, is_tensor
from . import elementwise as E
from .._tensor import Tensor
from .._numpy import np
from .._creation import _from_numpy_array
from .._device import as_device, device as device_cls
from .shape import contiguous


def _move(x, device):
    """Copy x's values to another device (same dtype)."""
    src = x.contiguous()
    if device.type == "cpu":
        n = np()
        if src.device.type == "webgpu":
            from ..backends.webgpu.transfer import read_array  # deferred: driver choice (the webgpu backend needs one)
            arr = read_array(src, n).reshape(x.shape)
        else:
            arr = view(src).copy()
        return Tensor._make(storage_from_array(arr, x.dtype), x.shape, None, 0, x.dtype, device)
    # to webgpu from cpu
    return _from_numpy_array(view(src), x.dtype, device)


def _convert_raw(x, dtype, device):
    out = x
    if device != x.device:
        out = _move(out, device)
    if dtype is not out.dtype:
        r = empty(out.shape, dtype, out.device)
        E.copy_into(r, out)
        out = r
    return out


class _ToCopy(Function):
    _backward_name = "ToCopyBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, dtype, device):
        ctx.src = (x.dtype, x.device)
        return _convert_raw(x, dtype, device)

    @staticmethod
    def backward(ctx, g):
        dtype, device = ctx.src
        if g.requires_grad:   # create_graph: the conversion back, recorded
            return _ToCopy.apply(g, dtype, device), None, None
        return _convert_raw(g, dtype, device), None, None


def to(x, *args, **kwargs):
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if is_tensor(a):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (D.dtype, D._UnsupportedDtype)) or a in (float, int, bool):
            dtype = a
        elif isinstance(a, (str, device_cls, int)):
            dev = a
        elif isinstance(a, bool):
            copy = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    dtype = D.as_dtype(dtype) if dtype is not None else x.dtype
    if dtype is D.float64:   # read back onto the host (torchweb/host64/)
        return FLOAT64["to"](x)
    if dtype is D.complex64:   # float32 pairs (torchweb/_complex/)
        return COMPLEX["from_real"](x, as_device(dev) if dev is not None else x.device)
    dev = as_device(dev) if dev is not None else x.device
    if dtype is x.dtype and dev == x.device:
        out = x.clone() if copy else x
    elif grad_mode.is_grad_enabled() and x.requires_grad and dtype.is_floating_point:
        out = _ToCopy.apply(x, dtype, dev)
    else:
        out = _convert_raw(x, dtype, dev)
    if memory_format is not None and memory_format.name != "preserve_format":
        out = contiguous(out, memory_format)
    return out
