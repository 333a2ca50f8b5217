"""Householder QR blocked as LAPACK's geqrf / orgqr: panels of PANEL columns, each factored by
the backend's qr_panel (one dispatch on webgpu, kernels/qr_panel.py; numpy on cpu) into its
reflectors V (unit lower) and the compact WY form's T, H_1 ... H_w = I - V T V^T, then applied
to the columns right of it with three matmuls (Q^T C = C - V T^T V^T C); Q is formed backward
from the identity the same way. No autograd here (ops/linalg_qr.py wraps it), so the
algorithms below it (svd's QR of a tall matrix) can take it too."""

from ..backends import backend_for
from ..backends.plans import QRPanelPlan
from .._creation import eye, zeros
from .join import cat
from .linalg_kernels import kernel_input
from .operands import empty

PANEL = 32


def unit_lower(P):
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
        V = unit_lower(out)
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
