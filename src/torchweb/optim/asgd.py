"""torch.optim.ASGD (averaged SGD: lambd, alpha, t0, weight decay, maximize), written as
PyTorch's _single_tensor_asgd: one kernel per parameter and step (optimizer.py). Its 0-d state
eta and mu are read and written as Python numbers (cached on the tensors, as the step count
is: no readback), so the kernel takes them as uniforms."""

from .adam import as_number
from .optimizer import (Optimizer, _scalar_tensor, _scalar_value, _set_scalar, check_nonnegative, first_state,
                        next_step)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """torch.optim.ASGD(params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
    foreach=None, maximize=False, differentiable=False, capturable=False)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        lr = as_number(lr)
        check_nonnegative(lr=lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group, bind):
        lr, lambd, alpha = group["lr"], group["lambd"], group["alpha"]
        if len(state) == 0:
            first_state(state, p, "ax", eta=lr, mu=1.0)
        step = next_step(state, p)
        mu = _scalar_value(state["mu"])
        _single_tensor_asgd(*bind(p, grad, state["ax"]), eta=_scalar_value(state["eta"]), mu=mu, lambd=lambd,
                            weight_decay=group["weight_decay"], maximize=group["maximize"])
        _set_scalar(state, "eta", lr / ((1 + lambd * lr * step) ** alpha), p)
        new_mu = 1 / max(1, step - group["t0"])
        if (new_mu != 1) != (mu != 1):
            # the averaging's branch changes: a new tensor, so that a captured step (which
            # checks the state's tensors) is captured again rather than replaying the old kernel
            state["mu"] = _scalar_tensor(new_mu, p)
        else:
            _set_scalar(state, "mu", new_mu, p)


def _single_tensor_asgd(param, grad, ax, *, eta, mu, lambd, weight_decay, maximize):
    """One parameter's update, as torch/optim/asgd.py writes it (eta, mu: the state's values
    before this step; the caller advances them)."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    param.mul_(1 - lambd * eta)
    param.add_(grad, alpha=-eta)
    if mu != 1:
        ax.add_(param.sub(ax).mul_(mu))
    else:
        ax.copy_(param)
