"""torch.optim.Adam and AdamW (amsgrad, maximize, weight decay plain or decoupled), written as
PyTorch's _single_tensor_adam: one kernel per parameter and step (the optimizer's fusing scope).
capturable/foreach/fused/differentiable are accepted: they do not change the numbers."""

from .._creation import zeros_like
from .optimizer import Optimizer, _scalar_value, _set_scalar, _scalar_tensor, maximum

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
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_like(p)
        step = _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)
        beta1, beta2 = group["betas"]
        _single_tensor_adam(p, grad, state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq"), step,
                            amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                            weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                            decoupled=group["decoupled_weight_decay"])


def _single_tensor_adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, *, amsgrad, beta1, beta2, lr,
                        weight_decay, eps, maximize, decoupled):
    """One parameter's update, as torch/optim/adam.py writes it (step: the new count)."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad.add(param, alpha=weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    if amsgrad:
        maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    else:
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-step_size)


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


