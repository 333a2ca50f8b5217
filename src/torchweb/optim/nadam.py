"""torch.optim.NAdam (momentum_decay, decoupled weight decay) and torch.optim.RAdam (the
rectified Adam), written as PyTorch's _single_tensor_nadam and _single_tensor_radam: one kernel
per parameter and step (optimizer.py)."""

from .adam import adam_moments, check_betas
from .optimizer import (Optimizer, _f32, _scalar_value, _set_scalar, captured, check_nonnegative, first_state,
                        next_step)

__all__ = ["NAdam", "RAdam"]


class NAdam(Optimizer):
    """torch.optim.NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None, maximize=False,
    capturable=False, differentiable=False)."""
    _pairs_updates = True

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_betas(lr, eps, betas, weight_decay)
        check_nonnegative(momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            first_state(state, p, "exp_avg", "exp_avg_sq", mu_product=1.0)
        step = next_step(state, p)
        beta1 = group["betas"][0]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * group["momentum_decay"])))
        # mu_product is a float32 tensor in PyTorch: its product rounds to float32 each step
        mu_product = _set_scalar(state, "mu_product", _scalar_value(state["mu_product"]) * _f32(mu), p)
        update(_single_tensor_nadam, (p, grad, state["exp_avg"], state["exp_avg_sq"]), step, mu, mu_product,
               beta1=beta1, beta2=group["betas"][1], lr=group["lr"], weight_decay=group["weight_decay"],
               momentum_decay=group["momentum_decay"], eps=group["eps"], decoupled=group["decoupled_weight_decay"],
               maximize=group["maximize"])


def _single_tensor_nadam(param, grad, exp_avg, exp_avg_sq, step, mu, mu_product, *, beta1, beta2, lr, weight_decay,
                         momentum_decay, eps, decoupled, maximize):
    """One parameter's update, as torch/optim/nadam.py writes it (step: the new count; mu and
    mu_product: this step's, the product advanced already)."""
    bias_correction2 = 1 - beta2 ** step
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    grad = adam_moments(param, grad, exp_avg, exp_avg_sq, beta1=beta1, beta2=beta2, lr=lr,
                        weight_decay=weight_decay, decoupled=decoupled, maximize=maximize)
    denom = exp_avg_sq.div(bias_correction2).sqrt()
    mu_product_next = mu_product * mu_next
    denom.add_(eps)
    param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product)))
    param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))


class RAdam(Optimizer):
    """torch.optim.RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
    differentiable=False)."""
    _pairs_updates = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_betas(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            first_state(state, p, "exp_avg", "exp_avg_sq")
        step = next_step(state, p)
        beta1, beta2 = group["betas"]
        update(_single_tensor_radam, (p, grad, state["exp_avg"], state["exp_avg_sq"]), step, beta1=beta1,
               beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
               decoupled=group["decoupled_weight_decay"], maximize=group["maximize"],
               capturable=group["capturable"] or captured())


def _single_tensor_radam(param, grad, exp_avg, exp_avg_sq, step, *, beta1, beta2, lr, weight_decay, eps, decoupled,
                         maximize, capturable):
    """One parameter's update, as torch/optim/radam.py writes it (step: the new count; capturable:
    its branch-free form, as PyTorch's capturable path)."""
    adam_moments(param, grad, exp_avg, exp_avg_sq, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay,
                 decoupled=decoupled, maximize=maximize)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    bias_corrected_exp_avg = exp_avg / bias_correction1
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5 if rho_t > 5.0 else 0
    if capturable:   # (one form whatever the step: torch.where(rho_t > 5, rect * adaptive_lr, 1) as a blend)
        adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
        update = adaptive_lr * rect + (0.0 if rho_t > 5.0 else 1.0)
        param.add_(bias_corrected_exp_avg * lr * update, alpha=-1.0)
    elif rho_t > 5.0:
        adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
        param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
    else:
        param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
