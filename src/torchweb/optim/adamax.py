"""torch.optim.Adamax (the infinity-norm Adam), written as PyTorch's _single_tensor_adamax: one
kernel per parameter and step (optimizer.py)."""

from .adam import check_betas
from .optimizer import Optimizer, first_state, l2_grad, next_step

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """torch.optim.Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    foreach=None, *, maximize=False, differentiable=False, capturable=False)."""
    _pairs_updates = True

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_betas(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            first_state(state, p, "exp_avg", "exp_inf")
        step = next_step(state, p)
        beta1, beta2 = group["betas"]
        update(_single_tensor_adamax, (p, grad, state["exp_avg"], state["exp_inf"]), step, eps=group["eps"],
               beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
               maximize=group["maximize"])


def _single_tensor_adamax(param, grad, exp_avg, exp_inf, step, *, eps, beta1, beta2, lr, weight_decay, maximize):
    """One parameter's update, as torch/optim/adamax.py writes it (step: the new count)."""
    grad = l2_grad(param, grad, weight_decay, maximize)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(eps)))   # (torch.maximum(..., out=exp_inf))
    clr = lr / (1 - beta1 ** step)
    param.addcdiv_(exp_avg, exp_inf, value=-clr)
