"""The factorizations behind torch.linalg, as loops of tensor ops over the matrix size (O(n)
dispatches each, batched over leading dims, float32 on both devices). No autograd here: the
ops in ops/linalg_factor.py and ops/linalg_spectral.py wrap these in Functions whose backwards
are PyTorch's formulas.

- triangular solve: by blocks of 32 rows, a kernel dispatch each (ops/linalg_triangular.py);
- Cholesky: left-looking, column by column (the cpu device's; webgpu factors by 32 x 32 blocks
  in one dispatch each: linalg_cholesky.py);
- LU: partial pivoting (the largest |entry| of the column, first one on ties, as LAPACK's
  getrf), a gather swapping two rows and a rank-1 update per column.
"""

from math import prod

from .. import _dtype
from .._creation import arange, zeros
from ..backends import backend_for
from .._size import broadcast_shapes
from .elementwise import call
from .join import cat
from .operands import empty
from .linalg_triangular import tri_solve


def index_col(n, device):
    """arange(n) as a column [n, 1] (row numbers, for masks)."""
    return arange(n, device=device).reshape(n, 1)


def expand_batch(A, B):
    """A and B with their batch dims (all but the last two) broadcast to one shape."""
    batch = broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    return A.expand(batch + tuple(A.shape[-2:])), B.expand(batch + tuple(B.shape[-2:]))


def first_failure(bad):
    """info: the 1-based index of the first True along the last dim of `bad`, 0 where none
    (int32, as LAPACK's)."""
    n = bad.shape[-1]
    order = arange(1, n + 1, device=bad.device).expand(tuple(bad.shape))
    first = call("where", bad, order, n + 1).amin(-1) if n else zeros(tuple(bad.shape[:-1]), device=bad.device)
    return call("where", first > n, 0, first).int()


def cholesky(A):
    """(L, info): the lower Cholesky factor of A's lower triangle, and the order of the first
    leading minor that is not positive definite (0 where A is). L holds NaN past that column."""
    n = A.shape[-1]
    L = zeros(tuple(A.shape), dtype=A.dtype, device=A.device)
    pivots = zeros(tuple(A.shape[:-1]), dtype=A.dtype, device=A.device)
    rows = index_col(n, A.device)
    for j in range(n):
        # (columns j.. of L are still zero, so L @ row j sums over the finished ones)
        c = A[..., :, j:j + 1] - L @ L[..., j:j + 1, :].mT
        d = c[..., j:j + 1, :]
        pivots[..., j:j + 1] = d[..., 0]
        L[..., :, j:j + 1] = call("where", rows >= j, c / d.sqrt(), 0.0)
    return L, first_failure(~(pivots > 0))


LU_BLOCK = 32   # panel width of the blocked LU


