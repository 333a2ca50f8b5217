"""torch.sparse for torchweb's minimal COO tensors (_sparse_coo.py): mm, addmm and sum
(_sparse_math.py), softmax and log_softmax. softmax and log_softmax go through the dense tensor,
so gradients reach the values."""

from .._sparse_coo import _make
from .._sparse_math import addmm, mm, sum

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax"]


def _masked_softmax(input, dim, dtype, log):
    if not input.is_sparse:
        raise RuntimeError("torch.sparse.softmax expects a sparse tensor (layout torch.sparse_coo)")
    s = input.coalesce()
    if dtype is not None:
        s = s.to(dtype)
    dense = s.to_dense()
    present = _make(s._sp_indices, s._sp_values.new_ones(s._sp_values.shape), s.shape, True).to_dense() != 0
    x = dense.masked_fill(~present, float("-inf"))
    y = x.log_softmax(dim) if log else x.softmax(dim)
    values = y[tuple(s._sp_indices)]
    return _make(s._sp_indices, values, s.shape, True)


def softmax(input, dim, *, dtype=None):
    """Softmax over the specified entries along dim (unspecified ones count as -inf)."""
    return _masked_softmax(input, dim, dtype, False)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax over the specified entries along dim (unspecified ones count as -inf)."""
    return _masked_softmax(input, dim, dtype, True)
