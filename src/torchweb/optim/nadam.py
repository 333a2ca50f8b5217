"""torch.optim.NAdam (momentum_decay, decoupled weight decay) and torch.optim.RAdam (the
rectified Adam); one fused kernel per parameter and step."""

import math

from .adam import check_betas
from .optimizer import Optimizer, _f32, _scalar_tensor, _scalar_value, _set_scalar, fused, grad_terms, lerp, zeros_state

__all__ = ["NAdam", "RAdam"]


class NAdam(Optimizer):
    """torch.optim.NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None, maximize=False,
    capturable=False, differentiable=False)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_betas(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0, p)
            state["mu_product"] = _scalar_tensor(1.0, p)
            state["exp_avg"] = zeros_state(p)
            state["exp_avg_sq"] = zeros_state(p)
        step = _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)
        beta1, beta2 = group["betas"]
        lr, md = group["lr"], group["momentum_decay"]
        bias_correction2 = 1 - beta2 ** step
        s = {}
        body = grad_terms(group, s, decoupled=group["decoupled_weight_decay"])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * md)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
        # mu_product is a float32 tensor in PyTorch: its product rounds to float32 each step
        mu_product = _set_scalar(state, "mu_product", _scalar_value(state["mu_product"]) * _f32(mu), p)
        mu_product_next = mu_product * mu_next
        body.append(lerp("exp_avg", "g", 1 - beta1, s, "w1"))
        s["b2"], s["c2"], s["bc2"], s["eps"] = beta2, 1 - beta2, bias_correction2, group["eps"]
        s["v1"] = -lr * (1.0 - mu) / (1.0 - mu_product)
        s["v2"] = (-lr * mu_next) / (1.0 - mu_product_next)
        body += [("exp_avg_sq", "exp_avg_sq * b2 + c2 * g * g"),
                 ("denom", "sqrt(exp_avg_sq / bc2) + eps"),
                 ("param", "param + v1 * (g / denom)"),
                 ("param", "param + v2 * (exp_avg / denom)")]
        fused("nadam", [p, grad, state["exp_avg"], state["exp_avg_sq"]],
              ["param", "grad", "exp_avg", "exp_avg_sq"], ["param", "exp_avg", "exp_avg_sq"], body, s)


class RAdam(Optimizer):
    """torch.optim.RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
    differentiable=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_betas(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0, p)
            state["exp_avg"] = zeros_state(p)
            state["exp_avg_sq"] = zeros_state(p)
        step = _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        s = {}
        body = grad_terms(group, s, decoupled=group["decoupled_weight_decay"])
        body.append(lerp("exp_avg", "g", 1 - beta1, s, "w1"))
        s["b2"], s["c2"] = beta2, 1 - beta2
        body.append(("exp_avg_sq", "exp_avg_sq * b2 + c2 * g * g"))
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        s["bc1"], s["lr"] = bias_correction1, lr
        body.append(("bcea", "exp_avg / bc1"))
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            s["rect"] = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            s["bc2s"], s["eps"] = bias_correction2 ** 0.5, group["eps"]
            body.append(("param", "param - bcea * lr * (bc2s / (sqrt(exp_avg_sq) + eps)) * rect"))
        else:
            body.append(("param", "param - bcea * lr"))
        fused("radam", [p, grad, state["exp_avg"], state["exp_avg_sq"]],
              ["param", "grad", "exp_avg", "exp_avg_sq"], ["param", "exp_avg", "exp_avg_sq"], body, s)
