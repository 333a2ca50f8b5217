"""torch.linalg functions built from the decompositions (their gradients come from those): pinv,
lstsq, matrix_rank, cond, matrix_power, matrix_exp, householder_product, vander; eig / eigvals
refuse (their results are complex)."""

import math
from math import prod

from .. import _dtype as D
from .._creation import eye, empty
from .elementwise import call
from .operands import is_tensor
from .join import stack
from .linalg_checks import Lstsq, c_name, check_matrix, check_float, check_same
from .linalg_factor import inv, inv_ex, solve, solve_triangular
from .linalg_more import matrix_norm
from .linalg_spectral import eigh, svd, svdvals
from . import linalg_qr as LQ

_EPS = 1.1920928955078125e-07   # float32's


def _tolerance(S, atol, rtol, n_max):
    """PyTorch's cutoff max(atol, rtol * S_max) [..., 1], rtol defaulting to eps * max(m, n),
    or to 0 when a positive atol (or a tensor of them) is given."""
    atol_given = atol is not None and (is_tensor(atol) or atol > 0)
    if rtol is None:
        rtol = 0.0 if atol_given else _EPS * n_max
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)   # (no values: 0)
    tol = smax * rtol
    if atol is None:
        return tol
    return call("maximum", tol, atol.unsqueeze(-1) if is_tensor(atol) and atol.dim() else tol * 0 + atol)


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None):
    """linalg.pinv(A, *, atol=None, rtol=None, hermitian=False): the pseudo-inverse, from the SVD
    (eigh when hermitian), singular values at or below max(atol, rtol * max) taken as zero."""
    if A.dim() < 2 or not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise RuntimeError(f"linalg.pinv({c_name(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    m, n = A.shape[-2], A.shape[-1]
    if hermitian:
        w, V = eigh(A)
        tol = _tolerance(w.abs(), atol, rtol, max(m, n))
        winv = call("where", w.abs() > tol, 1.0 / w, 0.0)
        return (V * winv.unsqueeze(-2)) @ V.mT
    U, S, Vh = svd(A, full_matrices=False)
    tol = _tolerance(S, atol, rtol, max(m, n))
    sinv = call("where", S > tol, 1.0 / S, 0.0)
    return (Vh.mT * sinv.unsqueeze(-2)) @ U.mT


def pinverse(input, rcond=1e-15):
    """pinverse(input, rcond=1e-15): linalg.pinv with rtol=rcond."""
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    """linalg.matrix_rank(A, *, atol=None, rtol=None, hermitian=False): the number of singular
    values (|eigenvalues| when hermitian) above max(atol, rtol * max)."""
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    S = eigh(A).eigenvalues.abs() if hermitian else svdvals(A)
    cut = _tolerance(S.detach(), atol, rtol, max(A.shape[-2], A.shape[-1]))
    return (S.detach() > cut).long().sum(-1)


def lstsq(A, B, rcond=None, *, driver=None):
    """linalg.lstsq(A, B, rcond=None, *, driver=None): the least-squares (minimum-norm where A is
    rank-deficient) solution X of A X ~ B, through the SVD (gels: through QR, A taken to have full
rank as LAPACK's gels does). The other fields as PyTorch's CPU
    drivers give them: rank for gelsy (the default), gelsd and gelss; residuals (squared, per
    column) for gelsd/gelss/gels when m > n and A has full rank; singular values for gelsd/gelss."""
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    check_same(A, B, "torch.linalg.lstsq")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if Bm.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    none = empty((0,), dtype=A.dtype, device=A.device)
    if driver == "gels":   # (full rank assumed, as LAPACK's gels: through QR, no SVD)
        X = _gels(A, Bm)
        residuals = (A @ X - Bm).square().sum(-2) if m > n and A.numel() else none
        return Lstsq(X.squeeze(-1) if vector else X, residuals.squeeze(-1) if vector and residuals.numel()
                     else residuals, empty((0,), dtype=D.int64, device=A.device), none)
    U, S, Vh = svd(A, full_matrices=False)
    rtol = _EPS * max(m, n) if rcond is None or rcond < 0 else rcond
    tol = _tolerance(S, None, rtol, max(m, n))
    keep = S > tol
    sinv = call("where", keep, 1.0 / S, 0.0)
    X = (Vh.mT * sinv.unsqueeze(-2)) @ (U.mT @ Bm)
    rank = keep.long().sum(-1)
    residuals = none
    if driver != "gelsy" and m > n and A.numel() and bool((rank == n).all()):
        residuals = (A @ X - Bm).square().sum(-2)
    svals = S if driver in ("gelsd", "gelss") else none
    return Lstsq(X.squeeze(-1) if vector else X, residuals.squeeze(-1) if vector and residuals.numel() else residuals,
                 rank, svals)


def _gels(A, B):
    """LAPACK gels's answer for a full-rank A: R^-1 Q^T B (A = Q R) when tall, the minimum-norm
    Q R^-T B (A^T = Q R) when wide."""
    m, n = A.shape[-2], A.shape[-1]
    if m >= n:
        Q, R = LQ.qr(A)
        return solve_triangular(R, Q.mT @ B, upper=True)
    Q, R = LQ.qr(A.mT)
    return Q @ solve_triangular(R.mT, B, upper=False)


def cond(A, p=None):
    """linalg.cond(A, p=None): the condition number in norm p (None / 2 / -2 from the singular
    values; 'fro', 'nuc', inf, -inf, 1, -1 as norm(A) * norm(A^-1), inf where A is singular)."""
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if isinstance(p, str) and p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p in (None, 2, -2):
        S = svdvals(A)
        return S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    check_float(A, "linalg.cond")
    Ainv, info = inv_ex(A)
    c = matrix_norm(A, p) * matrix_norm(Ainv, p)
    return call("where", info != 0, float("inf"), c)


def matrix_power(A, n):
    """linalg.matrix_power(A, n): A^n for an integer n (by squaring; n < 0: of A^-1)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if n == 0:
        return eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(tuple(A.shape)).clone()
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result if result is not A else A.clone()


def matrix_exp(A):
    """linalg.matrix_exp(A): e^A, by scaling and squaring: a degree-14 Taylor polynomial of
    A / 2^s (||A / 2^s||_1 <= 1/2, s read back once) squared s times."""
    check_matrix(A, "linalg.matrix_exp")
    n = A.shape[-1]
    I = eye(n, dtype=A.dtype, device=A.device)
    if A.numel() == 0:
        return A.clone()
    norm1 = float(A.detach().abs().sum(-2).amax())
    s = max(0, math.ceil(math.log2(norm1 / 0.5))) if norm1 > 0.5 and math.isfinite(norm1) else 0
    X = A / (2.0 ** s) if s else A
    E = I + X / 14.0
    for k in range(13, 0, -1):
        E = I + (X @ E) / float(k)
    for _ in range(s):
        E = E @ E
    return E


def householder_product(A, tau):
    """linalg.householder_product(A, tau): the first n columns of H_1 ... H_k, H_i = I - tau_i v_i
    v_i^H, v_i column i of A below the diagonal with 1 on it."""
    name = "torch.linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.shape[-1] > n:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    check_float(A, name, kernel="orgqr_cpu", int_kernel=True)
    return LQ.householder_product(A, tau)


def ormqr(input, tau, other, left=True, transpose=False):
    """ormqr(input, tau, other, left=True, transpose=False): other multiplied by Q = H_1 ... H_k
    (geqrf's reflectors in input and tau) without forming Q: Q other, Q^T other, other Q or
    other Q^T, a panel of reflectors at a time (ops/linalg_qr.py)."""
    name = "torch.ormqr"
    check_float(input, name)
    m = input.shape[-2]
    if (other.shape[-2] if left else other.shape[-1]) != m:
        raise RuntimeError(f"{name}: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]")
    return LQ.apply_reflectors(input, tau, other, left, transpose)


def vander(x, *, N=None):
    """linalg.vander(x, *, N=None): the Vandermonde matrix [x^0, x^1, ..., x^(N-1)] (columns of
    increasing powers, N = x.shape[-1] by default)."""
    n = (x.shape[-1] if x.dim() else 1) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    cols = [x * 0 + 1, x]
    while len(cols) < n:
        cols.append(cols[-1] * x)
    return stack(cols[:n], -1)


def _no_complex(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(f"torch.linalg.{name} is not supported by torchweb: its results are complex "
                                  "tensors, which torchweb does not support yet (issue 20); for a symmetric "
                                  "matrix use torch.linalg.eigh / eigvalsh")
    refuse.__name__ = name
    refuse.__doc__ = f"linalg.{name}: refused (complex results are not supported yet)."
    return refuse


eig = _no_complex("eig")
eigvals = _no_complex("eigvals")

def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """linalg.diagonal(A, *, offset=0, dim1=-2, dim2=-1): torch.diagonal with the matrix dims
    last by default."""
    return A.diagonal(offset, dim1, dim2)


def tensorinv(A, ind=2):
    """linalg.tensorinv(A, ind=2): the tensor B with tensordot(A, B, ind) the identity: the
    inverse of A reshaped to a square matrix of its first ind dims by the rest."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    left, right = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    return inv(A.reshape(prod(left), prod(right))).reshape(right + left)


def tensorsolve(A, B, dims=None):
    """linalg.tensorsolve(A, B, dims=None): X with tensordot(A, X, X.ndim) = B."""
    if dims is not None:
        nd = A.dim()
        dims = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + dims)
    rest = tuple(A.shape[B.dim():])
    X = solve(A.reshape(B.numel(), prod(rest)), B.reshape(B.numel()))
    return X.reshape(rest)
