"""The *_scatter ops: a copy of input with one of its views (a slice, a selected index, a
diagonal, an as_strided window) overwritten by src. Written as clone + view + copy_, so the
gradient flows to input outside the view and to src inside it, as PyTorch's."""

from ..._size import wrap_dim
from ..operands import is_tensor
from ..registry import define
from ..out_arg import write_out
from . import shape_str
from ..shape import as_strided


def _scatter_into(name, input, src, view_of):
    if not is_tensor(src):
        raise TypeError(f"{name}(): argument 'src' (position 2) must be Tensor, not {type(src).__name__}")
    out = input.clone()
    view = view_of(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{shape_str(src.shape)}, slice size = {shape_str(view.shape)}")
    view.copy_(src)
    return out


@define("slice_scatter", "indexing",
        doc="slice_scatter(input, src, dim=0, start=None, end=None, step=1) -> Tensor\n\n"
            "input with input[..., start:end:step, ...] (along dim) replaced by src.")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1, *, out=None, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    d = wrap_dim(dim, max(input.dim(), 1))
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    r = _scatter_into("slice_scatter", input, src, lambda t: t[(slice(None),) * d + (slice(start, end, step),)])
    return r if out is None else write_out(r, out, "slice_scatter")


@define("select_scatter", "indexing",
        doc="select_scatter(input, src, dim, index) -> Tensor\n\ninput with input.select(dim, index) "
            "replaced by src.")
def select_scatter(input, src, dim=None, index=None, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    return _scatter_into("select_scatter", input, src, lambda t: t.select(dim, index))


@define("diagonal_scatter", "indexing",
        doc="diagonal_scatter(input, src, offset=0, dim1=0, dim2=1) -> Tensor\n\n"
            "input with input.diagonal(offset, dim1, dim2) replaced by src.")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter_into("diagonal_scatter", input, src, lambda t: t.diagonal(offset, dim1, dim2))


@define("as_strided_scatter", "indexing",
        doc="as_strided_scatter(input, src, size, stride, storage_offset=None) -> Tensor\n\n"
            "input with input.as_strided(size, stride, storage_offset) replaced by src.")
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    base = input.contiguous() if not input.is_contiguous() else input
    return _scatter_into("as_strided_scatter", base, src,
                         lambda t: as_strided(t, size, stride, storage_offset))
