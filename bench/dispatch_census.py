"""Dispatches a training step makes, by kernel (issue 21, "fewer, larger dispatches"): the
nanoGPT-shaped step of bench/workloads.py (6 layers, 6 heads, width 384; a short sequence and
batch by default, since the count does not depend on them) run eagerly on webgpu, its second
step counted by pipeline key.

    XDG_RUNTIME_DIR=/tmp PYTHONPATH=src python3 bench/dispatch_census.py [--t 32] [--b 2] [--top 40]
"""

import argparse
import collections
import os
import sys

import torchweb as torch
from torchweb.backends.webgpu.runtime import get_runtime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import _gpt_step  # noqa: E402


def census(step, steps=3):
    """{kernel key: dispatches} of the last of `steps` steps."""
    rt = get_runtime()
    counts = collections.Counter()
    real = rt.record   # (every kernel's dispatch comes through it: head[1] is the pipeline id)

    def counting(head, *args, **kw):
        counts[head[1]] += 1
        return real(head, *args, **kw)

    for _ in range(steps - 1):
        step()
    torch.webgpu.synchronize()
    rt.record = counting
    try:
        step()
        torch.webgpu.synchronize()
    finally:
        del rt.record
    names = {pid: _short(key) for key, pid in rt._pipelines.items()}
    by_name = collections.Counter()
    for pid, n in counts.items():
        by_name[names.get(pid, pid)] += n
    return by_name


def _short(key):
    s = repr(key)
    return s if len(s) < 110 else s[:107] + "..."


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t", type=int, default=32)
    ap.add_argument("--b", type=int, default=2)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()
    torch.manual_seed(0)
    step = _gpt_step(torch, "webgpu", False, dict(n_layer=a.layers, n_head=6, n_embd=384,
                                                  block_size=a.t, batch=a.b))
    counts = census(step)
    print(f"nanoGPT {a.layers}L w384 step: {sum(counts.values())} dispatches")
    for k, n in counts.most_common(a.top):
        print(f"{n:5d}  {k}")


if __name__ == "__main__":
    main()
