"""torch.optim.Adagrad (lr_decay, initial_accumulator_value, weight decay, maximize), written as
PyTorch's _single_tensor_adagrad: one kernel per parameter and step (optimizer.py). Its state
is made at construction, as PyTorch's is. A sparse gradient (nn.Embedding(sparse=True)) updates
the sum and the parameter only at its coalesced entries, op by op, as PyTorch's sparse branch."""

from .optimizer import Optimizer, check_nonnegative, first_state, l2_grad, next_step
from .._creation import full_like

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """torch.optim.Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None)."""
    _pairs_updates = True

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

    _sparse_grads = True

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            _first_state(state, p, group)
        step = next_step(state, p)
        if grad.is_sparse:
            _sparse_adagrad(p, grad, state["sum"], step, lr=group["lr"], weight_decay=group["weight_decay"],
                            lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])
            return
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


def _sparse_adagrad(param, grad, state_sum, step, *, lr, weight_decay, lr_decay, eps, maximize):
    """One parameter's update for a sparse gradient, as torch/optim/adagrad.py's sparse branch:
    the squares added to the sum at the gradient's (coalesced) indices, the parameter moved
    there by the values over the root of the sum there."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    clr = lr / (1 + (step - 1) * lr_decay)
    grad = grad.coalesce()
    where = tuple(grad._indices().to(param.device))
    values = grad._values()
    state_sum.index_put_(where, values.pow(2), accumulate=True)
    std_values = state_sum[where].sqrt_().add_(eps)
    param.index_put_(where, values / std_values * -clr, accumulate=True)
