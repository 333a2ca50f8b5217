"""Laplace(loc, scale)."""

import torchweb as torch

from .distribution import Distribution, expanded
from .loc_scale import LocScale
from .utils import _standard_uniform

__all__ = ["Laplace"]


class Laplace(LocScale, Distribution):
    def expand(self, batch_shape, _instance=None):
        return expanded(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=torch.Size()):
        eps = torch.finfo(self.loc.dtype).eps
        u = _standard_uniform(self._extended_shape(sample_shape), self.loc.dtype, self.loc.device)
        u = u * (2 - eps) + (eps - 1)  # uniform on [eps - 1, 1): log1p(-|u|) stays finite
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * torch.expm1(-d.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + torch.log(2 * self.scale)
