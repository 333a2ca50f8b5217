"""The distributions' small linear-algebra helpers: a batched Cholesky factorization and a
lower-triangular solve, column by column from tensor ops (so autograd differentiates them).

A Python loop over the matrix dimension: fine for the small event sizes multivariate normals
are used with here; torch.linalg's blocked GPU decompositions are issue 20's item 3."""

import torchweb as torch


def _columns(a):
    """The columns of the lower Cholesky factor of `a`, and its pivots (diagonal before the
    square root: not positive where `a` is not positive definite)."""
    n = a.size(-1)
    rows = torch.arange(n, device=a.device)
    cols, pivots = [], []
    for j in range(n):
        c = a[..., :, j]
        for col in cols:
            c = c - col * col[..., j:j + 1]
        pivot = c[..., j:j + 1]
        pivots.append(pivot)
        below = (rows >= j).to(a.dtype)
        cols.append(c * below / pivot.clamp(min=torch.finfo(a.dtype).tiny).sqrt())
    return cols, torch.cat(pivots, -1) if pivots else a.new_zeros(tuple(a.shape[:-1]))


def cholesky_info(a):
    """0 where `a` (a batch of symmetric matrices) is positive definite, else the order of its
    first leading minor that is not (as torch.linalg.cholesky_ex's info)."""
    _, pivots = _columns(a.detach())
    bad = ~(pivots > 0)
    order = torch.arange(1, a.size(-1) + 1, device=a.device).expand(bad.shape)
    first = torch.where(bad, order, torch.full_like(order, a.size(-1) + 1)).min(-1)[0]
    return torch.where(first > a.size(-1), torch.zeros_like(first), first)


def cholesky(a):
    """The lower Cholesky factor L (a = L L^T) of a batch of positive-definite matrices."""
    if a.dim() < 2 or a.size(-1) != a.size(-2):
        raise RuntimeError(f"cholesky: expected a batch of square matrices, got shape {tuple(a.shape)}")
    cols, pivots = _columns(a)
    info = cholesky_info(a) if a.numel() else None
    if info is not None and bool((info != 0).any()):
        order = int(info[info != 0][0])
        raise RuntimeError("linalg.cholesky: The factorization could not be completed because the "
                           f"input is not positive-definite (the leading minor of order {order} is "
                           "not positive-definite).")
    return torch.stack(cols, -1)


def solve_lower(lower, b):
    """x with lower @ x = b, for a batch of lower-triangular `lower` (n x n) and b (n x m)."""
    n = lower.size(-1)
    xs = []
    for i in range(n):
        r = b[..., i:i + 1, :]
        for k, x in enumerate(xs):
            r = r - lower[..., i:i + 1, k:k + 1] * x
        xs.append(r / lower[..., i:i + 1, i:i + 1])
    return torch.cat(xs, -2)
