"""More tensor factories PyTorch has: fill (a filled copy), scalar_tensor, range (deprecated, end-inclusive),
broadcast_shapes, frombuffer, asarray, empty_strided and empty_permuted."""

import builtins
import math
import struct
import warnings

from . import _dtype as D
from ._size import Size, broadcast_shapes as _broadcast
from ._creation import tensor, empty, as_tensor, zeros
from ._tensor import Tensor


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """A 0-d tensor holding s, in the default float dtype unless dtype says otherwise."""
    if hasattr(s, "item"):
        s = s.item()
    return tensor(s, dtype=dtype or D.default_float(), device=device, requires_grad=requires_grad)


def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """Deprecated: start, start + step, ..., up to and including end, in the default float dtype."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
                  "in [start, end).", UserWarning, stacklevel=2)
    start, end, step = (v.item() if hasattr(v, "item") else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dtype = dtype or D.default_float()
    values = [start + i * step for i in builtins.range(n)]
    t = tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)
    return t if out is None else out.copy_(t)


def broadcast_shapes(*shapes):
    """The shape that tensors of these shapes broadcast to (an int is a 1-D shape)."""
    seq = []
    for s in shapes:
        if isinstance(s, int) and not isinstance(s, bool):
            s = (s,)
        elif not isinstance(s, (tuple, list, Size)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
        if any(d < 0 for d in s):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
        seq.append(tuple(s))
    out = ()
    for s in seq:
        out = tuple(_broadcast(out, s))
    return Size(out)


_FORMATS = {"float32": "f", "float16": "e", "int32": "i", "int64": "q", "uint8": "B", "bool": "?"}


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor of the buffer's bytes read as dtype, from offset, count elements (-1: all).
    The tensor is a copy: device memory cannot alias a Python buffer."""
    dtype = D.as_dtype(dtype)
    raw = memoryview(buffer).cast("B")
    n, size = len(raw), dtype.itemsize
    if n == 0 or count == 0:
        raise ValueError(f"both buffer length ({n}) and count ({count}) must not be 0")
    if not 0 <= offset < n:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({n} bytes) minus 1")
    if count < 0:
        if (n - offset) % size:
            raise ValueError(f"buffer length ({n - offset} bytes) after offset ({offset} bytes) must be a multiple "
                             f"of element size ({size})")
        count = (n - offset) // size
    elif offset + count * size > n:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({n} bytes)")
    values = struct.unpack_from(f"<{count}{_FORMATS[dtype.name]}", raw, offset)
    return tensor(list(values), dtype=dtype, requires_grad=requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """`size` elements of dtype read from the start of a file (in the page: Pyodide's file
    system). shared=True (writes to the tensor changing the file, through mmap) is refused:
    device memory cannot map a file."""
    if shared:
        raise RuntimeError("from_file(shared=True) is not supported by torchweb: a tensor on the GPU "
                           "cannot map a file; read it with shared=False (a copy)")
    dtype = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    nbytes = size * dtype.itemsize
    with open(filename, "rb") as f:
        data = f.read(nbytes)
    if len(data) < nbytes:
        raise RuntimeError(f"from_file: trying to read {nbytes} bytes from {filename}, which holds "
                           f"only {len(data)}")
    if size == 0:
        return empty(0, dtype=dtype, device=device, requires_grad=requires_grad)
    t = frombuffer(data, dtype=dtype, requires_grad=requires_grad)
    return t if device is None else t.to(device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """obj as a tensor: a tensor itself when no dtype or device change (or copy=True) asks for a new
    one; anything tensor() takes otherwise."""
    if isinstance(obj, Tensor):
        r = obj.to(device=device if device is not None else obj.device, dtype=dtype or obj.dtype)
        if copy is False and r is not obj:
            raise ValueError("can't alias tensor from a different dtype or device without copying "
                             "(copy=False)")
        if copy and r is obj:
            r = obj.clone()
    else:
        r = tensor(obj, dtype=dtype, device=device) if copy else as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        r.requires_grad_(True)
    return r


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An (initialized to zero) tensor of `size` laid out with `stride` over a fresh buffer."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    span = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    base = zeros(span, dtype=dtype, device=device)
    t = base.as_strided(size, stride, 0)
    return t.requires_grad_(True) if requires_grad else t


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An (initialized to zero) tensor of `size` whose dims lie in memory in physical_layout's order."""
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                           f"i.e. len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}"
                           if len(order) != len(size) else f"physical_layout must be a permutation, got {list(order)}")
    base = zeros(tuple(size[p] for p in order), dtype=dtype, device=device)
    t = base.permute(*[order.index(d) for d in builtins.range(len(size))])
    return t.requires_grad_(True) if requires_grad else t


def fill(input, value):
    """A new tensor of input's shape, dtype and device holding value (a number or a 0-d tensor)."""
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                           f"dimensions.")
    return input.clone().fill_(value)


__all__ = ["fill", "scalar_tensor", "range", "broadcast_shapes", "frombuffer", "from_file", "asarray",
           "empty_strided", "empty_permuted"]
