# torchweb.models in the page: a tiny GPT-2 and a tiny Llama (grouped KV heads, llama3 RoPE) in
# Hugging Face's layout, weights from formulas, loaded through load_state_dict with HF's keys;
# the prompt's logits, then greedy generation with the static KV cache, the decode step compiled
# (captured once, replayed per token) where torch is torchweb, eager under PyTorch, and the
# tokens streamed through the callback; a left-padded batch of two prompts. The `# modules:` line
# ships the model files (record_cases.py runs them with PyTorch; the page with torchweb: the same
# text as the wheel's).
# modules: src/torchweb/models/config.py src/torchweb/models/kv_cache.py src/torchweb/models/gpt2.py src/torchweb/models/llama.py src/torchweb/models/generation.py
import math

import torch

from torchweb.models.config import GPT2Config, LlamaConfig
from torchweb.models.generation import generate
from torchweb.models.gpt2 import GPT2LMHeadModel
from torchweb.models.llama import LlamaForCausalLM

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"
replays = hasattr(torch, "webgpu")      # torchweb's compile replays; PyTorch's would need a C compiler


def formula_state(model):
    """HF-keyed weights from formulas (norm scales near 1), as a checkpoint would give them."""
    state = {}
    for k, (name, p) in enumerate(model.state_dict().items()):
        norm = "ln_" in name or "norm" in name
        vals = [(1.0 if norm else 0.0) + (0.1 if norm else 0.35) * math.sin(0.71 * i + 1.7 * k + 0.3)
                for i in range(p.numel())]
        state[name] = torch.tensor(vals).reshape(p.shape)
    return state


prompt = [[3, 14, 15, 9, 26, 5, 35]]
result = {}
models = {
    "gpt2": GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=4, vocab_size=61, n_positions=64)),
    "llama": LlamaForCausalLM(LlamaConfig(hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                          num_attention_heads=4, num_key_value_heads=2, vocab_size=61,
                                          max_position_embeddings=64, tie_word_embeddings=True,
                                          rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                                            high_freq_factor=4.0, original_max_position_embeddings=16))),
}
for name, model in models.items():
    model.load_state_dict(formula_state(model))
    model.to(device).eval()
    ids = torch.tensor(prompt).to(device)
    with torch.no_grad():
        result[name + "_logits"] = model(ids)[0, -3:].tolist()
    streamed = []
    out = generate(model, ids, 12, greedy=True, compile=replays, callback=streamed.append)
    result[name + "_tokens"] = out.tolist()
    result[name + "_streamed"] = streamed
    result[name + "_again"] = generate(model, ids, 12, greedy=True, compile=replays).tolist()
    # prompts of different lengths, left-padded with their attention_mask (Hugging Face's way)
    padded = torch.tensor([prompt[0], [60, 60, 60, 7, 21, 40, 2]]).to(device)
    mask = torch.tensor([[1] * 7, [0, 0, 0, 1, 1, 1, 1]]).to(device)
    result[name + "_padded"] = generate(model, padded, 8, greedy=True, compile=replays, attention_mask=mask,
                                        pad_token_id=60).tolist()
