"""Multinomial(total_count, probs | logits): counts of total_count Categorical draws; past
ONE_HOT_MAX one-hot entries, counted category by category with binomial draws instead."""

import torchweb as torch
import torchweb.nn.functional as F

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .categorical_wrapper import WrapsCategorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]

ONE_HOT_MAX = 1 << 22   # draws x categories (32 MB of int64) past which K - 1 binomial draws are cheaper


class Multinomial(WrapsCategorical, Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_categorical(Multinomial, batch_shape, _instance)
        new.total_count = self.total_count
        new._binomial = self._binomial.expand(tuple(batch_shape) + tuple(self.event_shape))
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=torch.Size()):
        sample_shape = torch.Size(sample_shape)
        shape = self._extended_shape(sample_shape)
        if self.total_count * shape.numel() > ONE_HOT_MAX:
            return self._sample_by_binomials(shape)
        draws = self._categorical.sample(torch.Size((self.total_count,) + tuple(sample_shape)))
        counts = F.one_hot(draws, self._categorical._num_events).sum(0)
        return counts.reshape(shape).to(self.probs.dtype)

    def _sample_by_binomials(self, shape):
        """Count k ~ Binomial(the draws left, p_k / the mass of categories k and after), for
        k < K - 1; the last takes what is left (the same law as counting categorical draws)."""
        with torch.no_grad():
            probs = self.probs.detach().expand(shape).float()
            tail = probs.flip(-1).cumsum(-1).flip(-1)
            share = torch.where(tail > 0, probs / tail, torch.zeros_like(probs)).clamp(max=1)
            left = torch.full(tuple(shape[:-1]), float(self.total_count), device=probs.device)
            counts = []
            for k in range(shape[-1] - 1):
                counts.append(torch.binomial(left, share[..., k]))
                left = left - counts[-1]
            return torch.stack(counts + [left], -1).to(self.probs.dtype)

    def entropy(self):
        n = torch.tensor(float(self.total_count), dtype=self.probs.dtype, device=self.probs.device)
        term1 = n * self._categorical.entropy() - torch.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = torch.exp(self._binomial.log_prob(support))
        term2 = (binomial_probs * torch.lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = torch.where((value == 0) & (logits == float("-inf")), torch.zeros_like(logits), logits)
        log_factorial_n = torch.lgamma(value.sum(-1) + 1)
        log_factorial_xs = torch.lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
