"""Householder QR and the Jacobi methods behind eigh and svd, as loops of tensor ops (batched,
float32 on both devices; no autograd here: ops/linalg_spectral.py wraps them).

- qr: one Householder reflection per column (LAPACK's geqrf convention: R[j, j] = -sign(a) |x|,
  and no reflection where the column is already zero below the diagonal);
- eigh: cyclic Jacobi, every sweep n - 1 rounds of n / 2 disjoint rotations at once (a
  round-robin ordering), until the off-diagonal part is down to float32 rounding (_Convergence);
- svd: one-sided Jacobi (Hestenes) on the columns, the same ordering; U from a Householder QR of
  the rotated columns, which also completes it where singular values are zero.

Each round gathers the matrix into its pairs' order (adjacent positions), so a rotation is a
few elementwise ops on two interleaved halves; the basis order is tracked in Python.
"""

from .._creation import eye, tensor, zeros
from .elementwise import call
from .linalg_kernels import index_col

MAX_SWEEPS = 30
_EPS = 1.1920928955078125e-07   # float32's


def householder_qr(A):
    """(Q [..., m, m], R [..., m, n]) with A = Q R."""
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    R = A.clone()
    Q = eye(m, dtype=A.dtype, device=A.device).expand(batch + (m, m)).clone()
    rows = index_col(m, A.device)
    for j in range(min(m, n)):
        x = call("where", rows >= j, R[..., :, j:j + 1], 0.0)
        alpha = x[..., j:j + 1, :]
        below = call("where", rows > j, x, 0.0).square().sum(-2, keepdim=True)
        norm = (alpha.square() + below).sqrt()
        v = call("where", rows == j, alpha + call("where", alpha >= 0, norm, -norm), x)
        beta = call("where", below == 0, 0.0, 2.0 / v.square().sum(-2, keepdim=True))
        R = R - (beta * v) @ (v.mT @ R)
        Q = Q - (Q @ v) @ (beta * v).mT
    return Q, R.triu()


