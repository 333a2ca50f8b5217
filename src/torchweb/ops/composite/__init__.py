"""Composite ops: normalization, embedding, dropout and losses written from primitives
(elementwise ops, reductions, softmax, matmul, views), so their gradients come from the
primitives' backward rules. Shared helpers live here."""

from ..._size import shape_str, wrap_dim

# PyTorch's Reduction enum (the torch.* loss forms take it as an int)
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def reduction_name(reduction, size_average=None, reduce=None):
    """The reduction string from the new argument, the legacy size_average/reduce pair or the
    torch.* forms' int; ValueError for an unknown string, as PyTorch."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return ("mean" if size_average else "sum") if reduce else "none"
    if isinstance(reduction, int) and not isinstance(reduction, bool):
        return _REDUCTIONS[reduction]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_loss(loss, reduction):
    """loss reduced as `reduction` says ('none', 'mean' or 'sum')."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.mean()


def affine(y, weight, bias):
    """y * weight + bias, either left out when None (the normalizations' last step)."""
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def dims_from(x, start):
    """The dims of x from `start` on, as a tuple."""
    return tuple(range(start, x.dim()))


__all__ = ["reduction_name", "reduce_loss", "shape_str", "dims_from", "affine", "wrap_dim"]
