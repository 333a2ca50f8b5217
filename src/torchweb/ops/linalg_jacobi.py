"""Householder QR and the Jacobi methods behind eigh and svd (batched, float32 on both devices;
no autograd here: ops/linalg_spectral.py wraps them).

- qr: one Householder reflection per column (LAPACK's geqrf convention: R[j, j] = -sign(a) |x|,
  and no reflection where the column is already zero below the diagonal);
- eigh: cyclic two-sided Jacobi, every sweep n - 1 rounds of n / 2 disjoint rotations (a
  round-robin order), until the off-diagonal part is down to float32 rounding (_Convergence);
  the eigenvalues are then the Rayleigh quotients of the accumulated eigenvectors;
- svd: a Householder QR first when A is tall, then one-sided Jacobi (Hestenes) on the columns
  of the square factor, the same order; U from a Householder QR of the rotated columns, which
  also completes it where singular values are zero (both QRs blocked: ops/linalg_qr_blocked.py).

A sweep is the backend's jacobi_sweep (webgpu: a dispatch a round, kernels/jacobi.py, or one
for the whole sweep up to n = 64; cpu: the same rounds on numpy). Each pair of rows / columns
is combined in Rutishauser's form, so an entry is rounded only by its own rotations (values
within ~5e-7 of float64's relative to the largest at n = 600, better than LAPACK's float32).
Between sweeps, one read-back decides whether to stop.
"""

from math import prod

from .._creation import eye, zeros
from ..backends import backend_for
from ..backends.plans import JacobiSweep
from .elementwise import call
from .join import cat
from .linalg_kernels import index_col
from .linalg_qr_blocked import householder_qr as blocked_qr

MAX_SWEEPS = 30
_EPS = 1.1920928955078125e-07   # float32's


def householder_qr(A, compact=False):
    """(Q [..., m, m], R [..., m, n]) with A = Q R; compact: LAPACK geqrf's (a, tau) instead, a
    holding R and below its diagonal each reflector's v (v[j] = 1 implied), H_j = I - tau_j v v^T."""
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    R = A.clone()
    Q = None if compact else eye(m, dtype=A.dtype, device=A.device).expand(batch + (m, m)).clone()
    rows = index_col(m, A.device)
    vs, taus = [], []
    for j in range(min(m, n)):
        x = call("where", rows >= j, R[..., :, j:j + 1], 0.0)
        alpha = x[..., j:j + 1, :]
        below = call("where", rows > j, x, 0.0).square().sum(-2, keepdim=True)
        norm = (alpha.square() + below).sqrt()
        head = alpha + call("where", alpha >= 0, norm, -norm)
        v = call("where", rows == j, head, x)
        beta = call("where", below == 0, 0.0, 2.0 / v.square().sum(-2, keepdim=True))
        R = R - (beta * v) @ (v.mT @ R)
        if compact:   # (v scaled to v[j] = 1: tau = beta v[j]^2)
            vs.append(call("where", (rows > j) & (below != 0), v / head, 0.0))
            taus.append((beta * head.square())[..., 0, :])
        else:
            Q = Q - (Q @ v) @ (beta * v).mT
    if not compact:
        return Q, R.triu()
    k = len(vs)
    a = R.triu()
    if k:
        V = cat(vs, -1)
        a = a + (cat([V, zeros(batch + (m, n - k), dtype=A.dtype, device=A.device)], -1) if n > k else V)
    tau = cat(taus, -1) if k else zeros(batch + (0,), dtype=A.dtype, device=A.device)
    return a, tau


def _off_diagonal(X, diagonal):
    """The squared Frobenius norm of X's off-diagonal part (diagonal: the bool mask of the
    diagonal; summed directly: the difference of the whole and the diagonal's would cancel to
    rounding noise)."""
    return call("where", diagonal, 0.0, X).square().sum((-2, -1))


def _diagonal_mask(N, device):
    rows = index_col(N, device)
    return rows == rows.reshape(1, N)


def _cosines(W):
    """W's columns' pairwise cosines (zero for a zero column): one-sided Jacobi has converged
    when they are all at float32 rounding, however small the columns (an absolute test on
    W^T W would stop with the small singular values' columns still mixed with the large)."""
    d = W.square().sum(-2)
    r = call("where", d > 0, d.rsqrt(), 0.0)
    return (W.mT @ W) * (r.unsqueeze(-1) * r.unsqueeze(-2))


