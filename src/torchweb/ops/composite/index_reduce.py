"""index_reduce: source's slices reduced (prod, mean, amax, amin) into input at the positions a
vector index gives along dim; scatter_reduce with the index spread over source's shape, so the
gradient is scatter_reduce's."""

from ..._size import wrap_dim
from ..operands import is_tensor
from ..registry import define
from ... import _dtype as D
from ..index_ops import scatter_reduce

_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce(input, dim, index, source, reduce, include_self):
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not is_tensor(index) or index.dtype.name not in ("int32", "int64"):
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({input.dtype}) and source ({source.dtype}) must have the "
                           f"same scalar type")
    d = wrap_dim(dim, max(input.dim(), 1))
    if input.dim() == 0:
        input, source = input.reshape(1), source.reshape(1)
    if source.dim() != input.dim() and not (source.dim() == 0 and input.dim() == 1):
        raise IndexError("index_reduce_(): Source/destination tensor must have same number of dimensions")
    source = source.reshape(1) if source.dim() == 0 else source
    if source.shape[d] != index.numel():
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({source.shape[d]}), for dim: {d}")
    for i in range(input.dim()):
        if i != d and source.shape[i] != input.shape[i]:
            raise RuntimeError(f"index_reduce_(): Source/destination tensor must have same slice shapes. "
                               f"Destination slice shape: {list(input.shape[:d] + input.shape[d + 1:])} at "
                               f"dimension {d} and source slice shape: {list(source.shape[:d] + source.shape[d + 1:])}"
                               f" at dimension 0.")
    shape = [1] * source.dim()
    shape[d] = index.numel()
    idx = index.to(D.int64).reshape(shape).expand(*source.shape)
    return scatter_reduce(input, d, idx, source, reduce, include_self=include_self)


def _index_reduce_(self, dim=None, index=None, source=None, reduce=None, *, include_self=True, axis=None):
    """In-place index_reduce."""
    dim = dim if axis is None else axis
    return self.copy_(_index_reduce(self, dim, index, source, reduce, include_self).reshape(self.shape))


@define("index_reduce", "indexing", inplace=_index_reduce_,
        doc="index_reduce(input, dim, index, source, reduce, *, include_self=True) -> Tensor\n\nA copy of input "
            "with source's slices reduced ('prod', 'mean', 'amax', 'amin') into the positions index gives "
            "along dim; include_self=False leaves input's values out where something is reduced.")
def index_reduce(input, dim=None, index=None, source=None, reduce=None, *, include_self=True, out=None, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    r = _index_reduce(input, dim, index, source, reduce, include_self).reshape(input.shape)
    return r if out is None else out.copy_(r)
