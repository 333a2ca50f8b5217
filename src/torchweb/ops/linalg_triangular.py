"""The triangular solve behind solve_triangular, lu_solve, cholesky_solve, solve and inv, blocked
as LAPACK's trsm: for each diagonal block of BLOCK rows (from the top for a lower triangle,
from the bottom for an upper one), one matmul of the block's rows against the unknowns already
solved, then the backend's trsm_block (one dispatch on webgpu, kernels/trsm.py; numpy on cpu)
substitutes the block against every right-hand side at once, reading A, B and that product
through their strides and writing the block's rows of X in place: a 1024 x 1024 solve is 32
blocks of two dispatches. No autograd here (ops/linalg_factor.py's Functions wrap it)."""

from math import prod

from ..backends import backend_for
from ..backends.plans import TrsmPlan
from .operands import empty

BLOCK = 32


def _as3d(t, count):
    """t [..., r, c] as [count, r, c] (a view where the batch dims fold into one)."""
    if t.dim() == 2:
        return t.unsqueeze(0)
    return t.reshape((count,) + tuple(t.shape[-2:]))


def tri_solve(A, B, upper, unit=False, in_place=False):
    """X with A X = B, A triangular (only its upper or lower triangle is read; unit: its
    diagonal taken as ones), A [..., n, n] and B [..., n, k] with equal batch dims; in_place:
    X written over B (a view whose batch dims fold into one; A shares no storage with it)."""
    n, k = A.shape[-1], B.shape[-1]
    X = B if in_place else empty(tuple(B.shape), B.dtype, B.device)
    count = prod(B.shape[:-2])
    if n == 0 or k == 0 or count == 0:
        return X
    backend = backend_for(A.device.type)
    A3, B3 = _as3d(A, count), _as3d(B, count)
    X3 = B3 if in_place else _as3d(X, count)
    starts = range(0, n, BLOCK)
    for i0 in (reversed(starts) if upper else starts):
        i1 = min(i0 + BLOCK, n)
        done = slice(i1, n) if upper else slice(0, i0)
        P = None
        if i1 < n if upper else i0 > 0:   # (the solved unknowns' part of these rows)
            P = A3[:, i0:i1, done] @ X3[:, done, :]
        plan = TrsmPlan(bool(upper), bool(unit), i1 - i0, k, count)
        backend.trsm_block(plan, X3[:, i0:i1, :], A3[:, i0:i1, i0:i1], B3[:, i0:i1, :], P)
    return X
