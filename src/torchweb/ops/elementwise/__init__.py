"""The elementwise ops: one package, one entry.

- table.py: the rows (name, arity, dtype rule, WGSL per compute class, numpy body, backward
  rule and what it saves, PyTorch's node name, the public forms made from the row);
- grads.py, grads_special.py: the backward rules, run on raw kernels through rule_kernels.K;
- dtype_plan.py: the dtype plan of a signature (DtypePlan), cached;
- raw.py: running an op without autograd (broadcast, output, checks, then the backend's kernel
  or a pending node for fusion);
- autograd.py: apply(name, operands, out=None), the entry: runs the op and, when an operand
  requires grad, makes the node whose backward is the row's rule; binary_operator is the
  operators' unrolled form of it.

The path of `y = x * 2` (docs/design.md draws it to the WGSL dispatch and back):
Tensor.__mul__ -> autograd.binary_operator -> raw.binary_number (plan cached) -> DtypePlan.fresh
(the lazy layer's recorder: a pending node, or the backend's kernel now); under autograd, the
op's Function's record_number (record for other signatures) -> raw.binary_number and the node,
and later backward -> grads.d_mul."""

from ...lazy import Node
from ...lazy.traced import ROW_NAMES
from . import rule_kernels
from .autograd import apply, binary_operator, call, inplace_function
from .raw import contiguous_operand, copy_into, copy_of, fill, run, run_any, run_args
from .table import OPS, ElementwiseOp, row_dtypes
from .rule_kernels import K

rule_kernels.install(run_args, call)
Node.ROWS.update({name: OPS[name] for name in ROW_NAMES})   # (the rows a fusing scope's values use)

__all__ = ["apply", "binary_operator", "call", "inplace_function", "contiguous_operand", "copy_into", "copy_of", "fill",
           "run", "run_any", "OPS", "ElementwiseOp", "row_dtypes", "K"]
