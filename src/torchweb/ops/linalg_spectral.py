"""torch.linalg's orthogonal factorizations: qr, eigh / eigvalsh, svd / svdvals, as Functions over
ops/linalg_jacobi.py whose backwards are PyTorch's (linalg_qr_backward, linalg_eig_backward for
a Hermitian input, svd_backward in torch/csrc/autograd/FunctionsManual.cpp), written with ops
that have derivatives of their own."""

from .._creation import empty, eye
from ..autograd import grad_mode
from ..autograd.function import Function
from . import linalg_jacobi as J
from .join import cat
from .out_arg import result_or_out
from .linalg_checks import QR, Eigh, SVD, check_matrix
from .linalg_factor import solve_triangular


def _skew(X):
    return X - X.mT


# -- QR ---------------------------------------------------------------------------------------------

class _QR(Function):
    _backward_name = "LinalgQrBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A, mode):
        ctx.set_materialize_grads(False)
        m, n = A.shape[-2], A.shape[-1]
        k = min(m, n)
        Q, R = J.householder_qr(A)
        ctx.meta = (mode, m, n)
        if mode == "r":
            return empty((0,), dtype=A.dtype, device=A.device), R[..., :k, :].contiguous()
        if mode != "complete":
            Q, R = Q[..., :, :k].contiguous(), R[..., :k, :].contiguous()
        ctx.save_for_backward(Q, R)   # (the outputs themselves: a second derivative goes through them)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        mode, m, n = ctx.meta
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                               "through linalg.qr.")
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        Q, R = ctx.saved_tensors
        k = min(m, n)
        return qr_backward(gQ, gR, Q[..., :, :k], R[..., :k, :], m, n), None


def qr_backward(gQ, gR, Q, R, m, n):
    """The gradient of A = QR (reduced): for m >= n, (gQ + Q copyltu(M)) R^-H with
    M = R gR^H - gQ^H Q; a wide A = [X | Y] takes X's rule with gQ + Y gV^H, and Q gV for Y."""
    if m < n:
        gV = gR[..., :, m:] if gR is not None else None
        gU = gR[..., :, :m] if gR is not None else None
        gQx = gQ
        if gV is not None:
            Y = Q @ R[..., :, m:]
            gQx = Y @ gV.mT if gQx is None else gQx + Y @ gV.mT
        gX = qr_backward(gQx, gU, Q, R[..., :, :m], m, m)
        gY = Q @ gV if gV is not None else (Q @ R[..., :, m:]) * 0
        return cat([gX, gY], -1)
    M = 0
    if gR is not None:
        M = R @ gR.mT
    if gQ is not None:
        M = M - gQ.mT @ Q
    Mt = M.tril()
    sym = Mt + Mt.tril(-1).mT
    b = Q @ sym
    if gQ is not None:
        b = b + gQ
    return solve_triangular(R.mT, b, upper=False, left=False)


def qr(A, mode="reduced", *, out=None):
    """linalg.qr(A, mode='reduced'): (Q, R), A = Q R with Q orthonormal columns, R upper
    triangular (Householder; mode 'complete' gives a square Q, 'r' only R)."""
    check_matrix(A, "linalg.qr", square=False, kernel="geqrf_cpu")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    return result_or_out(QR(*_QR.apply(A, mode)), out, "linalg.qr")


# -- eigh -------------------------------------------------------------------------------------------

def symmetric_from(A, upper):
    """The symmetric matrix one triangle of A gives (the other is not read, as LAPACK's)."""
    T = A.triu() if upper else A.tril()
    return T + (T.triu(1) if upper else T.tril(-1)).mT


class _Eigh(Function):
    _backward_name = "LinalgEighBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A, upper):
        ctx.set_materialize_grads(False)
        w, V = J.eigh(symmetric_from(A, upper))
        ctx.save_for_backward(w, V)
        return w, V

    @staticmethod
    def backward(ctx, gw, gV):
        w, V = ctx.saved_tensors
        return eigh_backward(gw, gV, w, V), None


