"""Hugging Face `transformers` as the oracle of tests/test_lm_*.py: GPT2LMHeadModel and
LlamaForCausalLM built from small random configs, their weights spread (std 0.2) so logits
differ by more than rounding, saved with save_pretrained (single or sharded safetensors)."""

import sys

import pytest
import torch


def transformers():
    """The transformers package, imported without torchvision (a torchvision that does not match
    the installed torch breaks transformers' import, and these models need none of it)."""
    hidden = "torchvision" not in sys.modules
    if hidden:
        sys.modules["torchvision"] = None
    try:
        return pytest.importorskip("transformers")
    finally:
        if hidden:
            sys.modules.pop("torchvision", None)


GPT2 = dict(n_layer=2, n_embd=32, n_head=4, vocab_size=97, n_positions=64, bos_token_id=0, eos_token_id=0)
LLAMA = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, vocab_size=97, max_position_embeddings=128, bos_token_id=0,
             eos_token_id=0, rms_norm_eps=1e-5)
LLAMA3_ROPE = dict(rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0,
                   high_freq_factor=4.0, original_max_position_embeddings=16)


def hf_model(kind, seed=0, **overrides):
    """A random HF model of kind 'gpt2', 'llama' or 'qwen2' in eval mode."""
    tf = transformers()
    torch.manual_seed(seed)
    if kind == "gpt2":
        model = tf.GPT2LMHeadModel(tf.GPT2Config(**{**GPT2, **overrides}))
    elif kind == "qwen2":
        model = tf.Qwen2ForCausalLM(tf.Qwen2Config(**{**LLAMA, **overrides}))
    else:
        model = tf.LlamaForCausalLM(tf.LlamaConfig(**{**LLAMA, **overrides}))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or "ln_" in name:
                p.copy_(1 + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0, 0.2)
    return model.eval()


def logits(model, ids):
    with torch.no_grad():
        return model(torch.as_tensor(ids)).logits
