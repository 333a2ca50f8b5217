"""The Cholesky factorization behind linalg.cholesky(_ex): (L, info) of A's lower triangle.

Where the backend has a one-dispatch block kernel (webgpu: cholesky_block, n <= 32), a matrix
that fits is factored by it, and a larger one by panels of that width, left-looking as LAPACK's
potrf: each panel's diagonal block, less the finished columns' contribution (one matmul), by the
kernel; the rows below it, less the same contribution (one matmul), by a triangular solve with
that block (its inverse, which the kernel also writes, by one matmul). About n / 32 panels of
a few dispatches each, where the column-by-column composition
(linalg_kernels.cholesky: the cpu device's way) takes n steps of several dispatches. info is the
order of the first leading minor that is not positive definite; the factor holds NaN or inf from
there, as LAPACK leaves it undefined."""

from .. import _dtype
from ..backends import backend_for
from .._creation import zeros
from .elementwise import call
from .linalg_kernels import cholesky as cholesky_columns, kernel_input
from .operands import empty

BLOCK = 32   # the panel width (the webgpu kernel's largest block)


def cholesky(A):
    n = A.shape[-1]
    backend = backend_for(A.device.type)
    block = BLOCK
    if n == 0 or not backend.cholesky_block_fits(min(n, block)):
        return cholesky_columns(A)
    batch = tuple(A.shape[:-2])
    if n <= block:
        return _block(backend, A, batch, n)[:2]
    L = zeros(tuple(A.shape), dtype=A.dtype, device=A.device)
    info = zeros(batch, dtype=_dtype.int32, device=A.device)
    for j0 in range(0, n, block):
        j1 = min(j0 + block, n)
        done = L[..., j0:, :j0]                      # (the finished columns, from the panel's rows down)
        rest = A[..., j0:, j0:j1] - done @ done[..., :j1 - j0, :].mT if j0 else A[..., j0:, j0:j1]
        L11, bad, L11_inv = _block(backend, rest[..., :j1 - j0, :], batch, j1 - j0, j1 < n)
        L[..., j0:j1, j0:j1] = L11
        if j1 < n:   # (L21 L11^T = C: L21 = C L11^-T)
            L[..., j1:, j0:j1] = rest[..., j1 - j0:, :] @ L11_inv.mT
        info = call("where", (info == 0) & (bad != 0), bad + j0, info)
    return L, info


def _block(backend, A, batch, n, with_inverse=False):
    """(L, info, L^-1 or None) of A [..., n, n] (n <= the kernel's block) in one dispatch."""
    src, count = kernel_input(A)
    L = empty(tuple(A.shape), A.dtype, A.device)       # (the kernel writes every entry)
    info = empty(batch, _dtype.int32, A.device)
    inverse = empty(tuple(A.shape), A.dtype, A.device) if with_inverse else None
    backend.cholesky_block(L, info, src, n, count, inverse)
    return L, info, inverse
