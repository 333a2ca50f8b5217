"""In-place ops with PyTorch's autograd semantics: the version counter goes up, leaves that
require grad are refused, and a tensor (or the base of a view) written in place takes the
op's node as its new history."""

from ..autograd import grad_mode
from ..autograd.function import Function
from .dispatch import is_tensor
from . import elementwise as E


def _check_leaf(target):
    if target.grad_fn is None and target.requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = target._base
    if base is not None and base.grad_fn is None and base.requires_grad and target.grad_fn is not None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def apply_inplace(name, target, operands):
    tracked = grad_mode.is_grad_enabled() and (
        target.requires_grad or any(is_tensor(o) and o.requires_grad for o in operands))
    if not tracked:
        if name == "copy":
            E.copy_into(target, operands[0])
        else:
            E.run(name, target, *operands, out=target)
        target._bump_version()
        return target
    _check_leaf(target)
    from .pointwise import call
    if name == "copy":
        src = operands[0]
        result = call("copy", src.to(target.device) if is_tensor(src) else src)
        if is_tensor(src) and src.dtype is not target.dtype:
            result = result.to(target.dtype)
    else:
        result = call(name, target, *operands)
    if result.shape != target.shape:
        result = result.expand(target.shape)
    write_history(target, result)
    return target


def write_history(target, result):
    """Write result's values into target and give target (or its base) result's history."""
    base = target._base
    if base is None or not (base.requires_grad or result.requires_grad):
        with grad_mode.no_grad():
            E.copy_into(target, result)
        target._bump_version()
        if result.requires_grad:
            target._set_history(result.grad_fn, result._output_nr)
        return
    geometry = (target.shape, target._stride, target._offset)
    ViewScatter.apply(base, result, geometry)
    # the view now reads the base's new history through an as_strided view of it
    from .shape import as_strided
    v = as_strided(base, *geometry)
    target._set_history(v.grad_fn, 0)


class ViewScatter(Function):
    """base[view region] = src, in place; the history of a base written through a view
    (PyTorch's CopySlices)."""

    _backward_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, src, geometry):
        ctx.geometry = geometry
        ctx.base_offset = base._offset
        region = base._view(*geometry)
        E.copy_into(region, src)
        base._bump_version()
        return base

    @staticmethod
    def backward(ctx, g):
        shape, stride, offset = ctx.geometry
        g = g.contiguous()
        rel = offset - ctx.base_offset + g._offset
        g_base = g.clone()
        E._fill(g_base._view(shape, stride, rel - g._offset + g_base._offset), 0)
        g_src = g._view(shape, stride, rel).clone()
        return g_base, g_src, None
