"""Batches of prompts of different lengths, left-padded as Hugging Face pads them: greedy tokens
of generate(input_ids, attention_mask=...) equal transformers' generate on the same checkpoint
(and the model files' own under PyTorch) and generating each prompt alone; the padded forward's logits equal transformers'; a row that
produced eos emits the pad token, as transformers' does; the compiled decode step gives eager's
tokens."""

import inspect

import pytest
import torch

import torchweb as tw
from lm_files import load_models_with
from lm_oracle import GPT2, LLAMA, hf_model
from torchweb.models import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, Qwen2Config, generate

PROMPTS = [[5, 17, 3, 90, 42, 7], [11, 2, 60], [8, 8, 30, 1, 77, 64, 19, 23], [40]]
PAD = 96
NEW = 12
SEEDS = {"gpt2": 6, "llama": 1, "qwen2": 3}
CLASSES = {"gpt2": (GPT2LMHeadModel, GPT2Config, GPT2), "llama": (LlamaForCausalLM, LlamaConfig, LLAMA),
           "qwen2": (LlamaForCausalLM, Qwen2Config, LLAMA)}


def left_padded(prompts, pad=PAD):
    width = max(map(len, prompts))
    ids = [[pad] * (width - len(p)) + p for p in prompts]
    mask = [[0] * (width - len(p)) + [1] * len(p) for p in prompts]
    return ids, mask


def _ours(kind, ref, device):
    cls, cfg, base = CLASSES[kind]
    ours = cls(cfg(**base)).to(device).eval()
    ours.load_state_dict({k: tw.tensor(v.tolist()) for k, v in ref.state_dict().items()})
    return ours


@pytest.fixture(scope="module", params=list(SEEDS))
def kind(request):
    return request.param


@pytest.fixture(scope="module")
def reference(kind):
    """The HF model and its greedy tokens for the padded batch (no eos), which our model files
    give too when run under PyTorch."""
    ref = hf_model(kind, seed=SEEDS[kind])
    ids, mask = left_padded(PROMPTS)
    with torch.no_grad():
        out = ref.generate(torch.tensor(ids), attention_mask=torch.tensor(mask), max_new_tokens=NEW,
                           do_sample=False, pad_token_id=PAD, eos_token_id=None)
    ns = load_models_with(torch)
    cls = ns.gpt2.GPT2LMHeadModel if kind == "gpt2" else ns.llama.LlamaForCausalLM
    same_code = cls(getattr(ns.config, CLASSES[kind][1].__name__)(**ref.config.to_dict())).eval()
    same_code.load_state_dict(ref.state_dict())
    in_torch = ns.generation.generate(same_code, torch.tensor(ids), NEW, greedy=True, compile=False,
                                      attention_mask=torch.tensor(mask), pad_token_id=PAD)
    assert in_torch.tolist() == out.tolist()
    return ref, out.tolist()


def test_padded_logits_match_transformers(kind, reference, device):
    ref, _ = reference
    ours = _ours(kind, ref, device)
    ids, mask = left_padded(PROMPTS)
    m = torch.tensor(mask)
    position_ids = (m.cumsum(-1) - 1).masked_fill(m == 0, 1)
    with torch.no_grad():
        want = ref(torch.tensor(ids), attention_mask=m, position_ids=position_ids).logits
    with tw.no_grad():
        got = ours(tw.tensor(ids, device=device), attention_mask=tw.tensor(mask, device=device),
                   position_ids=tw.tensor(position_ids.tolist(), device=device))
    got = torch.tensor(got.tolist())
    real = m.bool()
    torch.testing.assert_close(got[real], want[real], rtol=1e-4, atol=1e-4)


