"""Where a reduction or a matmul meets pending elementwise work: the decisions of this layer
that the speed issue (#21) extends. ops/lowering.py asks them before it runs the kernel.

Today both decide "realize first": the pending input is written by its own fused kernel, then
the reduction or matmul reads it. #21 plugs in here:
- reduction_prologue: hand the pending node to the backend's reduction (a run_fused-like
  reduce_fused(out, node, ...) whose per-element load is the node's expression), so that
  `(x * y).sum()` or a softmax over `x * scale` is one kernel; the decision is whether the
  node's leaves fit the reduction kernel's bindings and are read once per element.
- matmul_epilogue: record the matmul's output as pending (a node whose root is the matmul)
  so that the elementwise ops after it (bias, activation, residual) are stored by the matmul
  kernel itself; the decision is that the output is fresh, float32 and read whole (lowering
  then asks for every matmul, not only one with a pending operand, as it does today)."""

from math import prod

from .._size import contiguous_strides
from .realize import realize

_SUM_OF_TWO = (("add", "f"), ("t", "f", "f32"), ("t", "f", "f32"))


def reduction_prologue(inp):
    """inp is about to be reduced: None (no prologue taken) after realizing a pending inp."""
    s = inp._storage
    if s.pending is not None:
        realize(s)
    return None


def matmul_epilogue(out, a, b):
    """out = a @ b is about to run: None (no epilogue deferred; the matmul runs now) after
    realizing pending operands."""
    sa, sb = a._storage, b._storage
    if sa.pending is not None:
        realize(sa)
    if sb.pending is not None:
        realize(sb)
    return None


def sum_prologue(t):
    """t (whole, contiguous) is pending as a + b, both whole contiguous float32 buffers of its
    shape (a residual connection: x + f(x), or two gradients summed): the two leaves
    (storage, offset) for a kernel that computes the sum as it reads it and writes t itself,
    t's node taken off (it is written by that kernel, not by run_fused). None otherwise (t
    untouched: the caller realizes it as usual)."""
    s = t._storage
    node = s.pending
    if node is None or node.key != _SUM_OF_TWO or node.scalars or t._offset or t._shape != node.shape:
        return None
    n = prod(node.shape)
    strides = contiguous_strides(node.shape)
    if s.numel != n or t._stride != strides:
        return None
    for leaf, stride, offset, _ in node.leaves:
        if stride != strides or leaf.numel < offset + n:
            return None
    s.pending = None   # (as realize() does: its group's entries now skip it)
    return [(leaf, offset) for leaf, _, offset, _ in node.leaves]
