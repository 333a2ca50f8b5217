"""torch.optim.Adamax (the infinity-norm Adam); one fused kernel per parameter and step."""

from .adam import check_betas
from .optimizer import Optimizer, _scalar_tensor, _scalar_value, _set_scalar, fused, grad_terms, lerp, zeros_state

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """torch.optim.Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    foreach=None, *, maximize=False, differentiable=False, capturable=False)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_betas(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0, p)
            state["exp_avg"] = zeros_state(p)
            state["exp_inf"] = zeros_state(p)
        step = _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)
        beta1, beta2 = group["betas"]
        s = {}
        body = grad_terms(group, s)
        body.append(lerp("exp_avg", "g", 1 - beta1, s, "w1"))
        s["b2"], s["eps"] = beta2, group["eps"]
        s["nclr"] = -(group["lr"] / (1 - beta1 ** step))
        body += [("exp_inf", "max(exp_inf * b2, abs(g) + eps)"),
                 ("param", "param + nclr * (exp_avg / exp_inf)")]
        fused("adamax", [p, grad, state["exp_avg"], state["exp_inf"]],
              ["param", "grad", "exp_avg", "exp_inf"], ["param", "exp_avg", "exp_inf"], body, s)
