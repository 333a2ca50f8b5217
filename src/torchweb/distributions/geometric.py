"""Geometric(probs | logits): the number of failures before the first success."""

import torchweb as torch
import torchweb.nn.functional as F

from . import constraints
from .binary_params import BinaryProbs
from .distribution import Distribution, expanded, scalar_batch
from .utils import _standard_uniform, broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryProbs, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._set_probs_or_logits(probs, logits)
        super().__init__(scalar_batch(probs if probs is not None else logits, self._param), validate_args=validate_args)
        if self._validate_args and probs is not None:
            valid = self.probs > 0
            if not bool(valid.all()):
                raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                                 f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive "
                                 f"but found invalid values:\n{self.probs[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return self._expanded_param(expanded(self, Geometric, batch_shape, _instance, ("probs", "logits")))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=torch.Size()):
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = _standard_uniform(self._extended_shape(sample_shape), self.probs.dtype, self.probs.device)
            return (u.clamp(min=tiny).log() / (-self.probs).log1p()).floor()  # inverse CDF

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = torch.where((probs == 1) & (value == 0), torch.zeros_like(probs), probs)  # 0 * log(0) = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