class _Convergence:
    """When to stop sweeping: every matrix's off-diagonal mass (squared) at or below `floor`
    (where float32 rounding keeps it: eigh n eps^2 times the squared Frobenius norm, svd m n^2
    eps^2 of the cosines), or near it (within NEAR floors) and no longer shrinking from one
    sweep to the next (stalled at rounding; far from it, a sweep may shrink it little before
    the fast phase). One read-back a sweep: the worst matrix's mass in floors."""

    NEAR = 1e6

    def __init__(self, floor):
        self.floor, self.last = floor, None

    def done(self, off):
        if not off.numel():
            return True
        floor = self.floor   # (a number, or a tensor of one a matrix: zero for a zero matrix)
        scaled = off / floor if isinstance(floor, float) else call("where", floor > 0, off / floor, float("inf"))
        over = call("where", off <= floor, 0.0, scaled)
        ratio = float(over.amax())   # (the worst matrix's off-diagonal mass in floors: 0 where all are done)
        if not ratio > 0:   # (NaN: a non-finite input, which more sweeps leave NaN)
            return True
        stalled = self.last is not None and ratio > 0.9 * self.last and ratio <= self.NEAR
        self.last = ratio
        return stalled


def _sweeps(kind, X, V, stop, off):
    """Sweep X and V (count matrices, N even) until stop.done(off(X's result)); the result."""
    count, N, length = V.shape[0], V.shape[-1], X.shape[-1]
    plan = JacobiSweep(kind, N, length, count)
    backend = backend_for(X.device.type)
    for sweep in range(MAX_SWEEPS):
        backend.jacobi_sweep(plan, X, V, sweep)
        out = X[(sweep + 1) % 2] if kind == "eigh" else X
        if stop.done(off(out)):
            break
    return out


def _identities(count, N, like):
    return eye(N, dtype=like.dtype, device=like.device).expand((count, N, N)).contiguous()


def eigh(S):
    """(eigenvalues ascending, eigenvectors) of the symmetric S [..., n, n] (both triangles
    read: the caller symmetrizes from UPLO's triangle). Two-sided: the eigenvectors are V's rows
    (a zero row and column pad an odd n: their pairs never rotate)."""
    n = S.shape[-1]
    batch = tuple(S.shape[:-2])
    if n <= 1:
        return S.diagonal(0, -2, -1).clone(), eye(n, dtype=S.dtype, device=S.device).expand(batch + (n, n)).clone()
    count, N = prod(batch), n + n % 2
    X = zeros((2, count, N, N), dtype=S.dtype, device=S.device)
    X[0, :, :n, :n] = S.reshape(count, n, n)
    V = _identities(count, N, S)
    scale = S.square().sum((-2, -1)).reshape(count)
    diagonal = _diagonal_mask(N, S.device)
    _sweeps("eigh", X, V, _Convergence(n * _EPS * _EPS * scale), lambda X: _off_diagonal(X, diagonal))
    V = V[..., :n, :n].mT
    # the eigenvalues as Rayleigh quotients v^T S v, not X's diagonal: each rotation rounds the
    # diagonal again (float32 at n = 600: 4e-7 of the largest against 9e-6)
    w, idx = ((S.reshape(count, n, n) @ V) * V).sum(-2).sort(-1)
    V = V.gather(-1, idx.unsqueeze(-2).expand(tuple(V.shape)))
    return w.reshape(batch + (n,)), V.reshape(batch + (n, n))


def svd_tall(A, uv=True):
    """(U [..., m, m], S [..., n], V [..., n, n]) of A [..., m, n] with m >= n, S descending:
    A = U[..., :, :n] diag(S) V^T (uv False: S alone, without U's QR and the sorts' gathers).
    One-sided: the rotations turn the rows of W^T (A's columns, a zero one padding an odd n),
    and V's rows with them."""
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    if m > n > 0 and not uv:   # (R alone: the compact QR, no Q accumulated)
        return svd_tall(blocked_qr(A, compact=True)[0][..., :n, :].triu(), uv=False)
    if m > n > 0:   # a QR first: the rotations then work on R's n rows, not A's m
        Q, R = blocked_qr(A)
        Ur, S, V = svd_tall(R[..., :n, :])
        return cat([Q[..., :, :n] @ Ur, Q[..., :, n:]], -1), S, V
    count, N = prod(batch), n + n % 2
    Wt = zeros((count, N, m), dtype=A.dtype, device=A.device)
    Wt[:, :n, :] = A.reshape(count, m, n).mT
    V = _identities(count, N, A)
    if N > 1:
        diagonal = _diagonal_mask(N, A.device)
        Wt = _sweeps("svd", Wt, V, _Convergence(m * n * n * _EPS * _EPS),
                     lambda X: _off_diagonal(_cosines(X.mT), diagonal))
    W = Wt[:, :n, :].mT.reshape(batch + (m, n))
    S, idx = W.square().sum(-2).sqrt().sort(-1, descending=True)
    if not uv:
        return S
    V = V[:, :n, :n].mT.reshape(batch + (n, n))
    W = W.gather(-1, idx.unsqueeze(-2).expand(tuple(W.shape)))
    V = V.gather(-1, idx.unsqueeze(-2).expand(tuple(V.shape)))
    Q, R = blocked_qr(W)
    sign = call("where", R.diagonal(0, -2, -1) < 0, -1.0, 1.0)
    ones = zeros(batch + (m - n,), dtype=A.dtype, device=A.device) + 1.0
    U = Q * cat([sign, ones], -1).unsqueeze(-2)
    return U, S, V
