"""Fusion as a layer above the backends, below ops: elementwise ops on fresh float32 outputs
are recorded as pending expressions (record.py, over the graph of graph.py) and written by the
backend's run_fused(outs, nodes) when their bytes are needed (realize.py). Reductions and
matmuls meet pending work in kernel_edges.py. A fusing scope (scope.py) runs an optimizer's
update, traced over values (traced.py) instead of tensors, as one kernel."""

from .graph import Node
from .kernel_edges import matmul_epilogue, matmul_partners, matmul_reshaped, reduction_prologue, sum_prologue
from .realize import install, materialize, realize_all, realize_for_read, realize_for_write, write_into
from .record import elementwise, elementwise_fresh
from .scope import collecting_scalars, fusing

install(matmul_partners)

__all__ = ["Node", "collecting_scalars", "elementwise", "elementwise_fresh", "fusing", "materialize",
           "matmul_epilogue", "matmul_reshaped",
           "realize_all", "realize_for_read", "realize_for_write", "reduction_prologue", "sum_prologue",
           "write_into"]
