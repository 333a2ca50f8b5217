"""The torch.* function namespace: every op registered in ops/registry.py under its names, plus
a few helpers that are not ops."""

from . import _dtype as D
from .ops import activation, join, linalg, pointwise_api, reduction, shape  # noqa: F401  (they register)
from .ops import conv, grid_sample, interpolate, padding, pooling  # noqa: F401,E402  (conv, pooling, padding, sampling register)
from .ops.composite import dropout, embedding, loss, normalization  # noqa: F401  (they register)
from .ops import math_api  # noqa: F401,E402  (registers)
from .ops.composite import activations  # noqa: F401,E402  (registers)
from .ops.composite import losses_more  # noqa: F401,E402  (triplet_margin_with_distance_loss, linear_cross_entropy register)
from .ops import layout  # noqa: F401,E402  (registers)
from .ops import quantized_linear, packed_embedding  # noqa: F401,E402  (int8_weight_linear, packed_embedding register)
from .ops import scan, sorting  # noqa: F401,E402  (scans, sorting register)
from .ops import index_ops, indexing  # noqa: F401,E402  (gather, scatter, masks, index_put register)
from .ops import attention  # noqa: F401,E402  (scaled_dot_product_attention registers)
from .ops import counting, search  # noqa: F401,E402  (unique, bincount, histc, searchsorted register)
from .ops import einsum, linalg_more  # noqa: F401,E402  (einsum, diag, cross, cdist, ... register)
from .ops import pdist, conv_tbc  # noqa: F401,E402  (register)
from .ops import special_ops  # noqa: F401,E402  (polygamma, mvlgamma register)
from .ops.composite import ctc  # noqa: F401,E402  (ctc_loss registers)
from .ops.composite import aten_forms  # noqa: F401,E402  (torch.convolution, grid_sampler, ... register)
from .ops import random_ops  # noqa: F401,E402  (multinomial, bernoulli, normal register)
from .ops import samplers  # noqa: F401,E402  (poisson, binomial register)
from .ops import real_complex  # noqa: F401,E402  (conj, real, imag, angle, adjoint register)
from .ops import linalg_torch_forms  # noqa: F401,E402  (det, inverse, svd, qr, ... register)
from .ops import linalg_lowrank  # noqa: F401,E402  (svd_lowrank, pca_lowrank register)
# the torch.* math long tail (issue 18): statistics, windows, index math, scatters, number parts, ...
from .ops.composite import (statistics, quantiles, differences, norms, windows, indices,  # noqa: F401,E402
                            scatter_views, sets, number_parts, index_reduce, integration, matrix_builders,
                            pad_nd, predicates, splits, view_copies, embedding_bag_torch, histogramdd,
                            numeric_gradient)
from .ops.registry import torch_names

globals().update(torch_names())
from . import _creation_more, _inplace_functions  # noqa: E402
from ._inplace_functions import *  # noqa: F401,F403,E402  (torch.celu_, torch.fill_, ...: not op entries)
from ._creation_more import *  # noqa: F401,F403,E402  (scalar_tensor, range, frombuffer, asarray, ...)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.dtype.is_floating_point


def result_type(tensor=None, other=None, *, scalar=None, scalar1=None, scalar2=None):
    """torch.result_type(tensor, other): the dtype an op on the two would give (PyTorch's
    overloads name a number operand scalar, or scalar1 and scalar2)."""
    operands = [v for v in (scalar, tensor, other, scalar1, scalar2) if v is not None]
    if len(operands) != 2:
        raise TypeError("result_type() takes exactly two operands (tensor, other)")
    return D.result_type(*operands)


def can_cast(from_, to):
    return from_.category <= to.category


__all__ = (sorted(torch_names()) + _inplace_functions.__all__ + _creation_more.__all__
           + ["numel", "is_floating_point", "result_type", "can_cast"])
