"""Index arithmetic: tril_indices and triu_indices (the coordinates of a triangle, row-major),
unravel_index (flat indices to coordinates) and combinations (r-subsets of a vector's elements,
gathered by index_select, so the gradient flows to the vector)."""

import itertools

from ..operands import is_tensor
from ..registry import define
from ... import _dtype as D
from ..._creation import arange, empty, tensor, zeros
from ..index_ops import index_select, masked_select
from ..join import stack
from ..pointwise_api import floor_divide


def _check_tri(name, row, col, dtype):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype.name not in ("int32", "int64"):
        word = {"float32": "Float", "float16": "Half", "bool": "Bool", "uint8": "Byte"}.get(dtype.name, dtype.name)
        raise NotImplementedError(f"\"{name}\" not implemented for '{word}'")


def _triangle(name, row, col, offset, dtype, device, lower):
    dtype = D.int64 if dtype is None else dtype
    _check_tri(name, row, col, dtype)
    r = arange(row, device=device).unsqueeze(1).expand(row, col)
    c = arange(col, device=device).unsqueeze(0).expand(row, col)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return stack([masked_select(r, keep), masked_select(c, keep)]).to(dtype)


@define("tril_indices", "creation", method=False,
        doc="tril_indices(row, col, offset=0, *, dtype=torch.long, device=None, layout=torch.strided) -> Tensor\n\n"
            "The (2, N) coordinates of the lower triangle (on and below diagonal `offset`) of a row x col "
            "matrix, row by row.")
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    return _triangle("tril_indices", row, col, offset, dtype, device, True)


@define("triu_indices", "creation", method=False,
        doc="triu_indices(row, col, offset=0, *, dtype=torch.long, device=None, layout=torch.strided) -> Tensor\n\n"
            "The (2, N) coordinates of the upper triangle (on and above diagonal `offset`) of a row x col "
            "matrix, row by row.")
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    return _triangle("triu_indices", row, col, offset, dtype, device, False)


@define("unravel_index", "indexing", method=False, dtypes=("uint8", "int32", "int64"), differentiable=False,
        doc="unravel_index(indices, shape) -> tuple of Tensors\n\nThe coordinates in a tensor of `shape` of "
            "each flat index (one tensor per dim, each of indices' shape).")
def unravel_index(indices, shape):
    if not is_tensor(indices) or indices.dtype.is_floating_point or indices.dtype.name == "bool":
        got = indices.dtype if is_tensor(indices) else type(indices).__name__
        raise TypeError(f"expected 'indices' to be integer dtype, but got {got}")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    elif not isinstance(shape, (tuple, list)) or not all(isinstance(s, int) for s in shape):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    shape = tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    idx = indices.to(D.int64)
    return tuple(floor_divide(idx, st) % s for st, s in zip(reversed(strides), shape))


@define("combinations", "shape", method=False,
        doc="combinations(input, r=2, with_replacement=False) -> Tensor\n\nThe r-length combinations of a 1-D "
            "input's elements, as rows, in itertools.combinations' order.")
def combinations(input, r=2, with_replacement=False):
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    flat = [i for combo in pick(range(input.shape[0]), r) for i in combo]
    idx = tensor(flat, dtype=D.int64, device=input.device) if flat else \
        zeros(0, dtype=D.int64, device=input.device)
    return index_select(input, 0, idx).reshape(-1, r)
