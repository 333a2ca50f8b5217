# torch.compile around a whole training step and around an inference function: the page's
# torchweb captures the step's GPU work on the third call and replays it after, so later losses
# come from replays; they must equal PyTorch's (which traces with its "eager" backend here).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        n = p.numel()
        p.copy_(torch.tensor([math.sin(0.41 * i + k) * 0.4 for i in range(n)]).reshape(p.shape))
opt = torch.optim.AdamW(model.parameters(), lr=0.03, weight_decay=0.05)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)


def batch(i):
    x = torch.tensor([[math.cos(0.3 * r + 0.7 * c + i) for c in range(6)] for r in range(8)])
    y = torch.tensor([(r + i) % 3 for r in range(8)])
    return x, y


@torch.compile(backend="eager")
def step(x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


losses = []
for i in range(10):
    x, y = batch(i)
    losses.append(step(x, y))
    sched.step()

infer = torch.compile(lambda x: model(x).softmax(-1), backend="eager")
with torch.no_grad():
    probs = [infer(batch(20 + i)[0]).sum(0).tolist() for i in range(5)]

result = {"why": getattr(step, "compile_stats", {"reasons": []})["reasons"],   # none expected
          "losses": [l.item() for l in losses], "probs": probs,
          "weight": model[0].weight.reshape(-1).tolist()[:8],
          # torchweb: 10 calls = a warm-up, two recordings that must agree, then 7 replays (and
          # 2 for the 5 inference calls); PyTorch has no compile_stats, the defaults stand in
          "replays": [getattr(step, "compile_stats", {"replays": 7})["replays"],
                      getattr(infer, "compile_stats", {"replays": 2})["replays"]]}
