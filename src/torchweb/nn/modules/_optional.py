"""Parameters a layer may go without (bias=False, affine=False): registered as None then, as
PyTorch does, so that state_dict, repr and `.bias is None` say so. Linear, Bilinear, the
convolutions and the normalization layers make theirs here."""

from ... import _creation
from .. import init
from ..parameter import Parameter


def optional_parameter(module, name, present, shape, factory_kwargs):
    """module.<name>: an uninitialized Parameter of shape when present, else None."""
    if present:
        setattr(module, name, Parameter(_creation.empty(shape, **factory_kwargs)))
    else:
        module.register_parameter(name, None)


def affine_parameters(module, shape, affine, bias, factory_kwargs):
    """A normalization layer's weight and bias (the bias only with the weight)."""
    optional_parameter(module, "weight", affine, shape, factory_kwargs)
    optional_parameter(module, "bias", affine and bias, shape, factory_kwargs)


def reset_affine(module):
    """weight 1 and bias 0, those that exist."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)
