"""Tensor methods that convert or re-type a tensor: type_as, the device methods (.cuda() moves
to webgpu, the GPU torchweb has; .xpu()/.ipu()/.mtia() refuse), the dtype shorthands of dtypes
torchweb lacks (char, short, cfloat, cdouble, chalf refuse naming what to use),
the legacy constructor new() and torch.Tensor(...), type(), numpy(), repr, pickling, module_load,
as_subclass, and apply_/map_/map2_.

apply_/map_/map2_ call a Python function per element, which is what PyTorch's CPU kernel does
(it refuses them on CUDA). Here they read the values back to the host, call the function,
and upload the results, on either device: correct, and as slow as a Python loop is."""

from . import _creation as C, _dtype as D, _legacy_types
from ._printing import tensor_repr
from ._size import Size
from ._tensor import Tensor
from .backends.cpu_arrays import view
from ._numpy import np
from .ops import convert
from .webgpu import to_memoryview


def type_as(self, other):
    """self cast to other's dtype (and, as PyTorch's type strings include the device, moved to
    other's device)."""
    return convert.to(self, other.device, other.dtype)


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """The GPU torchweb has is webgpu: .cuda() moves there (any CUDA index names it)."""
    out = convert.to(self, "webgpu")
    return out if memory_format is None else out.contiguous(memory_format=memory_format)


def _no_backend(name):
    def method(self, device=None, non_blocking=False, memory_format=None):
        raise RuntimeError(f"Tensor.{name}(): torchweb has no {name.upper()} device: it runs on WebGPU. "
                           "Use .to('webgpu') (or .cuda(), which moves to webgpu)")
    method.__name__ = name
    return method


def _unsupported(dtype_name, method):
    def m(self, memory_format=None):
        if dtype_name == "complex32":
            raise TypeError(f"Tensor.{method}(): torch.complex32 is not supported by torchweb: complex "
                            "tensors are not supported")
        D.as_dtype(D._UnsupportedDtype(dtype_name), what=f"Tensor.{method}():")
    m.__name__ = method
    return m


def new(self, *args, device=None, **kwargs):
    """The legacy constructor: new() is empty, new(*sizes) or new(torch.Size) uninitialized,
    new(sequence) the data, new(tensor) an alias of it; self's dtype (and device unless given).
    Keywords as PyTorch's overloads name them: size=, other=, storage=."""
    if "size" in kwargs:
        return C.empty(Size(kwargs.pop("size")), dtype=self.dtype, device=device or self.device)
    for key in ("other", "storage"):
        if key in kwargs:
            args = args + (kwargs.pop(key),)
    if kwargs:
        raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) == 1 and hasattr(args[0], "_storage") and not isinstance(args[0], Tensor):
        st = args[0]   # a storage object (untyped_storage()/storage()): a tensor over all of it
        return C.empty(0, dtype=self.dtype, device=st.device).set_(st)
    dev = device if device is not None else self.device
    if not args:
        return C.empty(0, dtype=self.dtype, device=dev)
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not self.dtype:
            raise TypeError(f"expected {self.dtype} (got {other.dtype})")
        return other.detach()
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args) or \
            (len(args) == 1 and isinstance(args[0], Size)):
        return C.empty(*args, dtype=self.dtype, device=dev)
    if len(args) == 1:
        return C.tensor(args[0], dtype=self.dtype, device=dev)
    raise TypeError(f"new() received an invalid combination of arguments - got {tuple(type(a).__name__ for a in args)}")


def module_load(self, other, assign=False):
    """What nn.Module.load_state_dict stores for this tensor (PyTorch's default): other
    detached with assign=True, else self with other's values copied in, detached."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def as_subclass(self, cls):
    """A tensor of class cls sharing self's data and staying in the autograd graph."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"cls must be a subclass of torch.Tensor, not {cls!r}")
    out = self.view_as(self)
    out.__class__ = cls
    return out


