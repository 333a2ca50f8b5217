# Higher-order gradients (create_graph=True): a WGAN-GP gradient penalty on a small critic, a
# Hessian-vector product (autograd.grad twice, and autograd.functional.hvp), MAML's inner step
# and a PINN residual (d2u/dx2 by two autograd.grad calls), each trained back to its weights.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def formula(shape, scale, phase):
    n = math.prod(shape)
    return torch.tensor([scale * math.sin(0.37 * i + phase) for i in range(n)]).reshape(shape)


def set_weights(module, scale=0.5):
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            p.copy_(formula(p.shape, scale, k))


# -- WGAN-GP: the penalty on the critic's gradient at points between real and fake samples
critic = nn.Sequential(nn.Linear(4, 12), nn.LeakyReLU(0.2), nn.Linear(12, 1))
set_weights(critic)
real = formula((6, 4), 1.0, 0.3)
fake = formula((6, 4), 0.8, 1.7)
alpha = torch.tensor([[0.1], [0.25], [0.4], [0.55], [0.7], [0.85]])
interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
out = critic(interp)
grads, = torch.autograd.grad(out, interp, grad_outputs=torch.ones_like(out), create_graph=True)
gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
loss_d = critic(fake).mean() - critic(real).mean() + 10 * gp
loss_d.backward()
wgan = {"gp": gp.item(), "loss": loss_d.item(),
        "grad_w1": critic[0].weight.grad.reshape(-1).tolist()[:12], "grad_w2": critic[2].weight.grad.reshape(-1).tolist()}

# -- Hessian-vector product
x = formula((5,), 0.9, 0.2).requires_grad_(True)
a = formula((5, 5), 0.4, 0.9)
v = formula((5,), 1.0, 2.1)


def f(x):
    return torch.tanh(x @ a @ x) + (x ** 4).sum() + torch.sigmoid(x).prod()


g, = torch.autograd.grad(f(x), x, create_graph=True)
hv, = torch.autograd.grad(g, x, grad_outputs=v)
_, hv_functional = torch.autograd.functional.hvp(f, x.detach(), v)
hessian = torch.autograd.functional.hessian(f, x.detach())

# -- MAML: one inner SGD step with create_graph, the outer loss back to the meta-parameters
net = nn.Linear(4, 3)
set_weights(net, 0.3)
xs, ys = formula((8, 4), 1.0, 0.5), torch.tensor([0, 1, 2, 1, 0, 2, 2, 1])
xq, yq = formula((6, 4), 1.0, 2.5), torch.tensor([2, 0, 1, 1, 0, 2])
inner = F.cross_entropy(net(xs), ys)
gw, gb = torch.autograd.grad(inner, (net.weight, net.bias), create_graph=True)
fast_w, fast_b = net.weight - 0.5 * gw, net.bias - 0.5 * gb
outer = F.cross_entropy(F.linear(xq, fast_w, fast_b), yq)
outer.backward()
maml = {"outer": outer.item(), "grad_w": net.weight.grad.reshape(-1).tolist(), "grad_b": net.bias.grad.tolist()}

# -- PINN: u(x, t) by a tanh MLP, Burgers' residual u_t + u u_x - nu u_xx, trained a few steps
pinn = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
set_weights(pinn, 0.6)
opt = torch.optim.Adam(pinn.parameters(), lr=0.01)
pts = formula((10, 2), 1.0, 0.7)
losses = []
for step in range(4):
    xx = pts[:, :1].clone().requires_grad_(True)
    tt = pts[:, 1:].clone().requires_grad_(True)
    u = pinn(torch.cat([xx, tt], 1))
    u_x, u_t = torch.autograd.grad(u, (xx, tt), grad_outputs=torch.ones_like(u), create_graph=True)
    u_xx, = torch.autograd.grad(u_x, xx, grad_outputs=torch.ones_like(u_x), create_graph=True)
    residual = u_t + u * u_x - 0.05 * u_xx
    loss = (residual ** 2).mean() + ((u[:2] - 0.1) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

result = {"wgan": wgan, "hv": hv.tolist(), "hv_functional": hv_functional.tolist(),
          "hessian": hessian.reshape(-1).tolist(), "maml": maml,
          "pinn_losses": losses, "pinn_u_xx": u_xx.reshape(-1).tolist(),
          "pinn_weight": pinn[0].weight.reshape(-1).tolist()[:8]}
