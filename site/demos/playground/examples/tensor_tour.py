# A tour of tensors and autograd. Plain PyTorch: it prints the same numbers in PyTorch.
import torch

x = torch.arange(12, dtype=torch.float32).view(3, 4)
print("x =", x.tolist())
print("device:", x.device)
print("shape", tuple(x.shape), "sum", x.sum().item(), "mean", round(x.mean().item(), 4))

# broadcasting and matrix products
w = torch.tensor([1.0, -1.0, 0.5, 2.0])
print("x @ w =", [round(v, 4) for v in (x @ w).tolist()])
print("column means - row 0 =", (x.mean(dim=0) - x[0]).tolist())

# autograd: y = sum(softmax(x @ W) * target), gradient with respect to W
W = torch.tensor([[0.1, -0.2], [0.3, 0.0], [-0.1, 0.2], [0.05, 0.05]], requires_grad=True)
target = torch.tensor([1.0, 0.0])
y = (torch.softmax(x @ W, dim=1) * target).sum()
y.backward()
print("y =", round(y.item(), 6))
print("dy/dW[0] =", [round(v, 6) for v in W.grad[0].tolist()])

# a function and its derivative, plotted
t = torch.linspace(-3.0, 3.0, 61, requires_grad=True)
f = torch.tanh(t) * t
f.sum().backward()
try:
    from playground import plot          # draws on the playground page
except ImportError:                      # elsewhere: no plot
    def plot(*args, **kwargs): pass
plot(t.detach(), f.detach(), title="tanh(t) * t")
plot(t.detach(), t.grad, title="its derivative")
print("f'(1) =", round(t.grad[40].item(), 6))
