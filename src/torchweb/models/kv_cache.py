"""A static KV cache and the attention that reads it, shared by the GPT-2 and Llama modules.

Plain PyTorch code (`import torchweb as torch` is the only torchweb-specific line): the tests run
this file under PyTorch too. The cache is preallocated for max_len positions and written in
place at the positions a call passes as a tensor, so one decode step is the same program at
every position (torch.compile captures it once and replays it per token)."""

import torchweb as torch
from torchweb import nn

F = nn.functional   # an attribute, not an import: the file also runs with `torchweb` bound to PyTorch


class StaticKVCache(nn.Module):
    """Keys and values of one attention layer, (batch, kv_heads, max_len, head_dim), held as
    non-persistent buffers (they stay out of state_dict and follow .to())."""

    def __init__(self):
        super().__init__()
        self.register_buffer("k", None, persistent=False)
        self.register_buffer("v", None, persistent=False)
        self.register_buffer("slots", None, persistent=False)

    def allocate(self, batch, kv_heads, max_len, head_dim, dtype, device):
        self.k = torch.zeros(batch, kv_heads, max_len, head_dim, dtype=dtype, device=device)
        self.v = torch.zeros(batch, kv_heads, max_len, head_dim, dtype=dtype, device=device)
        self.slots = torch.arange(max_len, device=device)

    def free(self):
        self.k = self.v = self.slots = None

    def update(self, k, v, positions):
        """Write k, v (B, H, T, D) at positions (T,) in place; return the whole cache and the
        mask of what each of the T queries may see (slot <= its position)."""
        self.k.index_copy_(2, positions, k)
        self.v.index_copy_(2, positions, v)
        return self.k, self.v, positions[:, None] >= self.slots[None, :]


def attend(q, k, v, cache, positions):
    """Causal attention of q (B, Hq, T, D) over k, v (B, Hkv, T, D); with positions (a tensor),
    over everything the cache holds up to each query's position."""
    gqa = q.shape[1] != k.shape[1]
    if positions is None:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
    k, v, mask = cache.update(k, v, positions)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)


class CausalLM(nn.Module):
    """The part GPT-2 and Llama share: a decoder (named as HF names it) under an lm_head, tied to
    the input embeddings where the config says so, and the caches generate() sets up."""

    def __init__(self, config, decoder_name, decoder, hidden, kv_heads, head_dim, max_positions):
        super().__init__()
        self.config, self.decoder_name = config, decoder_name
        self.num_kv_heads, self.head_dim, self.max_positions = kv_heads, head_dim, max_positions
        setattr(self, decoder_name, decoder)
        self.lm_head = nn.Linear(hidden, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.get_input_embeddings().weight

    def get_input_embeddings(self):
        return getattr(self, self.decoder_name).embeddings

    def forward(self, input_ids, positions=None):
        """Logits (B, T, vocab) of input_ids (B, T); positions (T,) int64 uses the KV cache."""
        return self.lm_head(getattr(self, self.decoder_name)(input_ids, positions))

    def caches(self):
        return [m for m in self.modules() if isinstance(m, StaticKVCache)]

    def setup_cache(self, batch, max_len, dtype=None, device=None):
        """Preallocate every layer's cache for batch sequences of up to max_len positions."""
        w = self.get_input_embeddings().weight
        # the activations' dtype: the float parameters' (after quantize_, weights are packed int32)
        floats = [p.dtype for p in self.parameters() if p.is_floating_point()]
        dtype = dtype or (w.dtype if w.is_floating_point() else floats[0] if floats else torch.float32)
        for c in self.caches():
            c.allocate(batch, self.num_kv_heads, max_len, self.head_dim, dtype, device or w.device)
        self.cache_len = max_len

    def free_cache(self):
        for c in self.caches():
            c.free()
        self.cache_len = 0
