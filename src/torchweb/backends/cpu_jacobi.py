"""The cpu device's Jacobi sweeps on numpy (the webgpu side: backends/webgpu/kernels/jacobi.py),
the same rounds, rotations and rounding steps in float32: a round is a few whole-array
operations on the pairs' rows and columns (fancy indexing by the round's pairs)."""

from .cpu_arrays import np, view

_EPS = 1.1920928955078125e-07   # float32's


def rotation(n, a, d, b):
    """(t, s, r) of the rotations that zero b in [[a, b], [b, d]] (Golub & Van Loan's
    sym.schur2: t = tan, s = sin, r = s / (1 + cos)); none where b is at float32 rounding of a
    and d (a tiny rotation would round every entry again)."""
    f = n.float32
    with n.errstate(all="ignore"):
        skip = n.abs(b) <= f(_EPS) * n.sqrt(n.abs(a)) * n.sqrt(n.abs(d))
        tau = (d - a) / (f(2) * b)
        big = n.abs(tau) > f(1e18)   # (1 + tau^2 would overflow: t = 1 / (2 tau) there)
        t = n.where(big, f(0.5) / tau, n.where(tau >= 0, f(1), f(-1)) / (n.abs(tau) + n.sqrt(f(1) + tau * tau)))
        t = n.where(skip, f(0), t).astype(f)
        c = f(1) / n.sqrt(f(1) + t * t)
        s = t * c
        return t, s, s / (f(1) + c)


def _turn(xp, xq, s, r):
    """Rutishauser's form of (c x_p - s x_q, s x_p + c x_q)."""
    return xp - s * (xq + r * xp), xq + s * (xp - r * xq)


def jacobi_sweep(plan, X, V, sweep):
    n = np()
    x, v = view(X), view(V)
    for r in range(plan.N - 1):
        pq = n.array(plan.pairs(r))
        p, q = pq[:, 0], pq[:, 1]
        if plan.kind == "eigh":
            src, dst = x[(sweep + r) % 2], x[(sweep + r + 1) % 2]
            a, d, b = src[:, p, p], src[:, q, q], src[:, p, q]
            t, s, rr = rotation(n, a, d, b)
            y = src.copy()
            y[:, p, :], y[:, q, :] = _turn(src[:, p, :], src[:, q, :], s[..., None], rr[..., None])
            y[:, :, p], y[:, :, q] = _turn(y[:, :, p], y[:, :, q], s[:, None, :], rr[:, None, :])
            y[:, p, p], y[:, q, q], y[:, p, q], y[:, q, p] = a - t * b, d + t * b, 0, 0
            dst[...] = y
        else:
            xp, xq = x[:, p, :], x[:, q, :]
            t, s, rr = rotation(n, (xp * xp).sum(-1), (xq * xq).sum(-1), (xp * xq).sum(-1))
            x[:, p, :], x[:, q, :] = _turn(xp, xq, s[..., None], rr[..., None])
        v[:, p, :], v[:, q, :] = _turn(v[:, p, :], v[:, q, :], s[..., None], rr[..., None])
