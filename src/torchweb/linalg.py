"""torch.linalg: norms, cross, multi_dot (the ops themselves live in ops/linalg_more.py)."""

from .ops import reduction as R
from .ops.linalg_more import linalg_cross as cross, linalg_norm as norm, matrix_norm, multi_dot  # noqa: F401
from .ops.linalg import matmul  # noqa: F401


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None): the ord-norm of the
    elements over dim (all by default)."""
    return R.norm(x, ord, dim, keepdim, dtype=dtype)


def vecdot(x, y, *, dim=-1):
    """linalg.vecdot(x, y, *, dim=-1): the sum of x * y over dim (broadcast)."""
    return R.sum(x * y, dim)
