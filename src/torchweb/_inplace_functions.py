"""torch.* in-place functions that are not an op entry's `inplace` (ops/registry.py TORCH_INPLACE
covers those; the dropouts are in ops/composite/aten_forms.py): PyTorch has them as
torch.<name>_ but not as Tensor.<name>_ (celu_, selu_, rrelu_, threshold_, embedding_renorm_),
or they are Tensor methods of the core (fill_, zero_, detach_). Each forwards to the one
definition."""

from .nn import functional as F
from .ops.composite.embedding import _renorm


def celu_(input, alpha=1.0):
    return F.celu_(input, alpha)


def selu_(input):
    return F.selu_(input)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu_(input, lower, upper, training)


def threshold_(input, threshold, value):
    return F.threshold_(input, threshold, value)


def fill_(input, value):
    return input.fill_(value)


def zero_(input):
    return input.zero_()


def detach_(input):
    return input.detach_()


def embedding_renorm_(input, indices, max_norm, norm_type):
    """The rows of input (an embedding weight) that indices name, scaled in place to norm <= max_norm."""
    if indices.numel():
        _renorm(input, indices.reshape(-1), max_norm, norm_type)
    return input


__all__ = ["celu_", "selu_", "rrelu_", "threshold_", "fill_", "zero_", "detach_", "embedding_renorm_"]
