"""linalg.ldl_factor(_ex) and linalg.ldl_solve: the Bunch-Kaufman LDL^T of a symmetric matrix as
LAPACK's sytrf leaves it (lower triangle; PyTorch's format): LD holds D's diagonal (and the
subdiagonal entry of each 2 x 2 block) and each step's column of L, in the frame of that step's
interchange (later interchanges are not applied to earlier columns); pivots: 1-based, kp for a
1 x 1 step, -kp twice for a 2 x 2 one.

The factorization is sytf2's column loop: one dispatch on webgpu (kernels/ldl.py); on cpu each
step is tensor ops over the whole batch: the pivot choice (alpha = (1 + sqrt 17) / 8) per
matrix, the symmetric interchange as two gathers, the rank-1 or rank-2 update as one matmul; a
matrix whose step is the second column of a 2 x 2 block is masked out of that step. ldl_solve
is sytrs in one dispatch on webgpu; on cpu it rewrites the factor as P L D L^T P^T (each later
interchange applied to the earlier columns, one gather a step) and solves with the blocked
triangular solves. float32; not differentiable, as PyTorch's."""

from functools import partial
from math import prod, sqrt

from .. import _dtype
from .._creation import arange, zeros
from ..autograd import grad_mode
from ..backends import backend_for
from .elementwise import call
from .join import cat
from .linalg_checks import LDLFactor, LDLFactorEx, check_matrix, check_same
from .linalg_kernels import expand_batch, kernel_input, permute_rows
from .linalg_triangular import tri_solve
from .operands import empty
from .out_arg import result_or_out

_ALPHA = (1.0 + sqrt(17.0)) / 8.0


def _col(t):
    """[c] -> [c, 1] (one value per matrix against its rows)."""
    return t.unsqueeze(-1)


def _swap_order(rows, a, b):
    """Per matrix, the row order exchanging rows a and b ([c] each): [c, n]."""
    a, b = _col(a), _col(b)
    return call("where", rows == a, b, call("where", rows == b, a, rows))


def _sym_permute(W, order):
    n = W.shape[-1]
    W = W.gather(-2, order.unsqueeze(-1).expand(tuple(W.shape)))
    return W.gather(-1, order.unsqueeze(-2).expand(tuple(W.shape[:-2]) + (n, n)))


def _factor(A):
    """(LD, pivots, info) of A [c, n, n] (its lower triangle)."""
    c, n = A.shape[0], A.shape[-1]
    dev = A.device
    rows = arange(n, device=dev)
    lower = rows.reshape(n, 1) >= rows
    W = A.tril() + A.tril(-1).mT   # (both triangles, kept exactly symmetric)
    LD = zeros((c, n, n), dtype=A.dtype, device=dev)
    piv = zeros((c, n), dtype=_dtype.int64, device=dev)
    info = zeros((c,), dtype=_dtype.int64, device=dev)
    second = zeros((c,), dtype=_dtype.bool, device=dev)   # (this column ends the last step's 2 x 2 block)
    for j in range(n):
        active = ~second
        colj = W[..., :, j]
        below = call("where", rows > j, colj.abs(), -1.0)
        imax = below.argmax(-1)
        colmax = below.amax(-1).clamp_min(0.0)
        absakk = colj[..., j].abs()
        rowi = W.gather(-2, imax.reshape(c, 1, 1).expand(c, 1, n))[:, 0, :]
        # row imax's entries from the lower triangle (A(imax, j:imax) and A(imax+1:, imax)), but its diagonal
        rowmax = call("where", (rows >= j) & (rows != _col(imax)), rowi.abs(), -1.0).amax(-1)
        aii = rowi.gather(-1, _col(imax))[:, 0].abs()
        zero = (call("maximum", absakk, colmax) == 0) | absakk.isnan()
        keep = zero | (absakk >= _ALPHA * colmax) | (absakk >= _ALPHA * colmax * (colmax / rowmax))
        two = active & ~keep & ~(aii >= _ALPHA * rowmax)
        kp = call("where", keep | ~active, j, imax)
        kk = j + two.long()
        W = _sym_permute(W, _swap_order(rows, kk, kp))
        colj = W[..., :, j]
        d = colj[..., j]
        # 1 x 1: W -= x x^T / d over the rows and columns below j
        x = call("where", rows > j, colj, 0.0)
        r1 = 1.0 / d
        U1 = x.unsqueeze(-1) @ (x * _col(r1)).unsqueeze(-2)
        new_j = call("where", rows == j, _col(d), call("where", zero.unsqueeze(-1), colj, x * _col(r1)))
        new_j = call("where", rows >= j, new_j, 0.0)
        if j + 1 < n:   # 2 x 2 (sytf2's d11, d22, d21 and the multipliers wk, wkp1)
            colk = W[..., :, j + 1]
            b, cc = colj[..., j + 1], colk[..., j + 1]
            d11, d22 = cc / b, d / b
            d21 = (1.0 / (d11 * d22 - 1.0)) / b
            xa = call("where", rows > j + 1, colj, 0.0)
            xb = call("where", rows > j + 1, colk, 0.0)
            wk = _col(d21) * (_col(d11) * xa - xb)
            wkp1 = _col(d21) * (_col(d22) * xb - xa)
            U2 = cat([xa.unsqueeze(-1), xb.unsqueeze(-1)], -1) @ cat([wk.unsqueeze(-2), wkp1.unsqueeze(-2)], -2)
            U = call("where", two.reshape(c, 1, 1), U2, U1)
            two_j = call("where", rows == j, _col(d), call("where", rows == j + 1, _col(b), wk))
            new_j = call("where", two.unsqueeze(-1), call("where", rows >= j, two_j, 0.0), new_j)
            col_k = call("where", rows == j + 1, _col(cc), call("where", rows > j + 1, wkp1, 0.0))
            LD[..., :, j + 1] = call("where", two.unsqueeze(-1), col_k, LD[..., :, j + 1])
            piv[..., j + 1] = call("where", two, -(kp + 1), piv[..., j + 1])
        else:
            U = U1
        U = call("where", lower, U, U.mT)
        W = call("where", (active & ~zero).reshape(c, 1, 1), W - U, W)
        LD[..., :, j] = call("where", active.unsqueeze(-1), new_j, LD[..., :, j])
        piv[..., j] = call("where", active, call("where", two, -(kp + 1), kp + 1), piv[..., j])
        info = call("where", (info == 0) & active & zero, j + 1, info)
        second = two
    return LD, piv.int(), info.int()


