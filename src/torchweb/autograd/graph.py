"""torch.autograd.graph: the graph's node type, gradient edges, the saved-tensor hooks context
managers, and a walk over the nodes a graph reaches (the library's own).

Saved-tensor hooks (saved_tensors_hooks, save_on_cpu) are accepted and their hooks are not
called: torchweb keeps saved tensors where they are (on the GPU, or in host memory on the cpu
device), which is what a pack/unpack pair that round-trips a tensor gives; the gradients are
the same. Code that uses the hooks to see the saved tensors (to count or log them) sees none.
"""

from collections import namedtuple

from .function import AccumulateGrad, Node as _GraphNode

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks"]


class _NodeMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, (_GraphNode, AccumulateGrad))

    def __subclasscheck__(cls, sub):
        return issubclass(sub, (_GraphNode, AccumulateGrad))


class Node(metaclass=_NodeMeta):
    """The type of grad_fn (isinstance(t.grad_fn, Node) holds for every node of the graph:
    the library's, a custom Function's, a leaf's AccumulateGrad)."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("torch.autograd.graph.Node cannot be instantiated: nodes are made by operations")


GradientEdge = namedtuple("GradientEdge", ["node", "output_nr"])
GradientEdge.__doc__ = "An edge of the graph: the node and which of its outputs (a gradient slot)."


def _reachable(roots):
    """Each node reachable from the root nodes, once, depth first with each node's inputs in
    order (AccumulateGrad nodes included: they end the paths)."""
    seen, stack = set(), list(reversed(roots))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(n for n, _ in reversed(node.next_functions) if n is not None)


def get_gradient_edge(tensor):
    """The edge a gradient for tensor flows into: its grad_fn (a leaf's AccumulateGrad)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    if tensor.grad_fn is not None:
        return GradientEdge(tensor.grad_fn, tensor._output_nr)
    return GradientEdge(tensor._accumulator(), 0)


def increment_version(tensor):
    """Bumps tensor's version counter, as an in-place write does (its saved copies then refuse
    a backward)."""
    tensors = tensor if isinstance(tensor, (list, tuple)) else (tensor,)
    for t in tensors:
        t._bump_version()


class saved_tensors_hooks:
    """Context manager taking pack_hook and unpack_hook for the tensors a graph saves; the
    hooks are not called (see the module's doc): saved tensors stay where they are."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors kept in host memory in PyTorch; here they stay where they are."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks:
    """Context manager under which saved_tensors_hooks are refused in PyTorch; torchweb calls
    no hooks, so there is nothing to refuse."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn



# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from .._refused import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("autograd.graph", "torchweb.autograd.graph")
