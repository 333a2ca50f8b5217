"""Dropout, Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout (PyTorch's nn/modules/dropout.py):
active in training mode, the identity in eval mode, over the functional forms."""

from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    """The dropout modules differ only in their functional form (_fn) and whether it takes
    inplace (the alpha dropouts' modules don't pass it, as PyTorch's)."""

    __constants__ = ["p", "inplace"]
    _fn = None
    _passes_inplace = True

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        fn = getattr(F, self._fn)
        if self._passes_inplace:
            return fn(input, self.p, self.training, self.inplace)
        return fn(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


# name: (its functional form in nn.functional, whether that takes inplace, docstring)
_FORMS = {
    "Dropout": ("dropout", True, "Zeroes each element with probability p in training, scaling the rest by 1/(1-p)."),
    "Dropout1d": ("dropout1d", True, "Zeroes whole channels of (N, C, L) or (C, L) input with probability p."),
    "Dropout2d": ("dropout2d", True, "Zeroes whole channels of (N, C, H, W) or (C, H, W) input with probability p."),
    "Dropout3d": ("dropout3d", True, "Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input, probability p."),
    "AlphaDropout": ("alpha_dropout", False, "Dropout that keeps a SELU network's mean and variance (dropped values "
                                             "set to SELU's negative saturation, then an affine correction)."),
    "FeatureAlphaDropout": ("feature_alpha_dropout", False, "AlphaDropout of whole channels."),
}

Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout = (
    type(name, (_DropoutNd,), {"__module__": "torchweb.nn", "__doc__": doc, "_fn": fn,
                               "_passes_inplace": inplace})
    for name, (fn, inplace, doc) in _FORMS.items())
