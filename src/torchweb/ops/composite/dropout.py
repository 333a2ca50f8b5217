"""Dropout: a Bernoulli(1 - p) mask from torchweb's seeded Philox streams (_random.py, the
same numbers on the cpu and webgpu devices for one seed), multiplied in, so the gradient is the
mask's. Feature forms draw one mask entry per (sample, channel) and broadcast it over the
spatial dims. The alpha forms keep SELU's mean and variance, as PyTorch's dropout_impl."""

import warnings

from ... import _dtype as D, _random
from ..operands import empty
from ..registry import define

_SELU_ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, feature):
    """A float mask of ones with probability 1 - p: input's shape, or (N, C, 1, ...) for the
    feature forms."""
    shape = tuple(input.shape)
    if feature:
        shape = shape[:2] + (1,) * (len(shape) - 2)
    keep = empty(shape, D.bool, input.device)
    _random.fill(keep, "bernoulli", 1.0 - p, 0.0)
    return keep.to(input.dtype)


def dropout_impl(input, p, train, inplace, feature=False, alpha=False):
    if p == 0 or not train or input.numel() == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        zero = input * 0.0 if not inplace else input.mul_(0.0)
        return zero
    noise = _noise(input, p, feature)
    if alpha:
        a = 1.0 / ((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p)) ** 0.5
        b = (noise - 1.0) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        noise = noise * a
        if inplace:
            return input.mul_(noise).add_(b)
        return input * noise + b
    noise = noise / (1.0 - p)
    return input.mul_(noise) if inplace else input * noise


@define("dropout", "other", method=False, torch=False, functional=True, key="F.dropout",
        doc="dropout(input, p=0.5, training=True, inplace=False) -> Tensor\n\n"
            "Each element zeroed with probability p (seeded by torch.manual_seed), the rest scaled "
            "by 1 / (1 - p); the identity when not training.")
def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return dropout_impl(input, p, training, inplace)


@define("dropout", "other", method=False,
        doc="dropout(input, p, train) -> Tensor\n\ntorch.nn.functional.dropout with ATen's arguments.")
def dropout_aten(input, p, train):
    return dropout_impl(input, p, train, False)


def _feature_dropout(input, p, training, inplace, name, dims, batched_dim, msg_extra):
    _check_p(p)
    d = input.dim()
    if d not in dims:
        raise RuntimeError(f"{name}: Expected {dims[0]}D or {dims[1]}D input, but received a {d}D input. "
                           f"{msg_extra}")
    return _channel_dropout(input, p, training, inplace, d != batched_dim)


def _channel_dropout(input, p, training, inplace, unbatched):
    """Whole channels dropped; an unbatched input as a batch of one sample."""
    if unbatched:
        out = dropout_impl(input.unsqueeze(0), p, training, inplace, feature=True)
        return input if inplace else out.squeeze(0)
    return dropout_impl(input, p, training, inplace, feature=True)


@define("dropout1d", "other", method=False, torch=False, functional=True,
        doc="dropout1d(input, p=0.5, training=True, inplace=False) -> Tensor\n\n"
            "Whole channels of input (N, C, L) or (C, L) zeroed with probability p, the rest scaled "
            "by 1 / (1 - p).")
def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, "dropout1d", (2, 3), 3,
                            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
                            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")


def _spatial_rank(name, r, input, p):
    """input's rank, after the checks dropout2d and dropout3d share (r: their spatial dims)."""
    _check_p(p)
    d = input.dim()
    if d not in (r + 1, r + 2):
        warnings.warn(f"{name}: Received a {d}-D input to {name}, which is deprecated and will result in "
                      "an error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with "
                      f"{r} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. {r + 1}D "
                      f"or {r + 2}D inputs).")
    return d


@define("dropout2d", "other", method=False, torch=False, functional=True,
        doc="dropout2d(input, p=0.5, training=True, inplace=False) -> Tensor\n\n"
            "Whole channels of input (N, C, H, W) zeroed with probability p, the rest scaled by "
            "1 / (1 - p).")
def dropout2d(input, p=0.5, training=True, inplace=False):
    d = _spatial_rank("dropout2d", 2, input, p)
    if d == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a "
                      "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
                      "please switch to using dropout1d instead.")
    return dropout_impl(input, p, training, inplace, feature=True)


@define("dropout3d", "other", method=False, torch=False, functional=True,
        doc="dropout3d(input, p=0.5, training=True, inplace=False) -> Tensor\n\n"
            "Whole channels of input (N, C, D, H, W) or (C, D, H, W) zeroed with probability p, the "
            "rest scaled by 1 / (1 - p).")
def dropout3d(input, p=0.5, training=True, inplace=False):
    d = _spatial_rank("dropout3d", 3, input, p)
    return _channel_dropout(input, p, training, inplace, d == 4)


@define("alpha_dropout", "other", method=False, torch=False, functional=True, key="F.alpha_dropout",
        doc="alpha_dropout(input, p=0.5, training=False, inplace=False) -> Tensor\n\n"
            "Dropout for SELU networks: dropped elements set to SELU's negative saturation, then an "
            "affine map that keeps the mean and variance.")
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return dropout_impl(input, p, training, inplace, alpha=True)


@define("alpha_dropout", "other", method=False,
        doc="alpha_dropout(input, p, train) -> Tensor\n\ntorch.nn.functional.alpha_dropout with ATen's arguments.")
def alpha_dropout_aten(input, p, train):
    return dropout_impl(input, p, train, False, alpha=True)


@define("feature_alpha_dropout", "other", method=False, torch=False, functional=True,
        key="F.feature_alpha_dropout",
        doc="feature_alpha_dropout(input, p=0.5, training=False, inplace=False) -> Tensor\n\n"
            "alpha_dropout of whole channels of input (N, C, *).")
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return dropout_impl(input, p, training, inplace, feature=True, alpha=True)


@define("feature_alpha_dropout", "other", method=False,
        doc="feature_alpha_dropout(input, p, train) -> Tensor\n\n"
            "torch.nn.functional.feature_alpha_dropout with ATen's arguments.")
def feature_alpha_dropout_aten(input, p, train):
    return dropout_impl(input, p, train, False, feature=True, alpha=True)
