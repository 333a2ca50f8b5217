"""The Tensor: a view (shape, strides, offset, dtype) of a device storage, plus autograd state.

Ops live in ops/ and are attached as methods in _tensor_methods.py; this file holds only what
every tensor is: metadata, views, device moves, autograd bookkeeping and readback. It imports
nothing above the backends (ops import Tensor): methods that need autograd's nodes, ops or
printing are installed from above (_tensor_autograd.py, _tensor_convert.py).
"""


from operator import attrgetter

from . import _dtype
from . import _device as _device_mod
from ._device import device as _device_cls
from ._layout import is_contiguous_as
from ._size import _CONTIGUOUS, Size, contiguous_strides, numel as _numel, wrap_dim
from .backends import backend_for

_new_object = object.__new__   # (a global: one look-up less for every tensor made)


class Tensor:
    # _view_version is set for views only (it is read where _base is set); _grad, _acc and
    # _hooks are class defaults, set on the few tensors that get one (the leaves): every op
    # makes a tensor, and each attribute set is part of its cost
    __slots__ = ("_storage", "_shape", "_stride", "_offset", "dtype", "device", "_base",
                 "_requires_grad", "_grad_fn", "_output_nr", "_view_version", "__dict__", "__weakref__")

    __module__ = "torchweb"
    _is_torchweb_tensor = True   # what is_tensor() looks for
    # numpy defers to our operators (np.float64 * tensor is a tensor, as in PyTorch), not the
    # other way round (an object ndarray of elementwise products)
    __array_priority__ = 1000
    _grad = None
    _acc = None   # a weakref to the leaf's AccumulateGrad node, once it has one
    _hooks = ()   # (a list once a hook is registered: most tensors never get one)
    _multi_output = None   # (name, index): a view an op returned among several (ops/shape.py)

    def __init__(self, *args, **kwargs):
        pass   # (made by __new__)

    @classmethod
    def _make(cls, storage, shape, stride=None, offset=0, dtype=None, device=None, base=None):
        t = _new_object(cls)
        t._storage = storage
        # (a Size or tuple given is kept: both are immutable, and copying them is per-op time)
        t._shape = shape if type(shape) is Size else Size(shape)
        t._stride = contiguous_strides(shape) if stride is None else tuple(stride)
        t._offset = offset
        t.dtype = dtype if dtype is not None else storage.dtype
        t.device = device
        t._base = base
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        if base is not None:
            t._view_version = storage.version
        return t

    @classmethod
    def _new(cls, storage, shape, dtype, device):
        """_make for a new op's output: contiguous over the whole of a storage just made, shape
        a Size (each op makes one: no argument is checked)."""
        t = _new_object(cls)
        t._storage = storage
        t._shape = shape
        t._stride = _CONTIGUOUS.get(shape) or contiguous_strides(shape)   # (the cache first: no call)
        t._offset = 0
        t.dtype = dtype
        t.device = device
        t._base = None
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        return t

    def _backend(self):
        return backend_for(self.device.type)

    # -- metadata --------------------------------------------------------------------------
    # (its getter in C: ops read x.shape often, and a Python getter is a frame each time)
    shape = property(attrgetter("_shape"), doc="The tensor's size, a torch.Size.")

    def size(self, dim=None, *, axis=None):
        dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
        if dim is None:
            return self._shape
        return self._shape[wrap_dim(dim, len(self._shape))]

    def stride(self, dim=None, *, axis=None):
        dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
        if dim is None:
            return self._stride
        return self._stride[wrap_dim(dim, len(self._shape))]

    def storage_offset(self):
        return self._offset

    def dim(self):
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._shape)

    def numel(self):
        return _numel(self._shape)

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def is_contiguous(self, memory_format=None):
        if memory_format is not None:   # channels_last(_3d): its dims order (_layout.py)
            return is_contiguous_as(self._shape, self._stride, memory_format)
        expected = 1
        # reversed(tuple(...)): reversing the Size itself would index it through its Python
        # __getitem__, element by element
        for size, st in zip(reversed(tuple(self._shape)), reversed(self._stride)):
            if size != 1 and st != expected:
                return False
            expected *= size
        return True

    @property
    def is_cuda(self):
        # True on the webgpu device where "cuda" names it (install_torch_alias, cuda.py)
        return self.device.type == "webgpu" and _device_mod.CUDA_IS_WEBGPU[0]

    @property
    def is_webgpu(self):
        return self.device.type == "webgpu"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return False

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, other):
        self._storage, self._shape, self._stride = other._storage, other._shape, other._stride
        self._offset, self.dtype, self.device = other._offset, other.dtype, other.device

    @property
    def _version(self):
        return self._storage.version

    def _bump_version(self):
        self._storage.version += 1

    def _view(self, shape, stride, offset):
        """A tensor sharing this one's storage (autograd is handled by the caller). _make for a
        view, made here without its call and its defaults' tests: every view op comes here."""
        storage = self._storage
        t = _new_object(Tensor)
        t._storage = storage
        t._shape = shape if type(shape) is Size else Size(shape)
        t._stride = tuple(stride)   # (a tuple itself, in C: cheaper than testing its type)
        t._offset = offset
        t.dtype = self.dtype
        t.device = self.device
        base = self._base
        t._base = base if base is not None else self
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        t._view_version = storage.version
        return t

    # -- autograd bookkeeping ----------------------------------------------------------------
    @property
    def requires_grad(self):
        if self._base is not None and self._view_version != self._storage.version:
            self._refresh_view_history()
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype can require gradients")

    def requires_grad_(self, requires_grad=True):
        return self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can require gradients")

    def _set_requires_grad(self, requires_grad, refusal):
        """refusal: the message for a non-float tensor (PyTorch's differs by the way asked)."""
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(refusal)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad_fn(self):
        if self._base is not None and self._view_version != self._storage.version:
            self._refresh_view_history()
        return self._grad_fn

    def _set_history(self, node, output_nr):
        old = self._grad_fn
        if old is not None and old._retained and old._retained.get(self._output_nr, lambda: None)() is self:
            # retain_grad follows the tensor to its new history (hooks stay with the old one)
            del old._retained[self._output_nr]
            node._retain(output_nr, self)
        self._grad_fn = node
        self._output_nr = output_nr
        self._requires_grad = True
        if self._base is not None:
            self._view_version = self._storage.version

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self.retains_grad:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
                "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
                "information.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.shape != self._shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self._shape)}'. Please ensure that the gradient and the tensor "
                    "are the same size")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor with grad_dtype "
                    f"'{self.dtype.word}'. The gradient must match the tensor's grad_dtype (defaults to the "
                    "tensor's dtype)")
        self._grad = value

    def retain_grad(self):
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        self.grad_fn._retain(self._output_nr, self)

    @property
    def retains_grad(self):
        return self.grad_fn is not None and self._output_nr in (self.grad_fn._retained or ())

    _post_accumulate_grad_hooks = None   # (a list in the instance's __dict__ once one is registered)

    def detach(self):
        # shares the storage (and version counter) but is no autograd view: base None
        return Tensor._make(self._storage, self._shape, self._stride, self._offset, self.dtype,
                            self.device)

    def detach_(self):
        if self._base is not None and self._base.requires_grad and self.grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    # -- readback --------------------------------------------------------------------------
    def _flat_values(self):
        t = self.contiguous()
        return t._backend().read_values(t)

    async def _flat_values_async(self):
        t = self.contiguous()
        return await t._backend().read_values_async(t)

    def tolist(self):
        return _nest(self._flat_values(), self._shape)

    async def tolist_async(self):
        return _nest(await self._flat_values_async(), self._shape)

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._flat_values()[0]

    async def item_async(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return (await self._flat_values_async())[0]

    def __str__(self):
        return self.__repr__()

    def __format__(self, spec):
        if self.dim() == 0:
            return format(self.item(), spec)
        return str(self)

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def _scalar(self):
        """float()/int(): a ValueError for many elements, as PyTorch's (item() raises RuntimeError)."""
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __array__(self, dtype=None, copy=None):
        a = self.detach().numpy()
        if dtype is not None:
            return a.astype(dtype)
        # np.array(t) passes copy=True: the cpu device's numpy() is a view of the tensor's memory,
        # and writes to the array must not reach the tensor (PyTorch's np.array copies too)
        return a.copy() if copy and self.device.type == "cpu" else a



def _nest(flat, shape):
    """flat (a new list from the backend, or a slice of one) nested as shape; a 1-D tensor's list
    is flat itself: copying a million-element list costs milliseconds in Pyodide."""
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return flat if type(flat) is list else list(flat)
    step = _numel(shape[1:])
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


from ._is_tensor import is_tensor  # noqa: E402  (torch.is_tensor)


__all__ = ["Tensor", "is_tensor", "_dtype", "_device_cls"]
