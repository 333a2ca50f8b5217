"""Binary search: searchsorted and bucketize (one thread per value: backends' search_sorted).

The sequence is 1-D (shared by every value) or has the values' leading dims (one row per row of
values). The comparison runs in the promoted dtype of the two (PyTorch's promote_types), with
PyTorch's loop (kernels/search.py), so NaN values land past the end and NaN at the end of a row
counts as the largest. Integer results, no gradient.
"""

from .. import _dtype as D
from ..backends import backend_for
from ..backends.plans import SearchSpec
from . import elementwise as E
from .operands import compute_class, empty, is_tensor
from .elementwise import contiguous_operand
from .registry import define
from .._creation import tensor


def _flat2(t, rows, cols):
    """Contiguous t seen as [rows, cols]."""
    c = contiguous_operand(t)
    return c._view((rows, cols), (cols, 1), c._offset)


def search_rows(seq, values, out_int32, right, sorter, name="torch.searchsorted()"):
    if seq.dim() == 0:
        raise RuntimeError(f"{name}: boundaries tensor should have positive dimension, but got 0 dimension")
    if not is_tensor(values):
        values = tensor(values, device=seq.device)
        if seq.dim() > 1:
            raise RuntimeError(f"{name}: input value can be a scalar only when boundaries tensor dimension "
                               f"is 1, but we got boundaries tensor dim({seq.dim()}) and input value's "
                               f"dim(0) numel(1)")
    if values.device != seq.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{seq.device} and {values.device}! (in searchsorted)")
    if seq.dim() > 1 and (values.dim() != seq.dim() or tuple(values.shape[:-1]) != tuple(seq.shape[:-1])):
        if values.dim() == 0:
            raise RuntimeError(f"{name}: input value can be a scalar only when boundaries tensor dimension "
                               f"is 1, but we got boundaries tensor dim({seq.dim()}) and input value's "
                               f"dim(0) numel(1)")
        raise RuntimeError(f"{name}: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                           f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(seq.shape)} and input value tensor {list(values.shape)}")
    if sorter is not None:
        if sorter.dtype is not D.int64:
            raise RuntimeError(f"{name}: sorter must be a tensor of long dtype but got dtype {sorter.dtype.word}")
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(f"{name}: boundary and sorter must have the same size, but got boundary tensor "
                               f"{list(seq.shape)}and got sorter tensor {list(sorter.shape)}")
    common = D.promote_types(seq.dtype, values.dtype)
    if common is D.bool:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    out = empty(values.shape, D.int32 if out_int32 else D.int64, seq.device)
    if values.numel() == 0:
        return out
    M = seq.shape[-1]
    if M == 0:
        E.fill(out, 0)
        return out
    shared = seq.dim() == 1
    K = values.shape[-1] if values.dim() else 1
    rows = values.numel() // K
    S = 1 if shared else rows
    acc = compute_class(common)
    seq2 = _flat2(seq, S, M)
    vals2 = _flat2(values, rows, K)
    srt2 = _flat2(sorter, S, M) if sorter is not None else None
    out2 = out._view((rows, K), (K, 1), 0)
    backend_for(seq.device.type).search_sorted(SearchSpec(right, acc, shared), out2, seq2, vals2, srt2)
    return out


@define("searchsorted", "other", out=True, dtypes="numeric", method=False, differentiable=False,
        doc="searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None) -> Tensor\n\n"
            "For each value of input, the index where it would be inserted in sorted_sequence's (last-dim) row "
            "to keep it sorted: the first position whose element is >= the value (right/side='right': >). "
            "sorted_sequence is 1-D or has input's leading dims; sorter: the indices that sort each row. "
            "NaN values go past the end. int64 (int32 with out_int32).")
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of "
                               "left while right was True")
        right = side == "right"
    return search_rows(sorted_sequence, input, out_int32, right, sorter)


@define("bucketize", "other", out=True, method=False, differentiable=False,
        doc="bucketize(input, boundaries, *, out_int32=False, right=False) -> Tensor\n\n"
            "The bucket of each element of input among the sorted 1-D boundaries: "
            "searchsorted(boundaries, input, right=right).")
def bucketize(input, boundaries, *, out_int32=False, right=False):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return search_rows(boundaries, input, out_int32, right, None)
