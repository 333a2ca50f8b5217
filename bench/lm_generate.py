"""Tokens per second of torchweb.models.generate (issue 24): a random GPT-2 or Llama-shaped model,
batch 1, greedy, N new tokens after a P-token prompt, with the decode step eager and compiled
(captured once, replayed per token); the prefill is timed apart. Also PyTorch (CPU, or CUDA where
there is one) running the same model files (tests/lm_files.py), eager, with the same cache.

    XDG_RUNTIME_DIR=/tmp PYTHONPATH=src python3 bench/lm_generate.py [--model tiny|gpt2-124m|llama-tiny]
        [--prompt 32] [--new 128] [--no-torch]
"""

import argparse
import os
import sys
import time

import torchweb as tw
from torchweb.models import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, generate

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

SHAPES = {
    "tiny": ("gpt2", dict(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=512)),
    "gpt2-124m": ("gpt2", dict()),
    "llama-tiny": ("llama", dict(hidden_size=64, intermediate_size=176, num_hidden_layers=2, num_attention_heads=4,
                                 num_key_value_heads=2, vocab_size=256, max_position_embeddings=512)),
}


def build(lib_models, kind, cfg):
    if kind == "gpt2":
        return lib_models.gpt2.GPT2LMHeadModel(lib_models.config.GPT2Config(**cfg))
    return lib_models.llama.LlamaForCausalLM(lib_models.config.LlamaConfig(**cfg))


def time_generate(gen, model, prompt, new, **kw):
    """(prefill seconds, decode tokens/s), best of two runs after a warm-up run."""
    gen(model, prompt, new, greedy=True, **kw)                           # warm-up (and capture)
    best = None
    for _ in range(2):
        stamps = []
        t0 = time.perf_counter()
        gen(model, prompt, new, greedy=True, callback=lambda t: stamps.append(time.perf_counter()), **kw)
        prefill, decode = stamps[0] - t0, (stamps[-1] - stamps[0]) / max(1, len(stamps) - 1)
        if best is None or decode < best[1]:
            best = (prefill, decode)
    return best[0], 1.0 / best[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="tiny", choices=list(SHAPES))
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--new", type=int, default=128)
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    kind, cfg = SHAPES[args.model]
    tw.manual_seed(0)
    model = (GPT2LMHeadModel(GPT2Config(**cfg)) if kind == "gpt2" else LlamaForCausalLM(LlamaConfig(**cfg))).eval()
    vocab = model.config.vocab_size
    prompt_ids = [[(7 * i + 3) % vocab for i in range(args.prompt)]]
    print(f"{args.model}: {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters, "
          f"prompt {args.prompt}, {args.new} new tokens, batch 1, greedy; "
          f"adapter: {tw.webgpu.adapter_info().get('description', '?')}")
    for compiled in (False, True):
        prefill, tps = time_generate(generate, model, tw.tensor(prompt_ids), args.new, compile=compiled)
        print(f"  torchweb webgpu {'compiled' if compiled else 'eager   '}: {tps:8.1f} tokens/s  (prefill {prefill * 1e3:.1f} ms)")
    if args.no_torch:
        return
    import torch
    from lm_files import load_models_with
    ns = load_models_with(torch)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    ref = build(ns, kind, cfg).to(dev).eval()
    ref.load_state_dict({k: torch.tensor(v.tolist()) for k, v in model.state_dict().items()})
    prefill, tps = time_generate(ns.generation.generate, ref, torch.tensor(prompt_ids, device=dev), args.new,
                                 compile=False)
    print(f"  PyTorch {torch.__version__} {dev} eager: {tps:8.1f} tokens/s  (prefill {prefill * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
