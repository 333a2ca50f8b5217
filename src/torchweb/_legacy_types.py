"""The legacy tensor types: torch.FloatTensor, torch.LongTensor, ... and torch.cuda.FloatTensor.

As in PyTorch they are not subclasses of Tensor but classes whose metaclass answers
isinstance by dtype, so `isinstance(x, torch.LongTensor)` is True exactly for int64 tensors.
Calling one makes a tensor: FloatTensor(2, 3) or FloatTensor(torch.Size([2, 3])) an
uninitialized one of that shape, FloatTensor([1, 2]) one from data, FloatTensor(t) t itself
when its dtype matches.

Devices: torchweb has no CPU-only tensor type, so torch.FloatTensor makes tensors on the
default device (webgpu where an adapter exists) and matches float32 tensors on any device;
x.type() says 'torch.FloatTensor' on either device, consistently. torch.cuda.FloatTensor makes
tensors on webgpu (the GPU torchweb has) and matches float32 tensors there."""

from ._is_tensor import is_tensor
from . import _creation as C
from ._size import Size
from . import _dtype as D
from ._device import set_default_device

# PyTorch's type name -> dtype name
NAMES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
         "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8", "CharTensor": "int8",
         "ShortTensor": "int16", "IntTensor": "int32", "LongTensor": "int64",
         "BoolTensor": "bool"}
_TYPE_OF = {d: n for n, d in NAMES.items()}


class _TensorType(type):
    """The metaclass (PyTorch's torch.tensortype)."""

    def __instancecheck__(cls, obj):
        return (is_tensor(obj) and obj.dtype.name == cls._dtype_name
                and (not cls.is_cuda or obj.device.type == "webgpu"))

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"

    @property
    def dtype(cls):
        return _dtype(cls._dtype_name)

    def __call__(cls, *args, device=None):
        dtype = cls.dtype
        device = "webgpu" if cls.is_cuda and device is None else device
        if not args:
            return C.empty(0, dtype=dtype, device=device)
        if len(args) == 1 and is_tensor(args[0]):
            t = args[0]
            if t.dtype is not dtype:
                raise TypeError(f"expected {dtype} tensor (got {t.dtype} tensor): {cls.__name__}(tensor) "
                                "does not convert; use tensor.to(dtype)")
            return t if device is None else t.to(device)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args) or \
                (len(args) == 1 and isinstance(args[0], Size)):
            return C.empty(*args, dtype=dtype, device=device)
        if len(args) == 1 and not isinstance(args[0], (int, float, bool, complex, str)):
            return C.tensor(args[0], dtype=dtype, device=device)
        what = type(args[0]).__name__ if len(args) == 1 else "several arguments"
        raise TypeError(f"new(): data must be a sequence (got {what}): {cls.__name__}(*sizes) "
                        "takes integers, FloatTensor(data) a sequence")


def _dtype(name):
    return D.dtype_named(name, f"torch.{_TYPE_OF[name]}'s dtype")


def _make(module, cuda):
    return {n: _TensorType(n, (), {"__module__": module, "_dtype_name": d, "is_cuda": cuda,
                                   "__doc__": f"PyTorch's legacy {n}: a {d} tensor type"})
            for n, d in NAMES.items()}


TYPES = _make("torch", False)
CUDA_TYPES = _make("torch.cuda", True)


def default_type():
    """torch.Tensor(...)'s type: the default dtype's (torch.FloatTensor unless changed)."""
    return TYPES[_TYPE_OF[D.get_default_dtype().name]]


def type_name(t):
    """x.type(): 'torch.FloatTensor' for a float32 tensor, on either device."""
    return f"torch.{_TYPE_OF[t.dtype.name]}"


def _by_name(name):
    """The legacy type a name like 'torch.FloatTensor' or 'torch.cuda.LongTensor' names, or None."""
    module, _, short = name.rpartition(".")
    table = {"torch": TYPES, "torch.cuda": CUDA_TYPES}.get(module)
    return None if table is None else table.get(short)


def convert(t, dtype, non_blocking=False):
    """x.type(dtype): dtype a torch dtype, a legacy type or its name ('torch.cuda.LongTensor')."""
    if isinstance(dtype, str):
        named = _by_name(dtype)
        if named is None:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = named
    if isinstance(dtype, _TensorType):
        return t.to(dtype.dtype, device="webgpu") if dtype.is_cuda else t.to(dtype.dtype)
    return t.to(dtype)


def set_default_tensor_type(t):
    """torch.set_default_tensor_type (deprecated in PyTorch 2.1, with its warning): the type's
    dtype becomes the default; a torch.cuda type also makes the GPU (webgpu) the default device."""
    import warnings
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        named = _by_name(t)
        if named is None:
            module, _, name = t.rpartition(".")
            raise AttributeError(f"module '{module or t}' has no attribute '{name}'")
        t = named
    if not isinstance(t, _TensorType):
        raise TypeError(f"invalid type: {t!r}")
    if not D.dtype_named(t._dtype_name).is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(t.dtype)
    if t.is_cuda:
        set_default_device("webgpu")
