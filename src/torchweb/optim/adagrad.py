"""torch.optim.Adagrad (lr_decay, initial_accumulator_value, weight decay, maximize), written as
PyTorch's _single_tensor_adagrad: one kernel per parameter and step (optimizer.py). Its state
is made at construction, as PyTorch's is."""

from .optimizer import Optimizer, check_nonnegative, first_state, l2_grad, next_step
from .._creation import full_like

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """torch.optim.Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_nonnegative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                          initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                _first_state(self.state[p], p, group)

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            _first_state(state, p, group)
        step = next_step(state, p)
        update(_single_tensor_adagrad, (p, grad, state["sum"]), step, lr=group["lr"],
               weight_decay=group["weight_decay"], lr_decay=group["lr_decay"], eps=group["eps"],
               maximize=group["maximize"])


def _first_state(state, p, group):
    first_state(state, p)
    state["sum"] = full_like(p, group["initial_accumulator_value"])


def _single_tensor_adagrad(param, grad, state_sum, step, *, lr, weight_decay, lr_decay, eps, maximize):
    """One parameter's update (dense gradients), as torch/optim/adagrad.py writes it."""
    grad = l2_grad(param, grad, weight_decay, maximize)
    clr = lr / (1 + (step - 1) * lr_decay)
    state_sum.addcmul_(grad, grad, value=1)
    std = state_sum.sqrt().add_(eps)
    param.addcdiv_(grad, std, value=-clr)
