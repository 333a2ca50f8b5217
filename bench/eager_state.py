"""Does earlier work change an eager training step's time? The nanoGPT step of bench/workloads.py
timed alone, then after the native suite's big kernels (64M-float adds and sums, a 4096^3 matmul)
ran in the same process, then again after an empty_cache (the suite's order: bench/run.py runs
every case in one process).

    PYTHONPATH=src python3 bench/eager_state.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchweb  # noqa: E402
from timing import best_of, warm_up  # noqa: E402
from workloads import _gpt_step  # noqa: E402


def timed(label, step):
    sync = torchweb.webgpu.synchronize
    warm_up(step, sync, 3)
    best, host = best_of(step, sync, 5, 1)
    print(f"{label}: {best * 1e3:.2f} ms (host {host * 1e3:.2f} ms before the sync)", flush=True)


def main():
    torchweb.manual_seed(0)
    step = _gpt_step(torchweb, "webgpu", False)
    timed("nanoGPT step, alone", step)
    big = 1 << 26
    a, b, c = (torchweb.randn(big, device="webgpu") for _ in range(3))
    m = torchweb.randn(4096, 4096, device="webgpu")
    for _ in range(10):
        torchweb.add(a, b, out=c)
        a.sum()
        m @ m
    torchweb.webgpu.synchronize()
    timed("after 64M adds and sums and 4096^3 matmuls", step)
    del a, b, c, m
    timed("after those tensors died", step)
    torchweb.webgpu.empty_cache()
    timed("after empty_cache()", step)


if __name__ == "__main__":
    main()
