"""torch.optim.Adagrad (lr_decay, initial_accumulator_value, weight decay, maximize), written as
PyTorch's _single_tensor_adagrad: one kernel per parameter and step (the optimizer's fusing
scope). Its state is made at construction, as PyTorch's is."""

from .optimizer import Optimizer, _scalar_tensor, _scalar_value, _set_scalar
from .._creation import full_like

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """torch.optim.Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_tensor(0.0, p)
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0, p)
            state["sum"] = full_like(p, group["initial_accumulator_value"])
        step = _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)
        _single_tensor_adagrad(p, grad, state["sum"], step, lr=group["lr"], weight_decay=group["weight_decay"],
                               lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])


def _single_tensor_adagrad(param, grad, state_sum, step, *, lr, weight_decay, lr_decay, eps, maximize):
    """One parameter's update, as torch/optim/adagrad.py writes it (step: the new count)."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    clr = lr / (1 + (step - 1) * lr_decay)
    state_sum.addcmul_(grad, grad, value=1)
    std = state_sum.sqrt().add_(eps)
    param.addcdiv_(grad, std, value=-clr)
