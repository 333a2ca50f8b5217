"""torch.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov momentum,
weight decay and maximize, written as PyTorch's _single_tensor_sgd: one kernel per parameter
and step (the optimizer's fusing scope)."""

from .._creation import empty_like
from .optimizer import Optimizer, required

__all__ = ["SGD"]


class SGD(Optimizer):
    """torch.optim.SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
    *, maximize=False, foreach=None, differentiable=False, fused=None)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
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

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        buf = state.get("momentum_buffer")
        buf = _single_tensor_sgd(p, grad, buf, weight_decay=group["weight_decay"], momentum=group["momentum"],
                                 lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                                 maximize=group["maximize"])
        if buf is not None:
            state["momentum_buffer"] = buf


def _single_tensor_sgd(param, grad, buf, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """One parameter's update, as torch/optim/sgd.py writes it; returns the momentum buffer."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    if momentum != 0:
        if buf is None:
            buf = empty_like(grad).copy_(grad)   # (torch.clone(grad): written by the step's kernel)
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        if nesterov:
            grad = grad.add(buf, alpha=momentum)
        else:
            grad = buf
    param.add_(grad, alpha=-lr)
    return buf
