"""torch.linalg: norms, products, and the decompositions and solvers (the ops themselves live in
ops/linalg_more.py, ops/linalg_factor.py, ops/linalg_det.py, ops/linalg_spectral.py and
ops/linalg_derived.py; docs/linalg.md says which algorithm each uses)."""

from .ops import reduction as R
from .ops.linalg_more import linalg_cross as cross, linalg_norm as norm, matrix_norm, multi_dot  # noqa: F401
from .ops.linalg import matmul  # noqa: F401
from .ops.linalg_checks import LinAlgError  # noqa: F401
from .ops.linalg_factor import (cholesky, cholesky_ex, inv, inv_ex, solve, solve_ex,  # noqa: F401
                                solve_triangular, lu_factor, lu_factor_ex, lu, lu_solve)
from .ops.linalg_det import det, slogdet  # noqa: F401
from .ops.linalg_spectral import eigh, eigvalsh, svd, svdvals  # noqa: F401
from .ops.linalg_qr import qr  # noqa: F401
from .ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: F401
from .ops import linalg_derived as _derived
from .ops.linalg_derived import lstsq, vander, eig, eigvals, diagonal  # noqa: F401
from .ops.out_arg import with_out as _with_out

# (out= as PyTorch's: written by ops/out_arg.py's rules)
pinv, matrix_rank, cond, householder_product, tensorinv, tensorsolve, matrix_power, matrix_exp = (
    _with_out(getattr(_derived, n), "linalg." + n) for n in
    ("pinv", "matrix_rank", "cond", "householder_product", "tensorinv", "tensorsolve", "matrix_power", "matrix_exp"))
from ._refused import refuse_the_rest

__getattr__ = refuse_the_rest("torch.linalg", "not implemented by torchweb")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None): the ord-norm of the
    elements over dim (all by default)."""
    return R.norm(x, ord, dim, keepdim, dtype=dtype)


def vecdot(x, y, *, dim=-1):
    """linalg.vecdot(x, y, *, dim=-1): the sum of x * y over dim (broadcast)."""
    return R.sum(x * y, dim)
