"""The compiled nanoGPT step (bench/workloads.py's _gpt_step) timed under matmul TABLE variants:
each config overrides some of kernels/matmul_tiles.py's TABLE classes (or adds rules) and
captures the step afresh, so the configs compare side by side in one process.

    PYTHONPATH=src python3 bench/gpt_step_table.py [--configs base,NAME,...] [--steps 10] [--repeat 5]

A config is CONFIGS' name: {class: variant}. PyTorch CUDA eager's step is timed first where
torch has CUDA (TF32 off).
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import torchweb  # noqa: E402
from torchweb.backends.webgpu.kernels import matmul_tiles as T  # noqa: E402
from timing import best_of, warm_up  # noqa: E402
from workloads import _gpt_step  # noqa: E402
from matmul_variants_shapes import derived  # noqa: E402

CONFIGS = {   # _red: kernels/reduction.py FAST knobs; _attn: the fused attention from that many scores;
    # _ln: kernels/layer_norm.py PER_THREAD_SG; _flash: the register-tiled attention on or off;
    # _epi: matmul epilogues (lazy/kernel_edges.py) on or off
    "base": {},
    "medium_k_s4": {"medium_k": "w64x128_k8@s4"},
    "flat_64": {"medium_flat": "w64x64_k8_t4x8"},
    "flat_128": {"medium_flat": "w128x128_k16"},
    "wide_128": {"wide": "w128x128_k16"},
    "red_old": {"_red": {"fit": 0, "col_fill": 0}},
    "fit1": {"_red": {"fit": 1}},
    "fit2": {"_red": {"fit": 2}},
    "ln4": {"_ln": 4},
    "ln12": {"_ln": 12},
    "ln8": {"_ln": 8},
    "fused_attn": {"_attn": 0},
    "no_flash": {"_flash": False},
    "no_epilogue": {"_epi": False},
}


def time_torch(steps, repeat):
    import torch
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    step = _gpt_step(torch, "cuda", False)
    warm_up(step, torch.cuda.synchronize, calls=5)
    return best_of(step, torch.cuda.synchronize, repeat, steps)[0]


def time_config(overrides, steps, repeat, eager=False):
    from torchweb.backends.webgpu import attention as A
    from torchweb.backends.webgpu import backend as WebGPUBackend
    from torchweb.lazy import kernel_edges as KE
    from torchweb.backends.webgpu.kernels import reduction as R
    from torchweb.backends.webgpu.kernels import layer_norm as LN
    saved, red, attn, ln = dict(T.TABLE), dict(R.FAST), A.COMPOSITE_MAX_SCORES, getattr(LN, "PER_THREAD_SG", 0)
    flash, epi = A.FLASH, WebGPUBackend.MATMUL_EPILOGUE
    try:
        T.TABLE.update({k: derived(v) for k, v in overrides.items() if not k.startswith("_")})
        R.FAST.update(overrides.get("_red", {}))
        A.COMPOSITE_MAX_SCORES = overrides.get("_attn", attn)
        A.FLASH = overrides.get("_flash", flash)
        LN.PER_THREAD_SG = overrides.get("_ln", ln)
        WebGPUBackend.MATMUL_EPILOGUE = overrides.get("_epi", epi)
        KE.forget_signatures()
        T._PLANS.clear()
        torchweb.manual_seed(0)
        step = _gpt_step(torchweb, "webgpu", False)
        if not eager:
            step = torchweb.compile(step)
        warm_up(step, torchweb.webgpu.synchronize, calls=5)
        return best_of(step, torchweb.webgpu.synchronize, repeat, steps)[0], float(step().item())
    finally:
        R.FAST.update(red)
        A.COMPOSITE_MAX_SCORES = attn
        A.FLASH = flash
        LN.PER_THREAD_SG = ln
        WebGPUBackend.MATMUL_EPILOGUE = epi
        KE.forget_signatures()
        T.TABLE.clear()
        T.TABLE.update(saved)
        T._PLANS.clear()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="base," + ",".join(c for c in CONFIGS if c != "base"))
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--eager", action="store_true", help="time the eager step, not the compiled one")
    a = ap.parse_args()
    t = time_torch(a.steps, a.repeat)
    if t:
        print(f"PyTorch CUDA eager step {t * 1e3:.2f} ms", flush=True)
    for name in a.configs.split(","):
        t0 = time.perf_counter()
        try:
            s, loss = time_config(CONFIGS[name], a.steps, a.repeat, a.eager)
        except Exception as e:   # (a config that fails is reported, the rest still run)
            print(f"{name:14s} FAILED: {str(e).splitlines()[0][:200]}", flush=True)
            continue
        print(f"{name:14s} {s * 1e3:7.2f} ms a step (loss {loss:.4f}; {time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
