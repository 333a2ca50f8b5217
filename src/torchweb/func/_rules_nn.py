"""Batching rules for nn ops: convolution (the batch folded into N, or with batched weights into
the groups), pooling, interpolation and padding (the batch folded into N), layer_norm /
group_norm, and nll_loss / cross_entropy (the batch folded into N, each entry's reduction
after)."""

from .._is_tensor import is_tensor
from ._batched import to_front, wrap, BatchedTensor
from ._dispatch import rule
from ._rules_pointwise import wrap_out, padded


def _batched(t, lid):
    return type(t) is BatchedTensor and t._level == lid


def _map(out, fn):
    if is_tensor(out):
        return fn(out)
    return type(out)(*(fn(o) for o in out)) if hasattr(out, "_fields") else type(out)(fn(o) for o in out)


def folded(spatial, input_key="input"):
    """A rule for an op on (N, C, *spatial) or (C, *spatial) input whose other tensor arguments
    are not batched: an unbatched-form entry is the N of the batch; a batched-form one folds
    the batch into N."""
    def run(call):
        x = call.get(input_key)
        s = spatial if spatial is not None else x.dim() - 2     # (an (N, C, *) input, N always there)
        lid = call.lid
        if any(_batched(v, lid) for k, v in call.bound.arguments.items() if k != input_key):
            return NotImplemented
        v, batched = to_front(x, lid)
        if not batched:
            return NotImplemented
        if x.dim() == s + 1:
            return wrap_out(call.run(**{input_key: v}), lid)
        if x.dim() != s + 2:
            return NotImplemented
        b, n = v.shape[0], v.shape[1]
        out = call.run(**{input_key: v.reshape((b * n,) + tuple(v.shape[2:]))})
        return wrap_out(_map(out, lambda o: o.reshape((b, n) + tuple(o.shape[1:]))), lid)
    return run


for _s, _names in ((1, ("conv_transpose1d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "lp_pool1d",
                        "max_pool1d_with_indices", "adaptive_max_pool1d_with_indices")),
                   (2, ("conv_transpose2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "lp_pool2d",
                        "max_pool2d_with_indices", "adaptive_max_pool2d_with_indices", "pixel_shuffle",
                        "pixel_unshuffle", "channel_shuffle")),
                   (3, ("conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "lp_pool3d",
                        "max_pool3d_with_indices", "adaptive_max_pool3d_with_indices")),
                   (None, ("interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "group_norm",
                           "instance_norm", "local_response_norm"))):
    for _n in _names:
        rule(_n)(folded(_s))


@rule("batch_norm")
def _batch_norm(call):
    """Running statistics (eval mode): per channel, so the batch folds into N. Training mode
    takes each entry's own batch statistics: the loop."""
    if call.get("training"):
        return NotImplemented
    return folded(None)(call)


