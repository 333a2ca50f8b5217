"""torch.optim.Muon (PyTorch's torch/optim/_muon.py): for the 2-D parameters of hidden layers,
momentum (Nesterov's by default), then the update orthogonalized by a quintic Newton-Schulz
iteration, decoupled weight decay and a learning rate scaled to the matrix's shape.

PyTorch runs the Newton-Schulz iteration in bfloat16, which WebGPU does not have. It is
emulated: computed in float32 and rounded to the nearest bfloat16 (the `bfloat16_round` row of
the elementwise table) after each op where PyTorch's bfloat16 ops round: the cast, the norm,
the clamp, the division, each matmul's and addmm's result (addmm rounds once, after
beta * input + alpha * product, as PyTorch's bfloat16 addmm). Only the order of the matmuls'
float32 sums differs from PyTorch's, which now and then moves a result to the neighbouring
bfloat16 value (tests/test_optim_muon.py measures what that does to a training run).

The momentum and the parameter's update are elementwise: each runs in the optimizer's fusing
scope (optimizer.py), one kernel; the Newton-Schulz ops run as ordinary ops between them."""

import math

from .._creation import empty_like, zeros_like
from .._is_tensor import is_tensor
from ..lazy import materialize
from ..ops.elementwise import call
from .optimizer import Optimizer, captured

__all__ = ["Muon"]

# Keller Jordan's constants (PyTorch's EPS, DEFAULT_A/B/C, DEFAULT_NS_STEPS)
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


class Muon(Optimizer):
    """torch.optim.Muon(params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
    ns_coefficients=(3.4445, -4.7750, 2.0315), eps=1e-7, ns_steps=5, adjust_lr_fn=None).

    2-D parameters only: biases, embeddings and the like go to another optimizer (AdamW, as
    PyTorch's docs show). adjust_lr_fn: None or "original" (lr * sqrt(max(1, rows / cols))), or
    "match_rms_adamw" (lr * 0.2 * sqrt(max(rows, cols)))."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if is_tensor(lr):
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            lr = float(lr.item())   # (a number in the group, as the other optimizers keep it)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _each_update(self, scope):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and p.dtype.is_complex:   # (before the base class takes its real view)
                    raise RuntimeError("Muon does not support complex parameters")
        self._scope = scope
        try:
            super()._each_update(scope)
        finally:
            del self._scope

    def _update(self, p, grad, state, group, update):
        if grad.dim() != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf = state.get("momentum_buffer")
        if buf is None:   # (lazy zeros: the first momentum kernel reads them)
            buf = state["momentum_buffer"] = zeros_like(grad)
        momentum = group["momentum"]
        if group["nesterov"]:
            blended = empty_like(grad)   # (grad.lerp(buf, momentum), written by the kernel)
            update(_nesterov_momentum, (grad, buf, blended), momentum)
        else:
            update(_momentum, (grad, buf), momentum)
            blended = buf
        options = (tuple(group["ns_coefficients"]), group["ns_steps"], group["eps"])
        ortho = self._orthogonalized(blended, options)
        lr = group["lr"]
        update(_apply, (p, ortho), decay=1 - lr * group["weight_decay"],
               step=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))

    def _orthogonalized(self, blended, options):
        """zeropower_via_newtonschulz(blended). Under torchweb.compile its ops are part of the
        captured program, and a replay only recomputes the fused kernels' scalars: the options
        join the kernels' forms (a replay whose options changed raises), the result is written
        before the update reads it, and while a replay collects scalars the iteration does not
        run (blended stands in for its result: a buffer of that shape and kind)."""
        if not captured():
            return zeropower_via_newtonschulz(blended, *options)
        scope = self._scope
        scope.forms.append(("Muon's Newton-Schulz iteration",) + options)
        if scope.sink is not None:
            return blended
        ortho = zeropower_via_newtonschulz(blended, *options)
        materialize(ortho)
        return ortho


def _momentum(grad, buf, momentum):
    """buf.lerp_(grad, 1 - momentum): the update is buf itself (nesterov=False)."""
    buf.lerp_(grad, 1 - momentum)


def _nesterov_momentum(grad, buf, blended, momentum):
    """buf.lerp_(grad, 1 - momentum), then the update grad.lerp(buf, momentum), into blended."""
    buf.lerp_(grad, 1 - momentum)
    blended.copy_(grad).lerp_(buf, momentum)


def _apply(param, ortho, *, decay, step):
    """param.mul_(1 - lr * weight_decay) then param.add_(ortho, alpha=-adjusted_lr), as
    PyTorch's _single_tensor_muon."""
    param.mul_(decay).add_(ortho, alpha=step)


def _bf16(x):
    """x rounded to bfloat16, kept in float32 (what a PyTorch bfloat16 op's result holds)."""
    return call("bfloat16_round", x)


def zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """PyTorch's _zeropower_via_newtonschulz, its bfloat16 ops emulated (see the module): the
    orthogonalized grad, a contiguous float32 tensor of grad's shape holding bfloat16 values."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.float()
    if tall:
        x = x.T
    x = _bf16(x)   # (grad.bfloat16())
    # x / max(norm, eps): its spectral norm at most 1
    x = _bf16(x / _bf16(_bf16(x.norm()).clamp(min=eps)))
    for i in range(ns_steps):
        gram = _bf16(x @ x.T)
        gram_update = _bf16(gram.addmm(gram, gram, beta=b, alpha=c))
        x = x.addmm(gram_update, x, beta=a)
        # (the last rounding reads the transposed result: the update comes out in grad's layout)
        x = _bf16(x.T if tall and i == ns_steps - 1 else x)
    if tall and ns_steps == 0:
        x = x.T.contiguous()
    return x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """PyTorch's _adjust_lr: the learning rate scaled so the update's RMS is the same across
    rectangular shapes."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio
