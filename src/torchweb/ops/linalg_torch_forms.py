"""The torch.* and Tensor.* forms of torch.linalg's functions (PyTorch's older names, some with
their own argument conventions: torch.svd returns V, torch.triangular_solve takes B first, ...)."""

import warnings

from .._creation import eye, zeros
from . import linalg_derived as LD, linalg_det as LDet, linalg_factor as LF, linalg_spectral as LS
from .linalg_checks import Geqrf, TorchQR, TorchSVD, TorchSlogdet, TriangularSolve, check_float, check_matrix
from . import linalg_qr as LQ
from .linalg_qr_blocked import householder_qr
from .linalg_more import matrix_norm
from .registry import define

_F32 = ("float32",)


@define("det", "linalg", dtypes=_F32)
def det(input):
    """det(input) -> Tensor

    The determinant of a (batch of) square matrices (linalg.det)."""
    return LDet.det(input)


@define("inverse", "linalg", dtypes=_F32, out=True)
def inverse(input):
    """inverse(input) -> Tensor

    The inverse of a (batch of) square matrices (linalg.inv)."""
    return LF.inv(input)


@define("logdet", "linalg", dtypes=_F32)
def logdet(input):
    """logdet(input) -> Tensor

    log(det(input)): NaN where the determinant is negative, -inf where it is zero."""
    return LDet.logdet(input)


@define("slogdet", "linalg", out=True, dtypes=_F32)
def slogdet(input):
    """slogdet(input) -> (sign, logabsdet)

    The sign and log |det| of a (batch of) square matrices (linalg.slogdet)."""
    return TorchSlogdet(*LDet.slogdet(input))


@define("cholesky", "linalg", dtypes=_F32, out=True)
def cholesky(input, upper=False):
    """cholesky(input, upper=False) -> Tensor

    Deprecated form of linalg.cholesky (U = L^H when upper)."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
                  "future PyTorch release.", UserWarning, stacklevel=2)
    L, info = LF.factor_cholesky(input, upper, "cholesky")
    LF._raise_not_pd(info, "cholesky")
    return L


@define("cholesky_solve", "linalg", dtypes=_F32, out=True)
def cholesky_solve(input, input2, upper=False):
    """cholesky_solve(B, L, upper=False) -> Tensor

    X with A X = B, A = L L^H given by its Cholesky factor (U^H U when upper)."""
    _check_b_and_A(input, input2, "b should have at least 2 dimensions, but has {} dimensions instead",
                   "cholesky_solve_cpu")
    if input.shape[-2] != input2.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {input2.shape[-2]} by "
                           f"{input2.shape[-1]} but each b matrix is {input.shape[-2]} by {input.shape[-1]}")
    L = input2.mT if upper else input2
    Y = LF.solve_triangular(L, input, upper=False)
    return LF.solve_triangular(L.mT, Y, upper=True)


def _check_b_and_A(b, A, b_dims_message, kernel):
    """The legacy solvers' own checks: b's dims first, then A square, then the dtype."""
    if b.dim() < 2:
        raise RuntimeError(b_dims_message.format(b.dim()))
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2] if A.dim() > 1 else 1} "
                           f"by {A.shape[-1]} matrices")
    check_float(A, kernel, kernel=kernel, int_kernel=True)


@define("cholesky_inverse", "linalg", dtypes=_F32, out=True)
def cholesky_inverse(input, upper=False):
    """cholesky_inverse(L, upper=False) -> Tensor

    A^-1 from A's Cholesky factor L (A = L L^H; U^H U when upper)."""
    check_matrix(input, "cholesky_inverse", kernel="cholesky_inverse_out_cpu", int_kernel=True)
    n = input.shape[-1]
    return cholesky_solve(eye(n, dtype=input.dtype, device=input.device).expand(tuple(input.shape)), input, upper)


