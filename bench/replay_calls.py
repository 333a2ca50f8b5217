"""Python function calls, and executes (crossings into the driver), per replay of a compiled
step: the MLP Adam step of bench/workloads.py, and the GPT step (--gpt, smoke-sized). --no-numpy
makes the optimizer keep its step counters on the webgpu device, as in Pyodide (no numpy there).

    PYTHONPATH=src python3 bench/replay_calls.py [--gpt] [--no-numpy]
"""
import argparse
import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
import torchweb  # noqa: E402
from torchweb.optim import optimizer as _optimizer  # noqa: E402
from op_overhead import count_bytecodes  # noqa: E402
from workloads import _gpt_step, _mlp_step  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpt", action="store_true")
    ap.add_argument("--no-numpy", action="store_true")
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--top", type=int, default=12, help="functions listed by bytecodes")
    a = ap.parse_args()
    if a.no_numpy:
        _optimizer._HAS_NUMPY[:] = [False]
    torchweb.manual_seed(0)
    fn = torchweb.compile(_gpt_step(torchweb, "webgpu", True) if a.gpt else _mlp_step(torchweb, "webgpu", 64))
    for _ in range(4):
        fn()
    torchweb.webgpu.synchronize()
    driver = torchweb.backends.webgpu.runtime._runtime[0].driver
    calls = [0]
    execute = driver.execute

    def counted(*args):
        calls[0] += 1
        return execute(*args)
    driver.execute = counted
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    torchweb.webgpu.synchronize()
    st = pstats.Stats(pr)
    print(f"function calls per replay: {st.total_calls}, driver executes: {calls[0]}")
    t0 = time.perf_counter()
    for _ in range(a.n):
        fn()
    t1 = time.perf_counter()
    torchweb.webgpu.synchronize()
    print(f"ms per replay until it returns: {(t1 - t0) / a.n * 1e3:.3f}")
    # the Python alone: the driver's crossings made no-ops (outputs unread: their values do not matter)
    driver.execute = lambda *args: None
    driver.run_prepared = lambda *args: True
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(a.n):
            fn()
        best = min(best, (time.perf_counter() - t0) / a.n)
    print(f"ms of Python per replay (driver stubbed, best of 5): {best * 1e3:.4f}")
    where = {}
    total = count_bytecodes(lambda n: fn, 1, where, then=None)
    print(f"bytecodes per replay (driver stubbed): {total:.0f}; by function:")
    for (path, line, name), n in sorted(where.items(), key=lambda kv: -kv[1])[:a.top]:
        print(f"  {n:6.0f}  {path}:{line} {name}")


if __name__ == "__main__":
    main()
