"""The distributions' linear-algebra helpers, now torch.linalg's: a batched Cholesky factor, its
info, and a lower-triangular solve (blocked GPU decompositions: docs/linalg.md)."""

from .. import linalg


def cholesky_info(a):
    """0 where `a` (a batch of symmetric matrices) is positive definite, else the order of its
    first leading minor that is not (torch.linalg.cholesky_ex's info)."""
    return linalg.cholesky_ex(a.detach()).info


def cholesky(a):
    """The lower Cholesky factor L (a = L L^T) of a batch of positive-definite matrices."""
    return linalg.cholesky(a)


def solve_lower(lower, b):
    """x with lower @ x = b, for a batch of lower-triangular `lower` (n x n) and b (n x m)."""
    return linalg.solve_triangular(lower, b, upper=False)