@rule("pad")
def _pad(call):
    x = call.get("input")
    v, batched = to_front(x, call.lid)
    if not batched:
        return NotImplemented
    if call.get("mode", "constant") == "constant" or len(call.get("pad")) // 2 < x.dim() - 1:
        return wrap(call.run(input=v), 0, call.lid)
    return folded(len(call.get("pad")) // 2)(call)


_CONV_SPATIAL = {"conv1d": 1, "conv2d": 2, "conv3d": 3}


@rule("conv1d", "conv2d", "conv3d")
def _conv(call):
    x, w, bias = call.get("input"), call.get("weight"), call.get("bias")
    lid, s = call.lid, _CONV_SPATIAL[call.name]
    if not _batched(w, lid) and not _batched(bias, lid):
        return folded(s)(call)
    # batched weights: entry b's filters are group b of one grouped convolution
    unbatched_form = x.dim() == s + 1
    if unbatched_form:
        x = x.unsqueeze(0)
    size, groups = call.size, call.get("groups", 1)
    xv, xb = to_front(x, lid)
    xv = xv.movedim(0, 1) if xb else x.unsqueeze(1).expand((x.shape[0], size) + tuple(x.shape[1:]))
    xv = xv.reshape((xv.shape[0], size * xv.shape[2]) + tuple(xv.shape[3:]))   # (N, B*C, ...)
    wv, wb = to_front(w, lid)
    if not wb:
        wv = w.unsqueeze(0).expand((size,) + tuple(w.shape))
    wv = wv.reshape((size * wv.shape[1],) + tuple(wv.shape[2:]))                # (B*O, C/g, ...)
    if bias is not None:
        bv, bb = to_front(bias, lid)
        bias = bv.reshape(-1) if bb else bias.repeat(size)
    out = call.run(input=xv, weight=wv, bias=bias, groups=size * groups)      # (N, B*O, ...)
    out = out.reshape((out.shape[0], size, -1) + tuple(out.shape[2:])).movedim(1, 0)
    return wrap(out.squeeze(1) if unbatched_form else out, 0, lid)


@rule("layer_norm", "rms_norm")
def _layer_norm(call):
    x, lid = call.get("input"), call.lid
    w, b = call.get("weight"), call.get("bias")
    v, batched = to_front(x, lid)
    if not batched:
        return NotImplemented
    if not _batched(w, lid) and not _batched(b, lid):
        return wrap(call.run(input=v), 0, lid)
    out = wrap(call.run(input=v, weight=None, **({"bias": None} if "bias" in call.bound.arguments else {})), 0, lid)
    if w is not None:
        out = out * w
    return out if b is None else out + b


@rule("nll_loss", "cross_entropy")
def _class_loss(call):
    x, target, lid = call.get("input"), call.get("target"), call.lid
    reduction = call.get("reduction", "mean")
    if call.get("size_average") is not None or call.get("reduce") is not None or _batched(call.get("weight"), lid) \
            or call.get("label_smoothing", 0.0) or target.dtype.is_floating_point or x.dim() < 1:
        return NotImplemented
    if x.dim() == 1:                       # one sample: (C,) and a 0-d target
        x, target = x.unsqueeze(0), target.unsqueeze(0)
    xv, xb = to_front(x, lid)
    tv, tb = to_front(target, lid)
    size = call.size
    if not xb:
        xv = x.unsqueeze(0).expand((size,) + tuple(x.shape))
    if not tb:
        tv = target.unsqueeze(0).expand((size,) + tuple(target.shape))
    n = xv.shape[1]
    losses = call.run(input=xv.reshape((size * n,) + tuple(xv.shape[2:])),
                      target=tv.reshape((size * n,) + tuple(tv.shape[2:])), reduction="none")
    losses = losses.reshape((size, -1))
    if reduction == "none":
        out = losses.reshape((size,) + tuple(tv.shape[1:]))
        return wrap(out.squeeze(1) if call.get("input").dim() == 1 else out, 0, lid)
    if reduction == "sum":
        return wrap(losses.sum(1), 0, lid)
    # mean: over each entry's weights of the targets it does not ignore
    t = tv.reshape((size, -1))
    counted = t != call.get("ignore_index", -100)
    weight = call.get("weight")
    if weight is None:
        denom = counted.sum(1).to(losses.dtype)
    else:
        denom = (weight[t.clamp(0, weight.shape[0] - 1)] * counted).sum(1)
    return wrap(losses.sum(1) / denom, 0, lid)


@rule("prelu")
def _prelu(call):
    """The weight is per channel (dim 1 of an (N, C, ...) entry; a 1-d entry has one channel)."""
    x = call.get("input")
    if x.dim() == 1:
        v, batched = to_front(x, call.lid)
        if not batched or _batched(call.get("weight"), call.lid):
            return NotImplemented
        return wrap(call.run(input=v), 0, call.lid)
    return folded(None)(call)


@rule("scaled_dot_product_attention")
def _attention(call):
    """query, key and value with the batch as one more leading dim (expanded where one is not
    batched); a batched mask lined up as an elementwise operand."""
    lid, size = call.lid, call.size
    if call.get("dropout_p", 0.0) or len({call.get(k).dim() for k in ("query", "key", "value")}) != 1:
        return NotImplemented
    changes = {}
    for k in ("query", "key", "value"):
        t = call.get(k)
        v, batched = to_front(t, lid)
        changes[k] = v if batched else t.unsqueeze(0).expand((size,) + tuple(t.shape))
    mask = call.get("attn_mask")
    if mask is not None:
        v, batched = to_front(mask, lid)
        if batched:
            changes["attn_mask"] = padded(v, call.get("query").dim(), mask.dim())
    return wrap(call.run(**changes), 0, lid)
