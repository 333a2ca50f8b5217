"""skip_init: a module built without paying for its initialization, when the caller initializes
it itself. PyTorch builds it on the meta device and calls to_empty; torchweb has no meta device,
so the module is built on the device asked for (torchweb's default device when none is given,
where PyTorch's is cpu): its values are the constructor's, which the contract (values
unspecified) allows."""

import inspect
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs), parameters and buffers to be initialized by the caller;
    module_cls must take a `device` argument."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
