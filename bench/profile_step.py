"""Where a step's time goes (issue 9's overhead profile): the GPT train step of bench/workloads.py
eager and under torchweb.compile, split into Python/encoding time on the CPU (the call returning)
and waiting for the GPU (synchronize), plus the per-op recording cost of a 200-op elementwise
chain and a cProfile of one replay.

    PYTHONPATH=src python3 bench/profile_step.py [--smoke] [--out FILE]
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import torchweb  # noqa: E402
from workloads import _gpt_step  # noqa: E402


def split(fn, n):
    """(mean seconds until the call returns, mean seconds then waiting for the GPU)."""
    cpu = gpu = 0.0
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        torchweb.webgpu.synchronize()
        t2 = time.perf_counter()
        cpu += t1 - t0
        gpu += t2 - t1
    return cpu / n, gpu / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    n = 2 if a.smoke else 5
    report = {"adapter": torchweb.webgpu.adapter_info()}
    torchweb.manual_seed(0)
    eager = _gpt_step(torchweb, "webgpu", a.smoke)
    for _ in range(2):
        eager()
    report["gpt_eager_cpu_s"], report["gpt_eager_gpu_wait_s"] = split(eager, n)
    torchweb.manual_seed(0)
    compiled = torchweb.compile(_gpt_step(torchweb, "webgpu", a.smoke))
    for _ in range(4):
        compiled()
    torchweb.webgpu.synchronize()
    report["gpt_compiled_cpu_s"], report["gpt_compiled_gpu_wait_s"] = split(compiled, n)
    graph = next(e.graph for e in compiled.cache.values() if e.graph is not None)
    from torchweb.backends.webgpu import commands as C
    report["graph_dispatches"] = sum(1 for i, w in enumerate(graph.words) if w == C.DISPATCH)  # upper bound
    pr = cProfile.Profile()
    pr.enable()
    compiled()
    pr.disable()
    torchweb.webgpu.synchronize()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(12)
    report["replay_profile"] = s.getvalue()[-3000:]
    # recording cost per elementwise op (lazy: recorded, fused at the end)
    x = torchweb.randn(1024, device="webgpu")
    torchweb.webgpu.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        y = x
        for _ in range(100):
            y = y * 1.0001 + 0.0001
    t1 = time.perf_counter()
    torchweb.webgpu.synchronize()
    report["record_us_per_op"] = (t1 - t0) / 1000 * 1e6
    print(json.dumps({k: v for k, v in report.items() if k != "replay_profile"}, indent=1))
    print(report["replay_profile"])
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
