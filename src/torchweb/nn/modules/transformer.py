"""Transformer, TransformerEncoder(Layer), TransformerDecoder(Layer) as PyTorch writes them
(torch/nn/modules/transformer.py): the same submodule names (so state_dict keys match), post-
or pre-norm (norm_first) blocks, "relu"/"gelu" or a callable activation, causal-mask detection,
xavier_uniform_ on every matrix of a Transformer.

The layers' self-attention runs with need_weights=False, so it goes through
scaled_dot_product_attention (the fused kernels on the webgpu device). PyTorch's inference fast
paths (_transformer_encoder_layer_fwd, nested tensors) compute the same values; the one visible
effect of the nested-tensor path, zeros at padded positions of TransformerEncoder's output in
eval mode without gradients, is reproduced."""

import copy
import warnings

from ... import _creation
from .. import functional as F
from .. import init
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .multihead_attention import MultiheadAttention
from ... import _dtype as D
from ...autograd import grad_mode
from ...ops.composite.mha import _canonical_mask, _none_or_dtype
from ...ops.layout import triu
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


# -- helpers --------------------------------------------------------------------------------
def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    full = _creation.full((sz, sz), float("-inf"), dtype=dtype, device=device)
    return triu(full, diagonal=1)


def _get_seq_len(src, batch_first):
    size = tuple(src.shape)
    if len(size) == 2:
        return size[0]
    return size[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            make_causal = bool((mask == causal).all().item())
        else:
            make_causal = False
    return make_causal


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _canon(mask, name, other, other_name, target, check_other=True):
    return _canonical_mask(mask, name, _none_or_dtype(other) if check_other else None, other_name, target,
                           check_other)


def _is_act(activation, fn, cls_name):
    return activation is fn or type(activation).__name__ == cls_name and isinstance(activation, Module)


# -- layers ---------------------------------------------------------------------------------
class _Layer(Module):
    """What the encoder and decoder layers share: per residual block (2 or 3, _NBLOCKS) a
    LayerNorm norm<i> and a Dropout dropout<i>; the self-attention block first, the feed-forward
    block (linear1, dropout, linear2) last. Submodules are made in PyTorch's order (state_dict)."""

    _NBLOCKS = 2

    def _blocks(self, d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias, fk):
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        for i in range(1, self._NBLOCKS + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
        for i in range(1, self._NBLOCKS + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self._modules[f"dropout{self._NBLOCKS}"](x)


class TransformerEncoderLayer(_Layer):
    """Self-attention and a feed-forward block, each with a residual connection and LayerNorm."""

    __module__ = "torchweb.nn"
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **fk)
        self._blocks(d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias, fk)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if _is_act(activation, F.relu, "ReLU"):
            self.activation_relu_or_gelu = 1
        elif _is_act(activation, F.gelu, "GELU"):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = _canon(src_key_padding_mask, "src_key_padding_mask", src_mask, "src_mask", src.dtype)
        src_mask = _canon(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerDecoderLayer(_Layer):
    """Self-attention, attention over the encoder's memory and a feed-forward block."""

    __module__ = "torchweb.nn"
    __constants__ = ["norm_first"]
    _NBLOCKS = 3

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **fk)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **fk)
        self._blocks(d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias, fk)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)


# -- stacks ---------------------------------------------------------------------------------
class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer, then an optional norm."""

    __module__ = "torchweb.nn"
    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = ""
        enc = "encoder_layer"
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            why = f"{enc} was not TransformerEncoderLayer"
        elif encoder_layer.norm_first:
            why = f"{enc}.norm_first was True"
        elif not encoder_layer.self_attn.batch_first:
            why = f"{enc}.self_attn.batch_first was not True(use batch_first for better inference performance)"
        elif not encoder_layer.self_attn._qkv_same_embed_dim:
            why = f"{enc}.self_attn._qkv_same_embed_dim was not True"
        elif encoder_layer.self_attn.in_proj_bias is None:
            why = f"{enc}.self_attn was passed bias=False"
        elif not encoder_layer.activation_relu_or_gelu:
            why = f"{enc}.activation_relu_or_gelu was not True"
        elif encoder_layer.norm1.eps != encoder_layer.norm2.eps:
            why = f"{enc}.norm1.eps was not equal to {enc}.norm2.eps"
        elif encoder_layer.self_attn.num_heads % 2 == 1:
            why = f"{enc}.self_attn.num_heads is odd"
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def _padded_positions_zeroed(self, src, kpm, mask):
        """PyTorch's nested-tensor path (eval, no gradient, a left-aligned padding mask and no
        attention mask) returns zeros at padded positions: True when that path would run."""
        first = self.layers[0]
        if not getattr(self, "use_nested_tensor", False) or first.training or src.dim() != 3 or kpm is None \
                or mask is not None:
            return False
        if grad_mode.is_grad_enabled() and (src.requires_grad or any(p.requires_grad for p in first.parameters())):
            return False
        if getattr(self, "mask_check", True):
            pad = (kpm != 0).tolist()  # a canonical (float) mask: -inf at padded keys
            for row in pad:  # left aligned: the padding at the end of each row
                if any(row[i] and not row[i + 1] for i in range(len(row) - 1)):
                    return False
        return True

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = _canon(src_key_padding_mask, "src_key_padding_mask", mask, "mask", src.dtype)
        mask = _canon(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first
        zero_pad = self._padded_positions_zeroed(src, src_key_padding_mask, mask)
        seq_len = _get_seq_len(src, batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if zero_pad:
            keep = (src_key_padding_mask == 0).to(output.dtype)  # (N, S)
            output = output * (keep.unsqueeze(-1) if batch_first else keep.t().unsqueeze(-1))
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """num_layers deep copies of decoder_layer, then an optional norm."""

    __module__ = "torchweb.nn"
    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need"."""

    __module__ = "torchweb.nn"

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()

        def stack(custom, layer_cls, stack_cls, num_layers):
            if custom is not None:
                return custom
            layer = layer_cls(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                              norm_first, bias, **fk)
            return stack_cls(layer, num_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
        self.encoder = stack(custom_encoder, TransformerEncoderLayer, TransformerEncoder, num_encoder_layers)
        self.decoder = stack(custom_decoder, TransformerDecoderLayer, TransformerDecoder, num_decoder_layers)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float (sz, sz) mask: -inf above the diagonal, 0 elsewhere."""
        if dtype is None:
            dtype = D.float32
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
