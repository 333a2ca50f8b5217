"""The probs / logits pair of binary-event families (Bernoulli, Binomial, Geometric, ...): one
is given, the other computed on first read."""

from .distribution import probs_or_logits
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


class BinaryProbs:
    """Mixin: `probs` is P(event), `logits` its log-odds; `_param` is the one given."""

    def _set_probs_or_logits(self, probs, logits, *others):
        """Broadcasts the given one of probs / logits with `others` (returned, in that dtype)."""
        probs_or_logits(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        *others, param = broadcast_all(*others, value)
        setattr(self, name, param)
        self._param = param
        return [o.to(param.dtype) for o in others]

    def _expanded_param(self, new):
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)
