"""torch.svd_lowrank and torch.pca_lowrank: torch._lowrank's randomized SVD (Halko et al. 2009,
algorithm 5.1) step for step: a random n x q start, niter rounds of subspace iteration each
orthonormalized by linalg.qr, then the SVD of the q-row projection. The random start is drawn
by torchweb's generator (not PyTorch's numbers for one seed), so results agree with PyTorch's in
the subspace they find and, where A has rank <= q, in U S V^T itself; differentiable through
the ops."""

from .._creation import randn
from .linalg_qr import qr
from .linalg_spectral import svd
from .registry import define


def _approximate_basis(A, q, niter, M):
    R = randn(A.shape[-1], q, dtype=A.dtype, device=A.device)
    X = A @ R if M is None else A @ R - M @ R
    Q = qr(X).Q
    for _ in range(niter):
        X = A.mT @ Q if M is None else A.mT @ Q - M.mT @ Q
        Q = qr(X).Q
        X = A @ Q if M is None else A @ Q - M @ Q
        Q = qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n:
        A = A.mT
        M = M.mT if M is not None else None
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mT @ A if M is None else Q.mT @ A - Q.mT @ M
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mT
    return (V, S, U) if m < n else (U, S, V)


@define("svd_lowrank", "linalg", method=False, dtypes=("float32",))
def svd_lowrank(A, q=6, niter=2, M=None):
    """svd_lowrank(A, q=6, niter=2, M=None) -> (U, S, V)

    An approximate rank-q SVD of A - M (randomized: q columns of subspace iteration, niter
    rounds), A ~ U diag(S) V^T."""
    return _svd_lowrank(A, q, niter, M)


@define("pca_lowrank", "linalg", method=False, dtypes=("float32",))
def pca_lowrank(A, q=None, center=True, niter=2):
    """pca_lowrank(A, q=None, center=True, niter=2) -> (U, S, V)

    svd_lowrank of A less its column means (center), q = min(6, m, n) by default."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if getattr(A, "is_sparse", False):
        A = A.to_dense()
    if center:
        A = A - A.mean(-2, keepdim=True)
    return _svd_lowrank(A, q, niter, None)
