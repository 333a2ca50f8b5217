"""GeneralizedPareto(loc, scale, concentration), drawn by its inverse CDF (the concentration-0
limit, the exponential, where concentration is 0)."""

import torchweb as torch

from . import constraints
from .distribution import Distribution, expanded
from .loc_scale import CenteredOnLoc
from .utils import _standard_uniform, broadcast_all

__all__ = ["GeneralizedPareto"]

_NAN, _INF = float("nan"), float("inf")


class GeneralizedPareto(CenteredOnLoc, Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = not any(torch.is_tensor(v) for v in (loc, scale, concentration))
        super().__init__(torch.Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded(self, GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def _safe_concentration(self):
        """(concentration == 0 (within isclose), concentration with 1 there)."""
        eq_zero = torch.isclose(self.concentration, torch.zeros_like(self.concentration))
        return eq_zero, torch.where(eq_zero, torch.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=torch.Size()):
        return self.icdf(_standard_uniform(self._extended_shape(sample_shape), self.loc.dtype, self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + torch.ones_like(z)
        where_nonzero = torch.where(y == 0, y, y * torch.log1p(safe * z))
        return -self.scale.log() - torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe_concentration()
        return torch.where(eq_zero, -z, -torch.log1p(safe * z) / safe)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe = self._safe_concentration()
        logu = torch.log1p(-value)
        where_nonzero = self.loc + self.scale / safe * torch.expm1(-safe * logu)
        return torch.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe = torch.where(valid, self.concentration, torch.full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - safe)
        return torch.where(valid, result, torch.full_like(result, _NAN))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe = torch.where(valid, self.concentration, torch.full_like(self.concentration, 0.25))
        result = self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return torch.where(valid, result, torch.full_like(result, _NAN))

    def entropy(self):
        return (torch.log(self.scale) + self.concentration + 1).expand(self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torch.where(self.concentration < 0, lower - self.scale / self.concentration,
                            torch.full_like(lower, _INF))
        return constraints.interval(lower, upper)
