"""Losses written from primitives, so their gradients come from the primitives' rules.

Class-index targets (cross_entropy, nll_loss, multi_margin_loss) pick the target's entry with a
one-hot mask made by comparing the target with an arange along the class dim, summed over it:
no gather, and the gradient is the mask's. Each loss follows PyTorch's formula (ATen's Loss.cpp
and torch/nn/functional.py), including its clamps and epsilons, with reduction 'none', 'mean'
or 'sum' (and the legacy size_average/reduce pair; the torch.* forms take PyTorch's int enum).
Targets are range-checked on the host, as PyTorch's CPU kernels do (a readback on webgpu)."""

import math
import warnings

from ...backends import backend_for
from ... import _dtype as D
from ..._creation import arange, zeros, full as full_
from ...autograd import grad_mode
from ...autograd.function import Function
from ..activation import log_softmax
from ..index_ops import gather
from ..elementwise import call
from ..registry import define
from .. import linalg as L, reduction as R, shape as S
from . import reduce_loss, reduction_name, shape_str
from ..shape import broadcast_tensors
from .activations import logsigmoid


def _size(t):
    return "torch.Size([" + ", ".join(str(s) for s in t.shape) + "])"


def _log_sigmoid(x):
    """log(sigmoid(x)), stable, with PyTorch's gradient 1 - sigmoid(x) (at 0 too, where the
    composite min(x, 0) - log1p(exp(-|x|)) would give 1 instead of 0.5)."""
    return logsigmoid(x)


def _class_view(t, like):
    """A (C,) tensor viewed to broadcast along dim 1 of like (N, C, d1, ...)."""
    return S.reshape(t, (1, t.shape[0]) + (1,) * (like.dim() - 2)) if like.dim() >= 2 else t


def _onehot_mask(target, c, class_dim, dtype):
    """(target == class) along a new class dim at class_dim, as dtype."""
    classes = arange(c, device=target.device)
    shape = [1] * (target.dim() + 1)
    shape[class_dim] = c
    return call("eq", S.unsqueeze(target, class_dim), S.reshape(classes, tuple(shape))).to(dtype)


def _check_targets(target, c, ignore_index, message=None):
    """IndexError for a class index outside [0, C) (ignore_index aside), as PyTorch's CPU kernel
    (or RuntimeError(message) where PyTorch raises that). On the webgpu device the check runs on
    the GPU and raises at the next readback, as CUDA's device-side assert does: a loss call never
    waits for the GPU (and a call being captured by torch.compile may not)."""
    if target.numel() == 0:
        return
    if target.device.type == "webgpu":
        be = backend_for("webgpu")
        if message or be.capturing():   # a replay's targets are not this call's: no values named
            text = message or f"Target out of bounds (a class index outside [0, {c}))"
        else:
            def text():      # PyTorch's message names the first bad value: read when raised
                return _first_bad_target(target.tolist() if target.dim() else [target.item()], c, ignore_index)
        skip = ignore_index if ignore_index is not None and -2 ** 31 <= ignore_index < 2 ** 31 else None
        be.device_assert_range(target.contiguous(), 0, c, skip, "cross_entropy/nll_loss",
                               RuntimeError if message else IndexError, text)
        return
    bad = call("logical_or", target < 0, target >= c)
    if ignore_index is not None:
        bad = call("logical_and", bad, target != ignore_index)
    if bool(R.any(bad).item()):
        if message:
            raise RuntimeError(message)
        raise IndexError(_first_bad_target(target.tolist() if target.dim() else [target.item()], c, ignore_index))


def _first_bad_target(vals, c, ignore_index):
    """PyTorch's message for the first class index outside [0, c) in nested lists vals."""
    flat = []

    def walk(v):
        if isinstance(v, list):
            for u in v:
                walk(u)
        else:
            flat.append(v)
    walk(vals)
    first = next(v for v in flat if (v < 0 or v >= c) and v != ignore_index)
    return f"Target {first} is out of bounds."


