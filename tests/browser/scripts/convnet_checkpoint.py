# A small conv net (Conv2d, BatchNorm2d, ReLU, MaxPool2d, Dropout, Linear), SGD with momentum,
# train/eval switch, then a checkpoint saved and loaded in memory into a fresh model.
import io
import math

import torch
import torch.nn as nn


def build():
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3), nn.ReLU(), nn.Flatten(), nn.Dropout(0.0), nn.Linear(24, 3))


model = build()
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.tensor([math.cos(0.37 * i + 2 * k) * 0.4 for i in range(p.numel())]).reshape(p.shape))

x = torch.tensor([[math.sin(0.1 * i * j) for i in range(8)] for j in range(8 * 4)]).reshape(4, 1, 8, 8)
y = torch.tensor([0, 2, 1, 2])
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
losses = []
for step in range(4):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())

model.eval()
with torch.no_grad():
    eval_out = model(x)

buf = io.BytesIO()
torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, buf)
buf.seek(0)
ckpt = torch.load(buf)
fresh = build()
fresh.load_state_dict(ckpt["model"])
fresh.eval()
with torch.no_grad():
    reloaded = fresh(x)

result = {"losses": losses, "eval": eval_out.flatten().tolist(),
          "reloaded_equal": bool((reloaded == eval_out).all().item()),
          "running_mean": model[1].running_mean.tolist(),
          "batches_tracked": int(model[1].num_batches_tracked.item()),
          "keys": list(ckpt["model"].keys()), "momentum": [s["momentum_buffer"].abs().sum().item() for s in ckpt["optimizer"]["state"].values()]}
