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
from .ops import scan, sorting  # noqa: F401,E402  (scans, sorting register)
from .ops import index_ops, indexing  # noqa: F401,E402  (gather, scatter, masks, index_put register)
from .ops import attention  # noqa: F401,E402  (scaled_dot_product_attention registers)
from .ops import counting, search  # noqa: F401,E402  (unique, bincount, histc, searchsorted register)
from .ops import einsum, linalg_more  # noqa: F401,E402  (einsum, diag, cross, cdist, ... register)
from .ops import special_ops  # noqa: F401,E402  (polygamma, mvlgamma register)
from .ops.composite import ctc  # noqa: F401,E402  (ctc_loss registers)
from .ops import random_ops  # noqa: F401,E402  (multinomial, bernoulli, normal register)
from .ops.composite import statistics, windows  # noqa: F401,E402  (nansum, quantile, cov, diff, *_window register)
from .ops.composite import indices, scatter_views, sets  # noqa: F401,E402  (tril_indices, *_scatter, isin register)
from .ops.composite import number_parts  # noqa: F401,E402  (lcm, frexp, ldexp register)
from .ops.composite import index_reduce, integration, matrix_builders  # noqa: F401,E402  (index_reduce, trapezoid, vander register)
from .ops.composite import pad_nd, predicates, splits, view_copies  # noqa: F401,E402  (constant_pad_nd, is_*, *split, *_copy register)
from .ops.composite import embedding_bag_torch, histogramdd  # noqa: F401,E402  (register)
from .ops.registry import torch_names

globals().update(torch_names())
from ._inplace_functions import *  # noqa: F401,F403,E402  (torch.celu_, torch.fill_, ...: not op entries)
from . import _inplace_functions  # noqa: E402
from ._creation_more import *  # noqa: F401,F403,E402  (scalar_tensor, range, frombuffer, asarray, ...)
from . import _creation_more  # noqa: E402


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.dtype.is_floating_point


def result_type(tensor1, tensor2):
    return D.result_type(tensor1, tensor2)


def can_cast(from_, to):
    return from_.category <= to.category


__all__ = sorted(torch_names()) + _inplace_functions.__all__ + _creation_more.__all__ + ["numel", "is_floating_point", "result_type", "can_cast"]