def _nll(logp, target, weight, ignore_index, reduction):
    """nll_loss of log-probabilities logp (N, C, d...) or (C,) and class indices target."""
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.word}")
    unbatched = logp.dim() == 1
    if logp.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {logp.dim()})")
    if unbatched:
        if target.dim() != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    else:
        if target.dim() == 0 or logp.shape[0] != target.shape[0]:
            raise ValueError(f"Expected input batch_size ({logp.shape[0]}) to match target batch_size "
                             f"({target.shape[0] if target.dim() else 1}).")
        if logp.dim() == 2 and target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if logp.dim() > 2 and tuple(target.shape) != (logp.shape[0],) + tuple(logp.shape[2:]):
            raise RuntimeError(f"Expected target size {shape_str((logp.shape[0],) + tuple(logp.shape[2:]))}, "
                               f"got {shape_str(target.shape)}")
    c = logp.shape[0] if unbatched else logp.shape[1]
    if weight is not None and (weight.dim() != 1 or weight.shape[0] != c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {shape_str(weight.shape)}")
    _check_targets(target, c, ignore_index)
    class_dim = 0 if unbatched else 1
    # The target's log-probability gathered (as PyTorch's kernel reads it): no (N, C) one-hot
    # mask, which for a language model's vocabulary would be gigabytes, and no 0 * -inf = NaN
    # from the other classes. Ignored entries read class 0 and count exactly nothing.
    keep = target != ignore_index
    valid = keep.to(logp.dtype)
    safe = call("where", keep, target, 0)
    picked = call("where", keep, S.squeeze(gather(logp, class_dim, S.unsqueeze(safe, class_dim)), class_dim), 0.0)
    w = valid if weight is None else gather(weight, 0, S.reshape(safe, (-1,))).reshape(safe.shape) * valid
    loss = -(picked * w)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return R.sum(loss)
    return R.sum(loss) / R.sum(w)


def _classes(input):
    return input.shape[0] if input.dim() == 1 else input.shape[1]


@define("nll_loss", "loss", method=False, torch=False, functional=True,
        doc="nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, "
            "reduction='mean') -> Tensor\n\n"
            "-input[n, target[n], ...] (log-probabilities over dim 1), times weight[target]; "
            "ignore_index entries count nothing; 'mean' divides by the summed weights.")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = reduction_name(reduction, size_average, reduce)
    return _nll(input, target, weight, ignore_index, reduction)


@define("cross_entropy", "loss", method=False, torch=False, functional=True,
        doc="cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, "
            "reduction='mean', label_smoothing=0.0) -> Tensor\n\n"
            "nll_loss(log_softmax(input, 1), target) for class indices, or -sum(target * "
            "log_softmax(input, 1)) for class probabilities; label_smoothing mixes in the uniform "
            "distribution.")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    reduction = reduction_name(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    c = _classes(input)
    if target.dtype.is_floating_point:        # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {shape_str(input.shape)}, got {shape_str(target.shape)}")
        if weight is not None and (weight.dim() != 1 or weight.shape[0] != c):
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                               f"weight tensor of shape: {shape_str(weight.shape)}")
        logp = log_softmax(input, class_dim)
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * _class_view(weight, input)
        loss = -R.sum(prod, class_dim)
        if reduction == "mean":
            n = input.numel() // c if c else 0
            return R.sum(loss) / n if n else R.sum(loss) / 0.0
        return reduce_loss(loss, reduction)
    logp = log_softmax(input, class_dim)
    nll = _nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0:
        return nll
    valid = (target != ignore_index).to(input.dtype)
    lp = logp if weight is None else logp * _class_view(weight, input)
    smooth = -R.sum(lp, class_dim) * valid
    if reduction == "none":
        s = smooth
    elif reduction == "sum":
        s = R.sum(smooth)
    elif weight is not None:
        onehot = _onehot_mask(target, c, class_dim, input.dtype)
        s = R.sum(smooth) / R.sum(R.sum(onehot * _class_view(weight, input), class_dim) * valid)
    else:
        s = R.sum(smooth) / R.sum(valid)
    return nll * (1 - label_smoothing) + s * (label_smoothing / c)


def _pointwise_target_check(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({_size(target)}) that is different to the input size ({_size(input)}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have "
                      "the same size.", stacklevel=3)


def _elementwise_loss(name, doc, body):
    def fn(input, target, size_average=None, reduce=None, reduction="mean", **kw):
        _pointwise_target_check(input, target)
        red = reduction_name(reduction, size_average, reduce)
        return reduce_loss(body(input, target, **kw), red)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _mse(input, target):
    d = input - target
    return d * d


def _l1(input, target):
    return call("abs", input - target)


mse_loss = define("mse_loss", "loss", method=False, torch=False, functional=True,
                  doc="mse_loss(input, target, size_average=None, reduce=None, reduction='mean') -> Tensor\n\n"
                      "(input - target) ** 2, reduced.")(_elementwise_loss("mse_loss", "", _mse))
l1_loss = define("l1_loss", "loss", method=False, torch=False, functional=True,
                 doc="l1_loss(input, target, size_average=None, reduce=None, reduction='mean') -> Tensor\n\n"
                     "|input - target|, reduced.")(_elementwise_loss("l1_loss", "", _l1))


@define("smooth_l1_loss", "loss", dtypes="numeric", method=False, torch=False, functional=True,
        doc="smooth_l1_loss(input, target, size_average=None, reduce=None, reduction='mean', beta=1.0) -> Tensor\n\n"
            "0.5 * d ** 2 / beta where |d| < beta, else |d| - 0.5 * beta (d = input - target).")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _pointwise_target_check(input, target)
    red = reduction_name(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = call("abs", input - target)
    if beta == 0:
        return reduce_loss(d, red)
    loss = call("where", d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return reduce_loss(loss, red)


@define("huber_loss", "loss", dtypes="numeric", method=False, torch=False, functional=True,
        doc="huber_loss(input, target, reduction='mean', delta=1.0, weight=None) -> Tensor\n\n"
            "0.5 * d ** 2 where |d| < delta, else delta * (|d| - 0.5 * delta) (d = input - target).")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _pointwise_target_check(input, target)
    red = reduction_name(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = call("abs", input - target)
    loss = call("where", d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, red)


@define("binary_cross_entropy", "loss", method=False, torch=False, functional=True,
        doc="binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction='mean') "
            "-> Tensor\n\n"
            "-(target * log(input) + (1 - target) * log(1 - input)) * weight, each log clamped to "
            ">= -100 as PyTorch; input must lie in [0, 1].")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    red = reduction_name(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_size(target)}) that is different to the input size "
                         f"({_size(input)}) is deprecated. Please ensure they have the same size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.word} but expected {input.dtype.word}")
    if input.numel() and bool(R.any(call("logical_or", input < 0, input > 1)).item()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None:
        weight = weight.expand(*input.shape) if tuple(weight.shape) != tuple(input.shape) else weight
    loss = _BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, red)


class _BinaryCrossEntropy(Function):
    """Elementwise BCE with PyTorch's backward: (input - target) / max(input * (1 - input),
    1e-12) for input and log(1 - input) - log(input) for target, which the clamped logs of the
    forward would not give at 0 and 1."""
    _double_backward = True
    _backward_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        log_x = call("clamp_min", call("log", input), -100.0)
        log_1mx = call("clamp_min", call("log", 1.0 - input), -100.0)
        return -(target * log_x + (1.0 - target) * log_1mx)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        gx = g * (x - t) / call("clamp_min", x * (1.0 - x), 1e-12)
        gt = g * (call("log", 1.0 - x) - call("log", x)) if ctx.needs_input_grad[1] else None
        return gx, gt


def _bce_logits(input, target, weight, pos_weight, red):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size(target)}) must be the same as input size ({_size(input)})")
    ls = _log_sigmoid(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1.0) * target + 1.0
        loss = (1.0 - target) * input - log_weight * ls
    else:
        loss = (1.0 - target) * input - ls
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, red)


