"""A minimal sparse COO tensor, so that code which builds, moves, stores or multiplies one runs:
torch.sparse_coo_tensor, Tensor.to_sparse()/to_dense(), indices()/values() (coalesced only,
as PyTorch), coalesce(), sparse_dim()/dense_dim(), _nnz(), sparse @ dense (torch.sparse.mm,
torch.mm, torch.matmul, @), a number times it, sparse + sparse and dense + sparse,
.to(device/dtype), clone/detach, copy_, torch.save/load and pickling.

SparseCOOTensor is a subclass of Tensor (isinstance(x, torch.Tensor) holds, as in PyTorch)
holding two dense tensors: indices [sparse_dim, nnz] (int64) and values [nnz, *dense_shape].
Every computation on it is a dense op on those (index_select, index_add, nonzero, indexing),
so gradients reach the values (and whatever they came from) through the dense graph: a
sparse tensor's grad_fn is its values', and `.grad` of a leaf sparse tensor made with
requires_grad=True is the sparse tensor of its values' gradient.

Anything else raises NotImplementedError (a RuntimeError) naming the op and the layout, and
a dense kernel that reaches a sparse tensor's storage does too (_NoStorage). The dense path
is untouched: Tensor.is_sparse is a class attribute that mm/matmul read."""

from . import _dtype as D
from . import _layout
from ._size import Size, as_shape
from ._tensor import Tensor
from .autograd import grad_mode
from ._creation import tensor, as_tensor
from ._device import as_device
from ._sparse_math import dense_plus, linear_index as _linear_index, merged, mm, refusal as _refusal, sum as sparse_sum

class _NoStorage:
    """The storage of a sparse tensor: dense kernels that reach for its buffer get the refusal."""
    __slots__ = ()

    def __getattr__(self, name):
        raise _refusal(None)


_NO_STORAGE = _NoStorage()


