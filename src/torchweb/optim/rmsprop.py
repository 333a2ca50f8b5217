"""torch.optim.RMSprop (centered, momentum, weight decay, maximize); one fused kernel per
parameter and step."""

from .optimizer import Optimizer, _scalar_tensor, _scalar_value, _set_scalar, fused, grad_terms, lerp, zeros_state

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """torch.optim.RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, capturable=False, foreach=None, maximize=False, differentiable=False)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0, p)
            state["square_avg"] = zeros_state(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_state(p)
            if group["centered"]:
                state["grad_avg"] = zeros_state(p)
        _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)
        alpha = group["alpha"]
        s = {}
        body = grad_terms(group, s)
        s["a"], s["ca"] = alpha, 1 - alpha
        body.append(("square_avg", "square_avg * a + ca * g * g"))
        tensors, names = [p, grad, state["square_avg"]], ["param", "grad", "square_avg"]
        if group["centered"]:
            tensors.append(state["grad_avg"])
            names.append("grad_avg")
            body.append(lerp("grad_avg", "g", 1 - alpha, s, "w"))
            body.append(("avg", "sqrt(square_avg + -1.0 * grad_avg * grad_avg)"))
        else:
            body.append(("avg", "sqrt(square_avg)"))
        s["eps"] = group["eps"]
        body.append(("avg", "avg + eps"))
        s["nlr"] = -group["lr"]
        if group["momentum"] > 0:
            tensors.append(state["momentum_buffer"])
            names.append("momentum_buffer")
            s["m"] = group["momentum"]
            body.append(("momentum_buffer", "momentum_buffer * m + g / avg"))
            body.append(("param", "param + nlr * momentum_buffer"))
        else:
            body.append(("param", "param + nlr * (g / avg)"))
        fused("rmsprop", tensors, names, [n for n in names if n != "grad"], body, s)