@define("binary_cross_entropy_with_logits", "loss", method=False, torch=False, functional=True,
        key="F.binary_cross_entropy_with_logits",
        doc="binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, "
            "reduction='mean', pos_weight=None) -> Tensor\n\n"
            "binary_cross_entropy of sigmoid(input), computed stably from the logits; pos_weight "
            "weighs the positive term.")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    return _bce_logits(input, target, weight, pos_weight, reduction_name(reduction, size_average, reduce))


@define("binary_cross_entropy_with_logits", "loss", method=False,
        doc="binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1) -> Tensor\n\n"
            "torch.nn.functional.binary_cross_entropy_with_logits with ATen's arguments.")
def binary_cross_entropy_with_logits_aten(input, target, weight=None, pos_weight=None, reduction=1):
    return _bce_logits(input, target, weight, pos_weight, reduction_name(reduction))


def _kl_div(input, target, red, log_target):
    if log_target:
        loss = call("exp", target) * (target - input)
    else:
        tlogt = call("where", target > 0, target * call("log", target), 0.0)
        loss = tlogt - target * input
    if red == "batchmean":
        s = R.sum(loss)
        return s / input.shape[0] if input.dim() else s
    return reduce_loss(loss, red)


@define("kl_div", "loss", dtypes="numeric", method=False, torch=False, functional=True, key="F.kl_div",
        doc="kl_div(input, target, size_average=None, reduce=None, reduction='mean', log_target=False) -> Tensor\n\n"
            "target * (log(target) - input) with input holding log-probabilities (target too with "
            "log_target); reduction 'batchmean' divides the sum by the batch size.")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        red = reduction_name(None, size_average, reduce)
    elif reduction == "batchmean":
        red = "batchmean"
    else:
        red = reduction_name(reduction)
        if red == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    return _kl_div(input, target, red, log_target)


