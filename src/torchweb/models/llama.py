"""A Llama-style decoder (RoPE, RMSNorm, SwiGLU, grouped KV heads) as Hugging Face's
LlamaForCausalLM lays it out: model.embed_tokens, model.layers.N.self_attn.{q,k,v,o}_proj,
mlp.{gate,up,down}_proj, input_layernorm, post_attention_layernorm, model.norm, lm_head. It also
reads checkpoints of models with this layout (SmolLM, TinyLlama, Llama 3.x with llama3 RoPE,
Qwen2 / Qwen2.5 with their q, k, v biases).

Plain PyTorch code: the tests run this file under PyTorch too. Works in the weights' dtype, with
RMSNorm's statistics in float32 as HF's. `model(input_ids)` gives the logits (B, T, vocab);
`model(input_ids, positions)` reads and writes the static KV cache; attention_mask and
position_ids serve left-padded batches (see kv_cache.py)."""

import math

import torchweb as torch
from torchweb import nn
from torchweb.models.config import LlamaConfig
from torchweb.models.kv_cache import CausalLM, StaticKVCache, attend

F = nn.functional   # an attribute, not an import: the file also runs with `torchweb` bound to PyTorch


def rope_inv_freq(config):
    """RoPE's inverse frequencies for config.rope_parameters (default or llama3 scaling)."""
    d, rope = config.head_dim, config.rope_parameters
    inv = [1.0 / (rope["rope_theta"] ** (i / d)) for i in range(0, d, 2)]
    if rope["rope_type"] == "llama3":
        factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
        old = rope["original_max_position_embeddings"]
        out = []
        for f in inv:
            wavelen = 2 * math.pi / f
            if wavelen < old / high:
                out.append(f)
            elif wavelen > old / low:
                out.append(f / factor)
            else:
                smooth = (old / wavelen - low) / (high - low)
                out.append((1 - smooth) * f / factor + smooth * f)
        inv = out
    return torch.tensor(inv, dtype=torch.float32)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * x.to(dtype)


class LlamaAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n_head, self.n_kv, self.head_dim = config.num_attention_heads, config.num_key_value_heads, config.head_dim
        h, bias = config.hidden_size, config.attention_bias
        qkv_bias = getattr(config, "qkv_bias", bias)      # Qwen2: q, k, v biased, o_proj not
        self.q_proj = nn.Linear(h, self.n_head * self.head_dim, bias=qkv_bias)
        self.k_proj = nn.Linear(h, self.n_kv * self.head_dim, bias=qkv_bias)
        self.v_proj = nn.Linear(h, self.n_kv * self.head_dim, bias=qkv_bias)
        self.o_proj = nn.Linear(self.n_head * self.head_dim, h, bias=bias)
        self.cache = StaticKVCache()

    def forward(self, x, cos, sin, positions=None, mask=None):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        y = attend(q, k, v, self.cache, positions, mask)
        return self.o_proj(y.transpose(1, 2).reshape(B, T, self.n_head * self.head_dim))


class LlamaMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        h, i, bias = config.hidden_size, config.intermediate_size, config.mlp_bias
        if config.hidden_act != "silu":
            raise NotImplementedError(f"Llama hidden_act {config.hidden_act!r} is not supported (silu is)")
        self.gate_proj = nn.Linear(h, i, bias=bias)
        self.up_proj = nn.Linear(h, i, bias=bias)
        self.down_proj = nn.Linear(i, h, bias=bias)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self_attn = LlamaAttention(config)
        self.mlp = LlamaMLP(config)
        self.input_layernorm = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.post_attention_layernorm = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps)

    def forward(self, x, cos, sin, positions=None, mask=None):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, positions, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(LlamaDecoderLayer(config) for _ in range(config.num_hidden_layers))
        self.norm = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.register_buffer("inv_freq", rope_inv_freq(config), persistent=False)

    @property
    def embeddings(self):
        return self.embed_tokens

    def forward(self, input_ids, position_ids, positions=None, mask=None):
        x = self.embed_tokens(input_ids)
        freqs = position_ids.to(torch.float32)[..., None] * self.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        if cos.dim() == 3:                    # per-row positions (B, T, D): broadcast over the heads
            cos, sin = cos[:, None], sin[:, None]
        for layer in self.layers:
            x = layer(x, cos, sin, positions, mask)
        return self.norm(x)


class LlamaForCausalLM(CausalLM):
    config_class = LlamaConfig

    def __init__(self, config):
        super().__init__(config, "model", LlamaModel(config), config.hidden_size, config.num_key_value_heads,
                         config.head_dim, config.max_position_embeddings)
