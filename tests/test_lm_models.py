"""torchweb.models' GPT-2 and Llama modules against Hugging Face transformers (the oracle, in
PyTorch): checkpoints of the real layouts with random weights, written by save_pretrained
(single file, sharded with an index, bfloat16, GPT-2's old key layout), loaded by
from_pretrained from a directory or an HTTP server on 127.0.0.1, must give transformers' logits
on both devices; the same model files run under PyTorch give them too."""

import asyncio
import functools
import http.server
import json
import os
import threading
import warnings

import pytest
import torch

import torchweb as tw
import torchweb.safetensors  # noqa: F401
from lm_files import load_models_with
from lm_oracle import LLAMA3_ROPE, hf_model, logits
from torchweb.models import GPT2Config, LlamaConfig, from_pretrained, from_pretrained_async, model_for_config

IDS = [[3, 14, 15, 92, 65, 35, 89, 79, 32, 38, 46], [2, 71, 82, 81, 82, 8, 45, 90, 45, 23, 53]]
VARIANTS = {
    "gpt2": ("gpt2", {}),
    "llama": ("llama", {}),
    "llama_tied_mha": ("llama", dict(tie_word_embeddings=True, num_key_value_heads=4)),
    "llama3_rope_bias": ("llama", dict(rope_parameters=LLAMA3_ROPE, attention_bias=True, mlp_bias=True,
                                       head_dim=16, num_key_value_heads=1)),
    "qwen2_tied": ("qwen2", dict(tie_word_embeddings=True)),
}


@functools.lru_cache(maxsize=None)
def _saved(variant, tmp_root, shard=None, bf16=False):
    kind, overrides = VARIANTS[variant]
    model = hf_model(kind, **overrides)
    path = os.path.join(tmp_root, f"{variant}-{shard}-{bf16}")
    if bf16:
        model = model.to(torch.bfloat16)
    model.save_pretrained(path, **({"max_shard_size": shard} if shard else {}))
    if bf16:    # a float32 model of the rounded weights (.float() would keep RoPE's bf16-rounded inv_freq)
        rounded = {k: v.float() for k, v in model.state_dict().items()}
        model = hf_model(kind, **overrides)
        model.load_state_dict(rounded)
    return path, model


@pytest.fixture(scope="module")
def tmp_root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("lm_checkpoints"))


def _close(ours, ref, atol=1e-4):
    got = torch.tensor(ours.tolist())
    assert got.shape == ref.shape
    assert torch.allclose(got, ref, atol=atol, rtol=1e-4), (got - ref).abs().max()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_single_file_checkpoint_gives_transformers_logits(variant, tmp_root, device):
    path, ref = _saved(variant, tmp_root)
    assert os.path.exists(os.path.join(path, "model.safetensors"))
    model = from_pretrained(path, device=device)
    assert list(model.state_dict()) == list(ref.state_dict())      # HF's keys, in HF's order
    assert not model.training
    _close(model(tw.tensor(IDS, device=device)), logits(ref, IDS))


@pytest.mark.parametrize("variant", ["gpt2", "llama"])
def test_sharded_checkpoint(variant, tmp_root, device):
    path, ref = _saved(variant, tmp_root, shard="40KB")
    names = os.listdir(path)
    assert "model.safetensors.index.json" in names and sum(n.endswith(".safetensors") for n in names) > 2
    model = from_pretrained(path, device=device)
    _close(model(tw.tensor(IDS, device=device)), logits(ref, IDS))


