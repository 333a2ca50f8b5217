"""LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm (PyTorch's nn/modules/normalization.py):
weight 1 and bias 0 at init, over the functional forms. CrossMapLRN2d is left out (PyTorch's
legacy Lua window and its hand-written backward)."""

import numbers

from .. import functional as F
from .. import init
from ._optional import affine_parameters, optional_parameter, reset_affine
from .module import Module

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]


class LocalResponseNorm(Module):
    """Local response normalization across channels: x / (k + alpha/size * sum of squares over
    `size` neighbouring channels) ** beta."""

    __module__ = "torchweb.nn"
    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


def _last_dims(module, normalized_shape, eps, elementwise_affine):
    """The arguments LayerNorm and RMSNorm share: the trailing dims they normalize (an int: one)."""
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    module.normalized_shape = tuple(normalized_shape)
    module.eps = eps
    module.elementwise_affine = elementwise_affine


class _AffineNorm(Module):
    """LayerNorm and GroupNorm: an optional weight (1 at reset) and bias (0), and an
    extra_repr from the template _REPR; they differ in their arguments and functional."""

    _REPR = ""

    def reset_parameters(self):
        reset_affine(self)

    def extra_repr(self):
        return self._REPR.format(**self.__dict__, use_bias=self.bias is not None)


class LayerNorm(_AffineNorm):
    """Layer normalization over the last len(normalized_shape) dims, with an optional elementwise
    affine (weight 1, bias 0 at init)."""

    __module__ = "torchweb.nn"
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    _REPR = "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, bias={use_bias}"

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        _last_dims(self, normalized_shape, eps, elementwise_affine)
        affine_parameters(self, self.normalized_shape, elementwise_affine, bias, factory_kwargs)
        self.reset_parameters()

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class GroupNorm(_AffineNorm):
    """Group normalization: channels split in num_groups groups, each normalized over its channels
    and spatial dims; per-channel affine (weight 1, bias 0 at init)."""

    __module__ = "torchweb.nn"
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]
    _REPR = "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}"

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        affine_parameters(self, num_channels, affine, bias, factory_kwargs)
        self.reset_parameters()

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


class RMSNorm(Module):
    """Root-mean-square normalization over the last len(normalized_shape) dims (eps None: the
    dtype's machine epsilon), with an optional elementwise weight (1 at init)."""

    __module__ = "torchweb.nn"
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        _last_dims(self, normalized_shape, eps, elementwise_affine)
        optional_parameter(self, "weight", elementwise_affine, self.normalized_shape, factory_kwargs)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)