def test_padded_batch_generates_as_transformers_and_alone(kind, reference, device):
    ref, want = reference
    ours = _ours(kind, ref, device)
    ids, mask = left_padded(PROMPTS)
    streamed = []
    out = generate(ours, tw.tensor(ids, device=device), NEW, greedy=True, compile=False,
                   attention_mask=tw.tensor(mask, device=device), pad_token_id=PAD, callback=streamed.append)
    assert out.tolist() == want
    width = len(ids[0])
    assert [list(s) for s in zip(*streamed)] == [row[width:] for row in want]
    for prompt, row in zip(PROMPTS, want):
        alone = generate(ours, tw.tensor([prompt], device=device), NEW, greedy=True, compile=False)
        assert alone.tolist()[0][len(prompt):] == row[width:]
    unmasked = generate(ours, tw.tensor(ids, device=device), NEW, greedy=True, compile=False)
    assert unmasked.tolist() != want          # the padding changes the text unless it is masked


def test_finished_rows_emit_pad_as_transformers(kind, reference):
    ref, want = reference
    ours = _ours(kind, ref, "cpu")
    ids, mask = left_padded(PROMPTS)
    width = len(ids[0])
    eos = want[0][width + 2]          # row 0 stops early; the others run on (or stop later)
    with torch.no_grad():
        hf = ref.generate(torch.tensor(ids), attention_mask=torch.tensor(mask), max_new_tokens=NEW,
                          do_sample=False, pad_token_id=PAD, eos_token_id=eos).tolist()
    assert hf[0][width + 3:] == [PAD] * (len(hf[0]) - width - 3)
    out = generate(ours, tw.tensor(ids), NEW, greedy=True, compile=False, attention_mask=tw.tensor(mask),
                   pad_token_id=PAD, eos_token_id=eos)
    assert out.tolist() == hf
    with pytest.warns(UserWarning, match="pad_token_id"):      # no pad given: eos pads, as in transformers
        by_eos = generate(ours, tw.tensor(ids), NEW, greedy=True, compile=False, attention_mask=tw.tensor(mask),
                          eos_token_id=[eos])
    assert by_eos.tolist() == [[eos if t == PAD and i >= width else t for i, t in enumerate(r)] for r in hf]


def test_compiled_padded_decode(kind, reference):
    ref, want = reference
    ours = _ours(kind, ref, "webgpu")
    ids, mask = left_padded(PROMPTS)
    for _ in range(2):      # the second call replays the first one's capture
        out = generate(ours, tw.tensor(ids), NEW, greedy=True, attention_mask=tw.tensor(mask), pad_token_id=PAD)
        assert out.tolist() == want
    # (generate's own module: lm_files.load_models_with swaps torchweb.models.* in sys.modules)
    stats = inspect.unwrap(generate).__globals__["_compiled"][ours].compile_stats
    assert stats["captures"] == 1 and stats["replays"] > NEW, stats


def test_unpadded_mask_is_the_plain_path():
    ref = hf_model("gpt2", seed=SEEDS["gpt2"])
    ours = _ours("gpt2", ref, "cpu")
    ids = [PROMPTS[0], PROMPTS[2][:6]]
    plain = generate(ours, tw.tensor(ids), 5, greedy=True, compile=False)
    masked = generate(ours, tw.tensor(ids), 5, greedy=True, compile=False, attention_mask=tw.ones(2, 6, dtype=tw.long))
    assert plain.tolist() == masked.tolist()


def test_bad_masks():
    ref = hf_model("gpt2", seed=SEEDS["gpt2"])
    ours = _ours("gpt2", ref, "cpu")
    ids, mask = left_padded(PROMPTS[:2])
    with pytest.raises(ValueError, match="shape"):
        generate(ours, tw.tensor(ids), 2, compile=False, attention_mask=tw.tensor([m[1:] for m in mask]))
    with pytest.raises(ValueError, match="a token in every row"):
        generate(ours, tw.tensor(ids), 2, compile=False, attention_mask=tw.tensor([mask[0], [0] * len(mask[0])]))
    with pytest.warns(UserWarning, match="right-padding"):
        generate(ours, tw.tensor(ids), 2, greedy=True, compile=False,
                 attention_mask=tw.tensor([mask[0], mask[1][::-1]]))
