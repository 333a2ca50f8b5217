# Browser-tier copy of torchweb's corpus program pytorch/examples super_resolution: the vendored code below is
# unchanged but for the imports named here; the driver at the end sets formula weights
# and records forward, loss, gradients and optimizer steps (tests/test_corpus.py runs
# the same program natively).
# From https://github.com/pytorch/examples @ 77f55b9, super_resolution/model.py
# License: BSD-3-Clause, Copyright (c) 2017, Pytorch contributors (full text in tests/corpus/LICENSES.md).
# Unchanged.

import torch
import torch.nn as nn
import torch.nn.init as init


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


# -- driver (torchweb's corpus, browser tier): weights and inputs from formulas, no random draws --
import math as _math

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"


def _values(n, k=0, scale=1.0):
    return [_math.sin(0.7 * i + k) * scale for i in range(n)]


def x_of(shape, k=0, scale=1.0):
    return torch.tensor(_values(_math.prod(shape), k, scale)).reshape(shape).to(device)


def set_weights(m, k=0):
    """Every parameter from a formula, scaled by 1/sqrt(fan-in) (biases 0.1)."""
    with torch.no_grad():
        for i, (name, p) in enumerate(m.named_parameters()):
            fan_in = p.numel() // p.shape[0] if p.dim() > 1 else 100
            p.copy_(x_of(tuple(p.shape), k + i, 1.0 / _math.sqrt(fan_in)))


def rounded(t):
    return [round(v, 6) for v in t.detach().reshape(-1).tolist()]


result = {}
def train_steps(model, loss_fn, steps=3, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def grad_summary(model):
    return {n: [p.grad.abs().sum().item()] + rounded(p.grad)[:6] for n, p in model.named_parameters()
            if p.grad is not None}

model = Net(upscale_factor=2).to(device)
set_weights(model, 1)
x = x_of((2, 1, 6, 6), 3)
target = x_of((2, 1, 12, 12), 4, 0.5)
y = model(x)
loss = nn.MSELoss()(y, target)
loss.backward()
result["y"] = rounded(y)
result["loss"] = loss.item()
result["grads"] = grad_summary(model)
result["losses"] = train_steps(model, lambda: nn.MSELoss()(model(x), target))
