"""torch.optim.ASGD (averaged SGD: lambd, alpha, t0, weight decay, maximize), written as
PyTorch's _single_tensor_asgd: one kernel per parameter and step (optimizer.py). Its 0-d state
eta and mu are read and written as Python numbers (cached on the tensors, as the step count
is: no readback), so the kernel takes them as uniforms."""

from .adam import as_number
from .optimizer import (Optimizer, _scalar_value, _set_scalar, captured, check_nonnegative, first_state, l2_grad,
                        next_step)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """torch.optim.ASGD(params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
    foreach=None, maximize=False, differentiable=False, capturable=False)."""
    _pairs_updates = True

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        lr = as_number(lr)
        check_nonnegative(lr=lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group, update):
        lr, lambd, alpha = group["lr"], group["lambd"], group["alpha"]
        if len(state) == 0:
            first_state(state, p, "ax", eta=lr, mu=1.0)
        step = next_step(state, p)
        update(_single_tensor_asgd, (p, grad, state["ax"]), eta=_scalar_value(state["eta"]),
               mu=_scalar_value(state["mu"]), lambd=lambd, weight_decay=group["weight_decay"],
               maximize=group["maximize"], capturable=group["capturable"] or captured())
        _set_scalar(state, "eta", lr / ((1 + lambd * lr * step) ** alpha), p)
        _set_scalar(state, "mu", 1 / max(1, step - group["t0"]), p)


def _single_tensor_asgd(param, grad, ax, *, eta, mu, lambd, weight_decay, maximize, capturable):
    """One parameter's update, as torch/optim/asgd.py writes it (eta, mu: the state's values
    before this step, which the caller advances; capturable: the averaging's one form whatever
    mu, as PyTorch's capturable path, so that a captured step's replays keep its kernel)."""
    grad = l2_grad(param, grad, weight_decay, maximize)
    param.mul_(1 - lambd * eta)
    param.add_(grad, alpha=-eta)
    if capturable or mu != 1:
        ax.add_(param.sub(ax).mul_(mu))
    else:
        ax.copy_(param)