def eigh_backward(gw, gV, w, V):
    """V sym(V^H gV / E, its diagonal replaced by gw) V^H with E[i, j] = w[j] - w[i]."""
    if gV is None:
        return (V * gw.unsqueeze(-2)) @ V.mT
    E = w.unsqueeze(-2) - w.unsqueeze(-1)
    n = w.shape[-1]
    I = eye(n, dtype=w.dtype, device=w.device)
    inner = ((V.mT @ gV) / (E + I)) * (1 - I)
    inner = 0.5 * (inner + inner.mT)   # (its symmetric part: the gradient of a symmetric input)
    if gw is not None:
        inner = inner + gw.diag_embed()
    return V @ inner @ V.mT


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "U"


def eigh(A, UPLO="L", *, out=None):
    """linalg.eigh(A, UPLO='L'): (eigenvalues ascending, eigenvectors) of a symmetric A from its
    UPLO triangle (cyclic Jacobi)."""
    check_matrix(A, "linalg.eigh", kernel="linalg_eigh_cpu", int_kernel=True)
    return result_or_out(Eigh(*_Eigh.apply(A, _check_uplo(UPLO))), out, "linalg.eigh")


def eigvalsh(A, UPLO="L", *, out=None):
    """linalg.eigvalsh(A, UPLO='L'): the eigenvalues of a symmetric A, ascending."""
    check_matrix(A, "linalg.eigh", kernel="linalg_eigh_cpu", int_kernel=True)
    return result_or_out(_Eigh.apply(A, _check_uplo(UPLO))[0], out, "linalg.eigvalsh")


# -- SVD --------------------------------------------------------------------------------------------

def svd_parts(A):
    """(U [..., m, m], S, Vh [..., n, n]) of any A (a wide one through its transpose)."""
    m, n = A.shape[-2], A.shape[-1]
    if m >= n:
        U, S, V = J.svd_tall(A)
        return U, S, V.mT
    U, S, V = J.svd_tall(A.mT)
    return V, S, U.mT


class _SVD(Function):
    _backward_name = "LinalgSvdBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A, full_matrices):
        ctx.set_materialize_grads(False)
        U, S, Vh = svd_parts(A)
        k = S.shape[-1]
        if not full_matrices:
            U, Vh = U[..., :, :k].contiguous(), Vh[..., :k, :].contiguous()
        ctx.save_for_backward(U, S, Vh)   # (the outputs themselves: a second derivative goes through them)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        gU = gU[..., :, :k] if gU is not None else None
        gVh = gVh[..., :k, :] if gVh is not None else None
        return svd_backward(gU, gS, gVh, U, S, Vh), None


def svd_backward(gU, gS, gVh, U, S, Vh):
    """PyTorch's svd_backward for a real A (reduced U, S, Vh)."""
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    if gU is None and gVh is None:
        return (U * gS.unsqueeze(-2)) @ Vh
    I = eye(k, dtype=S.dtype, device=S.device)
    S2 = S.square()
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + I
    inner = 0
    if gU is not None:
        inner = _skew(U.mT @ gU) * S.unsqueeze(-2)
    if gVh is not None:
        inner = inner + S.unsqueeze(-1) * _skew(Vh @ gVh.mT)
    inner = (inner / E) * (1 - I)
    if gS is not None:
        inner = inner + gS.diag_embed()
    gA = U @ inner @ Vh
    if m > k and gU is not None:
        gUS = gU / S.unsqueeze(-2)
        gA = gA + (gUS - U @ (U.mT @ gUS)) @ Vh
    if n > k and gVh is not None:
        gVS = gVh / S.unsqueeze(-1)
        gA = gA + U @ (gVS - (gVS @ Vh.mT) @ Vh)
    return gA


def svd(A, full_matrices=True, *, driver=None, out=None):
    """linalg.svd(A, full_matrices=True): (U, S, Vh), A = U diag(S) Vh, S descending (one-sided
    Jacobi)."""
    check_matrix(A, "linalg.svd", square=False, kernel="linalg_svd_cpu")
    return result_or_out(SVD(*_SVD.apply(A, bool(full_matrices))), out, "linalg.svd")


def svdvals(A, *, driver=None, out=None):
    """linalg.svdvals(A): the singular values, descending (U and V only for a gradient)."""
    check_matrix(A, "linalg.svd", square=False, kernel="linalg_svd_cpu")
    if A.requires_grad and grad_mode.is_grad_enabled():
        S = _SVD.apply(A, False)[1]
    else:
        S = J.svd_tall(A if A.shape[-2] >= A.shape[-1] else A.mT, uv=False)
    return result_or_out(S, out, "linalg.svdvals")