def lu(A):
    """(LU, pivots, perm, info) of A [..., m, n] with partial pivoting: LU holds L's strictly
    lower part (unit diagonal) and U; pivots LAPACK's 1-based row swaps (int32); perm the rows of
    A in the order they end up (A[perm] = L U); info the first zero diagonal of U (1-based).

    Blocked past 2 panels (as LAPACK's getrf): each panel of LU_BLOCK columns is factored
    column by column on its own rows, its row order applied to the whole rows once, then
    U12 = L11^-1 A12 (a triangular solve) and A22 -= L21 U12 (one matmul)."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    kernel = backend_for(A.device.type).lu_panel_fits(LU_BLOCK)
    if k == 0 or k <= 2 * LU_BLOCK and not kernel:
        return _lu_columns(A)
    batch = tuple(A.shape[:-2])
    LU = A.clone()
    perm = arange(m, device=A.device).expand(batch + (m,)).clone()
    pivots = empty(batch + (k,), _dtype.int32, A.device)
    for j0 in range(0, k, LU_BLOCK):
        jb = min(LU_BLOCK, k - j0)
        P, piv, order = (_lu_panel if kernel else _lu_columns)(LU[..., j0:, j0:j0 + jb])[:3]
        pivots[..., j0:j0 + jb] = piv + j0
        rows = permute_rows(LU[..., j0:, :], order)        # (the swaps reach L's columns on the left too)
        perm[..., j0:] = perm[..., j0:].gather(-1, order)
        rows[..., :, j0:j0 + jb] = P
        if j0 + jb < n:
            U12 = rows[..., :jb, j0 + jb:]
            tri_solve(P[..., :jb, :], U12, upper=False, unit=True, in_place=True)
            rows[..., jb:, j0 + jb:] -= P[..., jb:, :] @ U12
        LU[..., j0:, :] = rows
    diag = LU.diagonal(0, -2, -1)
    return LU, pivots, perm, first_failure(diag == 0)


def _lu_columns(A):
    """lu(A) one column at a time: pivot search, a row swap and a rank-1 update per column."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    LU = A.clone()
    rows = arange(m, device=A.device)
    perm = rows.expand(batch + (m,)).clone()
    pivots = zeros(batch + (k,), dtype=perm.dtype, device=A.device)
    rcol = rows.reshape(m, 1)
    cols = arange(n, device=A.device).reshape(1, n)
    for j in range(k):
        col = LU[..., :, j]
        p = call("where", rows >= j, col.abs(), -1.0).argmax(-1, keepdim=True)     # [..., 1]
        pivots[..., j:j + 1] = p + 1
        swap = call("where", rows == j, p, call("where", rows == p, j, rows))       # [..., m]
        LU = LU.gather(-2, swap.unsqueeze(-1).expand(batch + (m, n)))
        perm = perm.gather(-1, swap)
        pivot = LU[..., j:j + 1, j:j + 1]
        # (a zero pivot has a zero column below it: it divides nothing, as getrf skips it)
        l = call("where", rcol > j, LU[..., :, j:j + 1] / call("where", pivot == 0, 1.0, pivot), 0.0)
        u = call("where", cols > j, LU[..., j:j + 1, :], 0.0)
        LU = call("where", (rcol > j) & (cols == j), l, LU - l @ u)
    diag = LU.diagonal(0, -2, -1)
    return LU, pivots.int(), perm, first_failure(diag == 0)


def _lu_panel(A):
    """(LU, pivots, row order) of a panel A [..., m, w <= LU_BLOCK] in one dispatch (the
    backend's lu_panel: the pivot search, swaps and updates of every column in one workgroup)."""
    m, w = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    src, count = kernel_input(A)
    out = empty(tuple(A.shape), A.dtype, A.device)
    pivots = empty(batch + (w,), _dtype.int32, A.device)
    order = empty(batch + (m,), _dtype.int32, A.device)
    backend_for(A.device.type).lu_panel(out, pivots, order, src, m, w, count)
    return out, pivots[..., :min(m, w)], order.long()


def kernel_input(A):
    """(A's values contiguous from offset 0, the number of matrices in its batch): what the
    backends' one-dispatch linear-algebra kernels (lu_panel, cholesky_block) read."""
    src = A.contiguous()
    return (src.clone() if src._offset else src), prod(A.shape[:-2])


def permute_rows(B, perm):
    """B's rows in the order perm gives (B[..., perm[i], :] at row i), batch dims equal."""
    return B.gather(-2, perm.unsqueeze(-1).expand(tuple(B.shape)))


def lu_solve(LU, perm, B):
    """X with A X = B from A's LU and perm (batch dims equal)."""
    Y = tri_solve(LU, permute_rows(B, perm), upper=False, unit=True)
    return tri_solve(LU, Y, upper=True)


def perm_from_pivots(pivots, m):
    """The row order (A[perm] = L U) LAPACK's 1-based pivots give, by replaying the swaps."""
    batch = tuple(pivots.shape[:-1])
    rows = arange(m, device=pivots.device)
    perm = rows.expand(batch + (m,)).clone()
    piv = pivots.long() - 1
    for j in range(pivots.shape[-1]):
        p = piv[..., j:j + 1]
        swap = call("where", rows == j, p, call("where", rows == p, j, rows))
        perm = perm.gather(-1, swap)
    return perm


def perm_matrix(perm, dtype):
    """P with P[perm[i], i] = 1: A = P L U."""
    m = perm.shape[-1]
    return (perm.unsqueeze(-2) == index_col(m, perm.device)).to(dtype)