def _rounds(N):
    """The round-robin schedule for N (even) indices: N - 1 orderings, each with its pairs at
    positions (0, 1), (2, 3), ...; over a sweep every pair meets once."""
    ring = list(range(1, N))
    out = []
    for _ in range(N - 1):
        arr = [0] + ring
        order = []
        for i in range(N // 2):
            order += [arr[i], arr[N - 1 - i]]
        out.append(order)
        ring = ring[-1:] + ring[:-1]
    return out


def _rotation(a, d, b):
    """(c, s) of the Jacobi rotation that zeroes b in [[a, b], [b, d]] (Golub & Van Loan's
    sym.schur2); no rotation where b is 0."""
    tau = (d - a) / (2.0 * b)
    t = call("where", tau >= 0, 1.0, -1.0) / (tau.abs() + (1.0 + tau.square()).sqrt())
    t = call("where", b == 0, 0.0, t)
    c = (1.0 + t.square()).rsqrt()
    return c, t * c


def _rotate_rows(X, c, s):
    """Rows 2i and 2i+1 of X [..., N, k] rotated by (c_i, s_i): p' = c p - s q, q' = s p + c q."""
    N, k = X.shape[-2], X.shape[-1]
    T = X.reshape(tuple(X.shape[:-2]) + (N // 2, 2, k))
    p, q = T[..., :, 0:1, :], T[..., :, 1:2, :]
    c, s = c.unsqueeze(-1).unsqueeze(-1), s.unsqueeze(-1).unsqueeze(-1)
    from .join import cat
    return cat([c * p - s * q, s * p + c * q], -2).reshape(tuple(X.shape))


def _pad_even(X, dims):
    """X with one zero row and/or column appended (dims: -2, -1 or both) when its size is odd."""
    from .join import cat
    for d in dims:
        shape = list(X.shape)
        shape[d] = 1
        X = cat([X, zeros(tuple(shape), dtype=X.dtype, device=X.device)], d)
    return X


def _off_diagonal(X):
    """The squared Frobenius norm of X's off-diagonal part (summed directly: the difference of
    the whole and the diagonal's would cancel to rounding noise)."""
    return (X - X.diagonal(0, -2, -1).diag_embed()).square().sum((-2, -1))


class _Convergence:
    """When to stop sweeping: every matrix's off-diagonal mass (squared) at or below `floor`
    (n eps^2 times the squared Frobenius norm: float32 rounding keeps it about there), or no
    longer shrinking from one sweep to the next (stalled at rounding). One read-back a sweep."""

    def __init__(self, floor):
        self.floor, self.last = floor, None

    def done(self, off):
        worst = float((off - self.floor).amax()) if off.numel() else 0.0
        if worst <= 0:
            return True
        total = float(off.amax())
        stalled = self.last is not None and total > 0.9 * self.last
        self.last = total
        return stalled


class _Basis:
    """The order of the basis vectors along a tracked dim (position -> index), and the gathers
    that take it to each round's order."""

    def __init__(self, N, device):
        self.cur = list(range(N))
        self.device = device
        self.rounds = _rounds(N)

    def to(self, order):
        where = {v: i for i, v in enumerate(self.cur)}
        self.cur = order
        return tensor([where[v] for v in order], device=self.device)


def eigh(S):
    """(eigenvalues ascending, eigenvectors) of the symmetric S [..., n, n] (both triangles
    read: the caller symmetrizes from UPLO's triangle)."""
    n = S.shape[-1]
    batch = tuple(S.shape[:-2])
    if n <= 1:
        return S.diagonal(0, -2, -1).clone(), eye(n, dtype=S.dtype, device=S.device).expand(batch + (n, n)).clone()
    odd = n % 2
    X = _pad_even(S, (-2, -1)) if odd else S
    N = X.shape[-1]
    V = eye(N, dtype=S.dtype, device=S.device).expand(batch + (N, N)).clone()
    basis = _Basis(N, S.device)
    scale = X.square().sum((-2, -1))
    stop = _Convergence(n * _EPS * _EPS * scale)
    for _ in range(MAX_SWEEPS):
        for order in basis.rounds:
            g = basis.to(order)
            X = X.index_select(-2, g).index_select(-1, g)
            V = V.index_select(-1, g)
            dg = X.diagonal(0, -2, -1)
            c, s = _rotation(dg[..., 0::2], dg[..., 1::2], X.diagonal(1, -2, -1)[..., 0::2])
            X = _rotate_rows(_rotate_rows(X, c, s).mT, c, s).mT
            V = _rotate_rows(V.mT, c, s).mT
        if stop.done(_off_diagonal(X)):
            break
    keep = [i for i, v in enumerate(basis.cur) if v < n]   # (the padding index dropped)
    if odd:
        k = tensor(keep, device=S.device)
        X = X.index_select(-2, k).index_select(-1, k)
        V = V.index_select(-1, k)[..., :n, :]
    w, idx = X.diagonal(0, -2, -1).sort(-1)
    return w, V.gather(-1, idx.unsqueeze(-2).expand(tuple(V.shape)))


def svd_tall(A):
    """(U [..., m, m], S [..., n], V [..., n, n]) of A [..., m, n] with m >= n, S descending:
    A = U[..., :, :n] diag(S) V^T."""
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    odd = n % 2
    W = _pad_even(A, (-1,)) if odd and n > 1 else A
    N = W.shape[-1]
    V = eye(N, dtype=A.dtype, device=A.device).expand(batch + (N, N)).clone()
    basis = _Basis(N, A.device)
    if N > 1:
        stop = _Convergence(None)
        for _ in range(MAX_SWEEPS):
            for order in basis.rounds:
                g = basis.to(order)
                W = W.index_select(-1, g)
                V = V.index_select(-1, g)
                T = W.reshape(batch + (m, N // 2, 2))
                p, q = T[..., 0], T[..., 1]
                a, d, b = p.square().sum(-2), q.square().sum(-2), (p * q).sum(-2)
                c, s = _rotation(a, d, b)
                W = _rotate_rows(W.mT, c, s).mT
                V = _rotate_rows(V.mT, c, s).mT
            gram = W.mT @ W
            stop.floor = n * _EPS * _EPS * gram.diagonal(0, -2, -1).sum(-1).square()
            if stop.done(_off_diagonal(gram)):
                break
    if odd and n > 1:
        k = tensor([i for i, v in enumerate(basis.cur) if v < n], device=A.device)
        W = W.index_select(-1, k)
        V = V.index_select(-1, k)[..., :n, :]
    S, idx = W.square().sum(-2).sqrt().sort(-1, descending=True)
    W = W.gather(-1, idx.unsqueeze(-2).expand(tuple(W.shape)))
    V = V.gather(-1, idx.unsqueeze(-2).expand(tuple(V.shape)))
    Q, R = householder_qr(W)
    sign = call("where", R.diagonal(0, -2, -1) < 0, -1.0, 1.0)
    ones = zeros(batch + (m - n,), dtype=A.dtype, device=A.device) + 1.0
    from .join import cat
    U = Q * cat([sign, ones], -1).unsqueeze(-2)
    return U, S, V
