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
globals().pop("utils", None)   # the star import's nn.modules.utils: nn.utils is torchweb/nn/utils/


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from .._refused import module_getattr as _module_getattr  # noqa: E402
# nn.utils and the layers nn.modules defers load on first use (torchweb/_deferred.py)
from .._deferred import deferred as _deferred  # noqa: E402
from .modules import _DEFERRED as _DEFERRED_LAYERS  # noqa: E402
__getattr__, __dir__ = _deferred(__name__, globals(), {
    "utils": ".utils", **{name: ".modules:" + name for name in _DEFERRED_LAYERS if name[0].isupper()}},
    fallback=_module_getattr("nn", "torchweb.nn"))
