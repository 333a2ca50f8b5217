"""torch.optim.Adamax (the infinity-norm Adam), written as PyTorch's _single_tensor_adamax: one
kernel per parameter and step (the optimizer's fusing scope)."""

from .._creation import zeros_like
from .adam import check_betas
from .optimizer import Optimizer, _scalar_tensor, _scalar_value, _set_scalar, maximum

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """torch.optim.Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    foreach=None, *, maximize=False, differentiable=False, capturable=False)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_betas(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0, p)
            state["exp_avg"] = zeros_like(p)
            state["exp_inf"] = zeros_like(p)
        step = _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)
        beta1, beta2 = group["betas"]
        _single_tensor_adamax(p, grad, state["exp_avg"], state["exp_inf"], step, lr=group["lr"], beta1=beta1,
                              beta2=beta2, eps=group["eps"], weight_decay=group["weight_decay"],
                              maximize=group["maximize"])


def _single_tensor_adamax(param, grad, exp_avg, exp_inf, step, *, lr, beta1, beta2, eps, weight_decay, maximize):
    """One parameter's update, as torch/optim/adamax.py writes it (step: the new count)."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)
    maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
    clr = lr / (1 - beta1 ** step)
    param.addcdiv_(exp_avg, exp_inf, value=-clr)
