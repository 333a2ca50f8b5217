"""The cpu device's blocked linear-algebra primitives on numpy (backends/base.py's trsm_block
and qr_panel; ldl has no kernel here): the same steps as the webgpu kernels (kernels/trsm.py, kernels/qr_panel.py),
each vectorized over the batch and the right-hand sides, so both devices run one blocked
algorithm (ops/linalg_triangular.py, ops/linalg_qr_blocked.py)."""

from .base import absent as _absent
from .cpu_arrays import array_for_read, np as _np, strided, view


def _read(t):
    return strided(array_for_read(t._storage), t._offset, t.shape, t._stride)


def trsm_block(plan, out, a, b, p=None):
    """out = T^-1 (b - p) by substitution, row by row over the whole batch and every column."""
    n = _np()
    A = _read(a).astype(n.float32)
    r = _read(b).astype(n.float32)
    if p is not None:
        r = r - _read(p)
    x = n.zeros(r.shape, n.float32)
    rows = range(plan.n - 1, -1, -1) if plan.upper else range(plan.n)
    with n.errstate(all="ignore"):   # (a zero pivot gives inf or NaN, as LAPACK's trsm)
        for i in rows:
            done = slice(i + 1, None) if plan.upper else slice(0, i)
            s = r[:, i, :] - n.einsum("bj,bjk->bk", A[:, i, done], x[:, done, :])
            x[:, i, :] = s if plan.unit else s / A[:, i, i:i + 1]
    view(out)[...] = x


def qr_panel(plan, out, tau, t, inp):
    """LAPACK's geqr2 on each m x w panel (larfg's reflectors, without its rescaling of tiny
    norms), then larft's T, column by column over the whole batch."""
    n = _np()
    m, w = plan.m, plan.w
    R = _read(inp).reshape(plan.count, m, w).astype(n.float32)
    taus = n.zeros((plan.count, w), n.float32)
    with n.errstate(all="ignore"):
        for j in range(min(m, w)):
            alpha = R[:, j, j].copy()
            xnorm2 = n.einsum("br,br->b", R[:, j + 1:, j], R[:, j + 1:, j])
            norm = n.sqrt(alpha * alpha + xnorm2)
            beta = n.where(alpha >= 0, -norm, norm)
            live = xnorm2 > 0
            tj = n.where(live, (beta - alpha) / beta, 0.0).astype(n.float32)
            scale = n.where(live, 1.0 / (alpha - beta), 0.0).astype(n.float32)
            R[:, j + 1:, j] *= n.where(live, scale, 1.0)[:, None]   # (no reflector: x kept, as larfg)
            R[:, j, j] = n.where(live, beta, alpha)
            taus[:, j] = tj
            v = R[:, j:, j].copy()
            v[:, 0] = 1.0
            wc = tj[:, None] * n.einsum("br,brc->bc", v, R[:, j:, j + 1:])
            R[:, j:, j + 1:] -= v[:, :, None] * wc[:, None, :]
    V = n.tril(R, -1)
    for j in range(min(m, w)):
        V[:, j, j] = 1.0
    G = n.einsum("bri,brj->bij", V, V)
    T = n.zeros((plan.count, w, w), n.float32)
    for j in range(min(m, w)):
        T[:, :j, j] = -taus[:, j:j + 1] * n.einsum("bij,bj->bi", T[:, :j, :j], G[:, :j, j])
        T[:, j, j] = taus[:, j]
    for dst, v in ((out, R), (tau, taus), (t, T)):
        dst = view(dst)
        dst[...] = v.reshape(dst.shape)


def ldl_fits(n):
    """No kernel: the LDL factorization is composed of tensor ops (ops/linalg_ldl.py)."""
    return False


def ldl(out, pivots, info, inp, n, count):
    raise _absent("ldl", "ldl_fits is False")


def ldl_solve(x, ld, pivots, n, k, count):
    raise _absent("ldl_solve", "ldl_fits is False")