def _factor_kernel(backend, A):
    """_factor in one dispatch (the backend's ldl)."""
    c, n = A.shape[0], A.shape[-1]
    src, _ = kernel_input(A)
    LD = empty((c, n, n), A.dtype, A.device)
    piv = empty((c, n), _dtype.int32, A.device)
    info = empty((c,), _dtype.int32, A.device)
    backend.ldl(LD, piv, info, src, n, c)
    return LD, piv, info


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """linalg.ldl_factor_ex(A, *, hermitian=False, check_errors=False): (LD, pivots, info) of
    the symmetric A's lower triangle, Bunch-Kaufman pivoting as LAPACK's sytrf; info: the first
    zero 1 x 1 pivot (1-based, D exactly singular), 0 where none."""
    name = "torch.linalg.ldl_factor_ex"
    check_matrix(A, name)
    batch, n = tuple(A.shape[:-2]), A.shape[-1]
    c = prod(batch)
    with grad_mode.no_grad():
        backend = backend_for(A.device.type)
        factor = partial(_factor_kernel, backend) if backend.ldl_fits(n) else _factor
        LD, piv, info = factor(A.detach().reshape(c, n, n)) if c and n else (
            zeros((c, n, n), device=A.device), zeros((c, n), dtype=_dtype.int32, device=A.device),
            zeros((c,), dtype=_dtype.int32, device=A.device))
    LD, piv, info = LD.reshape(batch + (n, n)), piv.reshape(batch + (n,)), info.reshape(batch)
    if check_errors:
        _raise_for(info, "torch.linalg.ldl_factor_ex")
    return result_or_out(LDLFactorEx(LD, piv, info), out, "linalg.ldl_factor_ex")


def _raise_for(info, name):
    if info.numel() and bool((info != 0).any()):
        k = int(info[info != 0][0].item())
        raise RuntimeError(f"{name}: Unknown error code: {k}.")


def ldl_factor(A, *, hermitian=False, out=None):
    """linalg.ldl_factor(A, *, hermitian=False): (LD, pivots), as ldl_factor_ex; a zero pivot
    raises (as PyTorch's, which reports LAPACK's info as an unknown error code)."""
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise_for(info, "torch.linalg.ldl_factor")
    return result_or_out(LDLFactor(LD, piv), out, "linalg.ldl_factor")


