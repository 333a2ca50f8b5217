"""Backwards that a dedicated kernel runs as a linear map of the incoming gradient, g -> B(g)
(a scatter-add after a gather, the backward of a pooling, a padding, an interpolation, a
reversed scan), made differentiable for create_graph=True.

The map is linear, so its derivative is its adjoint B^T, which is the op's forward (a
gather, the pooling, the padding with zeros, ...), an op with a backward of its own. Under
grad mode (the engine's, with create_graph) and when g has a graph, B(g) is recorded as a node
whose backward is that adjoint: second and higher derivatives follow. Otherwise the kernel
runs as before.
"""

from ..autograd import grad_mode
from ..autograd.function import Function

_CLASSES = {}


def linear_backward(g, raw, adjoint, name):
    """raw(g) (B(g)); with a graph when grad mode is on and g requires grad, adjoint(gg) (a
    recorded op) then being its backward. name: the node's name (PyTorch's, e.g.
    'IndexBackwardBackward0')."""
    if grad_mode._state["enabled"] and g.requires_grad:
        fn = _CLASSES.get(name)
        if fn is None:
            fn = _CLASSES[name] = type(name, (_LinearBackward,), {"_backward_name": name})
        return fn.apply(g, raw, adjoint)
    return raw(g)


class _LinearBackward(Function):
    _double_backward = True

    @staticmethod
    def forward(ctx, g, raw, adjoint):
        ctx.adjoint = adjoint
        return raw(g)

    @staticmethod
    def backward(ctx, gg):
        return ctx.adjoint(gg), None, None
