"""What ops share about their operands and outputs: the common device, a new output (empty),
broadcast views (expand_to), overlap and dtype checks for in-place writes, the compute class
of a dtype."""

from .. import _dtype as D
from .._float64 import refusal
from .._is_tensor import is_tensor  # noqa: F401  (re-exported for ops)
from .._size import Size, numel
from .._tensor import Tensor
from ..backends import backend_for


def common_device(*operands, what="op"):
    dev = None
    for o in operands:
        if getattr(type(o), "_is_torchweb_tensor", False):   # is_tensor, inlined: every op asks
            d = o.device
            if dev is None:
                dev = d
            elif d is not dev and d != dev:
                raise RuntimeError(
                    f"Expected all tensors to be on the same device, but found at least two "
                    f"devices, {dev} and {d}! (in {what})")
    return dev


def need_tensors(name, *args):
    """PyTorch's signature check for arguments that must be tensors: args are (argument name,
    value) in position order; the first that is not a tensor raises TypeError."""
    for i, (what, value) in enumerate(args):
        if not getattr(type(value), "_is_torchweb_tensor", False):
            raise TypeError(f"{name}(): argument '{what}' (position {i + 1}) must be Tensor, "
                            f"not {type(value).__name__}")


def empty(shape, dtype, device):
    """A new tensor of shape, dtype and device (uninitialized): the output of an op."""
    shape = Size(shape)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    if dtype is D.float64:
        raise refusal("this operation")
    return Tensor._new(backend_for(device.type).empty_storage(numel(shape), dtype), shape, dtype, device)


def expand_to(t, shape):
    """A stride-0 view of t broadcast to shape (no autograd: an op's internal operand)."""
    ts = t._shape
    shape = tuple(shape)   # (shape may be a list)
    if ts == shape:
        return t
    key = (ts, t._stride, shape)
    strides = _EXPANDED.get(key)
    if strides is None:
        pad = len(shape) - len(ts)
        strides = [0] * pad
        # (zip over plain tuples: indexing a Size runs Python code)
        for s, st, want in zip(ts, t._stride, shape[pad:]):
            strides.append(0 if s == 1 and want != 1 else st)
        if len(_EXPANDED) > 4096:
            _EXPANDED.clear()
        strides = _EXPANDED[key] = tuple(strides)
    return t._view(Size(shape), strides, t._offset)


_EXPANDED = {}   # (shape, strides, target shape) -> the broadcast view's strides


def same_view(a, b):
    return (a._storage is b._storage and a._offset == b._offset and a.shape == b.shape
            and a._stride == b._stride)


def check_inplace_dtype(result, out):
    """PyTorch's rule for in-place ops and out=: the result type must be castable."""
    if result.category > out.category:
        raise RuntimeError(f"result type {result.word} can't be cast to the desired output "
                           f"type {out.word}")




def compute_class(d, logical=False):
    if d.is_floating_point:
        return "f"
    if d is D.bool:
        return "b" if logical else "u"
    if d is D.uint8:
        return "u"
    return "i"
