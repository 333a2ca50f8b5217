"""generate() against PyTorch: greedy tokens equal transformers' generate and the same model
files run under PyTorch (eager, same cache); the compiled decode step gives eager's tokens and
replays one capture for every position; sampling keeps to top-k / top-p and follows the seed."""

import pytest
import torch

import torchweb as tw
from lm_files import load_models_with
from lm_oracle import GPT2, LLAMA, hf_model
from torchweb.models import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, generate

PROMPT = [[5, 17, 3, 90, 42, 7]]
NEW = 24
_GEN = __import__("sys").modules["torchweb.models.generation"]


SEEDS = {"gpt2": 6, "llama": 1}     # weights whose greedy text is not one token repeated


def _pair(kind, device):
    """(our model on device, the HF model) with the same weights."""
    ref = hf_model(kind, seed=SEEDS[kind])
    cls, cfg = (GPT2LMHeadModel, GPT2Config) if kind == "gpt2" else (LlamaForCausalLM, LlamaConfig)
    ours = cls(cfg(**(GPT2 if kind == "gpt2" else LLAMA))).to(device).eval()
    ours.load_state_dict({k: tw.tensor(v.tolist()) for k, v in ref.state_dict().items()})
    return ours, ref


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def kind(request):
    return request.param


@pytest.fixture(scope="module")
def reference_tokens(kind):
    """Greedy tokens of transformers' generate and of our files under PyTorch (they must agree)."""
    ref = hf_model(kind, seed=SEEDS[kind])
    with torch.no_grad():
        hf = ref.generate(torch.tensor(PROMPT), max_new_tokens=NEW, do_sample=False, pad_token_id=0,
                          eos_token_id=None, min_new_tokens=NEW)
    ns = load_models_with(torch)
    cls = ns.gpt2.GPT2LMHeadModel if kind == "gpt2" else ns.llama.LlamaForCausalLM
    cfg = (ns.config.GPT2Config if kind == "gpt2" else ns.config.LlamaConfig)(**ref.config.to_dict())
    same_code = cls(cfg).eval()
    same_code.load_state_dict(ref.state_dict())
    ours_in_torch = ns.generation.generate(same_code, torch.tensor(PROMPT), NEW, greedy=True, compile=False)
    assert ours_in_torch.tolist() == hf.tolist()
    assert len(set(hf[0, len(PROMPT[0]):].tolist())) >= 3          # not a degenerate repetition
    return hf.tolist()


def test_greedy_matches_pytorch(kind, reference_tokens, device):
    ours, _ = _pair(kind, device)
    streamed = []
    out = generate(ours, tw.tensor(PROMPT, device=device), NEW, greedy=True, compile=False,
                   callback=streamed.append)
    assert out.tolist() == reference_tokens
    assert [t[0] for t in streamed] == reference_tokens[0][len(PROMPT[0]):]


def test_compiled_decode_replays_with_eager_tokens(kind, reference_tokens):
    ours, _ = _pair(kind, "webgpu")
    out = generate(ours, PROMPT[0], NEW, greedy=True)            # a list prompt, compile=True
    assert out.tolist() == reference_tokens
    stats = _GEN._compiled[ours].compile_stats
    steps = NEW - 1                       # the prefill gives the first token
    assert stats["captures"] == 1 and stats["replays"] == steps - 3, stats   # warm-up, two recordings
    again = generate(ours, tw.tensor(PROMPT), NEW, greedy=True)   # the cache and capture are kept
    assert again.tolist() == reference_tokens
    assert stats["captures"] == 1 and stats["replays"] == 2 * steps - 3, stats


def test_stops_at_eos(kind, reference_tokens):
    ours, _ = _pair(kind, "cpu")
    eos = reference_tokens[0][len(PROMPT[0]) + 5]
    first = reference_tokens[0].index(eos, len(PROMPT[0]))
    out = generate(ours, tw.tensor(PROMPT), NEW, greedy=True, eos_token_id=[eos, 10 ** 6], compile=False)
    assert out.tolist() == [reference_tokens[0][:first + 1]]


def _full_logits(model, ids):
    with tw.no_grad():
        return torch.tensor(model(ids).tolist())


def test_sampling_keeps_to_top_k_and_top_p(device):
    ours, _ = _pair("llama", device)
    n = len(PROMPT[0])
    as_greedy = generate(ours, tw.tensor(PROMPT), 10, greedy=True, compile=False).tolist()
    for kw in (dict(top_k=1), dict(temperature=0.0), dict(top_p=1e-6)):
        assert generate(ours, tw.tensor(PROMPT), 10, compile=False, **kw).tolist() == as_greedy, kw
    for kw, check in ((dict(top_k=3, temperature=2.0), "k"), (dict(top_p=0.5), "p")):
        out = generate(ours, tw.tensor(PROMPT), 12, compile=False, generator=tw.Generator(device=device).manual_seed(7), **kw)
        again = generate(ours, tw.tensor(PROMPT), 12, compile=False, generator=tw.Generator(device=device).manual_seed(7), **kw)
        assert out.tolist() == again.tolist()
        full = _full_logits(ours, out[:, :-1])[0]
        for pos in range(n - 1, out.shape[1] - 1):
            token = out[0, pos + 1].item()
            scores = full[pos] / kw.get("temperature", 1.0)
            if check == "k":
                assert token in torch.topk(scores, 3).indices.tolist()
            else:   # inside the smallest set of likeliest tokens reaching probability 0.5
                probs = scores.softmax(-1)
                assert probs[probs > probs[token]].sum() < 0.5 + 1e-5


def test_bad_arguments():
    ours, _ = _pair("gpt2", "cpu")
    with pytest.raises(ValueError, match="positions"):
        generate(ours, tw.tensor(PROMPT), GPT2["n_positions"], compile=False)
    with pytest.raises(ValueError, match="top_p"):
        generate(ours, tw.tensor(PROMPT), 2, top_p=1.5, compile=False)
    with pytest.raises(ValueError, match="batch, length"):
        generate(ours, tw.tensor([[]], dtype=tw.long), 2, compile=False)
