"""torch.nn.functional.scaled_dot_product_attention.

Two ways, chosen here:
- fused (where the backend's `attention_fits` says yes: webgpu's, for large sizes): FlashAttention-2
  kernels (backends/webgpu/kernels/attention.py) that never hold the L x S scores: the forward
  saves each row's logsumexp, the backward recomputes the scores tile by tile;
- composite: softmax(q @ k^T * scale + mask) @ v from the primitives, so autograd comes with it:
  the cpu device, head dims past 128, dropout_p > 0 (dropout on the attention weights) and a
  float mask that needs its gradient.

As PyTorch's CPU result: a query row whose keys are all masked out gives 0 (and zero gradients),
not NaN; is_causal is the upper-left triangle (key j <= query i); enable_gqa repeats each key and
value head over query heads (dim -3), as repeat_interleave does.
"""

import math

from .. import _dtype as D
from .._size import broadcast_shapes, contiguous_strides, shape_str
from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends import backend_for
from ..backends.plans import AttentionSpec
from . import elementwise as E
from . import elementwise as PW
from .operands import common_device, empty, expand_to
from .reduction import raw_reduce
from .registry import define
from .. import _creation
from .activation import softmax
from .composite.dropout import dropout_impl
from .linalg import matmul

_NEG_INF = float("-inf")


def _check(q, k, v, attn_mask, dropout_p, is_causal, enable_gqa):
    common_device(q, k, v, *([attn_mask] if attn_mask is not None else []),
                  what="scaled_dot_product_attention")
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got "
                           f"query.dim: {q.dim()} key.dim: {k.dim()} and value.dim: {v.dim()} instead.")
    if not (q.dtype is k.dtype is v.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{q.dtype.c_name} key.dtype: {k.dtype.c_name} and value.dtype: {v.dtype.c_name} instead.")
    if not q.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected a floating point query, key and value, "
                           f"got {q.dtype.c_name}")
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        if attn_mask.dtype is not D.bool and attn_mask.dtype is not q.dtype:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {attn_mask.dtype.c_name} and  query.dtype: {q.dtype.c_name} instead.")
    if dropout_p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if q.shape[-1] != k.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query's last dim ({q.shape[-1]}) must match key's "
                           f"({k.shape[-1]}): query {shape_str(q.shape)}, key {shape_str(k.shape)}")
    if k.shape[-2] != v.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value need the same sequence length: "
                           f"key {shape_str(k.shape)}, value {shape_str(v.shape)}")
    if enable_gqa:
        for t in (q, k, v):
            if t.dim() < 3:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-t.dim()}, {t.dim() - 1}], "
                                 f"but got -3)")
        hq, hk, hv = q.shape[-3], k.shape[-3], v.shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError(f"Number of heads in key and value must divide the number of heads in query: "
                               f"query has {hq}, key {hk}, value {hv}")