@define("kl_div", "loss", dtypes="numeric", method=False,
        doc="kl_div(input, target, reduction=1, *, log_target=False) -> Tensor\n\n"
            "torch.nn.functional.kl_div with ATen's int reduction.")
def kl_div_aten(input, target, reduction=1, *, log_target=False):
    return _kl_div(input, target, reduction_name(reduction), log_target)


def _clamped_norm(x, dim, eps):
    """||x||_2 over dim (keepdim), raised to eps in value only: the gradient is the norm's, as
    PyTorch's clamp_min_ under no_grad leaves it."""
    n = R.norm(x, 2, dim, keepdim=True)
    with grad_mode.no_grad():
        shift = call("clamp_min", n, eps) - n
    return n + shift


@define("cosine_similarity", "loss", method=False, functional=True,
        doc="cosine_similarity(x1, x2, dim=1, eps=1e-08) -> Tensor\n\n"
            "sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) over dim, x1 and x2 broadcast.")
def cosine_similarity(x1, x2, dim=1, eps=1e-8, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    a, b = broadcast_tensors(x1, x2)
    d = dim + a.dim() if dim < 0 else dim
    if a.dim() == 0 or not 0 <= d < a.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(a.dim(), 1)}, "
                         f"{max(a.dim(), 1) - 1}], but got {dim})")
    return R.sum((a / _clamped_norm(a, d, eps)) * (b / _clamped_norm(b, d, eps)), d)


@define("pairwise_distance", "loss", dtypes="numeric", method=False, functional=True,
        doc="pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False) -> Tensor\n\n"
            "The p-norm of x1 - x2 + eps over the last dim.")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False, *, keepdims=None):
    keepdim = keepdim if keepdims is None else keepdims
    out_dim = max(x1.dim(), x2.dim())
    d = x1 - x2 + eps
    if out_dim == 0:
        return call("abs", d) if p != 0 else (d != 0).to(d.dtype)
    return R.norm(d, p, out_dim - 1, keepdim=keepdim)


def _cosine_embedding(input1, input2, target, margin, red):
    if input1.dim() != input2.dim() or tuple(input1.shape) != tuple(input2.shape):
        raise RuntimeError(f"cosine_embedding_loss: Input1 and Input2 must have the same shape, but got "
                           f"{shape_str(input1.shape)} and {shape_str(input2.shape)}")
    targ_dim = target.dim()
    if input1.dim() != targ_dim + 1:
        raise RuntimeError(f"{targ_dim}D target tensor expects {targ_dim + 1}D input tensors, but found inputs with "
                           f"sizes {shape_str(input1.shape)} and {shape_str(input2.shape)}.")
    d = 1 if input1.dim() == 2 else 0
    eps = 1e-12
    prod = R.sum(input1 * input2, d)
    m1 = R.sum(input1 * input1, d) + eps
    m2 = R.sum(input2 * input2, d) + eps
    cos = prod / call("sqrt", m1 * m2)
    pos = 1.0 - cos
    neg = call("clamp_min", cos - margin, 0.0)
    out = call("where", target == 1, pos, 0.0) + call("where", target == -1, neg, 0.0)
    return reduce_loss(out, red)


@define("cosine_embedding_loss", "loss", method=False, torch=False, functional=True, key="F.cosine_embedding_loss",
        doc="cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, "
            "reduction='mean') -> Tensor\n\n"
            "1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1.")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    return _cosine_embedding(input1, input2, target, margin, reduction_name(reduction, size_average, reduce))


@define("cosine_embedding_loss", "loss", method=False,
        doc="cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1) -> Tensor\n\n"
            "torch.nn.functional.cosine_embedding_loss with ATen's int reduction.")
def cosine_embedding_loss_aten(input1, input2, target, margin=0.0, reduction=1):
    return _cosine_embedding(input1, input2, target, margin, reduction_name(reduction))


def _margin_ranking(input1, input2, target, margin, red):
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size(input1)}, input2: {_size(input2)}, target: {_size(target)} ")
    return reduce_loss(call("clamp_min", -target * (input1 - input2) + margin, 0.0), red)


