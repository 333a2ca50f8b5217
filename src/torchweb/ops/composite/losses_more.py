"""Functional losses that the loss modules need beyond ops/composite/loss.py, written from
registered ops so their gradients come for free: triplet_margin_with_distance_loss (any callable
distance) and linear_cross_entropy (PyTorch 2.13's linear + cross_entropy, the reference path)."""

import math

from ..elementwise import call
from ..registry import define
from . import reduce_loss, reduction_name
from .. import linalg as L, shape as S
from .loss import cross_entropy, pairwise_distance


@define("triplet_margin_with_distance_loss", "loss", method=False, torch=False, functional=True,
        doc="triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, "
            "margin=1.0, swap=False, reduction='mean') -> Tensor\n\n"
            "max(0, d(anchor, positive) - d(anchor, negative) + margin) with d = distance_function "
            "(pairwise_distance by default); swap uses min(d(a, n), d(p, n)).")
def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = call("minimum", dist_neg, distance_function(positive, negative))
    return reduce_loss(call("clamp_min", dist_pos - dist_neg + margin, 0.0), reduction)


@define("linear_cross_entropy", "loss", method=False, torch=False, functional=True,
        doc="linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, "
            "reduction='mean', ignore_index=None, label_smoothing=0.0, options=None) -> Tensor\n\n"
            "cross_entropy(linear(input, linear_weight, linear_bias), target) with the logits shaped "
            "(*batch, C, *out_features) from linear_weight (C, *out_features, in_features). options "
            "(PyTorch's chunking strategy, a memory optimization) is accepted and the reference "
            "computation is used.")
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, "
                           f"got {tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
                           f"requires batched input, (N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if out_features:
        rows = math.prod(out_features) * num_classes
        linear_weight = S.reshape(linear_weight, (rows, in_features))
        if linear_bias is not None:
            linear_bias = S.reshape(linear_bias, (rows,))
    logits = L.linear(input, linear_weight, linear_bias)
    logits = S.reshape(logits, logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction_name(reduction),
                         ignore_index=ignore_index, label_smoothing=label_smoothing)
