"""Python cost of recording one op on the webgpu device (issue 9, "Overhead": at most 10 us per
op in CPython, 25 us in Pyodide). Each case runs N ops, then synchronizes; the time per op is
the best of R such runs (other processes share the CPU: the best is the least disturbed), as
wall time and as this thread's CPU time (time.thread_time: what Python itself spent, less
affected by a loaded machine; lavapipe's own threads are not counted).
Then a cProfile of the elementwise loop, top 25 by own time.

    VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json XDG_RUNTIME_DIR=/tmp PYTHONPATH=src \
        python3 bench/op_overhead.py [--repeat R] [--no-profile] [--only CASE] [--by-function CASE]

--by-function CASE: instead, the bytecodes per op of the first case whose name contains CASE,
by function (where the Python work of an op goes, undisturbed by the machine's load); --top N
lists N functions (30).

Results on this repository's dev machine (lavapipe, 2 shared cores) are kept in
bench/results/README.md ("Per-op overhead").
"""

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

import torchweb as torch
import torchweb.nn.functional as F
from torchweb.backends.webgpu import runtime as RT

DEV = "webgpu"


def sync():
    torch.webgpu.synchronize()


def case_mul_scalar(n):
    y = torch.ones(1024, device=DEV)
    def run():
        nonlocal y
        for _ in range(n):
            y = y * 1.0001
    return run


def case_add_tensor(n):
    y = torch.ones(1024, device=DEV)
    b = torch.full((1024,), 0.0001, device=DEV)
    def run():
        nonlocal y
        for _ in range(n):
            y = y + b
    return run


