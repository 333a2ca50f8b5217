"""DataParallel on one device: PyTorch replicates the module over device_ids and scatters the
batch; with no CUDA device it keeps the module and calls it (device_ids == []). torchweb has
one device, so that is what runs: the wrapper's forward is the module's, and its state_dict
keys carry the "module." prefix, so checkpoints saved from a DataParallel model load."""

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """module, run on its own device (device_ids, output_device and dim are accepted and unused:
    there is one device)."""

    __module__ = "torchweb.nn"

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        # as PyTorch's without a CUDA device: the module and no replicas (nor dim, output_device)
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """module(*inputs, **module_kwargs) on the one device (the functional DataParallel)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
