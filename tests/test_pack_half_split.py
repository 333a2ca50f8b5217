"""Packing bfloat16 and float16 weights past the storage-binding limit (a float32 GPT-2 124M's
tied 50257 x 768 table is 154 MB, past browsers' default 128 MiB): the webgpu backend packs such
a weight in blocks of its rows, each through windows of the weight and the words
(backends/webgpu/packed_linear.py). With the limit lowered to 1 MiB (tests/test_binding_limit.py),
the words are PyTorch's half matrix's bytes, and a tied GPT-2-shaped model quantized under
that limit generates PyTorch's greedy ids on the same half weights; the cpu device runs the
same tests unlimited."""

import pytest
import torch

import torchweb as tw
from lm_oracle import GPT2, hf_model
from oracle import fast_ours, fast_theirs
from test_binding_limit import lowered  # noqa: F401  (the fixture)
from test_lm_quantize import PROMPT, _greedy, _reference_quantized
from torchweb.ao.quantization import bfloat16_weight_only, float16_weight_only, quantize_
from torchweb.models import GPT2Config, GPT2LMHeadModel, generate
from torchweb.ops.quantized_linear import pack_half

HALVES = {"bfloat16": torch.bfloat16, "float16": torch.float16}
CONFIGS = {"bf16": bfloat16_weight_only, "f16": float16_weight_only}
SPECIAL = [1.0, -2.5, float("inf"), float("-inf"), float("nan"), 6e-8, -3e-5, 65504.0, 0.0, -0.0, 0.1]


@pytest.mark.parametrize("fmt", list(HALVES))
def test_packing_a_table_past_the_limit_is_pytorchs_bytes(fmt, device, lowered):  # noqa: F811
    """3001 x 301 (an odd row: its last word's high half zero): 3.6 MB of f32 words, 1.8 MB of
    packed words, both past the 1 MiB limit; special values in a row of the last block."""
    half = HALVES[fmt]
    w = torch.randn(3001, 301, generator=torch.Generator().manual_seed(5)).to(half)
    w[2999, :len(SPECIAL)] = torch.tensor(SPECIAL).to(half)
    ours = fast_ours(w.float(), device).to(getattr(tw, fmt))   # (exact: the values are halves)
    got = fast_theirs(pack_half(ours))
    want = torch.cat([w.view(torch.int16), torch.zeros(3001, 1, dtype=torch.int16)], 1).view(torch.int32)
    assert got.shape == (3001, 151) and torch.equal(got, want)
    lowered()


@pytest.mark.parametrize("fmt", list(CONFIGS))
def test_tied_gpt2_quantized_past_the_limit_generates_pytorchs_ids(fmt, device, lowered):  # noqa: F811
    """a tied GPT-2 whose 12000 x 64 vocabulary matrix (3 MB in float32) is past the limit,
    quantized under it: greedy ids are PyTorch's on the same half weights"""
    overrides = dict(vocab_size=12000, n_embd=64)
    ref = hf_model("gpt2", seed=6, **overrides)
    ours = GPT2LMHeadModel(GPT2Config(**{**GPT2, **overrides})).to(device).eval()
    ours.load_state_dict({k: fast_ours(v.detach(), device) for k, v in ref.state_dict().items()})
    quantize_(ours, CONFIGS[fmt]())
    assert ours.lm_head.weight is ours.get_input_embeddings().weight   # one packed copy
    deq = _reference_quantized(ref, fmt)
    assert generate(ours, PROMPT, 8, greedy=True, compile=False).tolist() == _greedy(deq, 8)
    lowered()
