"""Binomial(total_count, probs | logits)."""

import torchweb as torch

from . import constraints
from .binary_params import BinaryProbs
from .distribution import Distribution, expanded

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0), with the gradient 0.5 at 0 as PyTorch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryProbs, Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (self.total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded_param(expanded(self, Binomial, batch_shape, _instance, ("total_count", "probs", "logits")))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():   # (the backend's rejection sampler: ops/samplers.py)
            return torch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    @staticmethod
    def _log_pmf(n, logits, k):
        # written with logits, stable for probs near 0 and 1
        normalize = n * _clamp_by_zero(logits) + n * torch.log1p(torch.exp(-torch.abs(logits))) - torch.lgamma(n + 1)
        return k * logits - torch.lgamma(k + 1) - torch.lgamma(n - k + 1) - normalize

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._log_pmf(self.total_count, self.logits, value)

    def _homogeneous_count(self, what):
        total = int(self.total_count.max())
        if not int(self.total_count.min()) == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = self._homogeneous_count("enumerate_support")
        values = torch.arange(1 + total, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
