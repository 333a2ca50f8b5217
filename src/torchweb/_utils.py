"""torch._utils: the private helpers that widely copied model code imports (improved-diffusion's
fp16_util, apex-style master weights): flattening a list of tensors into one and back."""

from .ops.join import cat


def _flatten_dense_tensors(tensors):
    """One 1-D tensor holding the given tensors' elements in order."""
    return cat([t.contiguous().view(-1) for t in tensors])


def _unflatten_dense_tensors(flat, tensors):
    """Views of flat shaped like each of tensors (the inverse of _flatten_dense_tensors)."""
    outputs, offset = [], 0
    for t in tensors:
        n = t.numel()
        outputs.append(flat.narrow(0, offset, n).view_as(t))
        offset += n
    return tuple(outputs)
