"""torch.nn.utils: gradient clipping, parameter <-> vector conversion, nn.utils.rnn, and
parametrize/parametrizations (weight_norm, spectral_norm)."""

from . import rnn
from . import parametrize, parametrizations
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from ..._refused import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("nn.utils", "torchweb.nn.utils")
