"""Normalization written from primitives (means, variances, rsqrt, broadcasting), so the
backward comes from theirs: layer_norm, rms_norm, group_norm, batch_norm, instance_norm,
local_response_norm, normalize. layer_norm under autograd has PyTorch's own backward formula
instead (layer_norm_grad.py: five kernels fewer per layer norm). Variances used to normalize
are biased, as PyTorch's; the running variances that batch_norm and instance_norm keep are
unbiased."""

import math

from ... import _dtype as D
from ...autograd import grad_mode
from ..elementwise import call
from ..registry import define
from .. import join as J, lowering, reduction as R, shape as S
from . import affine, shape_str
from .layer_norm_grad import LayerNorm


def _float_check(x, kernel):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{x.dtype.word}'")


def _normalized_shape(normalized_shape, name):
    if isinstance(normalized_shape, int) or not isinstance(normalized_shape, (tuple, list)) and \
            not hasattr(normalized_shape, "__len__"):
        raise TypeError(f"{name}(): argument 'normalized_shape' (position 2) must be tuple of ints, "
                        f"not {type(normalized_shape).__name__}")
    return tuple(int(s) for s in normalized_shape)


def _check_normalized(x, ns, weight, bias, star=" "):
    k = len(ns)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                           f"least one element, but got normalized_shape = {shape_str(ns)}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got {what} of "
                               f"shape {shape_str(t.shape)} and normalized_shape = {shape_str(ns)}")
    if x.dim() < k or tuple(x.shape[x.dim() - k:]) != ns:
        star = "[*, " if star == " " else "[*"
        raise RuntimeError(f"Given normalized_shape={shape_str(ns)}, expected input with shape "
                           f"{star}{shape_str(ns)[1:]}, but got input of size{shape_str(x.shape)}")
    return tuple(range(x.dim() - k, x.dim()))


def _standardize(x, dims, eps):
    """(x - mean) / sqrt(var + eps) over dims (biased variance), and the mean and variance
    (keepdim). Without autograd, var_mean is one kernel on the GPU (kernels/moments.py) and the
    rest one fused elementwise kernel: two dispatches instead of six. With autograd, the
    composite of means: its gradient is the one that matched PyTorch's within the browser tier's
    tolerance (through var_mean's backward a BERT's embedding gradient moved by 6e-4)."""
    if not (x.requires_grad and grad_mode.is_grad_enabled()):
        var, mean = R.var_mean(x, dims, keepdim=True, correction=0)
        return (x - mean) * call("rsqrt", var + eps), mean, var
    mean = R.mean(x, dims, keepdim=True)
    centered = x - mean
    var = R.mean(centered * centered, dims, keepdim=True)
    return centered * call("rsqrt", var + eps), mean, var


@define("layer_norm", "normalization", method=False, functional=True,
        doc="layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05) -> Tensor\n\n"
            "(input - mean) / sqrt(var + eps) over the last len(normalized_shape) dims (biased "
            "variance), times weight plus bias.")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    ns = _normalized_shape(normalized_shape, "layer_norm")
    dims = _check_normalized(input, ns, weight, bias)
    _float_check(input, "LayerNormKernelImpl")
    if input.numel() == 0:
        return affine(input * 1.0, weight, bias)
    if grad_mode.is_grad_enabled() and any(t is not None and t.requires_grad for t in (input, weight, bias)):
        return LayerNorm.apply(input, weight, bias, dims, eps)
    if input.dtype is D.bfloat16:   # in float32, rounded once (PyTorch's mixed-type kernel)
        return layer_norm(input.float(), ns, *(t if t is None else t.float() for t in (weight, bias)),
                          eps).to(D.bfloat16)
    fused = lowering.fused_layer_norm(input, weight, bias, dims, eps)
    if fused is not None:
        return fused[0]
    y, _, _ = _standardize(input, dims, eps)
    return affine(y, weight, bias)


@define("rms_norm", "normalization", method=False, functional=True,
        doc="rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor\n\n"
            "input / sqrt(mean(input ** 2) + eps) over the last len(normalized_shape) dims, times "
            "weight; eps defaults to the dtype's machine epsilon.")
