"""torch.optim.Adagrad (lr_decay, initial_accumulator_value, weight decay, maximize); one fused
kernel per parameter and step. Its state is made at construction, as PyTorch's is."""

from .optimizer import Optimizer, _scalar_tensor, _scalar_value, _set_scalar, fused, grad_terms
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
        s = {}
        body = grad_terms(group, s)
        s["nclr"] = -(group["lr"] / (1 + (step - 1) * group["lr_decay"]))
        s["eps"] = group["eps"]
        body += [("sum", "sum + g * g"), ("std", "sqrt(sum) + eps"), ("param", "param + nclr * (g / std)")]
        fused("adagrad", [p, grad, state["sum"]], ["param", "grad", "sum"], ["param", "sum"], body, s)