def _standard_form(LD, piv):
    """(L, D's diagonal, D's subdiagonal at each 2 x 2 block's first row (else 0), starts of
    2 x 2 blocks, order): A = P L D L^T P^T, (P^T b) = b[order]."""
    c, n = LD.shape[0], LD.shape[-1]
    dev = LD.device
    rows = arange(n, device=dev)
    p = piv.long()
    L = LD.tril(-1)
    order = rows.expand(c, n)
    starts = []
    second = zeros((c,), dtype=_dtype.bool, device=dev)
    for j in range(n):
        neg = p[..., j] < 0
        start = ~second & neg
        kk = j + start.long()
        kp = call("where", second, kk, call("where", neg, -p[..., j], p[..., j]) - 1)
        swap = _swap_order(rows, kk, kp)
        if j:
            L = call("where", rows < j, L.gather(-2, swap.unsqueeze(-1).expand(c, n, n)), L)
        order = order.gather(-1, swap)
        starts.append(start)
        second = start
    two = cat([s.unsqueeze(-1) for s in starts], -1)                      # [c, n]
    sub = cat([LD.diagonal(-1, -2, -1), zeros((c, 1), dtype=LD.dtype, device=dev)], -1)
    sub = call("where", two, sub, 0.0)
    in_d = (rows.reshape(n, 1) == rows + 1) & two.unsqueeze(-2)   # (a 2 x 2 block's subdiagonal entry is D's)
    L = call("where", in_d, 0.0, L)
    return L, LD.diagonal(0, -2, -1), sub, two, order


def _solve_d(d, sub, two, Z):
    """D^-1 Z for D block diagonal (1 x 1 and 2 x 2 blocks), as sytrs's formulas."""
    c = Z.shape[0]
    zrow = zeros((c, 1, Z.shape[-1]), dtype=Z.dtype, device=Z.device)
    zero1 = zeros((c, 1), dtype=Z.dtype, device=Z.device)
    z_next = cat([Z[..., 1:, :], zrow], -2)
    d_next = cat([d[..., 1:], zero1 + 1.0], -1)
    e = call("where", two, sub, 1.0)
    akm1, ak = d / e, d_next / e
    denom = akm1 * ak - 1.0
    bkm1, bk = Z / _col(e), z_next / _col(e)
    y_first = (_col(ak) * bkm1 - bk) / _col(denom)
    y_second = (_col(akm1) * bk - bkm1) / _col(denom)      # (row k + 1's value, at row k)
    y_second = cat([zrow, y_second[..., :-1, :]], -2)
    is_second = cat([zeros((c, 1), dtype=_dtype.bool, device=Z.device), two[..., :-1]], -1)
    single = Z / _col(d)
    return call("where", _col(two), y_first, call("where", _col(is_second), y_second, single))


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """linalg.ldl_solve(LD, pivots, B, *, hermitian=False): X with A X = B from A's ldl_factor."""
    name = "torch.linalg.ldl_solve"
    check_matrix(LD, name, what="LD")
    if B.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(B.dim(), 1)}, "
                         f"{max(B.dim(), 1) - 1}], but got -2)")
    check_same(LD, B, name)
    if pivots.dtype.is_floating_point or pivots.dtype is _dtype.bool:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {pivots.dtype.name.capitalize()}")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b "
                           f"matrix is {B.shape[-2]} by {B.shape[-1]}")
    with grad_mode.no_grad():
        LDe, Be = expand_batch(LD.detach(), B.detach())
        batch = tuple(Be.shape[:-2])
        c, k = prod(batch), B.shape[-1]
        if c == 0 or n == 0 or k == 0:
            return result_or_out(zeros(batch + (n, k), dtype=B.dtype, device=B.device), out, "linalg.ldl_solve")
        P = pivots.expand(batch + (n,)).reshape(c, n)
        backend = backend_for(LD.device.type)
        if backend.ldl_fits(n):   # (sytrs in one dispatch)
            X = Be.reshape(c, n, k).contiguous().clone()
            backend.ldl_solve(X, kernel_input(LDe.reshape(c, n, n))[0], kernel_input(P.int())[0], n, k, c)
            return result_or_out(X.reshape(batch + (n, k)), out, "linalg.ldl_solve")
        L, d, sub, two, order = _standard_form(LDe.reshape(c, n, n), P)
        Z = permute_rows(Be.reshape(c, n, k), order)
        Z = tri_solve(L, Z, upper=False, unit=True)
        Z = _solve_d(d, sub, two, Z)
        Z = tri_solve(L.mT, Z, upper=True, unit=True)
        X = permute_rows(Z, order.argsort(-1))
    return result_or_out(X.reshape(batch + (n, k)), out, "linalg.ldl_solve")