@define("margin_ranking_loss", "loss", method=False, torch=False, functional=True, key="F.margin_ranking_loss",
        doc="margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, "
            "reduction='mean') -> Tensor\n\nmax(0, -target * (input1 - input2) + margin).")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    return _margin_ranking(input1, input2, target, margin, reduction_name(reduction, size_average, reduce))


@define("margin_ranking_loss", "loss", method=False,
        doc="margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1) -> Tensor\n\n"
            "torch.nn.functional.margin_ranking_loss with ATen's int reduction.")
def margin_ranking_loss_aten(input1, input2, target, margin=0.0, reduction=1):
    return _margin_ranking(input1, input2, target, margin, reduction_name(reduction))


def _triplet(anchor, positive, negative, margin, p, eps, swap, red):
    a, pdim, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pdim == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pdim}D, and negative {n}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = call("minimum", d_neg, pairwise_distance(positive, negative, p, eps))
    return reduce_loss(call("clamp_min", d_pos - d_neg + margin, 0.0), red)


@define("triplet_margin_loss", "loss", method=False, torch=False, functional=True, key="F.triplet_margin_loss",
        doc="triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, "
            "size_average=None, reduce=None, reduction='mean') -> Tensor\n\n"
            "max(0, d(anchor, positive) - d(anchor, negative) + margin) with d the pairwise distance; "
            "swap uses min(d(a, n), d(p, n)).")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _triplet(anchor, positive, negative, margin, p, eps, swap, reduction_name(reduction, size_average, reduce))


@define("triplet_margin_loss", "loss", method=False,
        doc="triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction=1) "
            "-> Tensor\n\ntorch.nn.functional.triplet_margin_loss with ATen's int reduction.")
def triplet_margin_loss_aten(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=1):
    return _triplet(anchor, positive, negative, margin, p, eps, swap, reduction_name(reduction))


def _hinge(input, target, margin, red):
    margin_clamp = call("clamp_min", margin - input, 0.0)
    out = call("where", target != 1, margin_clamp, 0.0) + call("where", target != -1, input, 0.0)
    return reduce_loss(out, red)


@define("hinge_embedding_loss", "loss", dtypes="numeric", method=False, torch=False, functional=True, key="F.hinge_embedding_loss",
        doc="hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction='mean') "
            "-> Tensor\n\ninput where target is 1, max(0, margin - input) where it is -1.")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    return _hinge(input, target, margin, reduction_name(reduction, size_average, reduce))


@define("hinge_embedding_loss", "loss", dtypes="numeric", method=False,
        doc="hinge_embedding_loss(input, target, margin=1.0, reduction=1) -> Tensor\n\n"
            "torch.nn.functional.hinge_embedding_loss with ATen's int reduction.")
def hinge_embedding_loss_aten(input, target, margin=1.0, reduction=1):
    return _hinge(input, target, margin, reduction_name(reduction))


def _poisson(input, target, log_input, full, eps, red):
    if log_input:
        loss = call("exp", input) - target * input
    else:
        loss = input - target * call("log", input + eps)
    if full:
        stirling = target * call("log", target) - target + call("log", target * (2 * math.pi)) * 0.5
        loss = loss + call("where", target > 1, stirling, 0.0)
    return reduce_loss(loss, red)


@define("poisson_nll_loss", "loss", dtypes="numeric", method=False, torch=False, functional=True, key="F.poisson_nll_loss",
        doc="poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-08, reduce=None, "
            "reduction='mean') -> Tensor\n\n"
            "exp(input) - target * input (log_input), else input - target * log(input + eps); full "
            "adds Stirling's term where target > 1.")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    return _poisson(input, target, log_input, full, eps, reduction_name(reduction, size_average, reduce))


@define("poisson_nll_loss", "loss", dtypes="numeric", method=False,
        doc="poisson_nll_loss(input, target, log_input, full, eps, reduction) -> Tensor\n\n"
            "torch.nn.functional.poisson_nll_loss with ATen's arguments.")
def poisson_nll_loss_aten(input, target, log_input, full, eps, reduction):
    return _poisson(input, target, log_input, full, eps, reduction_name(reduction))


