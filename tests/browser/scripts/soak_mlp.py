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
    return soak_stats.formula_weights(model, 0.37, 0.3)


def batch(i):
    x = torch.tensor([[math.cos(0.21 * r + 0.9 * c) + 0.1 * math.sin(i + c) for c in range(16)]
                      for r in range(32)])
    y = torch.tensor([r % 4 for r in range(32)])
    return x, y


def make_step(mode):
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return torch.compile(step, backend="eager") if mode == "compiled" else step


soak_stats.start()
soak_runs = {}   # the figures, read by bench/soak_page.py
result = {mode: soak_stats.soak(f"mlp {mode}", make_step(mode), lambda i: batch(i % 8), soak_runs)
          for mode in ("eager", "compiled")}
