"""Mixins of the families centered on `loc`: their mean and mode, and the loc / scale
parameters of Normal, Laplace and Cauchy."""

import torchweb as torch

from . import constraints
from .utils import broadcast_all


class CenteredOnLoc:
    """mean and mode are `loc`."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class LocScale(CenteredOnLoc):
    """Parameters loc (real) and scale (positive), broadcast together; support the real line."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = not torch.is_tensor(loc) and not torch.is_tensor(scale)
        super().__init__(torch.Size() if scalar else self.loc.size(), validate_args=validate_args)