@pytest.mark.parametrize("variant", ["gpt2", "llama_tied_mha"])
def test_bfloat16_checkpoint_computed_in_float32(variant, tmp_root, device):
    path, ref = _saved(variant, tmp_root, bf16=True)
    with open(os.path.join(path, "model.safetensors"), "rb") as f:
        f.read(8)
        assert '"BF16"' in f.read(4096).decode("latin-1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # bfloat16 loads as it is: nothing converted, no warning
        model = from_pretrained(path, device=device, dtype=tw.float32)
        assert from_pretrained(path, device=device, torch_dtype="float32").lm_head.weight.dtype == tw.float32
    assert model.lm_head.weight.dtype == tw.float32
    _close(model(tw.tensor(IDS, device=device)), logits(ref, IDS))


@pytest.mark.parametrize("variant", ["gpt2", "llama", "llama_tied_mha"])
def test_bfloat16_checkpoint_stays_bfloat16(variant, tmp_root, device):
    """dtype="auto" (the default, as transformers 5's): a bfloat16 checkpoint gives a bfloat16
    model computing as PyTorch does in bfloat16: transformers' from_pretrained of the same files
    on the CPU is the oracle (logits within bfloat16's tolerance, the same greedy tokens)."""
    from lm_oracle import transformers
    from torchweb.models import generate
    path, _ = _saved(variant, tmp_root, bf16=True)
    cls = transformers().GPT2LMHeadModel if variant == "gpt2" else transformers().LlamaForCausalLM
    ref = cls.from_pretrained(path).eval()
    assert ref.dtype == torch.bfloat16
    model = from_pretrained(path, device=device)
    assert model.lm_head.weight.dtype == model.get_input_embeddings().weight.dtype == tw.bfloat16
    if variant != "gpt2":     # RoPE's frequencies stay float32, as transformers keeps them
        assert model.model.inv_freq.dtype == tw.float32
    got = model(tw.tensor(IDS, device=device))
    assert got.dtype == tw.bfloat16
    want = logits(ref, IDS).float()
    got = torch.tensor(got.float().tolist())
    # bfloat16 keeps 8 bits; over two layers the roundings add up to a few units of the last
    # place of the logits' magnitude (measured: up to 1.6% of it, where attention sees >1 key)
    assert (got - want).abs().max() <= 2 ** -5 * want.abs().max(), (got - want).abs().max()
    with torch.no_grad():
        hf = ref.generate(torch.tensor(IDS[:1]), max_new_tokens=12, do_sample=False, pad_token_id=0,
                          eos_token_id=None, min_new_tokens=12)
    assert generate(model, IDS[:1], 12, greedy=True, compile=False).tolist() == hf.tolist()
    if device == "webgpu":      # the captured decode step, replayed, in bfloat16
        assert generate(model, IDS[:1], 12, greedy=True, compile=True).tolist() == hf.tolist()


def test_gpt2_original_layout(tmp_root, tmp_path, device):
    """The gpt2 repository's file: GPT2Model's keys (no `transformer.` prefix), with the old
    attn.bias / attn.masked_bias buffers, no lm_head."""
    from safetensors.torch import save_file
    path, ref = _saved("gpt2", tmp_root)
    sd = {k[len("transformer."):]: v.contiguous() for k, v in ref.state_dict().items() if k.startswith("transformer.")}
    for i in range(ref.config.n_layer):
        sd[f"h.{i}.attn.bias"] = torch.tril(torch.ones(1, 1, 64, 64))
        sd[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
    save_file(sd, str(tmp_path / "model.safetensors"))
    with open(os.path.join(path, "config.json")) as f:
        (tmp_path / "config.json").write_text(f.read())
    model = from_pretrained(tmp_path, device=device)
    _close(model(tw.tensor(IDS, device=device)), logits(ref, IDS))


def test_same_files_under_pytorch(tmp_root):
    """The model files are plain PyTorch: run with `torchweb` bound to torch, they load HF's
    state_dict as is and give its logits."""
    ns = load_models_with(torch)
    for variant in VARIANTS:
        _, ref = _saved(variant, tmp_root)
        cls = ns.gpt2.GPT2LMHeadModel if variant == "gpt2" else ns.llama.LlamaForCausalLM
        cfg = ns.config.config_from_dict(ref.config.to_dict())
        model = cls(cfg).eval()
        model.load_state_dict(ref.state_dict())
        with torch.no_grad():
            assert torch.allclose(model(torch.tensor(IDS)), logits(ref, IDS), atol=1e-5, rtol=1e-5), variant


@pytest.mark.parametrize("variant", ["gpt2", "llama3_rope_bias"])
def test_kv_cache_prefill_then_steps_give_full_forward_logits(variant, tmp_root, device):
    path, ref = _saved(variant, tmp_root)
    model = from_pretrained(path, device=device)
    full = logits(ref, IDS)
    model.setup_cache(2, 16)
    with tw.no_grad():
        first = model(tw.tensor([r[:6] for r in IDS], device=device), tw.arange(6, device=device))
        _close(first, full[:, :6])
        for p in range(6, len(IDS[0])):
            step = model(tw.tensor([[r[p]] for r in IDS], device=device), tw.tensor([p], device=device))
            _close(step[:, 0], full[:, p])
    model.free_cache()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_from_url_with_progress(tmp_root):
    """A base URL (as a Hub repository's resolve/main/), served on 127.0.0.1: sharded files
    fetched with progress, a 404 for the index of a single-file checkpoint."""
    sharded, ref = _saved("llama", tmp_root, shard="40KB")
    root = os.path.dirname(sharded)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=root))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        seen = []
        model = from_pretrained(base + os.path.basename(sharded) + "/", progress=lambda d, t: seen.append((d, t)))
        _close(model(tw.tensor(IDS)), logits(ref, IDS))
        with open(os.path.join(sharded, "model.safetensors.index.json")) as f:
            shards = set(json.load(f)["weight_map"].values())
        assert len([d for d, t in seen if d == t]) >= len(shards)
        single, ref1 = _saved("gpt2", tmp_root)
        model = from_pretrained(base + os.path.basename(single), progress=False)
        _close(model(tw.tensor(IDS)), logits(ref1, IDS))
        with pytest.raises(FileNotFoundError, match="config.json"):
            from_pretrained(base + "nothing-here/", progress=False)
        model = asyncio.run(from_pretrained_async(base + os.path.basename(single), progress=False))
        _close(model(tw.tensor(IDS)), logits(ref1, IDS))
    finally:
        server.shutdown()
        server.server_close()


