# A long run (issue 22): an MLP trained with Adam, eagerly and under torch.compile, must keep
# the GPU bytes, buffers, bind groups, Pyodide's proxies and the heaps flat between the snapshot
# after warm-up and the one at the end (tests/browser/soak_stats.py says what and how much).
# CI runs soak_stats.STEPS steps; bench/soak_page.py runs 1000+ and prints the figures.
# modules: tests/browser/soak_stats.py
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import soak_stats


def make_model():
    model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 4))
    with torch.no_grad():   # weights from a formula: the same on both sides
        for k, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.tensor([math.sin(0.37 * i + k) * 0.3 for i in range(n)]).reshape(p.shape))
    return model


def batch(i):
    x = torch.tensor([[math.cos(0.21 * r + 0.9 * c) + 0.1 * math.sin(i + c) for c in range(16)]
                      for r in range(32)])
    y = torch.tensor([r % 4 for r in range(32)])
    return x, y


def soak(mode):
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    if mode == "compiled":
        step = torch.compile(step, backend="eager")
    losses, before = [], None
    for i in range(soak_stats.STEPS):
        if i == soak_stats.WARMUP:
            before = soak_stats.snapshot()
        loss = step(*batch(i % 8))
        if i < 3:
            losses.append(loss.item())
    after = soak_stats.snapshot()   # (before the last loss is read: see soak_stats.snapshot)
    losses.append(loss.item())
    steps = soak_stats.STEPS - soak_stats.WARMUP
    print(soak_stats.line(f"mlp {mode}", before, after, steps))
    soak_runs[f"mlp {mode}"] = {"steps": steps, "before": before, "after": after,
                                  "compile": dict(getattr(step, "compile_stats", {}))}
    return {"losses": losses[:3], "learned": losses[-1] < 0.5 * losses[0],
            "grew": soak_stats.grew(before, after, steps)}


soak_stats.start()
soak_runs = {}   # the figures, read by bench/soak_page.py
result = {mode: soak(mode) for mode in ("eager", "compiled")}
