"""Fusion as a layer above the backends, below ops: elementwise ops on fresh float32 outputs
are recorded as pending expressions (record.py, over the graph of graph.py) and written by the
backend's run_fused(outs, nodes) when their bytes are needed (realize.py). Reductions and
matmuls meet pending work in kernel_edges.py. In a fusing scope (scope.py: an optimizer's step),
in-place ops are deferred too, and written together at its end: OPEN holds the open one."""

from .graph import OPEN, Node
from .kernel_edges import matmul_epilogue, reduction_prologue
from .realize import install, materialize, realize_all, realize_for_read, realize_for_write, write_into
from .record import elementwise, elementwise_fresh
from .scope import collecting_scalars, fusing

install()

__all__ = ["OPEN", "Node", "collecting_scalars", "elementwise", "elementwise_fresh", "fusing", "materialize",
           "matmul_epilogue",
           "realize_all", "realize_for_read", "realize_for_write", "reduction_prologue", "write_into"]
