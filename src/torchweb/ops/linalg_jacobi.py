"""Householder QR and the Jacobi methods behind eigh and svd, as loops of tensor ops (batched,
float32 on both devices; no autograd here: ops/linalg_spectral.py wraps them).

- qr: one Householder reflection per column (LAPACK's geqrf convention: R[j, j] = -sign(a) |x|,
  and no reflection where the column is already zero below the diagonal);
- eigh: cyclic Jacobi, every sweep n - 1 rounds of n / 2 disjoint rotations at once (a
  round-robin ordering), until the off-diagonal part is down to float32 rounding (_Convergence);
- svd: a Householder QR first when A is tall, then one-sided Jacobi (Hestenes) on the columns
  of the square factor, the same ordering; U from a Householder QR of the rotated columns,
  which also completes it where singular values are zero.

A round is a few dozen elementwise dispatches, O(n^2) work: one gather per dimension moves
the matrix into the round's frame (its pairs at (0, 1), (2, 3), ...), the rotations' (c, s)
come from the pairs' entries (eigh) or column inner products (svd), and each pair of rows /
columns is combined in place of a dense rotation matrix, so an entry is rounded only by its
own rotations (values within ~1e-6 of float64's relative to the largest, as LAPACK's float32).
"""

from .._creation import arange, eye, tensor, zeros
from .elementwise import call
from .join import cat, stack
from .linalg_kernels import index_col

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
    """(t, (s, r)) of the Jacobi rotation that zeroes b in [[a, b], [b, d]] (Golub & Van Loan's
    sym.schur2: t = tan, s = sin; r = s / (1 + cos) for _rotate_pairs); no rotation where
    |b| <= eps sqrt(|a d|) (already diagonal to float32: skipping it leaves the rows exact,
    where a tiny rotation would round every entry again)."""
    tau = (d - a) / (2.0 * b)
    t = call("where", tau >= 0, 1.0, -1.0) / (tau.abs() + (1.0 + tau.square()).sqrt())
    t = call("where", b.abs() <= _EPS * (a * d).abs().sqrt(), 0.0, t)
    c = (1.0 + t.square()).rsqrt()
    s = t * c
    return t, (s, s / (1.0 + c))


def _pad_even(X, dims):
    """X with one zero row and/or column appended (dims: -2, -1 or both) when its size is odd."""
    for d in dims:
        shape = list(X.shape)
        shape[d] = 1
        X = cat([X, zeros(tuple(shape), dtype=X.dtype, device=X.device)], d)
    return X


