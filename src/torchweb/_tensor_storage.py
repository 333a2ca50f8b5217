"""A tensor's storage as PyTorch code sees it: data_ptr (identity checks such as tied weights),
untyped_storage()/storage() objects, set_/is_set_to, the resize family and new_empty_strided.

torchweb has no host pointers to GPU memory, so data_ptr is an address in a made-up space:
each storage gets its own range the first time it is asked (ranges never overlap), and a view's
pointer is its storage's start + offset * itemsize. Views of one storage agree, as in PyTorch;
the number means nothing to the GPU.

resize_ that grows a tensor past its storage gives it a new, larger storage holding the old
values (PyTorch grows the storage in place, so other views of the old storage see the new
size: here they keep the old storage)."""

import weakref

from . import _dtype as D
from ._size import Size, as_shape, contiguous_strides, numel as _numel
from ._tensor import Tensor
from .serialization.storage_bytes import BY_NAME
from .autograd import grad_mode
from .backends import backend_for
from ._layout import check_format, dims_order
from .ops import elementwise as E
from .ops.operands import empty
from ._device import as_device

_START = weakref.WeakKeyDictionary()   # storage -> its address
_NEXT = [1 << 16]


def _storage_numel(storage):
    return storage.numel


def storage_address(storage):
    """The made-up address of a storage's first byte (0 for an empty one, as PyTorch's)."""
    n = _storage_numel(storage)
    if n == 0:
        return 0
    a = _START.get(storage)
    if a is None:
        a = _NEXT[0]
        _NEXT[0] += (n * storage.dtype.itemsize + 127) // 64 * 64   # (a gap: ranges never touch)
        _START[storage] = a
    return a


def data_ptr(self):
    """The address of the tensor's first element (see the module's docstring)."""
    start = storage_address(self._storage)
    return start + self._offset * self.dtype.itemsize if start else 0


class UntypedStorage:
    """tensor.untyped_storage(): the bytes behind a tensor and its views. A new object each
    call, as PyTorch's; compare storages by data_ptr()."""

    def __init__(self, storage, device):
        self._storage = storage
        self.device = device

    def nbytes(self):
        return _storage_numel(self._storage) * self._storage.dtype.itemsize

    size = nbytes

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        return storage_address(self._storage)

    @property
    def _cdata(self):
        return self.data_ptr()

    @property
    def is_cuda(self):
        return False

    def untyped(self):
        return self

    def __repr__(self):
        return f"torch.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}"


class TypedStorage(UntypedStorage):
    """tensor.storage() (deprecated in PyTorch, as here): the storage counted in elements."""

    def size(self):
        return _storage_numel(self._storage)

    def __len__(self):
        return self.size()

    @property
    def dtype(self):
        return self._storage.dtype

    def element_size(self):
        return self._storage.dtype.itemsize

    def untyped(self):
        return UntypedStorage(self._storage, self.device)

    def _as_tensor(self):
        return Tensor._make(self._storage, (self.size(),), (1,), 0, self._storage.dtype, self.device)

    def tolist(self):
        return self._as_tensor().tolist()

    def __repr__(self):
        return f"torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}"


_TYPED_CLASSES = {}


def storage_type(self):
    """The legacy storage class of the tensor's dtype (torch.FloatStorage, ...)."""
    cls = _TYPED_CLASSES.get(self.dtype)
    if cls is None:
        cls = type(BY_NAME[self.dtype.name].storage, (TypedStorage,), {"__module__": "torchweb"})
        _TYPED_CLASSES[self.dtype] = cls
    return cls


def untyped_storage(self):
    return UntypedStorage(self._storage, self.device)


def storage(self):
    import warnings
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
                  "the only storage class. This should only matter to you if you are using storages "
                  "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
                  "of tensor.storage()", UserWarning, stacklevel=2)
    return storage_type(self)(self._storage, self.device)


