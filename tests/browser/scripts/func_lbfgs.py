# torch.func and LBFGS as programs use them (issue 20): per-sample gradients with
# vmap(grad(...)) over functional_call (PyTorch's tutorial), and a small sequence model trained
# the classic way with LBFGS and its strong-Wolfe line search. No random draws.
import math

import torch
import torch.nn as nn
from torch.func import functional_call, grad, vmap


def init(module, k0):
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            p.copy_(torch.tensor([math.sin(0.37 * i + k + k0) * 0.5 for i in range(p.numel())]).reshape(p.shape))


# -- per-sample gradients
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
init(model, 0)
params = {k: v.detach() for k, v in model.named_parameters()}
data = torch.tensor([[math.cos(0.5 * r + c) for c in range(5)] for r in range(6)])
targets = torch.tensor([0, 2, 1, 1, 0, 2])


def loss_one(p, x, t):
    out = functional_call(model, p, (x.unsqueeze(0),))
    return nn.functional.cross_entropy(out, t.unsqueeze(0))


per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, data, targets)

# -- LBFGS on a tiny LSTM fitting a sine (time_sequence_prediction's loop, float32)
class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(1, 6)
        self.out = nn.Linear(6, 1)

    def forward(self, x):
        h = torch.zeros(x.shape[0], 6)
        c = torch.zeros(x.shape[0], 6)
        ys = []
        for t in range(x.shape[1]):
            h, c = self.cell(x[:, t:t + 1], (h, c))
            ys.append(self.out(h))
        return torch.cat(ys, 1)


seq = Seq()
init(seq, 3)
wave = torch.tensor([[math.sin(0.4 * t + 0.3 * b) for t in range(13)] for b in range(3)])
inp, tgt = wave[:, :-1], wave[:, 1:]
opt = torch.optim.LBFGS(seq.parameters(), lr=0.5, max_iter=6, line_search_fn="strong_wolfe")
losses = []


def closure():
    opt.zero_grad()
    loss = nn.functional.mse_loss(seq(inp), tgt)
    loss.backward()
    return loss


for _ in range(2):
    losses.append(opt.step(closure).item())

result = {
    "per_sample": {k: v.flatten()[::3].tolist() for k, v in per_sample.items()},
    "lbfgs_losses": losses,
    "lbfgs_final": nn.functional.mse_loss(seq(inp), tgt).item(),
}
