"""torch.embedding_bag: the ATen form of F.embedding_bag (weight first, mode as 0/1/2), which
returns PyTorch's bookkeeping beside the bags, as its CPU kernel fills it: offset2bag (the bag
of each index; empty for mode sum without padding_idx), bag_size (indices per bag without padding_idx; zeros for
sum) and max_indices (for max, the weight row of each maximum, 0 in empty bags; else
bag_size, or zeros for sum). The bags themselves are F.embedding_bag's."""

from ... import _dtype as D
from ..registry import define
from .embedding import embedding_bag as bags
from .. import reduction as R
from ..._creation import arange, ones, tensor, zeros
from ..join import cat
from ..pointwise_api import where
from ..reduction import argmax
from ..search import searchsorted

_MODES = {0: "sum", 1: "mean", 2: "max"}


@define("embedding_bag", "indexing", method=False, key="torch.embedding_bag",
        doc="embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, "
            "per_sample_weights=None, include_last_offset=False, padding_idx=None) -> (output, offset2bag, "
            "bag_size, max_indices)\n\nF.embedding_bag with mode 0 (sum), 1 (mean) or 2 (max), and PyTorch's "
            "CPU bookkeeping tensors.")
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    name = _MODES.get(mode)
    if name is None:
        raise RuntimeError("`mode` must be sum, mean, or max.")
    out = bags(indices, weight, offsets, None, 2, scale_grad_by_freq, name, sparse, per_sample_weights,
               include_last_offset, padding_idx)
    dev, n = weight.device, indices.numel()
    starts = offsets[:-1] if include_last_offset else offsets
    nbags = starts.shape[0]
    no_counts = zeros(nbags, dtype=D.int64, device=dev)
    pos = arange(n, device=dev)
    if name == "sum":      # (the kernel's fast path, taken without padding_idx, leaves offset2bag empty)
        bag = zeros(0, dtype=D.int64, device=dev) if padding_idx is None else \
            searchsorted(starts.to(D.int64).contiguous(), pos, right=True) - 1
        return out, bag, no_counts, no_counts.clone()
    bag = searchsorted(starts.to(D.int64).contiguous(), pos, right=True) - 1
    keep = indices != padding_idx if padding_idx is not None else ones(n, dtype=D.bool, device=dev)
    if padding_idx is not None and padding_idx < 0:
        keep = indices != weight.shape[0] + padding_idx
    ends = cat([starts[1:], tensor([n], device=dev)]).to(D.int64) if not include_last_offset \
        else offsets[1:].to(D.int64)
    member = (pos.unsqueeze(0) >= starts.to(D.int64).unsqueeze(1)) & (pos.unsqueeze(0) < ends.unsqueeze(1)) \
        & keep.unsqueeze(0)
    size = R.sum(member, 1)
    if name == "mean":
        return out, bag, size, size.clone()
    rows = weight.detach()[indices]
    masked = where(member.unsqueeze(2), rows.unsqueeze(0), float("-inf"))
    at = argmax(masked, 1) if n else zeros((nbags, weight.shape[1]), dtype=D.int64, device=dev)
    which = indices.to(D.int64)[at.reshape(-1)].reshape(at.shape) if n else at
    return out, bag, size, where(size.unsqueeze(1) > 0, which, 0)
