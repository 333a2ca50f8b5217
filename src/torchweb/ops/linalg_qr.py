"""linalg.qr on the blocked Householder QR (ops/linalg_qr_blocked.py: geqrf's panels, Q formed
from them), and householder_product / ormqr by panels of reflectors with autograd through
their ops: each panel's T rebuilt from V and tau, T^-1 = diag(1 / tau) + the strict upper part
of V^T V (larft's recurrence, inverted), then three matmuls a panel."""

from .._creation import eye
from .elementwise import call
from .join import cat
from . import linalg_spectral as LS
from .linalg_checks import QR, check_matrix
from .linalg_factor import solve_triangular
from .linalg_qr_blocked import PANEL, form_q, geqrf, unit_lower
from .operands import empty
from .out_arg import result_or_out


class _QR(LS._QR):
    """linalg_spectral's QR Function (its backward, PyTorch's linalg_qr_backward) with the
    blocked factorization as its forward."""

    @staticmethod
    def forward(ctx, A, mode):
        ctx.set_materialize_grads(False)
        m, n = A.shape[-2], A.shape[-1]
        k = min(m, n)
        a, _, panels = geqrf(A)
        R = a.triu()
        ctx.meta = (mode, m, n)
        if mode == "r":
            return empty((0,), A.dtype, A.device), R[..., :k, :].contiguous()
        Q = form_q(panels, m, m if mode == "complete" else k, A)
        if mode != "complete":
            R = R[..., :k, :].contiguous()
        ctx.save_for_backward(Q, R)   # (the outputs themselves: a second derivative goes through them)
        return Q, R


def qr(A, mode="reduced", *, out=None):
    """linalg.qr(A, mode='reduced'): (Q, R), A = Q R with Q orthonormal columns, R upper
    triangular (blocked Householder, LAPACK's signs; mode 'complete' gives a square Q, 'r' only R)."""
    check_matrix(A, "linalg.qr", square=False, kernel="geqrf_cpu")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    return result_or_out(QR(*_QR.apply(A, mode)), out, "linalg.qr")


# -- from given reflectors (autograd through the ops) -----------------------------------------------

def _panel_from(A, tau, j0, jb):
    """(V, T) of reflectors j0 .. j0 + jb of A's columns and tau (a zero tau: no reflector, its
    v taken as zero so that T stays defined)."""
    t = tau[..., j0:j0 + jb]
    live = t != 0
    V = unit_lower(A[..., j0:, j0:j0 + jb]) * live.unsqueeze(-2)
    Tinv = (V.mT @ V).triu(1) + call("where", live, 1.0 / call("where", live, t, 1.0), 1.0).diag_embed()
    eye_b = eye(jb, dtype=A.dtype, device=A.device).expand(tuple(Tinv.shape))
    return V, solve_triangular(Tinv, eye_b, upper=True)


def _apply(X, V, T, j0, left, trans):
    """X with its rows (left) or columns from j0 on multiplied by H = I - V T V^T (H^T: trans)."""
    Tt = T.mT if trans else T
    if left:
        C = X[..., j0:, :]
        return cat([X[..., :j0, :], C - V @ (Tt @ (V.mT @ C))], -2)
    C = X[..., :, j0:]
    return cat([X[..., :, :j0], C - ((C @ V) @ Tt) @ V.mT], -1)


def apply_reflectors(A, tau, X, left, trans):
    """Q X, Q^T X, X Q or X Q^T (Q = H_1 ... H_k, geqrf's reflectors in A and tau), by panels."""
    k = tau.shape[-1]
    starts = [(j0, min(PANEL, k - j0)) for j0 in range(0, k, PANEL)]
    # Q X and X Q^T apply the last panel first; Q^T X and X Q the first
    for j0, jb in (reversed(starts) if left != trans else starts):
        V, T = _panel_from(A, tau, j0, jb)
        X = _apply(X, V, T, j0, left, trans)
    return X


def householder_product(A, tau):
    """The first n columns of H_1 ... H_k (A [..., m, n], checks done by the caller)."""
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    Q = eye(m, n, dtype=A.dtype, device=A.device).expand(batch + (m, n))
    return apply_reflectors(A, tau, Q, True, False) if tau.shape[-1] else Q.clone()
