"""torch.optim.Adadelta (rho, weight decay, maximize), written as PyTorch's
_single_tensor_adadelta: one kernel per parameter and step (optimizer.py)."""

from .optimizer import Optimizer, check_nonnegative, first_state, l2_grad, next_step

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """torch.optim.Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
    capturable=False, maximize=False, differentiable=False)."""
    _pairs_updates = True

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_nonnegative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            first_state(state, p, "square_avg", "acc_delta")
        next_step(state, p)
        update(_single_tensor_adadelta, (p, grad, state["square_avg"], state["acc_delta"]), lr=group["lr"],
               rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"])


def _single_tensor_adadelta(param, grad, square_avg, acc_delta, *, lr, rho, eps, weight_decay, maximize):
    """One parameter's update, as torch/optim/adadelta.py writes it."""
    grad = l2_grad(param, grad, weight_decay, maximize)
    square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
    std = square_avg.add(eps).sqrt_()
    delta = acc_delta.add(eps).sqrt_()
    delta.div_(std).mul_(grad)
    acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
    param.add_(delta, alpha=-lr)
