"""Creation functions: tensor, as_tensor, from_numpy, zeros/ones/full/empty (+ _like), arange,
linspace, eye, rand/randn/randint/randperm."""

import array as _array
import collections.abc as _abc
import math

from . import _bfloat16 as _bf16, _dtype as D
from ._device import as_device, CPU
from ._float64 import ROUTES as FLOAT64
from ._complex_routes import ROUTES as COMPLEX
from ._size import as_shape
from ._tensor import Tensor
from .backends import backend_for
from .backends.cpu_arrays import storage_from_array
from .ops.operands import empty as _empty
from .ops import elementwise as E
from .ops.out_arg import write_out
from . import _random
from ._numpy import np


# -- from Python data ----------------------------------------------------------------------
def _other_sequence(data):
    """A sequence PyTorch reads as one besides list and tuple: range, deque, array.array, any
    collections.abc.Sequence, a numpy array of one or more dims (not str or bytes: PyTorch
    refuses those)."""
    if isinstance(data, (str, bytes, bytearray, Tensor)):
        return False
    if isinstance(data, (_abc.Sequence, _array.array)):
        return True
    return getattr(data, "ndim", 0) > 0 and hasattr(data, "tolist")


def _flatten(data, shape, flat, depth=0, leaf=None):
    """Flatten nested sequences, checking they are rectangular; returns the shape.
    leaf[0]: the depth at which numbers were found (every number must sit at the same depth)."""
    leaf = [None] if leaf is None else leaf
    if not isinstance(data, (list, tuple)) and _other_sequence(data):
        data = data.tolist() if hasattr(data, "tolist") else list(data)
    if isinstance(data, (list, tuple)):
        if leaf[0] is not None and depth >= leaf[0]:
            raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as a number")
        n = len(data)
        if len(shape) <= depth:
            shape.append(n)
        elif shape[depth] != n:
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {n})")
        if n and len(shape) == depth + 1 and leaf[0] in (None, depth + 1) and type(data[0]) in _PLAIN \
                and set(map(type, data)) <= _PLAIN:
            # a row of plain numbers (the common case): taken whole, with C loops (a million
            # floats: 4 s one call each -> 0.1 s)
            leaf[0] = depth + 1
            flat.extend(data)
            return shape
        for v in data:
            _flatten(v, shape, flat, depth + 1, leaf)
        if n == 0 and len(shape) > depth + 1:
            raise ValueError(f"expected sequence of length {shape[depth + 1]} at dim {depth + 1} (got 0)")
        return shape
    if len(shape) > depth:
        raise TypeError("not a sequence")  # a number where a sequence was expected, as PyTorch
    leaf[0] = depth
    if isinstance(data, Tensor):
        if data.numel() != 1 and data.dim() > 0:
            raise ValueError("only one element tensors can be converted to Python scalars")
        flat.append(data.item())
        return shape
    if isinstance(data, str):   # (PyTorch: a string alone is no data; inside a list, a dim too many)
        if depth == 0:
            raise TypeError("new(): invalid data type 'str'")
        raise ValueError("too many dimensions 'str'")
    if hasattr(data, "item") and not isinstance(data, (int, float, bool)):
        data = data.item()  # numpy scalars
    if not isinstance(data, (int, float, bool, complex)):
        if not isinstance(data, (bytes, bytearray)):   # (PyTorch's two messages)
            raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    flat.append(data)
    return shape


_PLAIN = {float, int, bool}


def _infer_dtype(flat):
    types = set(map(type, flat))   # (C loops: the types seen, then a test per type)
    if flat and all(issubclass(t, bool) for t in types):
        return D.bool
    if flat and all(issubclass(t, int) for t in types):
        return D.int64
    if any(issubclass(t, complex) for t in types):
        return D.complex64
    return D.default_float()


def _convert(flat, dtype, device):
    """Python numbers into dtype, refusing what the device cannot hold."""
    if dtype.is_floating_point:
        out = flat if set(map(type, flat)) <= {float} else list(map(float, flat))
        if dtype is D.float16:
            # rounded to nearest: below 65520 a value rounds to at most 65504, from it to inf
            out = [v if abs(v) < 65520 or not math.isfinite(v) else math.copysign(math.inf, v) for v in out]
        return out
    if dtype is D.bool:
        return [bool(v) for v in flat]
    out = []
    for v in flat:
        if isinstance(v, float):
            if not math.isfinite(v):
                raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow: {v}")
            v = int(v)
        else:
            v = int(v)
            if not -2 ** 63 <= v < 2 ** 63:   # PyTorch reads a Python int as a C long long
                raise ValueError(f"Overflow when unpacking long long: {v}")
        out.append(v)
    if dtype is D.uint8:
        return [v & 0xFF for v in out]
    if device.type == "webgpu" or dtype is D.int32:
        for v in out:
            if not D.int32.min <= v <= D.int32.max:
                raise _range_error(v, dtype, device)
    return out


