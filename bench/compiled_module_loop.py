"""A compiled module in an ordinary training loop (issue 21, item 4 (a)) against the same loop
eagerly and against the whole step compiled: per step, the Python bytecodes run (sys.settrace,
as bench/op_overhead.py counts them: undisturbed by the machine's load), the kernels dispatched
(recorded eagerly, or in the replayed programs) and the wall time (best of R).

    XDG_RUNTIME_DIR=/tmp PYTHONPATH=src python3 bench/compiled_module_loop.py [--repeat R] [--gpt-only]

The loop: `opt.zero_grad(set_to_none=True)`, `loss = F.cross_entropy(net(x), y)` (nanoGPT:
`_, loss = net(x, y)`), `loss.backward()`, `opt.step()`, with `net = torch.compile(model)`
(compiled module), and `opt.step` compiled too (module + opt.step), or the whole step compiled
(compiled step).
"""

import argparse
import os
import sys
import time

import torchweb as torch
from torchweb.backends.webgpu import commands
from torchweb.backends.webgpu import runtime as RT

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_overhead import count_bytecodes  # noqa: E402
from workloads import _gpt_module  # noqa: E402

DEV = "webgpu"


def mlp():
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(DEV)
    x, y = torch.randn(64, 784, device=DEV), torch.randint(0, 10, (64,), device=DEV)
    return model, torch.optim.Adam(model.parameters(), lr=1e-3), (x, y), \
        lambda net, x, y: nn.functional.cross_entropy(net(x), y)


def gpt():
    torch.manual_seed(0)
    g = _gpt_module(torch)
    model = g.GPT(g.GPTConfig(block_size=16, vocab_size=65, n_layer=2, n_head=2, n_embd=32,
                              dropout=0.0, bias=False)).to(DEV)
    x, y = torch.randint(0, 65, (2, 16), device=DEV), torch.randint(0, 65, (2, 16), device=DEV)
    return model, model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), "cpu"), (x, y), \
        lambda net, x, y: net(x, y)[1]


def make(workload, mode):
    model, opt, (x, y), loss_of = workload()

    def step_body(net):
        opt.zero_grad(set_to_none=True)
        loss = loss_of(net, x, y)
        loss.backward()
        opt.step()
        return loss
    if mode == "eager":
        return lambda: step_body(model), None
    if mode == "compiled module":
        net = torch.compile(model)
        return lambda: step_body(net), net
    if mode == "module + opt.step":     # the optimizer's step compiled on its own too
        net, opt.step = torch.compile(model), torch.compile(opt.step)
        return lambda: step_body(net), net
    step = torch.compile(lambda: step_body(model))
    return step, step


class Dispatches:
    """Counts the kernels dispatched: recorded ones, and those of the programs replayed."""

    def __init__(self, rt):
        self.rt, self.n = rt, 0

    def __enter__(self):
        rt, self.dispatch, self.run_program = self.rt, self.rt.dispatch, self.rt.run_program

        def dispatch(*a, **k):
            self.n += 1
            return self.dispatch(*a, **k)

        def run_program(pre, graph, post, blob):
            self.n += sum(1 for w in _ops(graph.words) if w == commands.DISPATCH)
            return self.run_program(pre, graph, post, blob)
        rt.dispatch, rt.run_program = dispatch, run_program
        return self

    def __exit__(self, *exc):
        del self.rt.dispatch, self.rt.run_program


def _ops(words):
    """The opcodes of a program's words (operands skipped)."""
    i, n = 0, len(words)
    while i < n:
        op = words[i]
        yield op
        if op == commands.DISPATCH:
            i += 6 + 3 * words[i + 5]
        elif op == commands.WRITE:
            i += 5
        elif op == commands.COPY:
            i += 6
        elif op == commands.CREATE:
            i += 4
        else:
            i += 2


def bytecodes(step, n=3):
    """Python bytecodes per step (op_overhead's count: undisturbed by the machine's load)."""
    def make(k):
        def run():
            for _ in range(k):
                step()
        return run
    return count_bytecodes(make, n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--gpt-only", action="store_true")
    a = ap.parse_args()
    print(f"{'workload':10s} {'mode':18s} {'bytecodes':>10s} {'dispatches':>10s} {'ms':>8s}  "
          "replays (fwd/bwd)")
    for name, workload in (("nanoGPT", gpt),) if a.gpt_only else (("MLP", mlp), ("nanoGPT", gpt)):
        for mode in ("eager", "compiled module", "module + opt.step", "compiled step"):
            step, compiled = make(workload, mode)
            for _ in range(5):      # warm-up, then the recordings
                step()
            torch.webgpu.synchronize()
            codes = bytecodes(step)
            with Dispatches(RT.get_runtime()) as d:
                step()
                torch.webgpu.synchronize()
            best = float("inf")
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                step()
                torch.webgpu.synchronize()
                best = min(best, time.perf_counter() - t0)
            stats = compiled.compile_stats if compiled is not None else None
            replays = f"{stats['replays']}/{stats['backward_replays']}" if stats else "-"
            print(f"{name:10s} {mode:18s} {codes:10.0f} {d.n:10d} {best * 1e3:8.2f}  {replays}")


if __name__ == "__main__":
    main()
