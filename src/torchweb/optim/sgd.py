"""torch.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov momentum,
weight decay and maximize, written as PyTorch's _single_tensor_sgd: one kernel per parameter
and step (optimizer.py). A sparse gradient (nn.Embedding(sparse=True)) takes the same steps op
by op on its entries, as PyTorch's: the momentum buffer is then sparse too."""

from .._creation import empty_like
from .._sparse_math import dense_plus
from .optimizer import Optimizer, l2_grad, required

__all__ = ["SGD"]


class SGD(Optimizer):
    """torch.optim.SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
    *, maximize=False, foreach=None, differentiable=False, fused=None)."""
    _pairs_updates = True

    _sparse_grads = True

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        # (PyTorch's SGD tests `x < 0`, not `not 0 <= x` as the others: a NaN option passes)
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused and differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _update(self, p, grad, state, group, update):
        momentum = group["momentum"]
        if grad.is_sparse:
            _sparse_sgd(p, grad, state, weight_decay=group["weight_decay"], momentum=momentum, lr=group["lr"],
                        dampening=group["dampening"], nesterov=group["nesterov"], maximize=group["maximize"])
            return
        buf = state.get("momentum_buffer")
        first = buf is None and momentum != 0
        if first:   # (torch.clone(grad), left unfilled: the update's kernel writes it)
            buf = state["momentum_buffer"] = empty_like(grad)
        update(_single_tensor_sgd, (p, grad, buf), first, weight_decay=group["weight_decay"], momentum=momentum,
               lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"], maximize=group["maximize"])


def _single_tensor_sgd(param, grad, buf, first, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """One parameter's update, as torch/optim/sgd.py writes it (first: buf is new, made from
    this step's gradient)."""
    grad = l2_grad(param, grad, weight_decay, maximize)
    if momentum != 0:
        if first:
            buf.copy_(grad)
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        if nesterov:
            grad = grad.add(buf, alpha=momentum)
        else:
            grad = buf
    param.add_(grad, alpha=-lr)


def _sparse_sgd(param, grad, state, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """The same update for a sparse gradient, with PyTorch's sparse arithmetic (weight decay
    is refused as PyTorch's grad.add(param) refuses it: sparse + dense)."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    if momentum != 0:
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = grad.clone()
        elif buf.is_sparse:
            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        else:   # (a dense buffer from dense steps before)
            dense_plus(buf.mul_(momentum), grad, 1 - dampening, inplace=True)
        grad = grad.add(buf, alpha=momentum) if nesterov else buf
    if grad.is_sparse:
        dense_plus(param, grad, -lr, inplace=True)
    else:
        param.add_(grad, alpha=-lr)
