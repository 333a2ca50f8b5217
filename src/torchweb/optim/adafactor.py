"""torch.optim.Adafactor (PyTorch's torch/optim/_adafactor.py): second moments factored into
row and column means for parameters of 2 or more dims, a full one for vectors; the relative
step size and the update's clipping need the parameter's and the update's norms, read back
(`.item()`) as PyTorch's single-tensor implementation reads them, so the update runs as tensor
ops, not one fused kernel."""

from .._type_info import finfo
from .adam import as_number
from .optimizer import Optimizer, first_state, next_step
from .._creation import zeros

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """torch.optim.Adafactor(params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
    weight_decay=0.0, *, foreach=None, maximize=False)."""

    _eager_update = True

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        lr = as_number(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            if grad.dim() > 1:
                first_state(state, p)
                shape = list(grad.shape)
                state["row_var"] = zeros(shape[:-1] + [1], dtype=grad.dtype, device=grad.device)
                state["col_var"] = zeros(shape[:-2] + [1, shape[-1]], dtype=grad.dtype, device=grad.device)
            else:
                first_state(state, p, "variance")
        step = next_step(state, p)
        eps1, eps2 = group["eps"]
        _single_tensor_adafactor(p, grad, state.get("row_var"), state.get("col_var"), state.get("variance"), step,
                                 d=group["d"], lr=group["lr"], beta2_decay=group["beta2_decay"],
                                 weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                                 maximize=group["maximize"])


def _single_tensor_adafactor(param, grad, row_var, col_var, variance, step_float, *, d, lr, beta2_decay,
                             weight_decay, eps1, eps2, maximize):
    """One parameter's update, as torch/optim/_adafactor.py writes it (step_float: the new count)."""
    grad = grad if not maximize else -grad
    if eps1 is None:
        eps1 = finfo(param.dtype).eps
    one_minus_beta2_t = step_float ** beta2_decay
    rho_t = min(lr, 1 / (step_float ** 0.5))
    alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
    if weight_decay != 0:
        param.mul_(1 - lr * weight_decay)
    if grad.dim() > 1:
        # (g * g).mean(dim=-1) without a g * g
        row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
        row_var.lerp_(row_mean, one_minus_beta2_t)
        col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
        col_var.lerp_(col_mean, one_minus_beta2_t)
        var_estimate = row_var @ col_var
        var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
    else:
        grad_squared = grad * grad
        variance.lerp_(grad_squared, one_minus_beta2_t)
        var_estimate = variance.clone()   # (the update must not write into variance)
    # eps1 squared: the square root after keeps its magnitude
    update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
    update.mul_(grad)
    denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
    param.add_(update, alpha=-alpha / denom)
