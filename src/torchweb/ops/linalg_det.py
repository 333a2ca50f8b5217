"""torch.linalg.det and slogdet (and torch.logdet) by LU with partial pivoting; det's backward
is g det A^-H, and PyTorch's SVD form where A is singular."""

from .._creation import arange, eye
from ..autograd.function import Function
from .elementwise import call
from .join import cat
from .out_arg import result_or_out
from . import linalg_kernels as K
from .linalg_checks import Slogdet, check_matrix
from .linalg_factor import inv, inv_ex
from .linalg_spectral import svd


def _lu_det_parts(A):
    """(sign of the permutation times the signs of U's diagonal, |U's diagonal|) by LU."""
    LU_, pivots, _, _ = K.lu(A)
    n = A.shape[-1]
    swaps = (pivots.long() != arange(1, n + 1, device=A.device)).sum(-1)
    sign = 1.0 - 2.0 * (swaps % 2).to(A.dtype)
    d = LU_.diagonal(0, -2, -1)
    return sign * d.sign().prod(-1), d.abs()


class _Det(Function):
    _backward_name = "LinalgDetBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A):
        sign, mag = _lu_det_parts(A)
        det = sign * mag.prod(-1)
        ctx.save_for_backward(A, det)
        return det

    @staticmethod
    def backward(ctx, g):
        A, det = ctx.saved_tensors
        return _det_backward(A, g, det)


def det(A, *, out=None):
    """linalg.det(A): the determinant (by LU with partial pivoting)."""
    check_matrix(A, "linalg.det", kernel="lu_cpu")
    return result_or_out(_Det.apply(A), out, "linalg.det")


class _Slogdet(Function):
    _backward_name = "LinalgSlogdetBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, A):
        sign, mag = _lu_det_parts(A)
        logabs = mag.log().sum(-1)
        ctx.save_for_backward(A)
        ctx.mark_non_differentiable(sign)
        return sign, logabs

    @staticmethod
    def backward(ctx, _gsign, glog):
        (A,) = ctx.saved_tensors
        return glog.unsqueeze(-1).unsqueeze(-1) * inv(A).mT


def slogdet(A, *, out=None, name="linalg.slogdet"):
    """linalg.slogdet(A): (sign, log|det|); sign 0 and logabsdet -inf for a singular A."""
    check_matrix(A, name)
    return result_or_out(Slogdet(*_Slogdet.apply(A)), out, name)


def logdet(A):
    """logdet(A): log(det(A)): NaN where det < 0, -inf where it is 0."""
    sign, logabs = slogdet(A, name="logdet")
    return call("where", sign < 0, float("nan"), logabs)


def _det_backward(A, g, value):
    """g det A^-H, and where det is 0 the SVD's form: U diag(prod_{j != i} S_j) Vh times the sign
    of det(U Vh) (PyTorch's linalg_det_backward)."""
    gd = (g * value).unsqueeze(-1).unsqueeze(-1)
    zero = value == 0
    if A.shape[-1] == 0 or not bool(zero.any()):
        return gd * inv(A).mT
    U, S, Vh = svd(A)
    n = S.shape[-1]
    ones = S[..., :1] * 0 + 1
    left = cat([ones, S[..., :n - 1].cumprod(-1)], -1)
    right = cat([ones, S.flip(-1)[..., :n - 1].cumprod(-1)], -1).flip(-1)
    sign = det(U) * det(Vh)
    singular = (g * sign).unsqueeze(-1).unsqueeze(-1) * ((U * (left * right).unsqueeze(-2)) @ Vh)
    safe = call("where", zero.unsqueeze(-1).unsqueeze(-1), A + eye(A.shape[-1], dtype=A.dtype, device=A.device), A)
    return call("where", zero.unsqueeze(-1).unsqueeze(-1), singular, gd * inv_ex(safe).inverse.mT)
