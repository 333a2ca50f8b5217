# torch.compile(model) in an ordinary training loop, as nanoGPT's train.py writes it: the model
# compiled, gradient accumulation over two micro-steps (the loss scaled down, backward outside),
# clip_grad_norm_, AdamW, zero_grad(set_to_none=True), an eval pass under no_grad after each
# step, and a smaller last batch. The page's torchweb replays the forward and the backward of the
# module (two programs) after its first calls; the losses must equal PyTorch's.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(6, 16), nn.LayerNorm(16), nn.GELU(), nn.Linear(16, 3))
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        n = p.numel()
        p.copy_(torch.tensor([math.sin(0.37 * i + k) * 0.5 for i in range(n)]).reshape(p.shape))
opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.1)
net = torch.compile(model, backend="eager")


def batch(i, rows=8):
    x = torch.tensor([[math.cos(0.3 * r + 0.7 * c + i) for c in range(6)] for r in range(rows)])
    y = torch.tensor([(r + i) % 3 for r in range(rows)])
    return x, y


losses, evals = [], []
probe = batch(50)[0]
for step in range(12):
    rows = 5 if step % 4 == 3 else 8          # every fourth step's batches are smaller
    for micro in range(2):
        x, y = batch(2 * step + micro, rows)
        loss = F.cross_entropy(net(x), y) / 2
        loss.backward()
        losses.append(loss.item() * 2)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    net.eval()
    with torch.no_grad():
        evals.append(net(probe).sum(0).tolist())
    net.train()

stats = getattr(net, "compile_stats", None)
result = {"losses": losses, "evals": evals, "weight": model[0].weight.reshape(-1).tolist()[:8],
          # torchweb: the 8-row training calls replay from their fourth on (a warm-up, two
          # recordings), 5-row ones too; PyTorch has no compile_stats, the defaults stand in
          "why": stats["reasons"] if stats else [],
          "replays": [stats["replays"], stats["backward_replays"]] if stats else [27, 18]}
