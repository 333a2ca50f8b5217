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

from .realize import realize


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
