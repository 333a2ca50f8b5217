"""torch.optim.Rprop (etas, step_sizes, maximize), written as PyTorch's _single_tensor_rprop: one
kernel per parameter and step (optimizer.py). capturable/foreach/differentiable are accepted:
they do not change the numbers."""

from .._creation import full_like
from .adam import as_number
from .optimizer import Optimizer, check_nonnegative, first_state, next_step

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """torch.optim.Rprop(params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
    capturable=False, foreach=None, maximize=False, differentiable=False)."""
    _pairs_updates = True

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        lr = as_number(lr)
        check_nonnegative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            first_state(state, p, "prev")
            state["step_size"] = full_like(grad, group["lr"])
        next_step(state, p)
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        update(_single_tensor_rprop, (p, grad, state["prev"], state["step_size"]), step_size_min=step_size_min,
               step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"])


def _single_tensor_rprop(param, grad, prev, step_size, *, step_size_min, step_size_max, etaminus, etaplus,
                         maximize):
    """One parameter's update, as torch/optim/rprop.py writes it. Its masked assignments
    (`sign[sign.gt(0)] = etaplus`, `grad[sign.eq(etaminus)] = 0`) are blends by the 0/1
    indicators of the sign, exact in float: each product is by 0 or 1, each sum adds zeros."""
    if maximize:
        grad = -grad
    sign = grad.mul(prev).sign()
    up, down = sign.clamp(min=0.0), sign.neg().clamp(min=0.0)
    factor = up.mul(etaplus).add(down.mul(etaminus)).add(1 - sign.square())
    step_size.mul_(factor).clamp_(step_size_min, step_size_max)
    grad = grad.mul(1 - down)
    param.addcmul_(grad.sign(), step_size, value=-1)
    prev.copy_(grad)
