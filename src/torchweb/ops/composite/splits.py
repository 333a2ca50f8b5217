"""PyTorch's other names for split and flatten: split_with_sizes, unsafe_split, unsafe_chunk
(views, as split and chunk: torchweb has no unsafe aliasing to skip), hsplit, vsplit, dsplit
(tensor_split along dim 1, 0, 2 with PyTorch's checks) and ravel."""

from ..registry import define
from .. import join as J, shape as S


@define("split_with_sizes", "join", aliases=("unsafe_split_with_sizes",),
        doc="split_with_sizes(input, split_sizes, dim=0) -> tuple of Tensors\n\nViews of the given sizes "
            "along dim (they must sum to its size).")
def split_with_sizes(input, split_sizes, dim=0, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    return J.split(input, [int(s) for s in split_sizes], dim)   # (J.split refuses negative sizes)


@define("unsafe_split", "join",
        doc="unsafe_split(input, split_size, dim=0) -> tuple of Tensors\n\nsplit (the pieces are views).")
def unsafe_split(input, split_size, dim=0, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    return S.plain_views(J.split(input, split_size, dim))


@define("unsafe_chunk", "join",
        doc="unsafe_chunk(input, chunks, dim=0) -> tuple of Tensors\n\nchunk (the pieces are views).")
def unsafe_chunk(input, chunks, dim=0, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    return S.plain_views(J.chunk(input, chunks, dim))


def _which(indices_or_sections, indices, sections):
    """The split argument, by position or by PyTorch's keyword for each overload (sections: an int,
    indices: a list)."""
    given = [v for v in (indices_or_sections, indices, sections) if v is not None]
    if len(given) != 1:
        raise TypeError("expected exactly one of indices_or_sections, indices or sections")
    return given[0]


def _directional(name, input, indices_or_sections, min_dim, dim):
    if input.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                           f"with {input.dim()} dimensions!")
    if isinstance(indices_or_sections, int):
        size = input.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
    return J.tensor_split(input, indices_or_sections, dim)


@define("hsplit", "join",
        doc="hsplit(input, indices_or_sections) -> tuple of Tensors\n\ntensor_split along dim 1 (dim 0 for "
            "1-D input); an int must divide the size.")
def hsplit(input, indices_or_sections=None, *, indices=None, sections=None):
    return _directional("hsplit", input, _which(indices_or_sections, indices, sections), 1,
                        1 if input.dim() > 1 else 0)


@define("vsplit", "join",
        doc="vsplit(input, indices_or_sections) -> tuple of Tensors\n\ntensor_split along dim 0 (input of 2 "
            "or more dims); an int must divide the size.")
def vsplit(input, indices_or_sections=None, *, indices=None, sections=None):
    return _directional("vsplit", input, _which(indices_or_sections, indices, sections), 2, 0)


@define("dsplit", "join",
        doc="dsplit(input, indices_or_sections) -> tuple of Tensors\n\ntensor_split along dim 2 (input of 3 "
            "or more dims); an int must divide the size.")
def dsplit(input, indices_or_sections=None, *, indices=None, sections=None):
    return _directional("dsplit", input, _which(indices_or_sections, indices, sections), 3, 2)


@define("ravel", "shape", doc="ravel(input) -> Tensor\n\nThe elements as one contiguous dim (a view when "
                               "input is contiguous).")
def ravel(input):
    return input.reshape(-1)
