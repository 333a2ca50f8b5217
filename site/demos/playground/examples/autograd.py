# Autograd, step by step. Plain PyTorch: it prints the same numbers in PyTorch.
import torch

# a gradient: y = sum(x^3 - 2x), dy/dx = 3x^2 - 2
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
y = (x ** 3 - 2 * x).sum()
y.backward()
print("dy/dx =", x.grad.tolist())

# higher order: d2y/dx2 = 6x, through create_graph=True
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
(g,) = torch.autograd.grad((x ** 3 - 2 * x).sum(), x, create_graph=True)
(h,) = torch.autograd.grad(g.sum(), x)
print("d2y/dx2 =", h.tolist())


# a custom Function: a clamp whose gradient passes straight through (straight-through estimator)
class StraightClamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t.clamp(-1.0, 1.0)

    @staticmethod
    def backward(ctx, grad):
        return grad


t = torch.tensor([-3.0, 0.25, 4.0], requires_grad=True)
StraightClamp.apply(t).mul(torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print("clamp", StraightClamp.apply(t).tolist(), "grad", t.grad.tolist())

# a hook sees (and may change) a gradient on its way back
w = torch.tensor([1.0, -2.0], requires_grad=True)
seen = []
w.register_hook(lambda grad: seen.append(grad.tolist()) or grad * 0.5)
(w * w).sum().backward()
print("hook saw", seen[0], "-> w.grad", w.grad.tolist())

# no_grad and detach: values without a graph
with torch.no_grad():
    z = w * 10
print("requires_grad inside no_grad:", z.requires_grad, "| detached:", w.detach().requires_grad)

# gradient descent by hand on f(a) = (a - 3)^2, and the path it takes
try:
    from playground import plot          # draws on the playground page
except ImportError:                      # elsewhere: no plot
    def plot(*args, **kwargs): pass
a = torch.tensor(0.0, requires_grad=True)
path = []
for step in range(25):
    loss = (a - 3.0) ** 2
    loss.backward()
    with torch.no_grad():
        a -= 0.1 * a.grad
    a.grad.zero_()
    path.append(a.item())
plot(path, title="a after each step (f(a) = (a - 3)^2)")
print("a =", round(a.item(), 5))
