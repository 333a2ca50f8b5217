"""torch.nn. So far its functional part; modules, init and parameters come next."""

from . import functional
