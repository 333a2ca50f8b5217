"""torch.optim.SparseAdam: Adam's moments and parameter updated only where a sparse COO gradient
has entries (PyTorch's torch/optim/_functional.py sparse_adam), with tensor ops on the entries'
values: the old moments gathered at the gradient's indices, the updates added back there
(index_put_ with accumulate, which is the dense + sparse add PyTorch does: the coalesced
indices are unique). A dense gradient is refused with PyTorch's message."""

import math

from .adam import as_number
from .optimizer import Optimizer
from .._creation import zeros_like

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False)."""

    _sparse_grads = True
    _eager_update = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        lr = as_number(lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse = [[i, j] for i, g in enumerate(self.param_groups) for j, p in enumerate(g["params"]) if p.is_sparse]
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")

    def _update(self, p, grad, state, group, update):
        if not grad.is_sparse:
            raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        if len(state) == 0:
            state["step"] = 0   # (a Python int, as PyTorch's)
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
        state["step"] += 1
        beta1, beta2 = group["betas"]
        _sparse_adam(p, grad, state["exp_avg"], state["exp_avg_sq"], state["step"], lr=group["lr"], beta1=beta1,
                     beta2=beta2, eps=group["eps"], maximize=group.get("maximize", False))


def _sparse_adam(param, grad, exp_avg, exp_avg_sq, step, *, lr, beta1, beta2, eps, maximize):
    """One parameter's update, as PyTorch's sparse_adam writes it."""
    grad = grad if not maximize else -grad
    grad = grad.coalesce()   # (the update is non-linear: the indices must be unique)
    where = tuple(grad._indices().to(param.device))
    grad_values = grad._values()
    if grad_values.numel() == 0:
        return
    old_exp_avg_values = exp_avg[where]
    exp_avg_update_values = grad_values.sub(old_exp_avg_values).mul_(1 - beta1)
    exp_avg.index_put_(where, exp_avg_update_values, accumulate=True)
    old_exp_avg_sq_values = exp_avg_sq[where]
    exp_avg_sq_update_values = grad_values.pow(2).sub_(old_exp_avg_sq_values).mul_(1 - beta2)
    exp_avg_sq.index_put_(where, exp_avg_sq_update_values, accumulate=True)
    numer = exp_avg_update_values.add_(old_exp_avg_values)
    exp_avg_sq_update_values.add_(old_exp_avg_sq_values)
    denom = exp_avg_sq_update_values.sqrt_().add_(eps)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr * math.sqrt(bias_correction2) / bias_correction1
    param.index_put_(where, -step_size * numer.div_(denom), accumulate=True)
