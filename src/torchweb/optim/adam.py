"""torch.optim.Adam and AdamW (amsgrad, maximize, weight decay plain or decoupled); one fused
kernel per parameter and step. capturable/foreach/fused/differentiable are accepted: they do
not change the numbers."""


from .optimizer import Optimizer, _scalar_value, _set_scalar, _scalar_tensor, fused, grad_terms, lerp, zeros_state

__all__ = ["Adam", "AdamW"]


def check_betas(lr, eps, betas, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def as_number(x):
    """A 1-element tensor option (lr, betas) as a Python float."""
    return float(x.item()) if hasattr(x, "item") and not isinstance(x, (int, float)) else x


class Adam(Optimizer):
    """torch.optim.Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    amsgrad=False, *, foreach=None, maximize=False, capturable=False, differentiable=False,
    fused=None, decoupled_weight_decay=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        lr = as_number(lr)
        betas = tuple(as_number(b) for b in betas)
        check_betas(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                         ("differentiable", False), ("decoupled_weight_decay", False), ("fused", None)):
                group.setdefault(k, v)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        return self._run_step(closure)

    def _update(self, p, grad, state, group):
        if len(state) == 0:
            state["step"] = _scalar_tensor(0.0, p)
            state["exp_avg"] = zeros_state(p)
            state["exp_avg_sq"] = zeros_state(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_state(p)
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
        s["bc2s"] = bias_correction2 ** 0.5
        s["eps"] = group["eps"]
        s["nss"] = -(lr / bias_correction1)
        tensors = [p, grad, state["exp_avg"], state["exp_avg_sq"]]
        names = ["param", "grad", "exp_avg", "exp_avg_sq"]
        if group["amsgrad"]:
            tensors.append(state["max_exp_avg_sq"])
            names.append("max_exp_avg_sq")
            body.append(("max_exp_avg_sq", "max(max_exp_avg_sq, exp_avg_sq)"))
            body.append(("denom", "sqrt(max_exp_avg_sq) / bc2s + eps"))
        else:
            body.append(("denom", "sqrt(exp_avg_sq) / bc2s + eps"))
        body.append(("param", "param + nss * (exp_avg / denom)"))
        writes = [n for n in names if n != "grad"]
        fused("adam", tensors, names, writes, body, s)


class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay (default weight_decay=1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


