"""torch.optim.Adadelta (rho, weight decay, maximize); one fused kernel per parameter and step."""

from .optimizer import Optimizer, _scalar_tensor, _scalar_value, _set_scalar, fused, grad_terms, zeros_state

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """torch.optim.Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
    capturable=False, maximize=False, differentiable=False)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0, p)
            state["square_avg"] = zeros_state(p)
            state["acc_delta"] = zeros_state(p)
        _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)
        rho = group["rho"]
        s = {}
        body = grad_terms(group, s)
        s["rho"], s["crho"], s["eps"], s["nlr"] = rho, 1 - rho, group["eps"], -group["lr"]
        body += [("square_avg", "square_avg * rho + crho * g * g"),
                 ("std", "sqrt(square_avg + eps)"),
                 ("delta", "sqrt(acc_delta + eps)"),
                 ("delta", "delta / std * g"),
                 ("acc_delta", "acc_delta * rho + crho * delta * delta"),
                 ("param", "param + nlr * delta")]
        fused("adadelta", [p, grad, state["square_avg"], state["acc_delta"]],
              ["param", "grad", "square_avg", "acc_delta"], ["param", "square_avg", "acc_delta"], body, s)