@define("gaussian_nll_loss", "loss", method=False, torch=False, functional=True,
        doc="gaussian_nll_loss(input, target, var, full=False, eps=1e-06, reduction='mean') -> Tensor\n\n"
            "0.5 * (log(var) + (input - target) ** 2 / var) with var clamped to >= eps (in value, "
            "not in the gradient, as PyTorch); full adds 0.5 * log(2 * pi).")
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if not hasattr(var, "shape"):
        var = full_(tuple(input.shape), float(var), dtype=input.dtype, device=input.device)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = S.unsqueeze(var, -1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if var.numel() and bool(R.any(var < 0).item()):
        raise ValueError("var has negative entry/entries")
    with grad_mode.no_grad():
        shift = call("clamp_min", var, eps) - var
    v = var + shift
    d = input - target
    loss = (call("log", v) + d * d / v) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


@define("soft_margin_loss", "loss", dtypes="numeric", method=False, torch=False, functional=True,
        doc="soft_margin_loss(input, target, size_average=None, reduce=None, reduction='mean') -> Tensor\n\n"
            "log(1 + exp(-target * input)).")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    red = reduction_name(reduction, size_average, reduce)
    return reduce_loss(call("log1p", call("exp", -input * target)), red)


@define("multilabel_soft_margin_loss", "loss", method=False, torch=False, functional=True,
        doc="multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, "
            "reduction='mean') -> Tensor\n\n"
            "-(target * log(sigmoid(input)) + (1 - target) * log(sigmoid(-input))) * weight, "
            "averaged over the classes (last dim).")
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if size_average is None and reduce is None and reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")      # PyTorch's message for this loss
    red = reduction_name(reduction, size_average, reduce)
    loss = -(target * _log_sigmoid(input) + (1.0 - target) * _log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    c = input.shape[-1] if input.dim() else 1
    loss = R.sum(loss, input.dim() - 1) / c if input.dim() else loss
    return reduce_loss(loss, red)


@define("multi_margin_loss", "loss", method=False, torch=False, functional=True,
        doc="multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, "
            "reduction='mean') -> Tensor\n\n"
            "The sum over classes j != target of max(0, margin - input[target] + input[j]) ** p "
            "(times weight[target]), divided by the number of classes.")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    red = reduction_name(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = input if input.dim() == 2 else S.reshape(input, (1, -1))
    t = S.reshape(target, (-1,))
    if x.shape[0] != t.shape[0] or input.dim() > 2:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got {shape_str(target.shape)}")
    c = x.shape[1]
    _check_targets(t, c, None, "target out of range")
    onehot = _onehot_mask(t, c, 1, x.dtype)
    xy = R.sum(x * onehot, 1, keepdim=True)
    z = call("clamp_min", x - xy + margin, 0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * R.sum(onehot * S.unsqueeze(weight, 0), 1, keepdim=True)
    loss = R.sum(z * (1.0 - onehot), 1) / c
    if input.dim() < 2:
        loss = S.reshape(loss, () if input.dim() == 1 and target.dim() == 0 else (1,)) if red == "none" else loss
    return reduce_loss(loss, red)


@define("multilabel_margin_loss", "loss", method=False, torch=False, functional=True,
        doc="multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction='mean') -> Tensor\n\n"
            "The sum over target classes j (target's entries before the first -1) and non-target "
            "classes k of max(0, 1 - (input[j] - input[k])), divided by the number of classes.")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    red = reduction_name(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {shape_str(target.shape)} for input of size: "
                           f"{shape_str(input.shape)}")
    x = input if input.dim() == 2 else S.reshape(input, (1, -1))
    t = S.reshape(target, tuple(x.shape))
    n, c = x.shape
    _check_targets(call("where", t < 0, 0, t), c, None, "argument #2 'target' is out of range")
    # the entries before the first -1: a position is valid when no -1 comes at or before it
    neg = (t < 0).to(x.dtype)
    upper = (S.unsqueeze(arange(c, device=x.device), 1) <= S.unsqueeze(arange(c, device=x.device), 0)).to(x.dtype)
    valid = (L.matmul(neg, upper) == 0).to(x.dtype)                         # (n, c positions)
    onehot = _onehot_mask(call("where", t < 0, 0, t), c, 2, x.dtype)       # (n, pos, class)
    is_target = call("clamp_max", R.sum(onehot * S.unsqueeze(valid, 2), 1), 1.0)   # (n, class)
    pair = call("clamp_min", 1.0 - (S.unsqueeze(x, 2) - S.unsqueeze(x, 1)), 0.0)   # (n, j, k)
    loss = R.sum(pair * S.unsqueeze(is_target, 2) * S.unsqueeze(1.0 - is_target, 1), (1, 2)) / c
    if input.dim() < 2:
        loss = S.reshape(loss, ()) if red == "none" else loss
    return reduce_loss(loss, red)
