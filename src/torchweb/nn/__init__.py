"""torch.nn: parameters, modules, init and the functional namespace."""

from . import functional
from .parameter import Parameter, Buffer
