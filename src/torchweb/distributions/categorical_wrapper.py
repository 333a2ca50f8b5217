"""A mixin of the distributions built over a Categorical (self._categorical): OneHotCategorical,
ExpRelaxedCategorical and Multinomial share its parameters and its expand."""

import torchweb as torch

from .distribution import Distribution
from .utils import delegate


class WrapsCategorical:

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    _param = delegate("_categorical")
    param_shape = delegate("_categorical")
    logits = delegate("_categorical")
    probs = delegate("_categorical")

    def _expand_categorical(self, cls, batch_shape, _instance):
        """For cls.expand: a copy over the Categorical expanded to batch_shape."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new
