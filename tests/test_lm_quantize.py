"""quantize_ on torchweb.models' GPT-2 and Llama (int8, packed bfloat16 and float16 weights): GPT-2's
Conv1D layers are packed (transposed), a tied lm_head and embedding keep one packed copy; the
logits equal PyTorch's (transformers) running the dequantized weights, stay within a stated
tolerance of float32's, greedy tokens equal float32's, and the compiled decode step replays."""

import pytest
import torch

import torchweb as tw
from lm_oracle import GPT2, LLAMA, hf_model
from torchweb.ao.quantization import (BFloat16WeightOnlyLinear, Float16WeightOnlyLinear, Int8WeightOnlyLinear,
                                      bfloat16_weight_only, float16_weight_only, int8_weight_only, quantize_)
from torchweb.ao.quantization.packed_embedding import PackedEmbedding
from torchweb.models import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, generate

PROMPT = [[5, 17, 3, 90, 42, 7]]
NEW = 16
MODELS = {"gpt2": ("gpt2", 6, {}), "llama": ("llama", 1, {}),
          "llama_tied": ("llama", 1, dict(tie_word_embeddings=True))}
CONFIGS = {"int8": (int8_weight_only, Int8WeightOnlyLinear), "bf16": (bfloat16_weight_only, BFloat16WeightOnlyLinear),
           "f16": (float16_weight_only, Float16WeightOnlyLinear)}


def _dequantized(w, fmt):
    """What the packed layer multiplies by, computed in PyTorch: torchao's int8 rounding, or a half's."""
    if fmt == "bf16":
        return w.bfloat16().float()
    if fmt == "f16":
        return w.half().float()
    scale = (w.abs().amax(dim=1) / 127.5).clamp_min(torch.finfo(torch.float32).eps)
    return torch.clamp(torch.round(w * (1 / scale)[:, None]), -128, 127) * scale[:, None]


def _pair(variant, device):
    kind, seed, overrides = MODELS[variant]
    ref = hf_model(kind, seed=seed, **overrides)
    cls, cfg, base = (GPT2LMHeadModel, GPT2Config, GPT2) if kind == "gpt2" else (LlamaForCausalLM, LlamaConfig, LLAMA)
    ours = cls(cfg(**{**base, **overrides})).to(device).eval()
    ours.load_state_dict({k: tw.tensor(v.tolist()) for k, v in ref.state_dict().items()})
    return ours, ref


def _reference_quantized(ref, fmt):
    """ref with every layer quantize_ packs holding its dequantized weight (Conv1D's as (out, in))."""
    with torch.no_grad():
        for name, m in ref.named_modules():
            if isinstance(m, torch.nn.Linear):
                m.weight.copy_(_dequantized(m.weight, fmt))
            elif type(m).__name__ == "Conv1D":
                m.weight.copy_(_dequantized(m.weight.t(), fmt).t())
    return ref


def theirs(t):
    return torch.tensor(t.tolist())


def _logits(model, ids):
    with tw.no_grad():
        return torch.tensor(model(tw.tensor(ids, device=model.lm_head.weight.device)).tolist())


def _greedy(hf, n):
    with torch.no_grad():
        return hf.generate(torch.tensor(PROMPT), max_new_tokens=n, do_sample=False, pad_token_id=0,
                           eos_token_id=None, min_new_tokens=n).tolist()


@pytest.mark.parametrize("fmt", list(CONFIGS))
@pytest.mark.parametrize("variant", list(MODELS))
def test_quantized_model_is_pytorch_on_dequantized_weights(variant, fmt, device):
    ours, ref = _pair(variant, device)
    fp32_tokens = _greedy(ref, NEW)
    with torch.no_grad():
        full = ref(torch.tensor(fp32_tokens)).logits
    config, layer = CONFIGS[fmt]
    quantize_(ours, config())
    packed = [m for m in ours.modules() if isinstance(m, layer)]
    per_block = 4 if variant == "gpt2" else 7       # GPT-2: c_attn, c_proj, c_fc, c_proj (Conv1D)
    assert len(packed) == per_block * 2 + 1          # and the lm_head
    emb = ours.get_input_embeddings()
    if ours.config.tie_word_embeddings:             # one copy of the vocabulary matrix
        assert isinstance(emb, PackedEmbedding) and emb.weight is ours.lm_head.weight
    else:
        assert isinstance(emb, tw.nn.Embedding)
    got = _logits(ours, fp32_tokens)
    deq = _reference_quantized(ref, fmt)
    with torch.no_grad():
        want = deq(torch.tensor(fp32_tokens)).logits
    assert torch.allclose(got, want, atol=1e-4, rtol=1e-4), (got - want).abs().max()
    # against float32: int8 within 2% of the logits' range, bfloat16 and float16 within 1%
    tol = (0.02 if fmt == "int8" else 0.01) * float(full.max() - full.min())
    assert (got - full).abs().max() <= tol
    # float32's greedy choice kept wherever its margin over the runner-up exceeds twice that
    # (these random models have near-ties, where rounding the weights may pick the other token)
    top2 = full[0].topk(2, dim=-1).values
    sure = (top2[:, 0] - top2[:, 1]) > 2 * tol
    assert sure.sum() >= len(PROMPT[0])
    assert torch.equal(got[0].argmax(-1)[sure], full[0].argmax(-1)[sure])
    # greedy text: PyTorch's on the same (dequantized) weights, token for token
    assert generate(ours, PROMPT, NEW, greedy=True, compile=False).tolist() == _greedy(deq, NEW)


@pytest.mark.parametrize("fmt", list(CONFIGS))
def test_compiled_decode_replays_packed_weights(fmt):
    """generate's compiled step (captured once, replayed per token) with packed weights gives the
    eager step's tokens, and a second generate replays the same capture."""
    ours, _ = _pair("gpt2", "webgpu")
    quantize_(ours, CONFIGS[fmt][0]())
    eager = generate(ours, PROMPT, NEW, greedy=True, compile=False).tolist()
    assert generate(ours, PROMPT, NEW, greedy=True, compile=True).tolist() == eager
    assert generate(ours, PROMPT, NEW, greedy=True, compile=True).tolist() == eager


def test_state_dict_keeps_hf_keys_and_one_tied_copy(device):
    ours, ref = _pair("gpt2", device)
    quantize_(ours, int8_weight_only())
    sd = ours.state_dict()
    assert {k for k in sd if not k.endswith("weight_scale")} == set(ref.state_dict())
    assert ours.transformer.wte.weight is ours.lm_head.weight and torch.equal(theirs(sd["transformer.wte.weight"]), theirs(sd["lm_head.weight"]))
    assert sd["transformer.h.0.attn.c_attn.weight"].shape == (3 * GPT2["n_embd"], GPT2["n_embd"] // 4)