def rms_norm(input, normalized_shape, weight=None, eps=None):
    ns = _normalized_shape(normalized_shape, "rms_norm")
    dims = _check_normalized(input, ns, weight, None, star="")
    _float_check(input, "rms_norm")
    if input.dtype is D.bfloat16 and not (grad_mode.is_grad_enabled() and (input.requires_grad or (
            weight is not None and weight.requires_grad))):   # in float32 (its eps too), rounded once
        return rms_norm(input.float(), ns, None if weight is None else weight.float(), eps).to(D.bfloat16)
    if eps is None:
        eps = 2.0 ** -10 if input.dtype.name == "float16" else 2.0 ** -23  # torch.finfo(dtype).eps
    if input.numel() == 0:
        return affine(input * 1.0, weight, None)
    ms = R.mean(input * input, dims, keepdim=True)
    return affine(input * call("rsqrt", ms + eps), weight, None)


def _channel_view(t, x):
    """A (C,) tensor viewed as (1, C, 1, ...) to broadcast against x of shape (N, C, *)."""
    return S.reshape(t, (1, t.shape[0]) + (1,) * (x.dim() - 2))


@define("group_norm", "normalization", method=False, functional=True,
        doc="group_norm(input, num_groups, weight=None, bias=None, eps=1e-05) -> Tensor\n\n"
            "The channels of input (N, C, *) split into num_groups groups, each normalized over its "
            "channels and spatial dims (biased variance); then weight and bias per channel.")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got "
                           f"input of shape {shape_str(input.shape)} and num_groups={num_groups}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.shape[0] != c):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of channels in "
                               f"input, but got {what} of shape {shape_str(t.shape)} and input of shape "
                               f"{shape_str(input.shape)}")
    _float_check(input, "GroupNormKernelImpl")
    if input.numel() == 0:
        y = input * 1.0
    else:
        g = S.reshape(input, (n, num_groups, -1))
        y, _, _ = _standardize(g, (2,), eps)
        y = S.reshape(y, tuple(input.shape))
    return affine(y, None if weight is None else _channel_view(weight, input),
                   None if bias is None else _channel_view(bias, input))


def _check_channels(what, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{what} should contain {c} elements not {t.numel()}")


def _update_running(running, value, momentum):
    """running = (1 - momentum) * running + momentum * value, in place, outside autograd."""
    with grad_mode.no_grad():
        running.copy_(S.reshape(running * (1.0 - momentum) + S.reshape(value, tuple(running.shape)) * momentum,
                                tuple(running.shape)))


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    if input.dim() < 2:
        c = input.shape[1] if input.dim() > 1 else 0
        _check_channels("running_mean", running_mean, c)
        raise RuntimeError(f"running_mean should contain {c} elements")
    c = input.shape[1]
    for what, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_channels(what, t, c)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"{'running_mean' if running_mean is None else 'running_var'} must be defined "
                           f"in evaluation mode")
    _float_check(input, "batch_norm")
    dims = (0,) + tuple(range(2, input.dim()))
    w = None if weight is None else _channel_view(S.reshape(weight, (c,)), input)
    b = None if bias is None else _channel_view(S.reshape(bias, (c,)), input)
    if training:
        n = input.numel() // c if c else 0
        if input.numel() == 0:
            return affine(input * 1.0, w, b)
        y, mean, var = _standardize(input, dims, eps)
        if running_mean is not None:
            _update_running(running_mean, mean.detach(), momentum)
        if running_var is not None:
            unbiased = var.detach() * (n / (n - 1) if n > 1 else math.inf)
            _update_running(running_var, unbiased, momentum)
        return affine(y, w, b)
    mean = _channel_view(S.reshape(running_mean, (c,)), input)
    var = _channel_view(S.reshape(running_var, (c,)), input)
    return affine((input - mean) * call("rsqrt", var + eps), w, b)


def _size_text(shape):
    return "torch.Size([" + ", ".join(str(s) for s in shape) + "])"


def _check_momentum(momentum, position):
    if momentum is None or not isinstance(momentum, (int, float)) or isinstance(momentum, bool):
        raise TypeError(f"batch_norm(): argument 'momentum' (position {position}) must be float, not "
                        f"{type(momentum).__name__}")


