"""Tokens per second of torchweb.models.generate (issue 24): a random GPT-2 or Llama-shaped model,
batch 1, greedy, N new tokens after a P-token prompt, with the decode step eager and compiled
(captured once, replayed per token); the prefill is timed apart. Weight variants: float32,
bfloat16 packed (quantize_(model, bfloat16_weight_only())), float16 packed (quantize_(model,
float16_weight_only()): unpacked with WGSL's core unpack2x16float, so it needs no 'shader-f16'),
int8 per channel (quantize_(model, int8_weight_only())), and the whole model in bfloat16
(model.bfloat16(), as a bfloat16 checkpoint loads) or float16 (model.half(), as a float16
checkpoint loads: 2 bytes a weight with 'shader-f16', f32 words without). Also PyTorch (CPU, or
CUDA where there is one) running the same model files (tests/lm_files.py) with the same weights
and cache, eager, in float32, bfloat16 and float16.

    XDG_RUNTIME_DIR=/tmp PYTHONPATH=src python3 bench/lm_generate.py [--model tiny|gpt2-124m|llama-tiny]
        [--prompt 32] [--new 128] [--variants float32,bf16-weight,f16-weight,int8-weight,bf16-model,f16-model]
        [--no-eager] [--no-torch] [--json results.json]

Each variant's results (tokens/s eager and compiled, prefill ms, weight bytes read per token)
go to the JSON file, with the adapter and PyTorch's device, so runs on different machines can
be compared.
"""

import argparse
import json
import os
import sys
import time

import torchweb as tw
from torchweb.ao.quantization import bfloat16_weight_only, float16_weight_only, int8_weight_only, quantize_
from torchweb.models import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, generate

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

SHAPES = {
    "tiny": ("gpt2", dict(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=512)),
    "gpt2-124m": ("gpt2", dict()),
    "llama-tiny": ("llama", dict(hidden_size=64, intermediate_size=176, num_hidden_layers=2, num_attention_heads=4,
                                 num_key_value_heads=2, vocab_size=256, max_position_embeddings=512)),
}
VARIANTS = ("float32", "bf16-weight", "f16-weight", "int8-weight", "bf16-model", "f16-model")
_BYTES = {"int32": 4, "int64": 8, "float32": 4, "float16": 2, "bfloat16": 4}   # torchweb's bf16: f32 words


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


def weight_bytes(model):
    """Bytes of the model's parameters and persistent buffers, each tensor counted once (a tied
    embedding and head are one tensor): what a decode step reads, bar the KV cache."""
    seen, total = set(), 0
    for t in list(model.parameters()) + list(model.buffers()):
        if id(t) not in seen:
            seen.add(id(t))
            name = t.dtype.name if hasattr(t.dtype, "name") else str(t.dtype)
            held_f32 = name == "float16" and t.device.type == "webgpu" and tw.float16.gpu_storage == "f32"
            total += t.numel() * (4 if held_f32 else _BYTES.get(name, 4))   # (f16 without shader-f16)
    return total


def host_array(t):
    """t's values on the host: a numpy array (a list where numpy is missing); gpt2-124m's
    weights as lists would take minutes and gigabytes."""
    try:
        return t.cpu().numpy()
    except Exception:
        return t.tolist()


def torchweb_variant(kind, cfg, variant, device):
    tw.manual_seed(0)
    model = (GPT2LMHeadModel(GPT2Config(**cfg)) if kind == "gpt2" else LlamaForCausalLM(LlamaConfig(**cfg)))
    model = model.to(device).eval()
    if variant == "bf16-weight":
        quantize_(model, bfloat16_weight_only())
    elif variant == "f16-weight":
        quantize_(model, float16_weight_only())
    elif variant == "int8-weight":
        quantize_(model, int8_weight_only())
    elif variant == "bf16-model":
        model = model.bfloat16()
    elif variant == "f16-model":
        model = model.half()
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="tiny", choices=list(SHAPES))
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--new", type=int, default=128)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--device", default="webgpu")
    ap.add_argument("--no-eager", action="store_true", help="time the compiled decode step only")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()
    kind, cfg = SHAPES[args.model]
    prompt_ids = None
    adapter = tw.webgpu.adapter_info().get("description", "?") if args.device == "webgpu" else args.device
    results = dict(model=args.model, prompt=args.prompt, new=args.new, batch=1, adapter=adapter, torchweb={}, torch={})
    state = None
    for variant in args.variants.split(","):
        if variant not in VARIANTS:
            raise SystemExit(f"unknown variant {variant!r} (one of {', '.join(VARIANTS)})")
        model = torchweb_variant(kind, cfg, variant, args.device)
        if state is None:
            state = {k: host_array(v) for k, v in model.state_dict().items()}   # float32's, for PyTorch
            vocab = model.config.vocab_size
            prompt_ids = [[(7 * i + 3) % vocab for i in range(args.prompt)]]
            print(f"{args.model}: {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters, "
                  f"prompt {args.prompt}, {args.new} new tokens, batch 1, greedy; adapter: {adapter}")
        row = dict(weight_bytes=weight_bytes(model))
        for compiled in ((True,) if args.no_eager else (False, True)):
            prefill, tps = time_generate(generate, model, tw.tensor(prompt_ids, device=args.device), args.new,
                                         compile=compiled)
            row["compiled" if compiled else "eager"] = dict(tokens_per_s=tps, prefill_ms=prefill * 1e3)
            print(f"  torchweb {args.device} {variant:12s} {'compiled' if compiled else 'eager   '}: "
                  f"{tps:8.1f} tokens/s  (prefill {prefill * 1e3:.1f} ms, weights {row['weight_bytes'] / 2**20:.1f} MiB)")
        results["torchweb"][variant] = row
        model.free_cache()
        del model
    if not args.no_torch:
        import torch
        from lm_files import load_models_with
        ns = load_models_with(torch)
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        results["torch_version"], results["torch_device"] = torch.__version__, (
            torch.cuda.get_device_name() if dev == "cuda" else "cpu")
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            ref = build(ns, kind, cfg).eval()
            ref.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})
            ref = ref.to(dev, dtype)
            with torch.no_grad():
                prefill, tps = time_generate(ns.generation.generate, ref, torch.tensor(prompt_ids, device=dev),
                                             args.new, compile=False)
            name = str(dtype).replace("torch.", "")
            results["torch"][name] = dict(eager=dict(tokens_per_s=tps, prefill_ms=prefill * 1e3))
            print(f"  PyTorch {torch.__version__} {dev} {name:9s} eager: {tps:8.1f} tokens/s  (prefill {prefill * 1e3:.1f} ms)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
        print(f"results written to {args.json}")


if __name__ == "__main__":
    main()
