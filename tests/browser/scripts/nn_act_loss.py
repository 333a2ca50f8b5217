# Every activation module and loss module forward and backward, weights and inputs from formulas.
import math

import torch
import torch.nn as nn

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"


def values(n, k=0, scale=2.0):
    return [math.sin(0.9 * i + k) * scale for i in range(n)]


def x_of(shape, k=0, scale=2.0):
    return torch.tensor(values(math.prod(shape), k, scale)).reshape(shape).to(device)


result = {}
acts = [nn.ReLU(), nn.ReLU6(), nn.LeakyReLU(0.2), nn.PReLU(4, init=0.1), nn.RReLU().eval(), nn.ELU(0.5),
        nn.SELU(), nn.CELU(2.0), nn.GELU(), nn.GELU(approximate="tanh"), nn.SiLU(), nn.Mish(), nn.Sigmoid(),
        nn.Tanh(), nn.Hardtanh(-2.0, 1.5), nn.Hardswish(), nn.Hardsigmoid(), nn.Hardshrink(0.7), nn.Softshrink(),
        nn.Tanhshrink(), nn.Softplus(beta=2.0, threshold=1.5), nn.Softsign(), nn.LogSigmoid(), nn.Threshold(0.1, 20.0),
        nn.GLU(1), nn.Softmax(dim=1), nn.Softmin(dim=1), nn.LogSoftmax(dim=1), nn.Softmax2d()]
for k, m in enumerate(acts):
    m.to(device)
    x = x_of((2, 4, 3, 2) if isinstance(m, nn.Softmax2d) else (2, 4, 3), k).requires_grad_(True)
    y = m(x)
    (y * x_of(tuple(y.shape), k + 1, 1.0)).sum().backward()
    result[f"{k}:{m}"] = {"y": y.tolist(), "grad": x.grad.tolist()}
    if hasattr(m, "weight"):
        result[f"{k}:{m}"]["weight_grad"] = m.weight.grad.tolist()

# in place really in place
y = x_of((3, 4), 7) * 1.0
out = nn.ReLU(inplace=True)(y)
result["inplace_same"] = out is y
result["inplace_values"] = y.tolist()

N, C = 3, 4
cls = torch.tensor([1, 0, 3]).to(device)
pm1 = torch.tensor([1.0, -1.0, 1.0]).to(device)
prob = torch.sigmoid(x_of((N, C), 3))
losses = [
    (nn.L1Loss(), lambda: (x_of((N, C), 1), x_of((N, C), 2))),
    (nn.MSELoss(reduction="sum"), lambda: (x_of((N, C), 1), x_of((N, C), 2))),
    (nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5, 3.0]), label_smoothing=0.1),
     lambda: (x_of((N, C), 1), cls)),
    (nn.NLLLoss(ignore_index=0), lambda: (torch.log_softmax(x_of((N, C), 1), 1), cls)),
    (nn.BCELoss(reduction="none"), lambda: (torch.sigmoid(x_of((N, C), 1)), prob)),
    (nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1.0, 0.5, 3.0])), lambda: (x_of((N, C), 1), prob)),
    (nn.KLDivLoss(reduction="batchmean"), lambda: (torch.log_softmax(x_of((N, C), 1), 1), torch.softmax(x_of((N, C), 2), 1))),
    (nn.SmoothL1Loss(beta=0.5), lambda: (x_of((N, C), 1), x_of((N, C), 2))),
    (nn.HuberLoss(delta=0.7), lambda: (x_of((N, C), 1), x_of((N, C), 2))),
    (nn.PoissonNLLLoss(), lambda: (x_of((N, C), 1), prob * 3)),
    (nn.GaussianNLLLoss(), lambda: (x_of((N, C), 1), x_of((N, C), 2), prob)),
    (nn.CosineEmbeddingLoss(margin=0.2), lambda: (x_of((N, 5), 1), x_of((N, 5), 2), pm1)),
    (nn.MarginRankingLoss(margin=0.1), lambda: (x_of((N,), 1), x_of((N,), 2), pm1)),
    (nn.HingeEmbeddingLoss(), lambda: (x_of((N,), 1), pm1)),
    (nn.TripletMarginLoss(swap=True), lambda: (x_of((N, 5), 1), x_of((N, 5), 2), x_of((N, 5), 3))),
    (nn.TripletMarginWithDistanceLoss(), lambda: (x_of((N, 5), 1), x_of((N, 5), 2), x_of((N, 5), 3))),
    (nn.MultiLabelSoftMarginLoss(), lambda: (x_of((N, C), 1), (prob > 0.5).float())),
    (nn.MultiLabelMarginLoss(), lambda: (x_of((N, C), 1), torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 2, 0, 1]]).to(device))),
    (nn.MultiMarginLoss(p=2, margin=0.5), lambda: (x_of((N, C), 1), cls)),
    (nn.SoftMarginLoss(), lambda: (x_of((N,), 1), pm1)),
]
for k, (m, inputs) in enumerate(losses):
    m.to(device)
    xs = inputs()
    x = xs[0].detach().requires_grad_(True)
    loss = m(x, *xs[1:])
    (loss * x_of(tuple(loss.shape), k, 1.0)).sum().backward()
    result[f"loss{k}:{m}"] = {"loss": loss.tolist(), "grad": x.grad.tolist(),
                              "buffers": {name: b.tolist() for name, b in m.state_dict().items()}}

lce = nn.LinearCrossEntropyLoss(5, C, bias=True)
with torch.no_grad():
    lce.linear.weight.copy_(x_of((C, 5), 4, 0.5))
    lce.linear.bias.copy_(x_of((C,), 5, 0.5))
lce.to(device)
loss = lce(x_of((N, 5), 6), cls)
loss.backward()
result["linear_ce"] = {"loss": loss.item(), "weight_grad": lce.linear.weight.grad.tolist(),
                       "keys": {name: list(t.shape) for name, t in lce.state_dict().items()}}
