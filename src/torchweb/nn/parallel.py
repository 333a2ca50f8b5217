"""torch.nn.parallel on one device: a page has one GPU, so DataParallel and data_parallel run the
module as it is (what PyTorch does with a single device or none). Scripts import this module for
the multi-GPU branch they take only when several GPUs are present."""

from .modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids or [], output_device, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))


def __getattr__(name):
    if name in ("DistributedDataParallel", "replicate", "scatter", "gather", "parallel_apply"):
        raise AttributeError(f"torch.nn.parallel.{name} is not supported by torchweb: a page has one GPU "
                             "and no process group; use the module directly")
    raise AttributeError(f"module 'torch.nn.parallel' has no attribute '{name}'")
