"""NegativeBinomial(total_count, probs | logits): failures before total_count successes."""

import torchweb as torch
import torchweb.nn.functional as F

from . import constraints
from .binary_params import BinaryProbs
from .distribution import Distribution, expanded
from .gamma import Gamma
from .poisson import Poisson
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbs, Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (self.total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded_param(expanded(self, NegativeBinomial, batch_shape, _instance,
                                             ("total_count", "probs", "logits")))

    @property
    def mean(self):
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / torch.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=torch.Size()):
        """A Poisson draw at a Gamma-drawn rate."""
        with torch.no_grad():
            return Poisson(self._gamma.sample(sample_shape=sample_shape), validate_args=False).sample()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = (-torch.lgamma(self.total_count + value) + torch.lgamma(1.0 + value)
                             + torch.lgamma(self.total_count))
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
