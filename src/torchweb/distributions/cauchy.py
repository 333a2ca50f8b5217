"""Cauchy(loc, scale)."""

import math

import torchweb as torch

from .distribution import Distribution, expanded
from .loc_scale import LocScale
from .utils import _standard_uniform

__all__ = ["Cauchy"]


class Cauchy(LocScale, Distribution):
    def expand(self, batch_shape, _instance=None):
        return expanded(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return torch.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype, device=self.loc.device)

    @property
    def variance(self):
        return torch.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=torch.Size()):
        u = _standard_uniform(self._extended_shape(sample_shape), self.loc.dtype, self.loc.device)
        return self.loc + torch.tan(math.pi * (u - 0.5)) * self.scale  # inverse CDF

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
