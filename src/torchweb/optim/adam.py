"""torch.optim.Adam and AdamW (amsgrad, maximize, weight decay plain or decoupled), written as
PyTorch's _single_tensor_adam: one kernel per parameter and step (optimizer.py).
capturable/foreach/fused/differentiable are accepted: they do not change the numbers."""

from .optimizer import Optimizer, check_nonnegative, first_state, l2_grad, next_step

__all__ = ["Adam", "AdamW"]


def check_betas(lr, eps, betas, weight_decay):
    """The Adam family's checks, in PyTorch's order."""
    check_nonnegative(lr=lr, eps=eps)
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    check_nonnegative(weight_decay=weight_decay)


def as_number(x):
    """A 1-element tensor option (lr, betas) as a Python float."""
    return float(x.item()) if hasattr(x, "item") and not isinstance(x, (int, float)) else x


class Adam(Optimizer):
    """torch.optim.Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    amsgrad=False, *, foreach=None, maximize=False, capturable=False, differentiable=False,
    fused=None, decoupled_weight_decay=False)."""
    _pairs_updates = True

    _sparse_refusal = "Adam does not support sparse gradients, please consider SparseAdam instead"

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

    def _group_update(self, group, update):
        beta1, beta2 = group["betas"]
        options = dict(amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                       weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                       decoupled=group["decoupled_weight_decay"])

        def with_options(tensors, step):
            update(_single_tensor_adam, tensors, step, **options)
        return with_options

    def _update(self, p, grad, state, group, update):
        if len(state) == 0:
            first_state(state, p, "exp_avg", "exp_avg_sq", *(("max_exp_avg_sq",) if group["amsgrad"] else ()))
        step = next_step(state, p)
        update((p, grad, state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq")), step)


def _single_tensor_adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, *, amsgrad, beta1, beta2, lr,
                        weight_decay, eps, maximize, decoupled):
    """One parameter's update, as torch/optim/adam.py writes it (step: the new count)."""
    adam_moments(param, grad, exp_avg, exp_avg_sq, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay,
                 decoupled=decoupled, maximize=maximize)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    if amsgrad:
        max_exp_avg_sq.copy_(max_exp_avg_sq.maximum(exp_avg_sq))   # (torch.maximum(..., out=max_exp_avg_sq))
        denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    else:
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-step_size)


def adam_moments(param, grad, exp_avg, exp_avg_sq, *, beta1, beta2, lr, weight_decay, decoupled, maximize):
    """What Adam, NAdam and RAdam's single-tensor functions begin with: weight decay (on the
    gradient, or decoupled on the parameter as AdamW's), then both moments advanced. Returns the
    gradient used."""
    if decoupled and weight_decay != 0:
        param.mul_(1 - lr * weight_decay)
    grad = l2_grad(param, grad, 0 if decoupled else weight_decay, maximize)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    return grad


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


