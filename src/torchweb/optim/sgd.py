"""torch.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov momentum,
weight decay and maximize; one fused kernel per parameter and step."""

from .optimizer import Optimizer, empty_state, fused, grad_terms, required

__all__ = ["SGD"]


class SGD(Optimizer):
    """torch.optim.SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
    *, maximize=False, foreach=None, differentiable=False, fused=None)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused and differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        s = {}
        body = grad_terms(group, s)
        momentum = group["momentum"]
        tensors, names, writes = [p, grad], ["param", "grad"], ["param"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                # PyTorch's first step clones the gradient into the buffer (another kernel)
                buf = state["momentum_buffer"] = empty_state(p)
                body.append(("momentum_buffer", "g"))
            else:
                s["m"], s["damp"] = momentum, 1 - group["dampening"]
                body.append(("momentum_buffer", "momentum_buffer * m + damp * g"))
            if group["nesterov"]:
                s["mom"] = momentum
                body.append(("g", "g + mom * momentum_buffer"))
            else:
                body.append(("g", "momentum_buffer"))
            tensors.append(buf)
            names.append("momentum_buffer")
            writes.append("momentum_buffer")
        s["nlr"] = -group["lr"]
        body.append(("param", "param + nlr * g"))
        fused("sgd", tensors, names, writes, body, s)
