"""torch.linalg's triangular and LU family: solve_triangular, cholesky, lu_factor / lu / lu_solve,
solve and inv (their _ex forms return `info` where the plain ones raise LinAlgError). Each factorization is a Function over ops/linalg_kernels.py; its backward is
PyTorch's formula (tools/autograd/derivatives.yaml) written with these same ops, so a second
derivative comes from them."""

from .._creation import eye
from ..autograd.function import Function
from .join import cat
from .out_arg import result_or_out
from . import linalg_kernels as K
from .linalg_cholesky import cholesky as cholesky_factor
from .linalg_checks import (CholeskyEx, InvEx, LUFactor, LUFactorEx, LU, LUUnpack, SolveEx, LinAlgError, c_name,
                            check_matrix, check_same, raise_for_info)


def _eye_like(A):
    return eye(A.shape[-1], dtype=A.dtype, device=A.device)


# -- triangular solves ------------------------------------------------------------------------------

class _SolveTriangular(Function):
    _backward_name = "LinalgSolveTriangularBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A, B, upper, unit):
        X = K.tri_solve(A, B, upper, unit)
        ctx.save_for_backward(A, X)
        ctx.meta = (upper, unit)
        return X

    @staticmethod
    def backward(ctx, gX):
        A, X = ctx.saved_tensors
        upper, unit = ctx.meta
        gB = solve_triangular(A.mT, gX, upper=not upper, unitriangular=unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -(gB @ X.mT)
            gA = gA.triu(1 if unit else 0) if upper else gA.tril(-1 if unit else 0)
        return gA, gB, None, None


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """linalg.solve_triangular(A, B, *, upper, left=True, unitriangular=False): X with A X = B
    (X A = B when left=False), A triangular (only that triangle is read)."""
    name = "linalg.solve_triangular"
    check_matrix(A, name, kernel="triangular_solve_cpu", int_kernel=True)
    if B.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    check_same(A, B, name)
    if not left:
        X = solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
        return result_or_out(X, out, name)
    if A.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    A, B = K.expand_batch(A, B)
    return result_or_out(_SolveTriangular.apply(A, B, bool(upper), bool(unitriangular)), out, name)


# -- Cholesky ---------------------------------------------------------------------------------------

class _Cholesky(Function):
    _backward_name = "LinalgCholeskyExBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A):
        L, info = cholesky_factor(A)
        ctx.save_for_backward(L)
        ctx.mark_non_differentiable(info)
        return L, info

    @staticmethod
    def backward(ctx, gL, _ginfo):
        # gA = sym(L^-H phi(L^H gL) L^-1), phi: the lower triangle with its diagonal halved
        (L,) = ctx.saved_tensors
        P = (L.mT @ gL).tril()
        P = P - 0.5 * P.diagonal(0, -2, -1).diag_embed()
        S = solve_triangular(L.mT, P, upper=True)
        S = solve_triangular(L, S, upper=False, left=False)
        return 0.5 * (S + S.mT)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """linalg.cholesky_ex(A, *, upper=False, check_errors=False): (L, info), info the order of
    the first leading minor that is not positive definite (0 where A is)."""
    L, info = factor_cholesky(A, upper, "linalg.cholesky")
    if check_errors:
        _raise_not_pd(info, "linalg.cholesky_ex")
    return result_or_out(CholeskyEx(L, info), out, "linalg.cholesky_ex")


def factor_cholesky(A, upper, name):
    """(L or U, info) after PyTorch's checks under `name`."""
    check_matrix(A, name, kernel="cholesky_cpu", int_kernel=name == "cholesky")
    L, info = _Cholesky.apply(A)
    return L.mT if upper else L, info


def _raise_not_pd(info, name):
    raise_for_info(info, lambda k: f"{name}: The factorization could not be completed because the input is "
                                   f"not positive-definite (the leading minor of order {k} is not "
                                   "positive-definite).")


def cholesky(A, *, upper=False, out=None):
    """linalg.cholesky(A, *, upper=False): L with A = L L^H (U = L^H when upper); raises
    LinAlgError where A is not positive definite."""
    L, info = cholesky_ex(A, upper=upper)
    _raise_not_pd(info, "linalg.cholesky")
    return result_or_out(L, out, "linalg.cholesky")


# -- LU ---------------------------------------------------------------------------------------------

def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """linalg.lu_factor_ex(A, *, pivot=True, check_errors=False): (LU, pivots, info) by partial
    pivoting (LU differentiable, through linalg.lu's L and U)."""
    _check_lu(A, "torch.lu_factor", pivot)
    _, L, U, pivots, info = _LU.apply(A)
    m, n = A.shape[-2], A.shape[-1]
    # the compact form: L's strict lower part and U, each padded to m x n
    if m >= n:
        LU_ = L.tril(-1) + _cat_rows(U, U.new_zeros(tuple(U.shape[:-2]) + (m - n, n)))
    else:
        LU_ = _cat_cols(L.tril(-1), L.new_zeros(tuple(L.shape[:-2]) + (m, n - m))) + U
    if check_errors:
        _raise_singular_lu(info)
    return result_or_out(LUFactorEx(LU_, pivots, info), out, "linalg.lu_factor_ex")


def _check_lu(A, name, pivot):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{c_name(A.dtype)}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _raise_singular_lu(info):
    raise_for_info(info, lambda k: f"torch.linalg.lu_factor: U[{k},{k}] is zero and using it on lu_solve would "
                                   "result in a division by zero. If you still want to perform the factorization, "
                                   "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True, out=None):
    """linalg.lu_factor(A, *, pivot=True): (LU, pivots), as LAPACK's getrf."""
    LU_, pivots, info = lu_factor_ex(A, pivot=pivot, check_errors=True)
    return result_or_out(LUFactor(LU_, pivots), out, "linalg.lu_factor")


class _LU(Function):
    """(P, L, U, pivots, info) of A's partial-pivoting LU (L and U differentiable)."""
    _backward_name = "LinalgLuBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A):
        m, n = A.shape[-2], A.shape[-1]
        LU_, pivots, perm, info = K.lu(A)
        k = min(m, n)
        L = LU_[..., :, :k].tril(-1) + eye(m, k, dtype=A.dtype, device=A.device)
        U = LU_[..., :k, :].triu()
        P = K.perm_matrix(perm, A.dtype)
        ctx.save_for_backward(P, L, U)
        ctx.mark_non_differentiable(P, pivots, info)
        return P, L, U, pivots, info

    @staticmethod
    def backward(ctx, _gP, gL, gU, _gpivots, _ginfo):
        # PyTorch's linalg_lu_backward (square and wide / tall cases)
        P, L, U = ctx.saved_tensors
        m, n = L.shape[-2], U.shape[-1]
        k = min(m, n)
        if m == n:
            phi = (L.mT @ gL).tril(-1) + (gU @ U.mT).triu()
            gA = solve_triangular(L.mT, phi, upper=True, unitriangular=True)
            gA = solve_triangular(U.mT, gA, upper=False, left=False)
            return P @ gA
        if m < n:   # wide: U = [U1 | U2]
            U1 = U[..., :, :k]
            gU1, gU2 = gU[..., :, :k], gU[..., :, k:]
            phi = (L.mT @ gL - gU2 @ U[..., :, k:].mT).tril(-1) + (gU1 @ U1.mT).triu()
            gA1 = solve_triangular(L.mT, phi, upper=True, unitriangular=True)
            gA1 = solve_triangular(U1.mT, gA1, upper=False, left=False)
            gA2 = solve_triangular(L.mT, gU2, upper=True, unitriangular=True)
            return P @ _cat_cols(gA1, gA2)
        # tall: L = [L1; L2]
        L1 = L[..., :k, :]
        gL1, gL2 = gL[..., :k, :], gL[..., k:, :]
        phi = (L1.mT @ gL1).tril(-1) + (gU @ U.mT - L[..., k:, :].mT @ gL2).triu()
        gA1 = solve_triangular(L1.mT, phi, upper=True, unitriangular=True)
        gA1 = solve_triangular(U.mT, gA1, upper=False, left=False)
        gA2 = solve_triangular(U.mT, gL2, upper=False, left=False)
        return P @ _cat_rows(gA1, gA2)


def _cat_cols(a, b):
    return cat([a, b], -1)


def _cat_rows(a, b):
    return cat([a, b], -2)


def lu(A, *, pivot=True, out=None):
    """linalg.lu(A, *, pivot=True): (P, L, U) with A = P L U, L unit lower, U upper."""
    _check_lu(A, "linalg.lu", pivot)
    return result_or_out(LU(*_LU.apply(A)[:3]), out, "linalg.lu")


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True): (P, L, U) from
    lu_factor's result."""
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = LU_data.new_empty((0,))
    L = U = P = empty
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        P = K.perm_matrix(K.perm_from_pivots(LU_pivots, m), LU_data.dtype)
    return result_or_out(LUUnpack(P, L, U), out, "lu_unpack")


def lu_solve(LU_, pivots, B, *, left=True, adjoint=False, out=None):
    """linalg.lu_solve(LU, pivots, B, *, left=True, adjoint=False): X with A X = B from A's
    lu_factor (A^H X = B when adjoint, X A = B when not left); differentiable in LU and B."""
    name = "linalg.lu_solve"
    check_matrix(LU_, name, what="LU")
    check_same(LU_, B, name)
    if B.dim() < 2 or LU_.shape[-1] != (B.shape[-2] if left else B.shape[-1]):
        eq = "AX = B" if left else "XA = B"
        rows, cols = (B.shape[-2], B.shape[-1]) if B.dim() >= 2 else (B.shape[-1], 1)
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({LU_.shape[-2]}x{LU_.shape[-1]} and {rows}x{cols})")
    if not left:
        return result_or_out(lu_solve(LU_, pivots, B.mT, adjoint=not adjoint).mT, out, "linalg.lu_solve")
    n = LU_.shape[-1]
    perm = K.perm_from_pivots(pivots, n)
    LU_, B = K.expand_batch(LU_, B)
    perm = perm.expand(tuple(LU_.shape[:-1]))
    if adjoint:   # A^T = U^T L^T P^T
        Y = solve_triangular(LU_.mT, B, upper=False)
        Y = solve_triangular(LU_.mT, Y, upper=True, unitriangular=True)
        P = K.perm_matrix(perm, B.dtype)
        return result_or_out(P @ Y, out, "linalg.lu_solve")
    Y = solve_triangular(LU_, K.permute_rows(B, perm), upper=False, unitriangular=True)
    return result_or_out(solve_triangular(LU_, Y, upper=True), out, "linalg.lu_solve")


# -- solve, inv -------------------------------------------------------------------------------------

class _Solve(Function):
    _backward_name = "LinalgSolveExBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A, B):
        LU_, _, perm, info = K.lu(A)
        X = K.lu_solve(LU_, perm, B)
        ctx.save_for_backward(A, X)
        ctx.mark_non_differentiable(info)
        return X, info

    @staticmethod
    def backward(ctx, gX, _ginfo):
        A, X = ctx.saved_tensors
        gB = solve(A.mT, gX)
        return -(gB @ X.mT) if ctx.needs_input_grad[0] else None, gB


def _vector_rhs(A, B):
    """PyTorch's rule: B is a batch of vectors when B.ndim == 1 or B.shape == A.shape[:-1]."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """linalg.solve_ex(A, B, *, left=True, check_errors=False): (X, info) with A X = B (X A = B
    when not left), by LU with partial pivoting."""
    name = "linalg.solve"
    check_matrix(A, name, kernel="lu_cpu")
    check_same(A, B, name)
    vector = _vector_rhs(A, B)
    if vector:
        B = B.unsqueeze(-1)
    if not left:
        if A.shape[-1] != B.shape[-1]:
            raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation XA = B "
                               f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
        X, info = solve_ex(A.mT, B.mT, check_errors=check_errors)
        return SolveEx(X.mT, info)
    if A.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    Ae, Be = K.expand_batch(A, B)
    X, info = _Solve.apply(Ae, Be)
    while info.dim() > A.dim() - 2:   # (one info per matrix of A, as PyTorch's)
        info = info[0]
    if check_errors:
        _raise_singular_solve(info)
    return result_or_out(SolveEx(X.squeeze(-1) if vector else X, info), out, "linalg.solve_ex")


def _raise_singular_solve(info):
    if info.numel() and bool(info.ne(0).any()):
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")


def solve(A, B, *, left=True, out=None):
    """linalg.solve(A, B, *, left=True): X with A X = B (X A = B when not left); raises
    LinAlgError for a singular A."""
    X, info = solve_ex(A, B, left=left)
    _raise_singular_solve(info)
    return result_or_out(X, out, "linalg.solve")


class _Inv(Function):
    _backward_name = "LinalgInvExBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A):
        LU_, _, perm, info = K.lu(A)
        X = K.lu_solve(LU_, perm, _eye_like(A).expand(tuple(A.shape)))
        ctx.save_for_backward(X)
        ctx.mark_non_differentiable(info)
        return X, info

    @staticmethod
    def backward(ctx, g, _ginfo):
        (X,) = ctx.saved_tensors
        return -(X.mT @ g @ X.mT)


def inv_ex(A, *, check_errors=False, out=None):
    """linalg.inv_ex(A, *, check_errors=False): (A^-1, info)."""
    check_matrix(A, "linalg.inv")
    X, info = _Inv.apply(A)
    if check_errors:
        _raise_singular_inv(info)
    return result_or_out(InvEx(X, info), out, "linalg.inv_ex")


def _raise_singular_inv(info):
    raise_for_info(info, lambda k: f"linalg.inv: The diagonal element {k} is zero, the inversion could not be "
                                   "completed because the input matrix is singular.")


def inv(A, *, out=None):
    """linalg.inv(A): A^-1; raises LinAlgError for a singular A."""
    X, info = inv_ex(A)
    _raise_singular_inv(info)
    return result_or_out(X, out, "linalg.inv")