def _range_error(v, dtype, device):
    if dtype is D.int64 and device.type == "webgpu":
        return RuntimeError(
            f"value {v} is out of range for torch.int64 on webgpu: WebGPU has no 64-bit integers, "
            f"so int64 tensors hold values in [-2147483648, 2147483647] on the GPU")
    return RuntimeError(f"value cannot be converted to type {dtype.name} without overflow: {v}")


def _from_numpy_array(arr, dtype, device):
    n = np()
    if dtype is None:
        kind = arr.dtype.kind
        if kind == "b":
            dtype = D.bool
        elif kind == "f":
            dtype = D.float16 if arr.dtype == n.float16 else (D.float32 if arr.dtype == n.float32 else D.default_float())
        elif kind == "u" and arr.dtype.itemsize == 1:
            dtype = D.uint8
        elif kind in "iu":
            dtype = D.int32 if arr.dtype == n.int32 else D.int64
        else:
            raise TypeError(f"can't convert np.ndarray of type {arr.dtype}. The only supported types are: "
                            "float32, float16, int64, int32, uint8, and bool (float64 becomes float32).")
    dtype = D.as_dtype(dtype)
    shape = tuple(arr.shape)
    if device.type == "cpu":
        storage = storage_from_array(arr, dtype)
        return Tensor._make(storage, shape, None, 0, dtype, device)
    if not dtype.is_floating_point and dtype is not D.bool and arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        for v in (lo, hi):
            if not dtype.min <= v <= dtype.max and dtype is not D.uint8:
                raise _range_error(v, dtype, device)
    storage_np = {"f32": n.float32, "f16": n.float16, "i32": n.int32, "u32": n.uint32}[dtype.gpu_storage]
    if dtype is D.float16 and arr.dtype != n.float16:
        arr = n.asarray(arr).astype(n.float16)   # rounded to half (also where held in f32 words)
    if dtype is D.bfloat16:   # held in f32 words, rounded to bfloat16's values
        arr = _bf16.round_np(n, n.asarray(arr, dtype=n.float32))
    data = n.ascontiguousarray(arr).astype(storage_np).tobytes()
    from .backends.webgpu.transfer import storage_from_bytes  # deferred: driver choice (the webgpu backend needs one)
    storage = storage_from_bytes(data, arr.size, dtype)
    return Tensor._make(storage, shape, None, 0, dtype, device)


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if (D.as_dtype(dtype) if dtype is not None else getattr(data, "dtype", None)) is D.float64:
        return FLOAT64["tensor"](data, requires_grad)   # held on the host (torchweb/host64/)
    device = as_device(device)
    if dtype is not None:
        dtype = D.as_dtype(dtype)
    if dtype is D.complex64 or getattr(getattr(data, "dtype", None), "kind", None) == "c" or \
            getattr(data, "dtype", None) is D.complex64:
        return COMPLEX["tensor"](data, device, requires_grad)   # float32 pairs (torchweb/_complex/)
    if isinstance(data, Tensor):
        t = data.detach().to(device=device, dtype=dtype or data.dtype).clone()
    elif type(data).__module__ == "numpy" and hasattr(data, "shape") and hasattr(data, "dtype") and data.shape != ():
        # torch.tensor copies (as_tensor and from_numpy share a cpu array's memory)
        t = _from_numpy_array(data.copy() if device.type == "cpu" else data, dtype, device)
    else:
        flat = []
        shape = _flatten(data, [], flat)
        dtype = dtype or _infer_dtype(flat)
        if dtype is D.complex64:
            return COMPLEX["tensor"](data, device, requires_grad)
        values = _convert(flat, dtype, device)
        storage = backend_for(device.type).storage_from_values(values, dtype)
        t = Tensor._make(storage, tuple(shape), None, 0, dtype, device)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        dev = as_device(device) if device is not None else data.device
        return data.to(device=dev, dtype=dtype)
    if type(data).__module__ == "numpy" and getattr(data, "shape", ()) != () and as_device(device).type == "cpu" \
            and getattr(getattr(data, "dtype", None), "kind", None) in ("b", "f", "i", "u"):
        return _from_numpy_array(data, D.as_dtype(dtype) if dtype is not None else None, CPU)   # shared, as PyTorch's
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    if not isinstance(ndarray, np().ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _from_numpy_array(ndarray, None, CPU)


# -- filled ------------------------------------------------------------------------------
def _factory(size, dtype, device, requires_grad, value, default=None):
    shape = as_shape(size)
    dtype = D.as_dtype(dtype) if dtype is not None else (default or D.default_float())
    if dtype is D.float64:
        return FLOAT64["full"](shape, 0 if value is None else value, requires_grad)
    if dtype is D.complex64:
        return COMPLEX["full"](shape, value, as_device(device), requires_grad)
    t = _empty(shape, dtype, as_device(device))
    if value is not None:
        E.fill(t, value)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


def _options(what, layout=None, names=None):
    """The factory keywords torchweb takes as PyTorch does but has one answer for: a strided
    layout (sparse ones are built by torch.sparse_coo_tensor), and no dimension names.
    (pin_memory: WebGPU has no pinned host memory, so it changes nothing.)"""
    if layout is not None and str(layout) != "torch.strided":
        raise RuntimeError(f"{what}(): layout={layout} is not supported by torchweb's factories; only "
                           "torch.strided tensors are made this way")
    if names is not None:
        raise RuntimeError(f"{what}(): named tensors (names=) are not supported by torchweb")


def _sized(size_args, size):
    return size_args if size is None else (size,)


def _like_out(out, dtype, device):
    """dtype and device default to out's, when out= is given (PyTorch makes the result there)."""
    if out is None:
        return dtype, device
    return (dtype if dtype is not None else out.dtype), (device if device is not None else out.device)


def _into(out, t, what):
    """A factory's result, written into out= when given (PyTorch fills and resizes out)."""
    return t if out is None else write_out(t, out, what)


def empty(*size_args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    _options("empty", layout)
    dtype, device = _like_out(out, dtype, device)
    # zeroed: pooled buffers hold old data
    return _into(out, _factory(_sized(size_args, size), dtype, device, requires_grad, 0), "empty")


def zeros(*size_args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    _options("zeros", layout)
    dtype, device = _like_out(out, dtype, device)
    return _into(out, _factory(_sized(size_args, size), dtype, device, requires_grad, 0), "zeros")


def ones(*size_args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    _options("ones", layout)
    dtype, device = _like_out(out, dtype, device)
    return _into(out, _factory(_sized(size_args, size), dtype, device, requires_grad, 1), "ones")


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, names=None):
    _options("full", layout, names)
    dtype, device = _like_out(out, dtype, device)
    if hasattr(fill_value, "item"):
        fill_value = fill_value.item()
    default = D.scalar_dtype(fill_value)
    return _into(out, _factory(size, dtype, device, requires_grad, fill_value, default), "full")


def _like(fn, input, dtype, device, requires_grad, layout, *args):
    _options(fn.__name__ + "_like", layout)
    return fn(input.shape, *args, dtype=dtype or input.dtype, device=device or input.device,
              requires_grad=requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               pin_memory=False):
    return _like(zeros, input, dtype, device, requires_grad, layout)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               pin_memory=False):
    return _like(zeros, input, dtype, device, requires_grad, layout)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              pin_memory=False):
    return _like(ones, input, dtype, device, requires_grad, layout)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    return _like(full, input, dtype, device, requires_grad, layout, fill_value)


# -- ranges ------------------------------------------------------------------------------
def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    _options("arange", layout)
    if out is not None:   # (out's dtype and device are the defaults)
        dtype, device = _like_out(out, dtype, device)
        return write_out(arange(start, end, step, dtype=dtype, device=device,
                                requires_grad=requires_grad), out, "arange")
    if end is None:
        start, end = 0, start
    start, end, step = _num(start), _num(end), _num(step)
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = max(0, math.ceil((end - start) / step))
    if dtype is None:
        dtype = D.default_float() if any(isinstance(v, float) for v in (start, end, step)) else D.int64
    if not n:
        return _factory((0,), dtype, device, requires_grad, None)
    dtype, device = D.as_dtype(dtype), as_device(device)
    if dtype is D.float64:
        return FLOAT64["from_list"]([start + i * step for i in range(n)], (n,), requires_grad)
    if all(isinstance(v, int) for v in (start, end, step)) and dtype not in (D.bool, D.uint8, D.float16):
        # integers: a range, packed in C (models make index ranges in every step), its ends
        # range-checked as tensor() checks every value
        values = range(start, start + n * step, step)
        if not dtype.is_floating_point and (device.type == "webgpu" or dtype is D.int32):
            for v in (values[0], values[-1]):
                if not D.int32.min <= v <= D.int32.max:
                    raise _range_error(v, dtype, device)
    else:
        values = _convert([start + i * step for i in range(n)], dtype, device)
    t = Tensor._make(backend_for(device.type).storage_from_values(values, dtype), (n,), None, 0, dtype, device)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    _options("linspace", layout)
    if out is not None:   # (out's dtype and device are the defaults)
        dtype, device = _like_out(out, dtype, device)
        return write_out(linspace(start, end, steps, dtype=dtype, device=device,
                                  requires_grad=requires_grad), out, "linspace")
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype is not None and steps and D.as_dtype(dtype) is D.float64:
        return FLOAT64["linspace"](start, end, steps, requires_grad)
    if steps == 1:
        values = [float(start)]
    else:
        step = (end - start) / (steps - 1)
        half = steps // 2
        values = [start + i * step if i < half else end - (steps - 1 - i) * step for i in range(steps)]
    dtype = D.as_dtype(dtype) if dtype is not None else D.default_float()
    if not dtype.is_floating_point:
        values = [int(v) for v in values]
    if not values:
        return _factory((0,), dtype, device, requires_grad, None)
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    _options("logspace", layout)
    if out is not None:   # (out's dtype and device are the defaults)
        dtype, device = _like_out(out, dtype, device)
        return write_out(logspace(start, end, steps, base, dtype=dtype,
                                  device=device, requires_grad=requires_grad), out, "logspace")
    return tensor([base ** v for v in linspace(start, end, steps, dtype=D.float32, device=device).tolist()],
                  dtype=dtype or D.default_float(), device=device, requires_grad=requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    _options("eye", layout)
    if out is not None:   # (out's dtype and device are the defaults)
        dtype, device = _like_out(out, dtype, device)
        return write_out(eye(n, m, dtype=dtype, device=device,
                             requires_grad=requires_grad), out, "eye")
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {min(n, m)}")
    t = _factory((n, m), dtype, device, False, 0)
    k = min(n, m)
    if k:
        E.fill(t._view((k,), (m + 1,), 0), 1)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


# -- random ------------------------------------------------------------------------------
def _random_factory(size, kind, a, b, dtype, device, requires_grad, generator, default=None):
    if dtype is not None and D.as_dtype(dtype) is D.complex64 and kind in ("normal", "uniform"):
        return COMPLEX["random"](as_shape(size), kind, as_device(device), requires_grad, generator)
    t = _factory(size, dtype, device, False, None, default)
    _random.fill(t, kind, a, b, generator)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


def rand(*size_args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    _options("rand", layout)
    dtype, device = _like_out(out, dtype, device)
    t = _random_factory(_sized(size_args, size), "uniform", 0.0, 1.0, dtype, device, requires_grad, generator)
    return _into(out, t, "rand")


def randn(*size_args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    _options("randn", layout)
    dtype, device = _like_out(out, dtype, device)
    t = _random_factory(_sized(size_args, size), "normal", 0.0, 1.0, dtype, device, requires_grad, generator)
    return _into(out, t, "randn")


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    _options("rand_like", layout)
    return rand(input.shape, generator=generator, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    _options("randn_like", layout)
    return randn(input.shape, generator=generator, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
    _options("randint", layout)
    if out is not None:   # (out's dtype and device are the defaults)
        dtype, device = _like_out(out, dtype, device)
        return write_out(randint(low, high, size, generator=generator, dtype=dtype,
                                 device=device, requires_grad=requires_grad), out, "randint")
    if size is None:
        low, high, size = 0, low, high
    if high is None or size is None:
        raise TypeError("randint() missing required arguments: 'high' and 'size'")
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    limit = D.as_dtype(dtype) if dtype is not None else None
    if limit in (D.int32, D.uint8) and not (limit.min <= low and high - 1 <= limit.max):
        raise RuntimeError(f"to - 1 is out of bounds for {limit.name}: randint({low}, {high}) with dtype {limit}")
    return _random_factory(size, "randint", int(low), int(high - low), dtype, device, requires_grad,
                           generator, D.int64)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, pin_memory=False):
    _options("randint_like", layout)
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, generator=generator, dtype=dtype or input.dtype,
                   device=device or input.device, requires_grad=requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    _options("randperm", layout)
    if out is not None:   # (out's dtype and device are the defaults)
        dtype, device = _like_out(out, dtype, device)
        return write_out(randperm(n, generator=generator, dtype=dtype, device=device),
                         out, "randperm")
    dtype = D.as_dtype(dtype) if dtype is not None else D.int64
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return tensor(_random.permutation(n, generator, device), dtype=dtype, device=device) if n else \
        _factory((0,), dtype, device, False, None)
