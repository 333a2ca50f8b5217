"""torch.nn: parameters, modules, init and the functional namespace."""

from . import functional
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import *  # noqa: F401,F403
from .modules import Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from . import init  # noqa: E402
from . import attention  # noqa: E402,F401  (torch.nn.attention: sdpa_kernel, SDPBackend)
from . import parallel  # noqa: E402,F401  (torch.nn.parallel: one device)
from .parallel import DataParallel  # noqa: E402,F401
from ._factory_kwargs import factory_kwargs  # noqa: E402,F401
from .utils import rnn as _rnn  # noqa: E402,F401
import sys as _sys  # noqa: E402
utils = _sys.modules[__name__ + ".utils"]  # nn.utils, not the nn.modules.utils the star import binds


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from .._refused import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("nn", "torchweb.nn")