def _repeat_heads(t, hq):
    """t's dim -3 (h heads) repeated to hq, each head hq // h times in a row (repeat_interleave),
    with autograd (the gradient sums the copies)."""
    h = t.shape[-3]
    if h == hq:
        return t
    shape = tuple(t.shape)
    g = t.unsqueeze(-3).expand(*shape[:-3], h, hq // h, *shape[-2:])
    return g.reshape(*shape[:-3], hq, *shape[-2:])


_CAUSAL_MASKS = {}          # (L, S, device) -> the bool mask: made once, not per layer and step
_CAUSAL_CACHE_SCORES = 1 << 22   # (masks up to 4 MB are kept, at most 8 of them)
_MASKS_WATCHED = set()      # device types whose loss clears the masks


def _causal_mask(L, S, device):
    key = (L, S, str(device))
    mask = _CAUSAL_MASKS.get(key)
    if mask is None:
        i = _creation.arange(L, device=device).reshape(L, 1)
        j = _creation.arange(S, device=device)
        mask = E.run("le", j, i)
        if L * S <= _CAUSAL_CACHE_SCORES:
            if device.type not in _MASKS_WATCHED:   # (a lost device's masks go with it)
                _MASKS_WATCHED.add(device.type)
                backend_for(device.type).on_device_lost(lambda _rt: _CAUSAL_MASKS.clear())
            if len(_CAUSAL_MASKS) >= 8:
                _CAUSAL_MASKS.pop(next(iter(_CAUSAL_MASKS)))
            _CAUSAL_MASKS[key] = mask
    return mask


def _composite(q, k, v, mask, causal, scale, dropout_p):
    attn = _weights(q, k, mask, causal, scale)
    if dropout_p > 0:
        attn = dropout_impl(attn, dropout_p, True, False)
    return matmul(attn, v)


def _weights(q, k, mask, causal, scale):
    """softmax(q @ k^T * scale + mask) from the primitives (rows with every key masked: 0)."""
    L, S = q.shape[-2], k.shape[-2]
    attn = matmul(q, k.transpose(-2, -1)) * scale
    if causal:
        mask = _causal_mask(L, S, q.device)
    dead = None
    if mask is not None:
        if mask.dtype is D.bool:
            attn = PW.call("where", mask, attn, _NEG_INF)
        else:
            attn = attn + mask
        if not causal:
            # rows with every key masked out: 0, as PyTorch's safe softmax (no NaN, zero grads)
            dead = raw_reduce("all", E.run("eq", attn.detach(), _NEG_INF), [attn.dim() - 1], True, D.bool)
            attn = PW.call("where", dead, 0.0, attn)
    attn = softmax(attn, -1)
    if dead is not None:
        attn = PW.call("where", dead, 0.0, attn)
    return attn


def _backward_recorded(q, k, v, mask, causal, scale, g):
    """The fused kernel's gradients from the primitives, for create_graph: the weights computed
    again, then FlashAttention's formulas as recorded ops."""
    p = _weights(q, k, mask, causal, scale)
    dv = matmul(p.transpose(-2, -1), g)
    dp = matmul(g, v.transpose(-2, -1))
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    return matmul(ds, k) * scale, matmul(ds.transpose(-2, -1), q) * scale, dv


def _fused_forward(q, k, v, mask, causal, scale, batch):
    L, E_ = q.shape[-2], q.shape[-1]
    S, Ev = k.shape[-2], v.shape[-1]
    qe, ke, ve = (expand_to(q, batch + (L, E_)), expand_to(k, batch + (S, E_)), expand_to(v, batch + (S, Ev)))
    me = expand_to(mask, batch + (L, S)) if mask is not None else None
    out = empty(batch + (L, Ev), q.dtype, q.device)
    lse = empty(batch + (L,), D.float32, q.device)
    backend_for(q.device.type).attention_forward(AttentionSpec(me, causal, scale), out, lse, qe, ke, ve)
    return out, lse


class _FusedAttention(Function):
    # PyTorch's node for its fused CPU kernel
    _backward_name = "ScaledDotProductFlashAttentionForCpuBackward0"
    _double_backward = True   # (create_graph: _backward_recorded)

    @staticmethod
    def forward(ctx, q, k, v, mask, causal, scale, batch):
        out, lse = _fused_forward(q, k, v, mask, causal, scale, batch)
        ctx.save_for_backward(q, k, v, mask, out, lse)
        ctx.meta = (causal, scale, batch)
        return out

    @staticmethod
    def backward(ctx, g):
        q, k, v, mask, out, lse = ctx.saved_tensors
        causal, scale, batch = ctx.meta
        if grad_mode._state["enabled"]:   # create_graph
            dq, dk, dv = _backward_recorded(q, k, v, mask, causal, scale, g)
            need = ctx.needs_input_grad
            return (dq if need[0] else None, dk if need[1] else None, dv if need[2] else None,
                    None, None, None, None)
        L, E_ = q.shape[-2], q.shape[-1]
        S, Ev = k.shape[-2], v.shape[-1]
        NB = 1
        for s in batch:
            NB *= s
        dev = q.device
        go = g if (g.dtype is q.dtype and g.is_contiguous()) else E.copy_into(empty(g.shape, q.dtype, dev), g)
        # D = rowsum(dout * out), in float32
        if q.dtype is D.float32:
            prod = E.run("mul", go, out)
        else:
            prod = E.run("mul", E.copy_into(empty(go.shape, D.float32, dev), go),
                         E.copy_into(empty(out.shape, D.float32, dev), out))
        rowsum = raw_reduce("sum", prod, [prod.dim() - 1], False, D.float32)
        ld = empty((2, NB * L), D.float32, dev)
        E.copy_into(ld._view((NB * L,), (1,), 0), lse._view((NB * L,), (1,), lse._offset))
        E.copy_into(ld._view((NB * L,), (1,), NB * L), rowsum._view((NB * L,), (1,), rowsum._offset))
        dq = empty(batch + (L, E_), q.dtype, dev)
        dkv = empty((NB * S * (E_ + Ev),), q.dtype, dev)
        qe, ke, ve = (expand_to(q, batch + (L, E_)), expand_to(k, batch + (S, E_)), expand_to(v, batch + (S, Ev)))
        me = expand_to(mask, batch + (L, S)) if mask is not None else None
        backend_for(dev.type).attention_backward(AttentionSpec(me, causal, scale), dq, dkv, qe, ke, ve, go, ld)
        dk = dkv._view(batch + (S, E_), contiguous_strides(batch + (S, E_)), 0)
        dv = dkv._view(batch + (S, Ev), contiguous_strides(batch + (S, Ev)), NB * S * E_)
        need = ctx.needs_input_grad
        return (dq if need[0] else None, dk if need[1] else None, dv if need[2] else None,
                None, None, None, None)


@define("scaled_dot_product_attention", "other", torch=False, method=False, functional=True,
        doc="scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, "
            "is_causal=False, scale=None, enable_gqa=False) -> Tensor\n\n"
            "softmax(query @ key^T * scale + mask) @ value over the last two dims, batch dims "
            "broadcast; attn_mask bool (True takes part) or additive; is_causal masks key j > query i; "
            "scale defaults to 1 / sqrt(E); dropout_p drops attention weights; enable_gqa repeats "
            "key/value heads (dim -3) over the query heads. On webgpu a fused FlashAttention kernel "
            "that never holds the L x S scores.")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    q, k, v, mask = query, key, value, attn_mask
    _check(q, k, v, mask, dropout_p, is_causal, enable_gqa)
    if enable_gqa:
        hq = q.shape[-3]
        k, v = _repeat_heads(k, hq), _repeat_heads(v, hq)
    L, E_ = q.shape[-2], q.shape[-1]
    S, Ev = k.shape[-2], v.shape[-1]
    attn_batch = broadcast_shapes(q.shape[:-2], k.shape[:-2])
    batch = broadcast_shapes(attn_batch, v.shape[:-2])
    if mask is not None:
        full = tuple(attn_batch) + (L, S)
        got = broadcast_shapes(mask.shape, full)
        if tuple(got) != full:
            raise RuntimeError(f"output with shape {shape_str(full)} doesn't match the broadcast shape "
                               f"{shape_str(got)}")
    if scale is None:
        scale = 1.0 / math.sqrt(E_) if E_ else 1.0   # E = 0: every score is 0 whatever the scale
    elif E_ == 0:
        scale = 1.0
    causal = bool(is_causal)
    nb = 1
    for s in batch:
        nb *= s
    mask_grad = (mask is not None and mask.requires_grad and grad_mode.is_grad_enabled())
    if (dropout_p > 0 or mask_grad or min(L, S, E_, Ev, nb) == 0
            or not backend_for(q.device.type).attention_fits(L, S, E_, Ev, batch=nb)):
        return _composite(q, k, v, mask, causal, scale, dropout_p)
    batch = tuple(batch)
    if grad_mode.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        return _FusedAttention.apply(q, k, v, mask, causal, float(scale), batch)
    return _fused_forward(q, k, v, mask, causal, float(scale), batch)[0]