@define("batch_norm", "normalization", method=False, torch=False, functional=True, key="F.batch_norm",
        doc="batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, "
            "momentum=0.1, eps=1e-05) -> Tensor\n\n"
            "Training: each channel of input (N, C, *) normalized by its batch statistics (biased "
            "variance); running_mean and running_var (if given) move towards the batch mean and "
            "unbiased variance by momentum, in place. Evaluation: normalized by the running "
            "statistics. Then weight and bias per channel.")
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    if training:
        size = tuple(input.shape)
        n = size[0] if size else 1
        for s in size[2:]:
            n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{_size_text(size)}")
    _check_momentum(momentum, 7)
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@define("batch_norm", "normalization", method=False,
        doc="batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, "
            "cudnn_enabled) -> Tensor\n\ntorch.nn.functional.batch_norm with ATen's argument order.")
def batch_norm_aten(input, weight, bias, running_mean, running_var, training, momentum, eps,
                    cudnn_enabled=True):
    _check_momentum(momentum, 7)
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    for what, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() * n != n * c:
            raise RuntimeError(f"{what} should contain {n * c} elements not {t.numel() * n}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() * n != n * c:
            raise RuntimeError(f"{what} should contain {n * c} elements not {t.numel() * n}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    _float_check(input, "batch_norm")
    w = None if weight is None else _channel_view(S.reshape(weight, (c,)), input)
    b = None if bias is None else _channel_view(S.reshape(bias, (c,)), input)
    if not use_input_stats:
        mean = _channel_view(S.reshape(running_mean, (c,)), input)
        var = _channel_view(S.reshape(running_var, (c,)), input)
        return affine((input - mean) * call("rsqrt", var + eps), w, b)
    if input.numel() == 0:
        return affine(input * 1.0, w, b)
    dims = tuple(range(2, input.dim()))
    y, mean, var = _standardize(input, dims, eps)
    m = input.numel() // (n * c)
    if running_mean is not None:
        _update_running(running_mean, R.mean(S.reshape(mean.detach(), (n, c)), 0), momentum)
    if running_var is not None:
        unbiased = S.reshape(var.detach(), (n, c)) * (m / (m - 1) if m > 1 else math.inf)
        _update_running(running_var, R.mean(unbiased, 0), momentum)
    return affine(y, w, b)


@define("instance_norm", "normalization", method=False, torch=False, functional=True, key="F.instance_norm",
        doc="instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, "
            "use_input_stats=True, momentum=0.1, eps=1e-05) -> Tensor\n\n"
            "Each (sample, channel) of input (N, C, *) normalized over its spatial dims (biased "
            "variance); running statistics (if given) move towards the batch average of the "
            "instances' mean and unbiased variance. use_input_stats=False normalizes by them instead.")
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats:
        size = tuple(input.shape)
        m = 1
        for s in size[2:]:
            m *= s
        if m == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{_size_text(size)}")
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


@define("instance_norm", "normalization", method=False,
        doc="instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, "
            "cudnn_enabled) -> Tensor\n\ntorch.nn.functional.instance_norm with ATen's argument order.")
def instance_norm_aten(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                       cudnn_enabled=True):
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


@define("local_response_norm", "normalization", method=False, torch=False, functional=True,
        doc="local_response_norm(input, size, alpha=0.0001, beta=0.75, k=1.0) -> Tensor\n\n"
            "input / (k + alpha * mean of input ** 2 over `size` neighbouring channels, zero "
            "padded) ** beta, for input (N, C, *).")
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got "
                         f"{input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    before, after = size // 2, (size - 1) // 2
    parts = []
    if before:
        parts.append(S.narrow(sq * 0.0, 1, 0, 1).expand(*((-1, before) + tuple(sq.shape[2:]))))
    parts.append(sq)
    if after:
        parts.append(S.narrow(sq * 0.0, 1, 0, 1).expand(*((-1, after) + tuple(sq.shape[2:]))))
    padded = J.cat(parts, 1) if len(parts) > 1 else sq
    total = None
    for j in range(size):
        piece = S.narrow(padded, 1, j, c) if j + c <= padded.shape[1] else None
        if piece is None:
            continue
        total = piece if total is None else total + piece
    div = total * (alpha / size) + k
    return input / call("pow", div, beta)


@define("normalize", "normalization", method=False, torch=False, functional=True,
        doc="normalize(input, p=2.0, dim=1, eps=1e-12, out=None) -> Tensor\n\n"
            "input / max(norm_p(input, dim), eps).")
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{input.dtype.word}")
    denom = call("clamp_min", R.norm(input, p, dim, keepdim=True), eps)
    result = input / denom
    if out is not None:
        out.copy_(result)
        return out
    return result
