"""torch.nn.utils: gradient clipping, parameter <-> vector conversion, nn.utils.rnn,
parametrize/parametrizations (weight_norm, spectral_norm), the old hook forms of weight_norm
and spectral_norm, conv/linear + batch norm fusion, pruning, functional_call and skip_init."""

from . import rnn
from . import parametrize, parametrizations
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm
from . import fusion, memory_format  # noqa: E402
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: E402
from .init import skip_init  # noqa: E402
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format  # noqa: E402
from . import stateless  # noqa: E402


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from ..._refused import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("nn.utils", "torchweb.nn.utils")