class SparseCOOTensor(Tensor):
    __slots__ = ("_sp_indices", "_sp_values", "_sp_coalesced", "_sp_version")
    is_sparse = True
    layout = _layout.sparse_coo

    # -- structure ---------------------------------------------------------------------------
    def sparse_dim(self):
        return self._sp_indices.shape[0]

    def dense_dim(self):
        return self._sp_values.dim() - 1

    def _nnz(self):
        return self._sp_values.shape[0]

    def _indices(self):
        return self._sp_indices

    def _values(self):
        return self._sp_values

    def indices(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_indices

    def values(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_values

    def is_coalesced(self):
        return self._sp_coalesced

    def is_contiguous(self, memory_format=None):
        return False

    def _type_name(self):
        return "torch.sparse." + Tensor._type_name(self)[len("torch."):]

    # -- autograd: through the values ---------------------------------------------------------
    @property
    def requires_grad(self):
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._sp_values.requires_grad = value

    def requires_grad_(self, requires_grad=True):
        self._sp_values.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._sp_values.grad_fn

    @property
    def _version(self):
        """The version counter (what ctx.save_for_backward checks): as in PyTorch, the values
        share it, so an in-place change to them counts, and so do the tensor's own in-place ops
        (copy_, zero_), which put new values in."""
        return self._sp_version + self._sp_values._version

    def _bump_version(self):
        self._sp_version += 1

    def _set_entries(self, indices, values, coalesced):
        """In place: the entries become these (the version goes up by one)."""
        version = self._version + 1
        self._sp_indices, self._sp_values, self._sp_coalesced = indices, values, coalesced
        self._sp_version = version - values._version

    @property
    def is_leaf(self):
        return self._sp_values.grad_fn is None

    @property
    def grad(self):
        """The gradient with respect to the tensor as a whole: at each of its indices, the
        gradient there (entries sharing an index each got it: taken once), coalesced."""
        g = self._sp_values._grad
        if g is None:
            return None
        if self._sp_coalesced:
            return _make(self._sp_indices, g, self._shape, True)
        idx, first, _ = self._unique_entries()
        return _make(idx, g.index_select(0, tensor(first, dtype=D.int64, device=g.device)), self._shape, True)

    @grad.setter
    def grad(self, value):
        if value is not None and not (value.is_sparse and value._nnz() == self._nnz()):
            raise RuntimeError("the grad of a sparse tensor must be None or a sparse tensor with its indices")
        self._sp_values._grad = None if value is None else value._sp_values

    @property
    def data(self):
        return self.detach()

    def detach(self):
        return _make(self._sp_indices, self._sp_values.detach(), self._shape, self._sp_coalesced)

    def clone(self, memory_format=None):
        return _make(self._sp_indices.clone(), self._sp_values.clone(), self._shape, self._sp_coalesced)

    def copy_(self, src, non_blocking=False):
        """Take src's entries (a sparse tensor of the same size), as PyTorch's sparse copy_."""
        if not getattr(src, "is_sparse", False):
            raise _refusal("copy_ from a dense tensor")
        if src.shape != self._shape:
            raise RuntimeError(f"copy_: sizes do not match: {list(self._shape)} and {list(src.shape)}")
        self._set_entries(src._sp_indices.to(self.device).clone(),
                          src._sp_values.detach().to(self.device, self.dtype).clone(), src._sp_coalesced)
        return self

    def zero_(self):
        self._set_entries(self._sp_indices[:, :0].clone(), self._sp_values[:0].clone(), True)
        return self

    # -- conversion ----------------------------------------------------------------------------
    def to(self, *args, **kwargs):
        kwargs.pop("memory_format", None)
        values = self._sp_values.to(*args, **kwargs)
        if values is self._sp_values:
            return self
        return _make(self._sp_indices.to(values.device), values, self._shape, self._sp_coalesced)

    def to_dense(self, dtype=None, *, masked_grad=None):
        v = self._sp_values if dtype is None else self._sp_values.to(dtype)
        sizes = self._shape[:self.sparse_dim()]
        rows = 1
        for s in sizes:
            rows *= s
        flat = _linear_index(self._sp_indices, sizes)
        out = v.new_zeros((rows,) + tuple(self._shape[self.sparse_dim():]))
        return out.index_add(0, flat, v).view(self._shape)

    def to_sparse(self, *args, layout=None, sparse_dim=None, blocksize=None, dense_dim=None):
        if args:
            sparse_dim = args[0]
        _check_layout(layout)
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                               "!=self.sparse_dim() is not supported")
        return self

    def to_sparse_coo(self):
        return self

    def coalesce(self):
        """Entries sorted by index, duplicates summed (their gradients flow back to each)."""
        if self._sp_coalesced:
            return self
        idx, first, inverse = self._unique_entries()
        v = self._sp_values
        values = v.new_zeros((idx.shape[1],) + tuple(v.shape[1:])).index_add(0, inverse, v)
        return _make(idx, values, self._shape, True)

    def _unique_entries(self):
        """(the distinct indices sorted [sparse_dim, n], the first entry at each as a list, each
        entry's place among them as a tensor), worked out on the host: int64 sorted exactly."""
        cols = self._sp_indices.tolist()
        keys = list(zip(*cols)) if self._nnz() else []
        where, first = {}, []
        for i, k in enumerate(keys):
            if k not in where:
                where[k] = None
                first.append(i)
        order = sorted(where)
        for i, k in enumerate(order):
            where[k] = i
        first.sort(key=lambda i: where[keys[i]])
        dev = self._sp_indices.device
        inverse = tensor([where[k] for k in keys], dtype=D.int64, device=dev)
        idx = tensor([list(c) for c in zip(*order)] if order else [],
                     dtype=D.int64, device=dev).view(self.sparse_dim(), len(order))
        return idx, first, inverse

    # -- arithmetic --------------------------------------------------------------------------
    def mm(self, mat2):
        return mm(self, mat2)

    matmul = mm

    def __matmul__(self, other):
        return mm(self, other)

    def __rmatmul__(self, other):
        return mm(other, self)

    def t(self):
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise _refusal("t (only 2-D sparse matrices)")
        return _make(self._sp_indices.flip(0), self._sp_values, self._shape[::-1], self._nnz() <= 1)

    def _scaled(self, op, other):
        if isinstance(other, bool) or not isinstance(other, (int, float)):
            raise _refusal(f"{op} with a {type(other).__name__}")
        v = self._sp_values * other if op == "mul" else self._sp_values / other
        return _make(self._sp_indices, v, self._shape, self._sp_coalesced)

    def mul(self, other):
        return self._scaled("mul", other)

    def div(self, other):
        return self._scaled("div", other)

    __mul__ = __rmul__ = mul
    __truediv__ = div

    def __neg__(self):
        return _make(self._sp_indices, -self._sp_values, self._shape, self._sp_coalesced)

    neg = __neg__

    def add(self, other, *, alpha=1):
        """sparse + alpha * sparse (PyTorch's merge of the two entry lists, _sparse_math.merged);
        sparse + dense is refused as PyTorch refuses it (dense + sparse is __radd__)."""
        _check_sparse_operand(other)
        indices, values, coalesced = merged(self, other, alpha)
        return _make(indices, values, self._shape, coalesced)

    __add__ = add

    def __radd__(self, other):
        """dense + sparse: a dense tensor (Python asks this subclass before Tensor.__add__)."""
        if isinstance(other, Tensor):
            return dense_plus(other, self)
        raise _refusal(f"add of a {type(other).__name__} and a sparse tensor")

    def add_(self, other, *, alpha=1):
        _check_sparse_operand(other)
        self._set_entries(*merged(self, other, alpha))
        return self

    def mul_(self, other):
        if isinstance(other, bool) or not isinstance(other, (int, float)):
            raise _refusal(f"mul_ with a {type(other).__name__}")
        self._sp_values.mul_(other)
        return self

    def sum(self, dim=None, keepdim=False, dtype=None):
        if keepdim:
            raise _refusal("sum with keepdim=True")
        return sparse_sum(self, dim, dtype=dtype)

    # -- Python protocols ----------------------------------------------------------------------
    def __repr__(self):
        ind = "tensor(indices=" + repr(self._sp_indices).replace("\n", "\n" + " " * 15)
        val = "       values=" + repr(self._sp_values).replace("\n", "\n" + " " * 14)
        extra = f"size={tuple(self._shape)}, nnz={self._nnz()}"
        if self.dtype is not D.get_default_dtype() and self.dtype is not D.int64:
            extra += f", dtype={self.dtype}"
        return f"{ind},\n{val},\n       {extra}, layout=torch.sparse_coo)"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._sp_indices, self._sp_values.detach(), tuple(self._shape),
                           self._sp_coalesced, self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self.clone()
        return memo[id(self)]


def _rebuild(indices, values, size, coalesced, requires_grad=False):
    return _make(indices, values.requires_grad_(requires_grad) if requires_grad else values, size, coalesced)


def _check_sparse_operand(other):
    if not isinstance(other, Tensor):
        raise _refusal(f"add with a {type(other).__name__}")
    if not other.is_sparse:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")


def sparse_entries(indices, values, size):
    """A sparse tensor of these entries, unchecked (a backward's gradient, as PyTorch's
    _sparse_coo_tensor_unsafe): uncoalesced unless it has fewer than two."""
    return _make(indices, values, size, values.shape[0] < 2)


def _make(indices, values, size, coalesced):
    shape = Size(tuple(size))
    # (PyTorch's sparse stride(): zeros)
    t = SparseCOOTensor._make(_NO_STORAGE, shape, (0,) * len(shape), 0, values.dtype, values.device)
    t._sp_indices = indices
    t._sp_values = values
    t._sp_coalesced = bool(coalesced)
    t._sp_version = -values._version   # (a new tensor starts at version 0)
    return t


def _check_layout(layout):
    if layout is not None and layout is not _layout.sparse_coo:
        raise NotImplementedError(f"to_sparse: layout {layout} is not supported by torchweb (only "
                                  "torch.sparse_coo)")


# -- construction ---------------------------------------------------------------------------
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor of entries values[i] at indices[:, i] (PyTorch's signature).
    check_invariants=True also checks the indices against size (a readback)."""
    if isinstance(values, Tensor):
        dev = as_device(device) if device is not None else values.device
        values = values.to(dev, D.as_dtype(dtype)) if dtype is not None else values.to(dev)
    else:
        dev = as_device(device)
        values = tensor(values, dtype=dtype, device=dev)
    indices = as_tensor(indices, device=dev)
    if indices.dtype is not D.int64:
        if indices.dtype.is_floating_point or indices.dtype is D.bool:
            raise RuntimeError(f"indices must be an int64 tensor, got {indices.dtype}")
        indices = indices.to(D.int64)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        raise RuntimeError("values must be at least 1-D (nnz x dense dims)")
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices.shape[1]}, nnz from values: {values.shape[0]}")
    sparse_dim, dense_dim = indices.shape[0], values.dim() - 1
    if size is None:
        top = indices.amax(1).tolist() if indices.shape[1] else [-1] * sparse_dim
        size = [m + 1 for m in top] + list(values.shape[1:])
    else:
        size = as_shape((size,))
        if len(size) != sparse_dim + dense_dim:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                               f"{len(size)}, sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
        if tuple(size[sparse_dim:]) != tuple(values.shape[1:]):
            raise RuntimeError(f"values has incorrect size, expected {[values.shape[0]] + list(size[sparse_dim:])}, "
                               f"got {list(values.shape)}")
        if check_invariants and indices.shape[1]:
            lo, hi = indices.amin(1).tolist(), indices.amax(1).tolist()
            for d in range(sparse_dim):
                if lo[d] < 0:
                    raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
                if hi[d] >= size[d]:
                    raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} "
                                       f"but found index {hi[d]}")
    coalesced = bool(is_coalesced) if is_coalesced is not None else indices.shape[1] <= 1
    if requires_grad:
        values = values.detach().requires_grad_()
    elif values.requires_grad and not grad_mode.is_grad_enabled():
        values = values.detach()   # (made under no_grad, e.g. in a custom Function's forward: no history)
    return _make(indices, values, size, coalesced)


# -- the dense tensor's side ------------------------------------------------------------------
def to_sparse(self, *args, layout=None, sparse_dim=None, blocksize=None, dense_dim=None):
    """The nonzero entries of a dense tensor (rows of its first sparse_dim dims with any
    nonzero value), coalesced; differentiable with respect to the dense tensor."""
    if args:
        sparse_dim = args[0]
    _check_layout(layout)
    n = self.dim() if sparse_dim is None else sparse_dim
    if not 0 <= n <= self.dim():
        raise RuntimeError(f"sparse_dim must be between 0 and {self.dim()}, got {n}")
    mask = self != 0
    if n == 0:   # one entry holding the whole tensor, or none
        keep = 1 if bool(mask.any()) else 0
        return _make(self.new_zeros((0, keep), dtype=D.int64), self.unsqueeze(0)[:keep], self.shape, True)
    if n < self.dim():
        mask = mask.flatten(n).any(-1)
    idx = mask.nonzero().t()
    return _make(idx.contiguous(), self[tuple(idx)], self.shape, True)


def sparse_mask(self, mask):
    """The entries of this dense tensor at a sparse tensor's indices, as a sparse tensor with
    mask's indices (differentiable with respect to this tensor)."""
    if not mask.is_sparse:
        raise NotImplementedError("Could not run 'aten::sparse_mask' with a strided mask: mask must be "
                                  "a sparse COO tensor (layout torch.sparse_coo)")
    if mask.shape != self.shape:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}")
    idx = mask._sp_indices.to(self.device)
    return _make(idx, self[tuple(idx)], self.shape, mask._sp_coalesced)


def _dense_only(op, message, exc=RuntimeError):
    def method(self, *args, **kwargs):
        raise exc(message)
    method.__name__ = op
    return method


def _no_sparse_kernel(op):
    return _dense_only(op, f"Could not run 'aten::{op}' on a strided (dense) tensor: it is a sparse "
                       "tensor's method (make one with to_sparse())", NotImplementedError)


DENSE_METHODS = {
    "to_sparse": to_sparse,
    "sparse_mask": sparse_mask,
    "to_sparse_coo": lambda self: to_sparse(self),
    "to_dense": lambda self, dtype=None, *, masked_grad=None: self if dtype is None else self.to(dtype),
    "sparse_dim": lambda self: 0,
    "dense_dim": lambda self: self.dim(),
    "indices": _dense_only("indices", "indices expected sparse coordinate tensor layout but got Strided"),
    "values": _dense_only("values", "values expected sparse tensor layout but got Strided"),
    "coalesce": _dense_only("coalesce", "coalesce expected sparse coordinate tensor layout but got Strided"),
    "is_coalesced": _dense_only("is_coalesced", "is_coalesced expected sparse coordinate tensor layout but got Strided"),
    "_indices": _no_sparse_kernel("_indices"),
    "_values": _no_sparse_kernel("_values"),
    "_nnz": _no_sparse_kernel("_nnz"),
}

# Tensor attributes that hold for a sparse tensor as they are (metadata only)
_INHERITED = {"size", "shape", "dim", "ndimension", "ndim", "numel", "nelement", "element_size",
              "itemsize", "is_floating_point", "is_complex", "is_cuda", "is_cpu", "is_webgpu",
              "dtype", "device", "stride", "storage_offset", "get_device", "type",
              "is_pinned", "is_shared", "pin_memory", "share_memory_", "is_inference",
              "is_distributed", "is_conj", "is_neg", "is_signed", "output_nr", "name", "grad_dtype",
              "is_set_to", "__init__", "__len__", "__hash__", "__class__", "__doc__", "__module__",
              "__slots__", "__dict__", "__weakref__", "_is_torchweb_tensor", "_post_accumulate_grad_hooks"}
_INHERITED.update(name for name in dir(Tensor) if name.startswith("is_") and name.islower()
                  and isinstance(getattr(Tensor, name, None), property))
_CONVERSIONS = {"float": D.float32, "half": D.float16, "int": D.int32, "long": D.int64, "bool": D.bool,
                "byte": D.uint8}


def install():
    """Attach the dense side's methods, and refuse on SparseCOOTensor every Tensor attribute
    it does not implement or inherit as is (called once every method is on Tensor)."""
    Tensor.is_sparse = False   # (a class attribute: mm and matmul read it on every call)
    for name, fn in DENSE_METHODS.items():
        setattr(Tensor, name, fn)
    for name, dtype in _CONVERSIONS.items():
        setattr(SparseCOOTensor, name, lambda self, _d=dtype: self.to(_d))
    SparseCOOTensor.cpu = lambda self: self.to("cpu")
    SparseCOOTensor.webgpu = lambda self: self.to("webgpu")
    SparseCOOTensor.cuda = lambda self, device=None, non_blocking=False: self.to("webgpu")
    SparseCOOTensor.type_as = lambda self, other: self.to(other.device, other.dtype)
    for name, attr in list(Tensor.__dict__.items()):
        if name in _INHERITED or name in SparseCOOTensor.__dict__:
            continue
        if name.startswith("__") and not callable(attr):
            continue
        if isinstance(attr, property):
            setattr(SparseCOOTensor, name, property(lambda self, _n=name: _raise(_n)))
        elif callable(attr):
            setattr(SparseCOOTensor, name, _stub(name))
    SparseCOOTensor.__hash__ = Tensor.__hash__   # (defining __eq__ would have cleared it)


def _raise(name):
    raise _refusal(name)


def _stub(name):
    def method(self, *args, **kwargs):
        raise _refusal(name)
    method.__name__ = name
    return method
