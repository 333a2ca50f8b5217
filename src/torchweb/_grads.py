"""Resetting gradients: what nn.Module.zero_grad and Optimizer.zero_grad share."""

from .autograd import grad_mode


def zero_grads(params, set_to_none=True):
    """Each parameter's .grad to None (PyTorch's default), or zeroed in place, detached from
    any graph it had."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        g = p.grad
        if g.grad_fn is not None:
            g.detach_()
        else:
            g.requires_grad_(False)
        with grad_mode.no_grad():
            g.zero_()