@define("triangular_solve", "linalg", out=True, dtypes=_F32)
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """triangular_solve(b, A, upper=True, transpose=False, unitriangular=False) -> (solution,
    cloned_coefficient)

    X with A X = b (A^T X = b when transpose), A triangular."""
    _check_b_and_A(input, A, "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {} "
                   "dimensions instead", "triangular_solve_cpu")
    M = A.mT if transpose else A
    X = LF.solve_triangular(M, input, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolve(X, A.clone())


@define("lu_solve", "linalg", out=True, dtypes=_F32)
def lu_solve(input, LU_data, LU_pivots):
    """lu_solve(b, LU_data, LU_pivots) -> Tensor

    X with A X = b from A's LU factorization (torch.lu / linalg.lu_factor)."""
    return LF.lu_solve(LU_data, LU_pivots, input)


@define("lu", "linalg", dtypes=_F32)
def lu(A, pivot=True, get_infos=False):
    """lu(A, pivot=True, get_infos=False) -> (LU, pivots[, infos])

    Deprecated form of linalg.lu_factor_ex."""
    LU_, pivots, info = LF.lu_factor_ex(A, pivot=pivot)
    return (LU_, pivots, info) if get_infos else (LU_, pivots)   # (a singular A is no error here, as PyTorch's)


@define("lu_unpack", "linalg", method=False, out=True, dtypes=_F32)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True) -> (P, L, U)

    P, L and U of lu_factor's compact result."""
    return LF.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


@define("matrix_power", "linalg", out=True, dtypes=("int32", "int64", "float32"))
def matrix_power(input, n):
    """matrix_power(input, n) -> Tensor

    input^n for an integer n (linalg.matrix_power)."""
    return LD.matrix_power(input, n)


@define("matrix_exp", "linalg", dtypes=_F32)
def matrix_exp(input):
    """matrix_exp(input) -> Tensor

    The matrix exponential (linalg.matrix_exp)."""
    return LD.matrix_exp(input)


@define("pinverse", "linalg", dtypes=_F32)
def pinverse(input, rcond=1e-15):
    """pinverse(input, rcond=1e-15) -> Tensor

    The pseudo-inverse, singular values at or below rcond * max taken as zero."""
    return LD.pinv(input, rtol=rcond)


@define("qr", "linalg", dtypes=_F32, out=True)
def qr(input, some=True):
    """qr(input, some=True) -> (Q, R)

    linalg.qr with mode 'reduced' (some) or 'complete'."""
    return TorchQR(*LQ.qr(input, "reduced" if some else "complete"))


@define("svd", "linalg", dtypes=_F32, out=True)
def svd(input, some=True, compute_uv=True):
    """svd(input, some=True, compute_uv=True) -> (U, S, V)

    The SVD with V (not V^H); without compute_uv, U and V are zero-filled (m x m, n x n)."""
    if input.dim() < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.dim()} "
                           "dimensions instead")
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        S = LS.svdvals(input)
        return TorchSVD(zeros(batch + (m, m), dtype=input.dtype, device=input.device), S,
                        zeros(batch + (n, n), dtype=input.dtype, device=input.device))
    U, S, Vh = LS.svd(input, full_matrices=not some)
    return TorchSVD(U, S, Vh.mT)


@define("nuclear_norm", "linalg", method=False, out=True, dtypes=_F32)
def nuclear_norm(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """nuclear_norm(input, dim=None, keepdim=False) -> Tensor

    Deprecated form of linalg.matrix_norm(input, 'nuc', dim, keepdim) (dim: the last two by
    default; a bool in dim's place is keepdim, as PyTorch's overload; axis / keepdims: NumPy's
    names, which PyTorch takes)."""
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    dim = axis if axis is not None else dim
    keepdim = keepdims if keepdims is not None else keepdim
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


@define("geqrf", "linalg", dtypes=_F32, out=True)
def geqrf(input):
    """geqrf(input) -> (a, tau)

    LAPACK's compact Householder QR: R on and above a's diagonal, the reflectors' vectors below
    it, their scales in tau (not differentiable, as PyTorch's)."""
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    check_matrix(input, "geqrf", square=False, kernel="geqrf_cpu", int_kernel=True)
    return Geqrf(*householder_qr(input.detach(), compact=True))


@define("orgqr", "linalg", dtypes=_F32, out=True)
def orgqr(input, input2):
    """orgqr(input, tau) -> Tensor

    The first n columns of Q from geqrf's reflectors (linalg.householder_product)."""
    return LD.householder_product(input, input2)


@define("ormqr", "linalg", dtypes=_F32, out=True)
def ormqr(input, input2, input3, left=True, transpose=False):
    """ormqr(input, tau, other, left=True, transpose=False) -> Tensor

    other multiplied by geqrf's Q (Q^T when transpose; on the right when not left)."""
    return LD.ormqr(input, input2, input3, left, transpose)
