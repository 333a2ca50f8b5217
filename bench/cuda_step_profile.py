"""PyTorch CUDA's GPU time per kernel class of the nanoGPT step (bench/workloads.py's _gpt_step,
eager, TF32 off): the counterpart of bench/kernel_profile.py's table for torchweb.

    python3 bench/cuda_step_profile.py [--steps 10] [--top 30] [--out FILE]

Runs on the GPU machine (PyTorch with CUDA). Kernels are grouped by name into classes (matmul,
attention, layer norm, softmax, cross-entropy, optimizer, reduction, elementwise, other).
"""

import argparse
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import torch  # noqa: E402
from workloads import _gpt_step  # noqa: E402

CLASSES = [   # (class, name pattern), first match wins
    ("attention", r"fmha|flash|attention|efficient"),
    ("matmul", r"gemm|sgemm|cutlass|ampere_|sm90|xmma|splitK|cublas"),
    ("layer_norm", r"layer_norm|LayerNorm"),
    ("softmax", r"softmax"),
    ("cross_entropy", r"nll_loss|log_softmax|cross_entropy"),
    ("optimizer", r"multi_tensor|adam|Adam|foreach"),
    ("reduction", r"reduce_kernel|Reduce"),
    ("embedding", r"embedding|index|scatter|gather"),
    ("elementwise", r"elementwise|vectorized|unrolled|Fill|fill|copy"),
]


def kind(name):
    for c, pat in CLASSES:
        if re.search(pat, name):
            return c
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    step = _gpt_step(torch, "cuda", False)
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / 20
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
    per, cls = {}, {}
    for e in prof.events():
        if not str(e.device_type).endswith("CUDA"):   # the kernels, not the CPU ops
            continue
        us = e.time_range.elapsed_us()
        n, t = per.get(e.name, (0, 0.0))
        per[e.name] = (n + 1, t + us)
        c = kind(e.name)
        n, t = cls.get(c, (0, 0.0))
        cls[c] = (n + 1, t + us)
    total = sum(t for _, t in cls.values()) / a.steps
    print(f"PyTorch {torch.__version__} CUDA eager step {wall * 1e3:.2f} ms wall; kernels sum to {total / 1e3:.2f} ms a step")
    for c, (n, t) in sorted(cls.items(), key=lambda r: -r[1][1]):
        print(f"  {c:14s} {n / a.steps:6.0f} kernels {t / a.steps / 1e3:7.3f} ms {100 * t / a.steps / total:5.1f}%")
    print("top kernels (ms a step):")
    top = sorted(per.items(), key=lambda r: -r[1][1])[:a.top]
    for name, (n, t) in top:
        print(f"  {t / a.steps / 1e3:7.3f} {n / a.steps:4.0f}x [{kind(name)}] {name[:150]}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(dict(torch=torch.__version__, device=torch.cuda.get_device_name(), step_wall_s=wall,
                           kernels_s=total / 1e6,
                           classes={c: [n / a.steps, t / a.steps / 1e6] for c, (n, t) in cls.items()},
                           top=[[name, n / a.steps, t / a.steps / 1e6] for name, (n, t) in top]), f, indent=1)


if __name__ == "__main__":
    main()
