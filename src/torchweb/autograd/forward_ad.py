"""torch.autograd.forward_ad: dual tensors (make_dual, unpack_dual, dual_level), computed on
top of reverse mode.

torchweb has no forward-mode rules: a dual tensor is an alias of its primal that the reverse
graph records, and unpack_dual(y) gives y's tangent J t by the double-vjp trick (as
autograd.functional.jvp): with u a zero tensor that requires grad, g(u) = J^T u is linear in
u, and the gradient of <g(u), t> with respect to u is J t. The numbers are PyTorch's; what
differs: the ops on dual tensors must run with grad mode on (under no_grad nothing records,
and unpack_dual says so rather than give no tangent), dual tensors and what is computed from
them report requires_grad=True, and each unpack_dual runs two backward passes.
"""

import weakref
from collections import namedtuple

from .._is_tensor import is_tensor
from . import grad_mode
from .differentiate import grad
from .._creation import zeros_like

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_levels = []   # one at most: {id(dual): (weakref to the dual, its graph node, the tangent)}


def enter_dual_level():
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _levels.append({})
    return 0


def exit_dual_level(*, level=None):
    if not _levels:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _levels.pop()


class dual_level:
    """Context manager for a forward AD level: dual tensors made inside lose their tangents
    when it exits."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor: tensor's values, with tangent as its forward gradient."""
    if not _levels:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    with grad_mode.enable_grad():
        dual = tensor.view_as(tensor) if tensor.requires_grad else tensor.detach().requires_grad_(True)
    node = dual.grad_fn if dual.grad_fn is not None else dual._accumulator()
    _levels[-1][id(dual)] = (weakref.ref(dual), node, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a tensor: the tangent None where it does not depend on a dual
    tensor of the current level."""
    if not _levels or not is_tensor(tensor):
        return UnpackedDualTensor(tensor, None)
    duals = [(ref(), t) for ref, _node, t in _levels[-1].values()]
    duals = [(d, t) for d, t in duals if d is not None]
    for d, t in duals:
        if d is tensor:
            return UnpackedDualTensor(tensor, t)
    if not tensor.requires_grad:
        if duals and not grad_mode.is_grad_enabled():
            raise RuntimeError("torchweb computes forward AD with reverse mode: compute with dual tensors "
                               "with grad mode on (not under torch.no_grad()) to get their tangents")
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(tensor, _tangent(tensor, duals))


def _tangent(y, duals):
    if not duals or not y.dtype.is_floating_point:
        return None
    with grad_mode.enable_grad():
        u = zeros_like(y, requires_grad=True)
        gs = grad(y, [d for d, _ in duals], u, retain_graph=True, create_graph=True, allow_unused=True)
        if all(g is None for g in gs):
            return None
        pairs = [(g, t) for g, (_, t) in zip(gs, duals) if g is not None and g.requires_grad]
        if not pairs:   # (y depends on a dual only through constants: a zero tangent)
            return zeros_like(y)
        jv, = grad([g for g, _ in pairs], u, [t for _, t in pairs], retain_graph=True, allow_unused=True)
    return jv if jv is not None else zeros_like(y)
