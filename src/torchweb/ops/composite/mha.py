"""F.multi_head_attention_forward, PyTorch's function step by step (torch/nn/functional.py):
shape checks, masks made canonical (bool -> 0 / -inf floats), the packed or separate in
projections, bias_k/bias_v and add_zero_attn columns, the key padding mask merged into the
attention mask, then either

- need_weights=True: the explicit path, softmax(baddbmm(mask, q / sqrt(E), k^T)) (dropout on
  the weights) @ v, returning the weights (averaged over heads by default); or
- need_weights=False: F.scaled_dot_product_attention (the fused FlashAttention kernels on the
  webgpu device), returning None for the weights.

Everything is written from ops with their own gradients. PyTorch raises AssertionError for most
of these shape checks; so does this."""

import math
import warnings

from ... import _dtype as D
from ..._creation import zeros, zeros_like
from ..registry import define
from ..activation import softmax
from ..attention import scaled_dot_product_attention
from ..join import cat
from ..layout import baddbmm
from ..linalg import linear, bmm
from ..padding import pad
from .dropout import dropout


def _is_float(t):
    return t.dtype.is_floating_point


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether query is batched, after PyTorch's checks of the other arguments' ranks."""
    q = query.dim()
    if q not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{q}-D query tensor")
    who = "For batched (3-D) `query`" if q == 3 else "For unbatched (2-D) `query`"
    if key.dim() != q or value.dim() != q:
        raise AssertionError(f"{who}, expected `key` and `value` to be {q}-D"
                             f" but found {key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != q - 1:
        raise AssertionError(f"{who}, expected `key_padding_mask` to be `None` or {q - 1}-D"
                             f" but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None and attn_mask.dim() not in (2, 3):
        raise AssertionError(f"{who}, expected `attn_mask` to be `None`, 2-D or 3-D"
                             f" but found {attn_mask.dim()}-D tensor instead")
    if q == 2 and attn_mask is not None and attn_mask.dim() == 3:
        expected = (num_heads, query.shape[0], key.shape[0])
        if tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return q == 3


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask becomes a float one of target_type with -inf where it is True."""
    if mask is None:
        return None
    if mask.dtype != D.bool and not _is_float(mask):
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} "
                      "is deprecated. Use same type for both instead.", stacklevel=3)
    if not _is_float(mask):
        mask = zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(t):
    return None if t is None else t.dtype


def _linear(x, w, b):
    return linear(x, w, b)


def _in_projection_packed(q, k, v, w, b=None):
    E = q.size(-1)
    if k is v:
        if q is k:  # self-attention: one matmul
            proj = _linear(q, w, b).unflatten(-1, (3, E))
            return proj.select(-2, 0), proj.select(-2, 1), proj.select(-2, 2)
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        q_proj = _linear(q, w_q, b_q)
        kv = _linear(k, w_kv, b_kv).unflatten(-1, (2, E))
        return q_proj, kv.select(-2, 0), kv.select(-2, 1)
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    checks = [(w_q, (Eq, Eq), "query weight"), (w_k, (Eq, Ek), "key weight"), (w_v, (Eq, Ev), "value weight")]
    for w, shape, what in checks:
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {what} of shape {shape}, but got {tuple(w.shape)}")
    for bb, what in ((b_q, "query bias"), (b_k, "key bias"), (b_v, "value bias")):
        if bb is not None and tuple(bb.shape) != (Eq,):
            raise AssertionError(f"expecting {what} of shape {(Eq,)}, but got {tuple(bb.shape)}")
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _per_head(t, static, name, heads, head_dim):
    """Keys or values as (bsz * num_heads, S, head_dim): t split by head, or static (given so)."""
    if static is None:
        return t.reshape(t.shape[0], heads, head_dim).transpose(0, 1)
    if static.size(0) != heads:
        raise AssertionError(f"expecting {name}.size(0) of {heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


@define("multi_head_attention_forward", "other", torch=False, method=False, functional=True,
        doc="multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, "
            "in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, "
            "out_proj_bias, training=True, key_padding_mask=None, need_weights=True, attn_mask=None, "
            "use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, "
            "static_k=None, static_v=None, average_attn_weights=True, is_causal=False) -> (Tensor, Tensor)"
            "\n\nMulti-head attention as nn.MultiheadAttention computes it (sequence-first inputs): "
            "the explicit softmax path when need_weights, scaled_dot_product_attention otherwise.")
def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                                 out_proj_bias, training=True, key_padding_mask=None, need_weights=True,
                                 attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None,
                                 average_attn_weights=True, is_causal=False):

    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for w, n in ((q_proj_weight, "q"), (k_proj_weight, "k"), (v_proj_weight, "v")):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {n}_proj_weight is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _per_head(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _per_head(v, static_v, "static_v", bsz * num_heads, head_dim)

    if add_zero_attn:
        shape = (bsz * num_heads, 1, head_dim)
        k = cat([k, zeros(shape, dtype=k.dtype, device=k.device)], dim=1)
        v = cat([v, zeros(shape, dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        E = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            w = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            w = bmm(q_scaled, k.transpose(-2, -1))
        w = softmax(w, dim=-1)
        if dropout_p > 0.0:
            w = dropout(w, p=dropout_p)
        out = bmm(w, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias)
        out = out.reshape(tgt_len, bsz, out.size(1))
        w = w.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            w = w.mean(dim=1)
        if not is_batched:
            out, w = out.squeeze(1), w.squeeze(0)
        return out, w

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.size(1))
    if not is_batched:
        out = out.squeeze(1)
    return out, None
