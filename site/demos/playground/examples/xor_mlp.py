# A small MLP learns XOR. Plain PyTorch (torch.nn, torch.optim): it runs unchanged in PyTorch.
import math
import random

import torch
import torch.nn as nn

try:
    from playground import plot          # draws on the playground page
except ImportError:                      # elsewhere: no plot
    def plot(*args, **kwargs): pass


def same_start(model, seed=0):
    """Initial weights from Python's seeded `random`: PyTorch's and torchweb's generators
    differ, so this makes both print the same numbers."""
    rng = random.Random(seed)
    with torch.no_grad():
        for p in model.parameters():
            bound = 1 / math.sqrt(p.shape[-1])
            p.copy_(torch.tensor([rng.uniform(-bound, bound) for _ in range(p.numel())]).view(p.shape))


x = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
y = torch.tensor([[0.0], [1.0], [1.0], [0.0]])

model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
same_start(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
loss_fn = nn.BCEWithLogitsLoss()

losses = []
for step in range(1, 201):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    if step % 50 == 0:
        curve = torch.stack(losses).tolist()        # one readback per 50 steps
        plot(curve, title="training loss")
        print(f"step {step}: loss {curve[-1]:.5f}")

with torch.no_grad():
    p = torch.sigmoid(model(x)).view(-1)
print("predictions:", [round(v, 4) for v in p.tolist()])
print("rounded:", [int(v > 0.5) for v in p.tolist()], "target:", [0, 1, 1, 0])
print(f"final loss: {losses[-1].item():.6f}")
