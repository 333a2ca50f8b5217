"""torch.nn: parameters, modules, init and the functional namespace."""

from . import functional
from .parameter import Parameter, Buffer
from . import init, utils
from .modules import *  # noqa: F401,F403
from .modules import Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