# -- changing what a tensor views ---------------------------------------------------------
def _check_in_place(self):
    if grad_mode.is_grad_enabled() and self.requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _retarget(self, storage, shape, stride, offset):
    """This tensor now views `storage` with that geometry (no autograd view of anything)."""
    self._storage = storage
    self._shape = Size(tuple(shape))
    self._stride = tuple(stride)
    self._offset = offset
    self._base = None
    self._view_version = None


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make this tensor view `source`'s storage (a tensor's or a storage object's), with its
    geometry or the one given; set_() alone: an empty storage."""
    _check_in_place(self)
    if source is None:
        _retarget(self, backend_for(self.device.type).empty_storage(0, self.dtype), (0,), (1,), 0)
        return self
    if isinstance(source, Tensor):
        st, dev, dtype = source._storage, source.device, source.dtype
        if size is None:
            size, stride, storage_offset = source._shape, source._stride, source._offset
    elif isinstance(source, UntypedStorage):
        st, dev, dtype = source._storage, source.device, source._storage.dtype
        if size is None:
            size = (_storage_numel(st),)
    else:
        raise TypeError(f"set_() received an invalid combination of arguments - got ({type(source).__name__})")
    if dtype is not self.dtype:
        raise RuntimeError(f"Expected a Storage of type {self.dtype} or an UntypedStorage, but got {dtype}")
    if dev != self.device:
        raise RuntimeError(f"Attempted to set the storage of a tensor on device \"{self.device}\" to a "
                           f"storage on different device \"{dev}\".  This is no longer allowed; the "
                           "devices must match.")
    size = as_shape((size,))
    stride = contiguous_strides(size) if stride is None else tuple(stride)
    need = storage_offset + (sum((s - 1) * t for s, t in zip(size, stride)) + 1 if _numel(size) else 0)
    if need > _storage_numel(st):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{storage_offset}, and itemsize {self.dtype.itemsize} requiring a storage size "
                           f"of {need * self.dtype.itemsize} are out of bounds for storage of size "
                           f"{_storage_numel(st) * self.dtype.itemsize}")
    _retarget(self, st, size, stride, storage_offset)
    return self


def is_set_to(self, tensor):
    """Both view the same storage with the same offset, sizes and strides."""
    return (self._storage is tensor._storage and self._offset == tensor._offset
            and self._shape == tensor._shape and self._stride == tensor._stride)


def resize_(self, *sizes, size=None, memory_format=None):
    """PyTorch's resize_: the given sizes over the same storage, contiguous from the offset;
    grown storage (see the module's docstring) holds the old values first, the rest unset."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = as_shape(sizes if size is None else (size,))
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    check_format(memory_format, len(shape), "resize_")
    if tuple(shape) == tuple(self._shape) and memory_format is None:
        return self
    order = dims_order(memory_format)
    if order is None:
        stride = contiguous_strides(shape)
    else:
        inner = contiguous_strides([shape[d] for d in order])
        stride = [0] * len(shape)
        for d, s in zip(order, inner):
            stride[d] = s
    need = self._offset + _numel(shape)
    st = self._storage
    if need > _storage_numel(st):
        st = _grown(self, need)
    _retarget(self, st, shape, stride, self._offset)
    return self


def _grown(self, need):
    """A storage of `need` elements starting with the old storage's values."""
    old_n = _storage_numel(self._storage)
    new = empty((need,), self.dtype, self.device)
    if old_n:
        old = Tensor._make(self._storage, (old_n,), (1,), 0, self.dtype, self.device)
        E.copy_into(Tensor._make(new._storage, (old_n,), (1,), 0, self.dtype, self.device), old)
    return new._storage


def resize_as_(input, the_template, *, memory_format=None):
    """resize_ to the_template's sizes."""
    return resize_(input, the_template.shape, memory_format=memory_format)


def resize(self, *sizes):
    """Deprecated non-in-place resize: a reshape that keeps the number of elements."""
    import warnings
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = as_shape(sizes)
    if _numel(shape) != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({_numel(shape)} elements in total), but the "
            f"given tensor has a size of {'x'.join(map(str, self._shape))} ({self.numel()} elements). "
            "autograd's resize can only change the shape of a given tensor, while preserving the number "
            "of elements. ")
    return self.contiguous().view(shape)


def resize_as(self, tensor):
    import warnings
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resize(self, tensor.shape)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                      requires_grad=False):
    """An uninitialized tensor with the given sizes and strides over a storage just big enough."""
    size, stride = as_shape((size,)), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} vs {len(size)}")
    dtype = D.as_dtype(dtype) if dtype is not None else self.dtype
    dev = as_device(device) if device is not None else self.device
    need = sum((s - 1) * t for s, t in zip(size, stride)) + 1 if _numel(size) else 0
    flat = empty((need,), dtype, dev)
    t = Tensor._make(flat._storage, size, stride, 0, dtype, dev)
    return t.requires_grad_() if requires_grad else t


METHODS = {
    "data_ptr": data_ptr, "const_data_ptr": data_ptr, "untyped_storage": untyped_storage,
    "storage": storage, "storage_type": storage_type, "set_": set_, "is_set_to": is_set_to,
    "resize_": resize_, "resize_as_": resize_as_, "resize": resize, "resize_as": resize_as,
    "new_empty_strided": new_empty_strided,
}
