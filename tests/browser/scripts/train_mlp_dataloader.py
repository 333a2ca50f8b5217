# An nn model, an optimizer, a scheduler and a DataLoader: three epochs of training.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"

xs = torch.linspace(-1, 1, 64).reshape(32, 2)
ys = ((xs[:, 0] * 3).sin() * xs[:, 1] > 0).long()
loader = DataLoader(TensorDataset(xs, ys), batch_size=8, shuffle=False)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


model = MLP()
with torch.no_grad():   # weights from a formula: the same on both sides
    for k, p in enumerate(model.parameters()):
        n = p.numel()
        p.copy_(torch.tensor([math.sin(0.7 * i + k) * 0.5 for i in range(n)]).reshape(p.shape))
model.to(device)
opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
loss_fn = nn.CrossEntropyLoss()

losses = []
for epoch in range(3):
    model.train()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    sched.step()

model.eval()
with torch.no_grad():
    accuracy = (model(xs.to(device)).argmax(1) == ys.to(device)).float().mean().item()
result = {"losses": losses, "accuracy": accuracy, "lr": sched.get_last_lr(),
          "fc2_bias": model.fc2.bias.tolist()}
