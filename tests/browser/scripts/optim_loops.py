# torch.optim on raw tensors: a 2-layer MLP trained a few steps with several optimizers and
# schedulers, an optimizer state_dict round trip in the middle, the lr sequences.
import math

import torch


def weights():
    shapes = [(4, 8), (8,), (8, 3)]
    out = []
    for k, shape in enumerate(shapes):
        n = math.prod(shape)
        out.append(torch.tensor([math.sin(0.37 * i + k) * 0.5 for i in range(n)]).reshape(shape).requires_grad_(True))
    return out


x = torch.tensor([[math.cos(0.3 * i + j) for j in range(4)] for i in range(16)])
y = torch.tensor([[math.sin(0.2 * i - j) for j in range(3)] for i in range(16)])


def loss_of(ps):
    w1, b1, w2 = ps
    return ((torch.tanh(x @ w1 + b1) @ w2 - y) ** 2).mean()


def train(make_opt, make_sched=None, steps=6, reload_at=None):
    ps = weights()
    opt = make_opt(ps)
    sched = make_sched(opt) if make_sched else None
    losses, lrs = [], []
    for i in range(steps):
        if i == reload_at:   # a fresh optimizer from the state_dict continues the curve
            sd = opt.state_dict()
            opt = make_opt(ps)
            opt.load_state_dict(sd)
        opt.zero_grad()
        loss = loss_of(ps)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if sched is not None:
            sched.step()
            lrs.append(sched.get_last_lr()[0])
    return {"losses": losses, "lrs": lrs, "params": [p.detach().reshape(-1).tolist()[:6] for p in ps]}


result = {
    "sgd_nesterov": train(lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
                          reload_at=3),
    "adam_amsgrad": train(lambda ps: torch.optim.Adam(ps, lr=0.02, amsgrad=True), reload_at=3),
    "adamw_onecycle": train(lambda ps: torch.optim.AdamW(ps, lr=0.02),
                            lambda o: torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.05, total_steps=8)),
    "rmsprop_centered": train(lambda ps: torch.optim.RMSprop(ps, lr=0.01, centered=True, momentum=0.5)),
    "nadam_cosine": train(lambda ps: torch.optim.NAdam(ps, lr=0.02),
                          lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4)),
    "radam": train(lambda ps: torch.optim.RAdam(ps, lr=0.02), steps=8),
    "adagrad_groups": train(lambda ps: torch.optim.Adagrad([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.05}],
                                                           lr=0.1, lr_decay=0.01)),
}