def test_config_fields_and_errors():
    cfg = LlamaConfig(hidden_size=64, num_attention_heads=8, rope_theta=5e5,
                      rope_scaling=dict(LLAMA3_ROPE, rope_type="llama3"))
    assert (cfg.num_key_value_heads, cfg.head_dim, cfg.rope_parameters["rope_theta"]) == (8, 8, 5e5)
    with pytest.raises(NotImplementedError, match="yarn"):
        LlamaConfig(rope_scaling={"rope_type": "yarn", "factor": 2.0})
    with pytest.raises(ValueError, match="multiple"):
        LlamaConfig(num_attention_heads=6, num_key_value_heads=4)
    with pytest.raises(NotImplementedError, match="bert"):
        from_pretrained("/nonexistent", config={"model_type": "bert"})
    model = model_for_config(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=11, n_positions=8))
    assert model.lm_head.weight is model.transformer.wte.weight


def test_incomplete_or_foreign_checkpoint_names_the_keys(tmp_path):
    config = dict(model_type="gpt2", n_layer=1, n_embd=16, n_head=2, vocab_size=11, n_positions=8)
    (tmp_path / "config.json").write_text(json.dumps(config))
    sd = model_for_config(GPT2Config(**config)).state_dict()
    partial = {k: v for k, v in sd.items() if k not in ("transformer.ln_f.bias", "lm_head.weight")}
    tw.safetensors.save_file(partial, str(tmp_path / "model.safetensors"))
    with pytest.raises(RuntimeError, match="lacks weights.*transformer.ln_f.bias"):
        from_pretrained(tmp_path, device="cpu")
    tw.safetensors.save_file({**partial, "transformer.ln_f.bias": sd["transformer.ln_f.bias"],
                              "transformer.h.0.attn.q_norm.weight": tw.ones(16)}, str(tmp_path / "model.safetensors"))
    with pytest.raises(RuntimeError, match="does not: transformer.h.0.attn.q_norm.weight"):
        from_pretrained(tmp_path, device="cpu")