# -- a Python function per element (see the module's docstring) -----------------------------
def _host_map(name, self, fn, others):
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    cols = [self.detach().reshape(-1).tolist()]
    for o in others:
        if not isinstance(o, Tensor):
            raise TypeError(f"expected a Tensor, got {type(o).__name__}")
        cols.append(o.detach().expand_as(self).reshape(-1).tolist())
    values = [fn(*vals) for vals in zip(*cols)]
    if values:
        self.copy_(C.tensor(values, dtype=self.dtype, device=self.device).view(self.shape))
    return self


def apply_(self, callable):
    """Replace each element x by callable(x) (computed on the host)."""
    return _host_map("apply_", self, callable, ())


def map_(self, other, callable):
    """Replace each element x by callable(x, y), y the element of other broadcast to self."""
    return _host_map("map_", self, callable, (other,))


def map2_(self, x, y, callable):
    """Replace each element a by callable(a, b, c), b and c those of x and y broadcast to self."""
    return _host_map("map2_", self, callable, (x, y))


def _legacy_new(cls, *args, **kwargs):
    if cls is not Tensor:   # (subclasses make themselves: nn.Parameter's __new__)
        return object.__new__(cls)
    # torch.Tensor(2, 3) / torch.Tensor([1, 2]): PyTorch's legacy constructor, the default
    # dtype's legacy type (torch.FloatTensor): uninitialized of a shape, or from data
    return _legacy_types.default_type()(*args, **kwargs)


def type_(self, dtype=None, non_blocking=False):
    """Tensor.type(): the legacy type's name, or a conversion to it."""
    if dtype is None:
        return _legacy_types.type_name(self)
    return _legacy_types.convert(self, dtype, non_blocking)


def _type_name(self):
    return _legacy_types.type_name(self)


def numpy(self, force=False):
    if self.requires_grad and not force:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    _no_bfloat16_numpy(self)
    if self.device.type == "cpu":
        return view(self)
    from .backends.webgpu.transfer import read_array  # deferred: driver choice (the webgpu backend needs one)
    return read_array(self.contiguous(), np()).reshape(self.shape)


def _no_bfloat16_numpy(t):
    if t.dtype is D.bfloat16:   # (numpy has no bfloat16: PyTorch refuses too)
        raise TypeError("Got unsupported ScalarType BFloat16")


async def numpy_async(self):
    _no_bfloat16_numpy(self)
    n = np()
    flat = await self._flat_values_async()
    return n.array(flat, dtype=getattr(n, self.dtype.numpy_name)).reshape(self.shape)


def __buffer__(self, flags):
    # memoryview(t) on Python 3.12+ (PEP 688): a read-only copy of the values, see
    # torchweb.webgpu.to_memoryview
    return to_memoryview(self)


def __reduce_ex__(self, proto):
    if self.dtype is D.bfloat16:   # (its float32 values, exact)
        return (_rebuild, (self.detach().float().numpy().copy(), str(self.device), self.requires_grad, "bfloat16"))
    return (_rebuild, (self.detach().numpy().copy(), str(self.device), self.requires_grad))


def _rebuild(array, device, requires_grad, dtype=None):
    t = C.from_numpy(array).to(device)
    if dtype is not None:
        t = t.to(D.dtype_named(dtype))
    t.requires_grad_(requires_grad)
    return t


METHODS = {
    "__new__": staticmethod(_legacy_new), "type": type_, "_type_name": _type_name, "numpy": numpy,
    "numpy_async": numpy_async, "__buffer__": __buffer__, "__repr__": tensor_repr,
    "__reduce_ex__": __reduce_ex__,
    "type_as": type_as, "cuda": cuda,
    "xpu": _no_backend("xpu"), "ipu": _no_backend("ipu"), "mtia": _no_backend("mtia"),
    "char": _unsupported("int8", "char"), "short": _unsupported("int16", "short"),
    "bfloat16": lambda self, memory_format=None: self.to(D.bfloat16), "cfloat": lambda self, memory_format=None: self.to(D.complex64),
    "cdouble": _unsupported("complex128", "cdouble"), "chalf": _unsupported("complex32", "chalf"),
    "new": new, "module_load": module_load, "as_subclass": as_subclass,
    "apply_": apply_, "map_": map_, "map2_": map2_,
}
