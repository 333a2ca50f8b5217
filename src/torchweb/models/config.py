"""Model configurations read from a Hugging Face `config.json`, under its field names, so a
checkpoint's config file builds the model it was saved from. Plain Python (no tensors)."""


class _Config:
    """Fields are HF's names with HF's defaults; unknown fields are kept as attributes."""

    defaults = {}

    def __init__(self, **fields):
        for name, value in self.defaults.items():
            setattr(self, name, value)
        for name, value in fields.items():
            setattr(self, name, value)
        self._finish()

    def _finish(self):
        pass

    @classmethod
    def from_dict(cls, d):
        return cls(**d)

    def to_dict(self):
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"


class GPT2Config(_Config):
    defaults = dict(model_type="gpt2", vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12,
                    n_head=12, n_inner=None, activation_function="gelu_new", layer_norm_epsilon=1e-5,
                    tie_word_embeddings=True, bos_token_id=50256, eos_token_id=50256,
                    scale_attn_weights=True, scale_attn_by_inverse_layer_idx=False,
                    reorder_and_upcast_attn=False)

    def _finish(self):
        if self.n_embd % self.n_head:
            raise ValueError(f"GPT2Config: n_embd ({self.n_embd}) must be a multiple of n_head ({self.n_head})")
        if self.scale_attn_by_inverse_layer_idx or not self.scale_attn_weights:
            raise NotImplementedError("GPT2Config: only scale_attn_weights=True and "
                                      "scale_attn_by_inverse_layer_idx=False (every published GPT-2) are supported")


class LlamaConfig(_Config):
    defaults = dict(model_type="llama", vocab_size=32000, hidden_size=4096, intermediate_size=11008,
                    num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=None,
                    head_dim=None, hidden_act="silu", max_position_embeddings=2048, rms_norm_eps=1e-6,
                    rope_theta=10000.0, rope_scaling=None, rope_parameters=None,
                    attention_bias=False, mlp_bias=False, tie_word_embeddings=False,
                    bos_token_id=1, eos_token_id=2)

    def _finish(self):
        if self.num_key_value_heads is None:
            self.num_key_value_heads = self.num_attention_heads
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(f"LlamaConfig: num_attention_heads ({self.num_attention_heads}) must be a "
                             f"multiple of num_key_value_heads ({self.num_key_value_heads})")
        # transformers 5 writes rope_parameters (theta and scaling together); 4.x wrote
        # rope_theta and rope_scaling
        rope = dict(self.rope_parameters or {})
        if self.rope_scaling:
            rope = {**dict(self.rope_scaling), **rope}
        rope.setdefault("rope_theta", self.rope_theta)
        kind = rope.get("rope_type", rope.get("type", "default"))
        if kind not in ("default", "llama3"):
            raise NotImplementedError(f"LlamaConfig: rope_type {kind!r} is not supported (default, llama3 are)")
        rope["rope_type"] = kind
        self.rope_theta = rope["rope_theta"]
        self.rope_parameters = rope


class Qwen2Config(LlamaConfig):
    """Qwen2 / Qwen2.5: Llama's layout with biases on q, k and v (none on o_proj)."""
    defaults = dict(LlamaConfig.defaults, model_type="qwen2", vocab_size=151936, hidden_size=4096,
                    intermediate_size=22016, max_position_embeddings=32768, bos_token_id=None,
                    eos_token_id=None, use_sliding_window=False)

    def _finish(self):
        super()._finish()
        if self.use_sliding_window:
            raise NotImplementedError("Qwen2Config: use_sliding_window=True is not supported")
        self.qkv_bias = True


def config_from_dict(d):
    """The config object for a config.json's dict, by its model_type."""
    kind = d.get("model_type")
    classes = {"gpt2": GPT2Config, "llama": LlamaConfig, "qwen2": Qwen2Config}
    if kind not in classes:
        raise NotImplementedError(f"model_type {kind!r} is not supported; torchweb.models has "
                                  f"{', '.join(sorted(classes))}")
    return classes[kind].from_dict(d)
