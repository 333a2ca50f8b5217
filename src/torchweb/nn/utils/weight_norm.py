"""The old hook form of weight normalization (torch.nn.utils.weight_norm, deprecated by PyTorch
in favour of parametrizations.weight_norm but still common in checkpoints and vocoders):
<name>_g and <name>_v parameters, and a forward pre-hook that recomputes <name> from them."""

import warnings

from ..parameter import Parameter, UninitializedParameter
from ._hook_removal import remove_forward_pre_hook
from .parametrizations import _norm_except_dim

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook: module.<name> = g * v / ||v|| (norm over every dim but dim)."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure "
                             "to run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replaces parameter <name> by <name>_g (magnitude) and <name>_v (direction), recombined
    before every forward; dim=None normalizes over the whole tensor. Deprecated by PyTorch:
    parametrizations.weight_norm loads the same state_dict."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Folds <name>_g and <name>_v back into one parameter <name>."""
    if remove_forward_pre_hook(module, lambda h: isinstance(h, WeightNorm) and h.name == name):
        return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
