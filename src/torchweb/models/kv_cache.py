"""A static KV cache and the attention that reads it, shared by the GPT-2 and Llama modules.

Plain PyTorch code (`import torchweb as torch` is the only torchweb-specific line): the tests run
this file under PyTorch too. The cache is preallocated for max_len positions and written in
place at the positions a call passes as a tensor, so one decode step is the same program at
every position (torch.compile captures it once and replays it per token).

Batches of prompts of different lengths are left-padded, as Hugging Face pads them: an
attention_mask (B, S) of 1 for tokens and 0 for padding hides the padded keys, and position_ids
(B, T) give each token its place in its own text (generate() counts them from the mask)."""

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

    def allocate(self, batch, kv_heads, max_len, head_dim, dtype, device, slots):
        self.k = torch.zeros(batch, kv_heads, max_len, head_dim, dtype=dtype, device=device)
        self.v = torch.zeros(batch, kv_heads, max_len, head_dim, dtype=dtype, device=device)
        self.slots = slots

    def free(self):
        self.k = self.v = self.slots = None

    def update(self, k, v, positions):
        """Write k, v (B, H, T, D) at positions (T,) in place; return the whole cache."""
        self.k.index_copy_(2, positions, k)
        self.v.index_copy_(2, positions, v)
        return self.k, self.v


def cache_mask(positions, slots):
    """The causal mask (T, S) of queries at positions (T,) over keys at slots (S,): slot <= position."""
    return positions[:, None] >= slots[None, :]


def attend(q, k, v, cache, positions, mask):
    """Attention of q (B, Hq, T, D) over k, v (B, Hkv, T, D): causal; with positions (a tensor),
    over the whole cache up to each query's slot, or under mask where one is given (a padded
    batch's, see CausalLM.attention_mask_for)."""
    gqa = q.shape[1] != k.shape[1]
    if positions is not None:
        k, v = cache.update(k, v, positions)
        if mask is None:   # (CausalLM makes it once for all layers: a dispatch a layer less)
            mask = cache_mask(positions, cache.slots)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)


class CausalLM(nn.Module):
    """The part GPT-2 and Llama share: a decoder (named as HF names it) under an lm_head, tied to
    the input embeddings where the config says so, and the caches generate() sets up."""

    def __init__(self, config, decoder_name, decoder, hidden, kv_heads, head_dim, max_positions):
        super().__init__()
        self.config, self.decoder_name = config, decoder_name
        self.num_kv_heads, self.head_dim, self.max_positions = kv_heads, head_dim, max_positions
        setattr(self, decoder_name, decoder)
        self.register_buffer("slots", None, persistent=False)     # arange(cache length), for the masks
        self.lm_head = nn.Linear(hidden, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.get_input_embeddings().weight

    def get_input_embeddings(self):
        return getattr(self, self.decoder_name).embeddings

    def forward(self, input_ids, positions=None, attention_mask=None, position_ids=None):
        """Logits (B, T, vocab) of input_ids (B, T). positions (T,) int64: the cache slots the
        tokens take (reads and writes the KV cache). attention_mask (B, S): 1 for tokens, 0 for
        padding, over the keys the call sees (the cache's first S slots with positions, else the
        input). position_ids (B, T): each token's place in its text (default: its slot)."""
        mask = self.attention_mask_for(input_ids.shape[1], positions, attention_mask)
        if position_ids is None:
            position_ids = positions if positions is not None else \
                torch.arange(input_ids.shape[1], device=input_ids.device)
        return self.lm_head(getattr(self, self.decoder_name)(input_ids, position_ids, positions, mask))

    def attention_mask_for(self, length, positions, attention_mask):
        """The boolean mask (B, 1, T, S) of the keys each query sees under attention_mask; without
        one, the cache's causal mask (T, S) (slot <= the query's position), or None for plain
        causal attention over the input."""
        if attention_mask is None:
            return None if positions is None else cache_mask(positions, self.slots)
        queries = positions if positions is not None else torch.arange(length, device=attention_mask.device)
        keys = self.slots if positions is not None else queries
        mask = cache_mask(queries, keys)
        if attention_mask.shape[1] < keys.shape[0]:       # slots past the mask's end: tokens to come
            attention_mask = F.pad(attention_mask, (0, keys.shape[0] - attention_mask.shape[1]), value=1)
        # a padding query sees its own slot, so no row of the softmax is empty (it would give NaN,
        # which its value vectors would carry into every later layer)
        seen = attention_mask.bool()[:, None, :] | (queries[:, None] == keys[None, :])[None]
        return (mask[None] & seen)[:, None]

    def caches(self):
        return [m for m in self.modules() if isinstance(m, StaticKVCache)]

    def setup_cache(self, batch, max_len, dtype=None, device=None):
        """Preallocate every layer's cache for batch sequences of up to max_len positions."""
        w = self.get_input_embeddings().weight
        # the activations' dtype: the float parameters' (after quantize_, weights are packed int32)
        floats = [p.dtype for p in self.parameters() if p.is_floating_point()]
        dtype = dtype or (w.dtype if w.is_floating_point() else floats[0] if floats else torch.float32)
        self.slots = torch.arange(max_len, device=device or w.device)
        for c in self.caches():
            c.allocate(batch, self.num_kv_heads, max_len, self.head_dim, dtype, device or w.device, self.slots)
        self.cache_len = max_len

    def free_cache(self):
        for c in self.caches():
            c.free()
        self.slots = None
        self.cache_len = 0
