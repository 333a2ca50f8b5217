"""Householder QR blocked as LAPACK's geqrf / orgqr / ormqr: panels of PANEL columns, each
factored by the backend's qr_panel (one dispatch on webgpu, kernels/qr_panel.py; numpy on cpu)
into its reflectors V (unit lower) and the compact WY form's T, H_1 ... H_w = I - V T V^T, then
applied to the columns right of it with three matmuls (Q^T C = C - V T^T V^T C); Q is formed
backward from the identity the same way. linalg.qr, geqrf and the parametrizations take it;
householder_product and ormqr (autograd through their ops) rebuild each panel's T from V and
tau: T^-1 = diag(1 / tau) + the strict upper part of V^T V (larft's recurrence, inverted)."""

from ..backends import backend_for
from ..backends.plans import QRPanelPlan
from .._creation import eye, zeros
from .elementwise import call
from .join import cat
from .linalg_checks import QR, check_matrix
from .linalg_factor import solve_triangular
from .linalg_kernels import kernel_input
from . import linalg_spectral as LS
from .operands import empty
from .out_arg import result_or_out

PANEL = 32


def _unit_lower(P):
    """V [..., r, w] from a factored panel: its part below the diagonal, ones on it."""
    r, w = P.shape[-2], P.shape[-1]
    return P.tril(-1) + eye(r, w, dtype=P.dtype, device=P.device)


def geqrf(A):
    """(a, tau, panels) of A [..., m, n]: LAPACK geqrf's compact form (R on and above a's
    diagonal, the reflectors below it) and each panel's (first column, V, T)."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    backend = backend_for(A.device.type)
    R = A.contiguous().clone()
    taus, panels = [], []
    for j0 in range(0, k, PANEL):
        jb = min(PANEL, k - j0)
        src, count = kernel_input(R[..., j0:, j0:j0 + jb])
        out = empty(batch + (m - j0, jb), A.dtype, A.device)
        tau = empty(batch + (jb,), A.dtype, A.device)
        T = empty(batch + (jb, jb), A.dtype, A.device)
        backend.qr_panel(QRPanelPlan(m - j0, jb, count), out, tau, T, src)
        R[..., j0:, j0:j0 + jb] = out
        V = _unit_lower(out)
        if j0 + jb < n:
            C = R[..., j0:, j0 + jb:]
            R[..., j0:, j0 + jb:] = C - V @ (T.mT @ (V.mT @ C))
        taus.append(tau)
        panels.append((j0, V, T))
    tau = cat(taus, -1) if taus else zeros(batch + (0,), dtype=A.dtype, device=A.device)
    return R, tau, panels


def form_q(panels, m, cols, like):
    """The first `cols` columns of H_1 ... H_k from geqrf's panels, last panel first (each
    changes only the rows and columns from its own on)."""
    batch = tuple(like.shape[:-2])
    Q = eye(m, cols, dtype=like.dtype, device=like.device).expand(batch + (m, cols)).clone()
    for j0, V, T in reversed(panels):
        if j0 >= cols:
            continue
        C = Q[..., j0:, j0:]
        Q[..., j0:, j0:] = C - V @ (T @ (V.mT @ C))
    return Q


def householder_qr(A, compact=False):
    """(Q [..., m, m], R [..., m, n]) with A = Q R; compact: geqrf's (a, tau) instead."""
    a, tau, panels = geqrf(A)
    if compact:
        return a, tau
    m = A.shape[-2]
    return form_q(panels, m, m, A), a.triu()


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
    V = _unit_lower(A[..., j0:, j0:j0 + jb]) * live.unsqueeze(-2)
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
