"""In-place ops with PyTorch's autograd semantics: the version counter goes up, leaves that
require grad are refused, the op's node becomes the tensor's new history, and a write through
a view becomes the base's history (PyTorch's CopySlices)."""

from ..autograd import grad_mode
from ..autograd.function import Function
from .operands import empty, is_tensor
from . import elementwise as E
from .elementwise import OPS, inplace_function
from .shape import storage_scratch
from .adjoint import linear_backward


def _check_leaf(target):
    if target._multi_output is not None:
        name, i = target._multi_output
        raise RuntimeError(f"Output {i} of {name.split('Backward')[0]} is a view and is being modified inplace. This view is the output "
                           "of a function that returns multiple views. Such functions do not allow the output views "
                           "to be modified inplace. You should replace the inplace operation by an out-of-place one.")
    if target.grad_fn is None and target.requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = target._base
    if base is not None and base.grad_fn is None and base.requires_grad and target.grad_fn is not None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def check_no_internal_overlap(target):
    """PyTorch refuses to write in place into a tensor whose elements share memory (a stride-0,
    expanded dim): the result would depend on the order of the writes. fill_/zero_ may."""
    if target.numel() > 1 and any(st == 0 and n > 1 for st, n in zip(target._stride, target.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor "
                           "refers to a single memory location. Please clone() the tensor before "
                           "performing the operation.")


def call_inplace(name, target, *operands):
    """target = op(target, *operands) in place (an op of the elementwise table), with PyTorch's
    autograd checks: Tensor.add_ and the other in-place methods."""
    return apply_inplace(name, target, operands)


def apply_inplace(name, target, operands):
    if not (name == "copy" and not is_tensor(operands[0])):
        check_no_internal_overlap(target)
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
    if name == "copy":
        src = operands[0]
        if is_tensor(src):
            if src.device != target.device:
                src = src.to(target.device)  # differentiable: the gradient goes back to src's device
            _Copy.apply(target, src)
        else:
            _Fill.apply(target, src)
    else:
        if OPS[name].grad is None:
            raise NotImplementedError(f"the derivative for '{name}_' is not implemented")
        inplace_function(name, operands).apply(target, *operands)
    if target._base is not None:
        write_through_view(target)
    return target


def write_through_view(view):
    """view (already holding its new values and the op's history) was written in place: its
    base takes the write as its new history, and the view then reads the base's history."""
    _CopySlices.apply(view._base, view, (view.shape, view._stride, view._offset))
    view._view_version = None  # makes view.grad_fn an as_strided view of the base's new history


class _Copy(Function):
    """target.copy_(src): target's old values get no gradient, src gets all of it."""

    _backward_name = "torch::autograd::CopyBackwards"
    _double_backward = "unchecked"   # (the target's zero gradient has no graph: it needs none)

    @staticmethod
    def forward(ctx, target, src):
        E.copy_into(target, src)
        target._bump_version()
        return target

    @staticmethod
    def backward(ctx, g):
        return zeros_like_raw(g) if ctx.needs_input_grad[0] else None, g


class _Fill(Function):
    _backward_name = "FillBackward2"
    _double_backward = "unchecked"

    @staticmethod
    def forward(ctx, target, value):
        E.fill(target, value)
        target._bump_version()
        return target

    @staticmethod
    def backward(ctx, g):
        return zeros_like_raw(g), None


def zeros_like_raw(g):
    return E.fill(empty(g.shape, g.dtype, g.device), 0)


class _CopySlices(Function):
    """base after a write through one of its views (whose values the view already holds):
    the gradient of the written region goes to the view's new history, the rest to the
    base's old history."""

    _backward_name = "torch::autograd::CopySlices"
    _double_backward = True   # (create_graph: _recorded_split)

    @staticmethod
    def forward(ctx, base, view, geometry):
        ctx.geometry = geometry
        ctx.base_geometry = (base.shape, base._stride, base._offset)
        return base

    @staticmethod
    def backward(ctx, g):
        if g._requires_grad:   # create_graph
            return _recorded_split(g, ctx.base_geometry, ctx.geometry)
        scratch, at = storage_scratch(g, ctx.base_geometry, ctx.geometry)
        E.copy_into(at(ctx.base_geometry), g)
        region = at(ctx.geometry)
        g_view = region.clone()
        E.fill(region, 0)
        return at(ctx.base_geometry).clone(), g_view, None


def _recorded_split(g, base_geometry, geometry):
    """CopySlices' gradients as recorded ops: the written region of g (extract) and g with the
    region zeroed (g - place(extract(g))); extract and place are linear maps through the
    storage, each the other's adjoint (ops/adjoint.py)."""

    def move(t, src, dst):
        _, at = storage_scratch(t, src, dst)
        E.copy_into(at(src), t)
        return at(dst).clone()

    def extract(t):
        return linear_backward(t, lambda t: move(t, base_geometry, geometry), place, "CopySlicesExtractBackward")

    def place(t):
        return linear_backward(t, lambda t: move(t, geometry, base_geometry), extract, "CopySlicesPlaceBackward")
    region = extract(g)
    return g - place(region), region, None


def apply_function_inplace(fn, target, *args):
    """target = fn(target, *args) in place, fn an autograd Function whose forward writes its
    first argument, bumps its version and returns it (scatter_, index_put_, masked_fill_, ...):
    PyTorch's checks on leaves, and the base's history where target is a view."""
    tracked = grad_mode.is_grad_enabled() and any(is_tensor(a) and a.requires_grad for a in (target,) + args)
    if tracked:
        _check_leaf(target)
    fn.apply(target, *args)
    if tracked and target._base is not None:
        write_through_view(target)
    return target
