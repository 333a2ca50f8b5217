"""Poisson(rate)."""

import torchweb as torch

from . import constraints
from .discrete_sampling import sample_by_cdf_table
from .distribution import expanded, scalar_batch
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]

# the largest rate sample() draws (see discrete_sampling.py)
MAX_SAMPLED_RATE = 256.0


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(scalar_batch(rate, self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded(self, Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            rate = self.rate.expand(shape)
            top = float(rate.max()) if rate.numel() else 0.0
            if top > MAX_SAMPLED_RATE:
                raise NotImplementedError(
                    f"Poisson.sample: rates above {MAX_SAMPLED_RATE:g} are not sampled yet (got {top:g}); "
                    "torchweb draws by an inverse-CDF table, and a GPU sampler for large rates is "
                    "planned with issue 20")
            count = int(top + 12 * top ** 0.5 + 20)  # the table covers the mass beyond 12 sd
            k = torch.arange(count, dtype=rate.dtype, device=rate.device)
            log_pmf = k.xlogy(rate.unsqueeze(-1)) - rate.unsqueeze(-1) - (k + 1).lgamma()
            return sample_by_cdf_table(log_pmf)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (torch.log(self.rate),)

    def _log_normalizer(self, x):
        return torch.exp(x)