def case_chain(n):
    """The brief's reference: y = y * 1.0001 + 0.0001 (two ops per iteration)."""
    y = torch.ones(1024, device=DEV)
    def run():
        nonlocal y
        for _ in range(n // 2):
            y = y * 1.0001 + 0.0001
    return run


def case_matmul(n):
    a = torch.ones(64, 64, device=DEV)
    b = torch.ones(64, 64, device=DEV)
    kept = []   # the products, alive until the sync: one dropped unread is never computed (a
    #             float32 matmul is deferred for its epilogue, lazy/kernel_edges.py)
    def run():
        kept.clear()
        for _ in range(n):
            kept.append(a @ b)
    return run


def case_reshape(n):
    x = torch.ones(8, 128, device=DEV)
    def run():
        for _ in range(n):
            x.reshape(128, 8)
    return run


def case_transpose(n):
    x = torch.ones(8, 128, device=DEV)
    def run():
        for _ in range(n):
            x.transpose(0, 1)
    return run


def case_slice(n):
    x = torch.ones(8, 128, device=DEV)
    def run():
        for _ in range(n):
            x[:, 1:5]
    return run


def case_sum_dim(n):
    x = torch.ones(32, 32, device=DEV)
    def run():
        for _ in range(n):
            x.sum(1)
    return run


def case_sum_all(n):
    x = torch.ones(32, 32, device=DEV)
    def run():
        for _ in range(n):
            x.sum()
    return run


def case_mean_last(n):
    x = torch.ones(32, 32, device=DEV)
    def run():
        for _ in range(n):
            x.mean(-1)
    return run


def case_amax_dim(n):
    x = torch.ones(32, 32, device=DEV)
    def run():
        for _ in range(n):
            x.amax(1)
    return run


def case_softmax(n):
    x = torch.ones(32, 32, device=DEV)
    def run():
        for _ in range(n):
            torch.softmax(x, -1)
    return run


def case_log_softmax(n):
    x = torch.ones(32, 32, device=DEV)
    def run():
        for _ in range(n):
            F.log_softmax(x, -1)
    return run


def case_var_mean(n):
    x = torch.ones(32, 32, device=DEV)
    def run():
        for _ in range(n):
            torch.var_mean(x, -1)
    return run


def case_mul_grad(n):
    """An elementwise op recorded for autograd (input requires grad)."""
    w = torch.ones(1024, device=DEV, requires_grad=True)
    def run():
        for _ in range(n):
            w * 1.0001
    return run


def case_mlp_step(n):
    """F.linear + relu forward and backward of a 32-64-10 MLP; per op = per step / ops in it."""
    torch.manual_seed(0)
    x = torch.randn(16, 32, device=DEV)
    w1 = torch.randn(64, 32, device=DEV, requires_grad=True)
    b1 = torch.zeros(64, device=DEV, requires_grad=True)
    w2 = torch.randn(10, 64, device=DEV, requires_grad=True)
    b2 = torch.zeros(10, device=DEV, requires_grad=True)
    def run():
        for _ in range(n):
            F.linear(F.relu(F.linear(x, w1, b1)), w2, b2).sum().backward()
    return run


def case_gpt_step(n):
    """A small nanoGPT (tests/models' model.py unchanged: 2 layers, width 32, 2 heads, T 16,
    batch 2) AdamW training step, eagerly: the Python of a whole transformer step."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from workloads import _gpt_step
    torch.manual_seed(0)
    step = _gpt_step(torch, DEV, False, dict(n_layer=2, n_head=2, n_embd=32, block_size=16, batch=2))

    def run():
        for _ in range(n):
            step()
    return run


# name -> (make(n) -> callable, ops per call of the loop body, N). Short runs, many repeats:
# on a shared machine the best of many short runs is the one least disturbed. 192 lazy ops
# make 4 fused kernels (MAX_NODES 48), so each run pays its realizations in the same share.
CASES = {
    "mul_scalar (y*s, lazy)": (case_mul_scalar, 1, 192),
    "add_tensor (y+b, lazy)": (case_add_tensor, 1, 192),
    "chain (y*s+s, lazy)": (case_chain, 1, 192),
    "matmul 64x64": (case_matmul, 1, 50),
    "reshape (view)": (case_reshape, 1, 200),
    "transpose (view)": (case_transpose, 1, 200),
    "slice x[:,1:5] (view)": (case_slice, 1, 200),
    "sum(dim=1) 32x32": (case_sum_dim, 1, 50),
    "sum() 32x32": (case_sum_all, 1, 50),
    "mean(-1) 32x32": (case_mean_last, 1, 50),
    "amax(1) 32x32": (case_amax_dim, 1, 50),
    "torch.softmax(x, -1) 32x32": (case_softmax, 1, 50),
    "F.log_softmax(x, -1) 32x32": (case_log_softmax, 1, 50),
    "var_mean(x, -1) 32x32": (case_var_mean, 1, 50),
    "mul_scalar, requires_grad": (case_mul_grad, 1, 192),
    "MLP linear+relu fwd+bwd (per step)": (case_mlp_step, None, 5),
    "nanoGPT 2L w32 AdamW step (per step)": (case_gpt_step, None, 3),
}


def time_case(make, n, repeat):
    run = make(n)
    run()   # warm: kernels compiled, pools filled
    sync()
    best = cpu = float("inf")
    for _ in range(repeat):
        c0, t0 = time.thread_time(), time.perf_counter()
        run()
        sync()
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.thread_time() - c0)
    return best / n, cpu / n


def count_bytecodes(make, n, by_function=None, then=sync):
    """Python bytecodes executed per op (sys.settrace opcode events): a measure of the Python
    work that a loaded machine does not disturb (C calls count as the one opcode calling them).
    by_function: a dict to fill with (file, line, function) -> bytecodes per op. then: what
    runs, counted, after the ops (the sync that runs what they recorded)."""
    run = make(n)
    run()
    sync()
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
            if by_function is not None:
                code = frame.f_code
                where = (code.co_filename.rsplit("/src/", 1)[-1], code.co_firstlineno, code.co_name)
                by_function[where] = by_function.get(where, 0) + 1 / n
        return tracer

    # Tracing slows Python ~50x: the runtime's rule that flushes once recording has gone on for
    # FLUSH_AFTER_S would flush after almost every op, as untraced runs don't; off here, the
    # count is the same from run to run (flushes: by dispatch count or work, and the sync's).
    saved = RT.FLUSH_AFTER_S
    RT.FLUSH_AFTER_S = float("inf")
    sys.settrace(tracer)
    try:
        run()
        if then is not None:
            then()
    finally:
        sys.settrace(None)
        RT.FLUSH_AFTER_S = saved
    return count / n


def profile(n=2000):
    run = case_chain(n)
    run()
    sync()
    pr = cProfile.Profile()
    pr.enable()
    run()
    sync()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
    return s.getvalue()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--only", help="substring of the case names to run")
    ap.add_argument("--by-function", metavar="CASE", help="bytecodes per op of one case, by function")
    ap.add_argument("--top", type=int, default=30, help="functions --by-function lists")
    a = ap.parse_args()
    if a.by_function:
        name, (make, _, n) = next((k, v) for k, v in CASES.items() if a.by_function in k)
        where = {}
        total = count_bytecodes(make, n, where)
        print(f"{name}: {total:.0f} bytecodes per op")
        for (path, line, fn), count in sorted(where.items(), key=lambda kv: -kv[1])[:a.top]:
            print(f"{count:8.1f}  {fn} ({path}:{line})")
        return
    print(f"adapter: {torch.webgpu.adapter_info()}")
    print(f"{'case':40s} {'wall':>9s} {'thread':>9s} {'bytecodes':>9s}  (best of {a.repeat}; thread: "
          "this thread's CPU time; bytecodes: Python opcodes run per op)")
    for name, (make, _, n) in CASES.items():
        if a.only and a.only not in name:
            continue
        wall, cpu = time_case(make, n, a.repeat)
        codes = count_bytecodes(make, n)
        unit = "us/step" if "(per step)" in name else "us/op"
        print(f"{name:40s} {wall * 1e6:9.1f} {cpu * 1e6:9.1f} {codes:9.0f}  {unit}")
    if not a.no_profile:
        print(profile())


if __name__ == "__main__":
    main()
