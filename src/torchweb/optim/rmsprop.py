"""torch.optim.RMSprop (centered, momentum, weight decay, maximize), written as PyTorch's
_single_tensor_rmsprop: one kernel per parameter and step (optimizer.py)."""

from .optimizer import Optimizer, check_nonnegative, first_state, l2_grad, next_step

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """torch.optim.RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, capturable=False, foreach=None, maximize=False, differentiable=False)."""
    _pairs_updates = True

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_nonnegative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            first_state(state, p, "square_avg", *(("momentum_buffer",) if group["momentum"] > 0 else ()),
                        *(("grad_avg",) if group["centered"] else ()))
        next_step(state, p)
        update(_single_tensor_rmsprop, (p, grad, state["square_avg"], state.get("grad_avg"),
               state.get("momentum_buffer")), lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
               weight_decay=group["weight_decay"], momentum=group["momentum"], centered=group["centered"],
               maximize=group["maximize"])


def _single_tensor_rmsprop(param, grad, square_avg, grad_avg, buf, *, lr, alpha, eps, weight_decay, momentum,
                           centered, maximize):
    """One parameter's update, as torch/optim/rmsprop.py writes it."""
    grad = l2_grad(param, grad, weight_decay, maximize)
    square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
    if centered:
        grad_avg.lerp_(grad, 1 - alpha)
        avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
    else:
        avg = square_avg.sqrt()
    avg = avg.add_(eps)
    if momentum > 0:
        buf.mul_(momentum).addcdiv_(grad, avg)
        param.add_(buf, alpha=-lr)
    else:
        param.addcdiv_(grad, avg, value=-lr)