def _off_diagonal(X):
    """The squared Frobenius norm of X's off-diagonal part (summed directly: the difference of
    the whole and the diagonal's would cancel to rounding noise)."""
    return (X - X.diagonal(0, -2, -1).diag_embed()).square().sum((-2, -1))


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
    eps^2 of the cosines), or no longer shrinking from one sweep to the next (stalled at
    rounding). One read-back a sweep."""

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


class _Schedule:
    """A sweep's rounds as index vectors (made once per size and device). The matrices are kept
    in the current round's frame: its indices reordered so that the pairs sit at (0, 1), (2, 3),
    ...; `steps[r]` moves from round r - 1's frame (the sweep's last round for r = 0) to round
    r's by one gather, `start` from the natural order into the last round's frame (where every
    sweep starts and ends) and `home` back. `offdiag` picks the pairs' (p, q) entries from a
    flattened N x N matrix in a round's frame, `blocks` marks the 2 x 2 diagonal blocks."""

    _cache = {}

    def __init__(self, N, device):
        orders = _rounds(N)
        frame = orders[-1]
        self.steps = []
        for order in orders:
            position = {j: i for i, j in enumerate(frame)}
            self.steps.append(tensor([position[j] for j in order], device=device))
            frame = order
        self.start = tensor(frame, device=device)
        self.home = tensor(sorted(range(N), key=frame.__getitem__), device=device)
        self.offdiag = tensor([2 * k * (N + 1) + 1 for k in range(N // 2)], device=device)
        pair = arange(N, device=device) // 2
        self.blocks = pair.unsqueeze(1) == pair.unsqueeze(0)

    @classmethod
    def of(cls, N, device):
        key = (N, str(device))
        if key not in cls._cache:
            if len(cls._cache) > 8:    # (a few sizes at a time)
                cls._cache.clear()
            cls._cache[key] = cls(N, device)
        return cls._cache[key]


def _rotate_pairs(X, rot, dim):
    """X with its pairs of rows (dim -2) or columns (dim -1) at (0, 1), (2, 3), ... rotated:
    x_p <- c x_p - s x_q, x_q <- s x_p + c x_q (J^T X or X J for the rotation J with
    J[p, p] = J[q, q] = c, J[p, q] = s); rot = (s, r) [..., N / 2]. Elementwise, in Rutishauser's
    form (x_p - s (x_q + r x_p), r = s / (1 + c)): a small correction to x_p rather than a sum
    of two products, so each round's rounding stays small (svdvals 50x closer to float64)."""
    s, r = rot
    shape = tuple(X.shape)
    if dim == -2:
        X = X.reshape(shape[:-2] + (shape[-2] // 2, 2, shape[-1]))
        xp, xq, s, r = X[..., 0, :], X[..., 1, :], s.unsqueeze(-1), r.unsqueeze(-1)
    else:
        X = X.reshape(shape[:-1] + (shape[-1] // 2, 2))
        xp, xq, s, r = X[..., 0], X[..., 1], s.unsqueeze(-2), r.unsqueeze(-2)
    return stack([xp - s * (xq + r * xp), xq + s * (xp - r * xq)], dim).reshape(shape)


def _eigh_round(X, plan, step):
    """One round on the symmetric X (in the previous round's frame): reorder into this round's
    frame, rotate the pairs' rows and columns, and set the 2 x 2 blocks to their exact result
    (a - t b, d + t b, zero off the diagonal: the eigenvalues gather there, so they are not
    left to the rounding of the rows' and columns' combinations)."""
    X = X.index_select(-2, step).index_select(-1, step)
    N = X.shape[-1]
    batch = tuple(X.shape[:-2])
    ad = X.diagonal(0, -2, -1).reshape(batch + (N // 2, 2))
    a, d = ad[..., 0], ad[..., 1]
    b = X.reshape(batch + (N * N,)).index_select(-1, plan.offdiag)
    t, rot = _rotation(a, d, b)
    X = _rotate_pairs(_rotate_pairs(X, rot, -2), rot, -1)
    diag = stack([a - t * b, d + t * b], -1).reshape(batch + (N,))
    return call("where", plan.blocks, diag.diag_embed(), X), rot


def eigh(S):
    """(eigenvalues ascending, eigenvectors) of the symmetric S [..., n, n] (both triangles
    read: the caller symmetrizes from UPLO's triangle)."""
    n = S.shape[-1]
    batch = tuple(S.shape[:-2])
    if n <= 1:
        return S.diagonal(0, -2, -1).clone(), eye(n, dtype=S.dtype, device=S.device).expand(batch + (n, n)).clone()
    X = _pad_even(S, (-2, -1)) if n % 2 else S   # (a zero row and column: its pairs never rotate)
    N = X.shape[-1]
    plan = _Schedule.of(N, S.device)
    X = X.index_select(-2, plan.start).index_select(-1, plan.start)
    V = eye(N, dtype=S.dtype, device=S.device).index_select(-1, plan.start).expand(batch + (N, N))
    scale = X.square().sum((-2, -1))
    stop = _Convergence(n * _EPS * _EPS * scale)
    for _ in range(MAX_SWEEPS):
        for step in plan.steps:
            X, rot = _eigh_round(X, plan, step)
            V = _rotate_pairs(V.index_select(-1, step), rot, -1)
        if stop.done(_off_diagonal(X)):
            break
    w, idx = X.diagonal(0, -2, -1).index_select(-1, plan.home)[..., :n].sort(-1)
    V = V.index_select(-1, plan.home)[..., :n, :n]
    return w, V.gather(-1, idx.unsqueeze(-2).expand(tuple(V.shape)))


def svd_tall(A):
    """(U [..., m, m], S [..., n], V [..., n, n]) of A [..., m, n] with m >= n, S descending:
    A = U[..., :, :n] diag(S) V^T."""
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    if m > n > 0:   # a QR first: the rotations then work on R's n rows, not A's m
        Q, R = householder_qr(A)
        Ur, S, V = svd_tall(R[..., :n, :])
        return cat([Q[..., :, :n] @ Ur, Q[..., :, n:]], -1), S, V
    W = _pad_even(A, (-1,)) if n % 2 and n > 1 else A   # (a zero column: its pairs never rotate)
    N = W.shape[-1]
    V = eye(N, dtype=A.dtype, device=A.device).expand(batch + (N, N))
    if N > 1:
        plan = _Schedule.of(N, A.device)
        W, V = W.index_select(-1, plan.start), V.index_select(-1, plan.start)
        stop = _Convergence(m * n * n * _EPS * _EPS)
        for _ in range(MAX_SWEEPS):
            for step in plan.steps:
                W, V = W.index_select(-1, step), V.index_select(-1, step)
                pairs = W.reshape(batch + (m, N // 2, 2))
                wp, wq = pairs[..., 0], pairs[..., 1]
                _, rot = _rotation(wp.square().sum(-2), wq.square().sum(-2), (wp * wq).sum(-2))
                W, V = _rotate_pairs(W, rot, -1), _rotate_pairs(V, rot, -1)
            if stop.done(_off_diagonal(_cosines(W))):
                break
        W, V = W.index_select(-1, plan.home), V.index_select(-1, plan.home)
    W, V = W[..., :, :n], V[..., :n, :n]
    S, idx = W.square().sum(-2).sqrt().sort(-1, descending=True)
    W = W.gather(-1, idx.unsqueeze(-2).expand(tuple(W.shape)))
    V = V.gather(-1, idx.unsqueeze(-2).expand(tuple(V.shape)))
    Q, R = householder_qr(W)
    sign = call("where", R.diagonal(0, -2, -1) < 0, -1.0, 1.0)
    ones = zeros(batch + (m - n,), dtype=A.dtype, device=A.device) + 1.0
    U = Q * cat([sign, ones], -1).unsqueeze(-2)
    return U, S, V
