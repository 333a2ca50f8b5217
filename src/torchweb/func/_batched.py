"""The batched tensor vmap hands the function: a tensor with one batch dimension at a level
(functorch's BatchedTensorImpl). `_value` holds the data with the batch dimension at `_bdim`;
what the function sees (shape, dim(), dtype, device) is the logical tensor, without it. Nested
vmaps nest wrappers: `_value` may itself be batched at a lower level, and an op on a wrapper of
level L runs its rule at L, which calls the op on the values (dispatched again below L).

Only metadata lives here; ops reach batched tensors through func/_dispatch.py's routing."""

import sys

from .._tensor import Tensor
from .._size import Size

_levels = []          # the running vmaps (VmapLevel), outermost first


class VmapLevel:
    """One running vmap: its level id (higher = inner), batch size and randomness mode."""
    _next = [1]

    def __init__(self, size, randomness):
        self.id = VmapLevel._next[0]
        VmapLevel._next[0] += 1
        self.size = size
        self.randomness = randomness

    def __enter__(self):
        _levels.append(self)
        return self

    def __exit__(self, *exc):
        _levels.remove(self)
        return False


def active_levels():
    return list(_levels)


def level_by_id(level_id):
    for lvl in _levels:
        if lvl.id == level_id:
            return lvl
    raise RuntimeError("vmap: a batched tensor escaped the vmap that made it")


class Unrouted(RuntimeError):
    """A batched tensor reached code that reads a tensor's storage or autograd slots directly:
    an op called through a name vmap does not route (an op stored before vmap ran, e.g. a
    module's activation=F.relu). vmap then runs the function once per entry (func/_vmap.py)."""


def _unrouted(slot):
    def get(self):
        f = sys._getframe(1)
        where = f"{f.f_code.co_name} ({f.f_code.co_filename.rsplit('torchweb', 1)[-1].lstrip('/')})"
        raise Unrouted(f"vmap: a batched tensor reached {where}, which reads its {slot} directly")
    return property(get)


class BatchedTensor(Tensor):
    """A logical tensor batched at one vmap level (see the module's docstring)."""
    __slots__ = ("_value", "_bdim", "_level")

    _storage, _stride, _offset, _requires_grad, _grad_fn, _grad, _output_nr = (
        _unrouted(n) for n in ("_storage", "_stride", "_offset", "_requires_grad", "_grad_fn", "_grad", "_output_nr"))

    def __repr__(self):
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n{self._value!r}\n)"

    # what autograd and the user read: the value's (a batched tensor is no leaf of its own)
    requires_grad = property(lambda self: self._value.requires_grad,
                             lambda self, flag: setattr(self._value, "requires_grad", flag))
    grad_fn = property(lambda self: self._value.grad_fn)
    is_leaf = property(lambda self: self._value.is_leaf)
    grad = property(lambda self: None)
    data = property(lambda self: self.detach())
    T = property(lambda self: self.permute(tuple(range(self.dim() - 1, -1, -1))))
    mT = property(lambda self: self.transpose(-2, -1))

    def detach(self):
        return wrap(self._value.detach(), self._bdim, self._level)

    def requires_grad_(self, requires_grad=True):
        self._value.requires_grad_(requires_grad)
        return self

    def __iter__(self):
        return iter(self.unbind(0))

    def is_contiguous(self, memory_format=None):
        return True

    def stride(self, dim=None):
        raise RuntimeError("vmap: stride() is not defined on a batched tensor (PyTorch's neither)")

    # reading values would make the function depend on the entry: PyTorch refuses, so do we
    def item(self):
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                           "operations. If error is occurring somewhere inside PyTorch internals, please file a bug "
                           "report.")

    def __bool__(self):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                           "flow. We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")

    __float__ = __int__ = __index__ = item

    def tolist(self):
        return self.item()

    def numpy(self, *, force=False):
        return self.item()

    def __hash__(self):
        return id(self)


def wrap(value, bdim, level_id):
    """value (batched at bdim) as the level's batched tensor; value itself if bdim is None."""
    if bdim is None:
        return value
    b = object.__new__(BatchedTensor)
    b._value, b._bdim, b._level = value, bdim, level_id
    shape = value.shape
    b._shape = Size(tuple(shape[:bdim]) + tuple(shape[bdim + 1:]))
    b.dtype, b.device = value.dtype, value.device
    b._base = None
    b._hooks = ()
    return b


def unwrap(x, level_id):
    """(value, bdim) of x at the level: bdim None where x is not batched there."""
    if type(x) is BatchedTensor and x._level == level_id:
        return x._value, x._bdim
    return x, None


def to_front(x, level_id):
    """(x's value with the level's batch dim first, True) or (x, False) where x is not batched there."""
    if type(x) is BatchedTensor and x._level == level_id:
        v = x._value
        return (v if x._bdim == 0 else v.movedim(x._bdim, 0)), True
    return x, False


def canonical(x, levels):
    """A plain tensor with one leading dim per level of `levels` (outermost first), then x's
    logical dims: batch dims moved to the front, and expanded where x is not batched at a level."""
    for lvl in reversed(levels):
        v, batched = to_front(x, lvl.id)
        x = v if batched else x.unsqueeze(0).expand((lvl.size,) + tuple(x.shape))
    return x


def from_canonical(p, levels):
    """The inverse of canonical: p's leading dims as batch dims at `levels`."""
    for lvl in levels:
        p = wrap(p, 0, lvl.id)
    return p
