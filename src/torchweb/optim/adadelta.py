"""torch.optim.Adadelta (rho, weight decay, maximize), written as PyTorch's
_single_tensor_adadelta: one kernel per parameter and step (the optimizer's fusing scope)."""

from .._creation import zeros_like
from .optimizer import Optimizer, _scalar_tensor, _scalar_value, _set_scalar

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """torch.optim.Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
    capturable=False, maximize=False, differentiable=False)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0, p)
            state["square_avg"] = zeros_like(p)
            state["acc_delta"] = zeros_like(p)
        _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)
        _single_tensor_adadelta(p, grad, state["square_avg"], state["acc_delta"], lr=group["lr"], rho=group["rho"],
                                eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"])


def _single_tensor_adadelta(param, grad, square_avg, acc_delta, *, lr, rho, eps, weight_decay, maximize):
    """One parameter's update, as torch/optim/adadelta.py writes it."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
    std = square_avg.add(eps).sqrt_()
    delta = acc_delta.add(eps).sqrt_()
    delta.div_(std).mul_(grad)
    acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
    param.add_(delta, alpha=-lr)
