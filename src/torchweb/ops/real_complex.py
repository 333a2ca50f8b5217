"""The complex-number API on real tensors (torchweb has no complex dtypes): conj, real and the
resolve_* functions are the tensor itself, as PyTorch returns for a real input; imag raises
as PyTorch does; angle is 0 for x >= 0 and pi for x < 0 (NaN kept), with a zero gradient;
adjoint is the transpose of the last two dims (mH and H as Tensor properties)."""

import math

from .. import _dtype as D
from ..autograd import grad_mode
from ..autograd.function import Function
from .elementwise import call
from .registry import define
from . import shape as S


@define("conj", "elementwise")
def conj(input):
    """conj(input) -> Tensor

    The complex conjugate: for a real tensor, input itself."""
    return input


@define("resolve_conj", "elementwise")
def resolve_conj(input):
    """resolve_conj(input) -> Tensor

    input with its conjugation materialized: a real tensor has none, input itself."""
    return input


@define("resolve_neg", "elementwise")
def resolve_neg(input):
    """resolve_neg(input) -> Tensor

    input with its negation bit materialized: a real tensor has none, input itself."""
    return input


def _conj_physical_(input):
    """In-place conj_physical: nothing to change on a real tensor."""
    return input


@define("conj_physical", "elementwise", inplace=_conj_physical_)
def conj_physical(input, *, out=None):
    """conj_physical(input, *, out=None) -> Tensor

    The complex conjugate computed (not a view): for a real tensor, input itself."""
    if out is not None:
        return out.copy_(input)
    return input


@define("is_conj", "other", differentiable=False)
def is_conj(input):
    """is_conj(input) -> bool

    Whether input's conjugate bit is set: never, torchweb has no complex tensors."""
    return False


@define("is_neg", "other", differentiable=False)
def is_neg(input):
    """is_neg(input) -> bool

    Whether input's negative bit is set: never, torchweb has no complex tensors."""
    return False


@define("real", "elementwise", method=False)
def real(input):
    """real(input) -> Tensor

    The real part: for a real tensor, input itself (Tensor.real is the same, as a property)."""
    return input


@define("imag", "elementwise", method=False)
def imag(input):
    """imag(input) -> Tensor

    The imaginary part: only complex tensors have one, and torchweb has none, so it raises
    PyTorch's RuntimeError."""
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


class _Angle(Function):
    """angle of a real tensor: piecewise constant, so its gradient is zero (NaN too, as PyTorch)."""
    _backward_name = "AngleBackward0"

    @staticmethod
    def forward(ctx, x):
        return _angle_values(x)

    @staticmethod
    def backward(ctx, g):
        return call("mul", g, 0.0)   # (a zero of g's shape: a product with NaN g stays NaN below)


def _angle_values(x):
    f = x if x.dtype.is_floating_point else x.to(D.get_default_dtype())
    r = call("where", call("lt", f, 0), math.pi, 0.0)
    if r.dtype is not f.dtype:
        r = r.to(f.dtype)
    return call("where", call("isnan", f), f, r)


@define("angle", "elementwise")
def angle(input, *, out=None):
    """angle(input, *, out=None) -> Tensor

    The argument of each element: for real input 0 where input >= 0, pi where input < 0, NaN
    kept; integers give the default float dtype. Its gradient is zero."""
    if grad_mode.is_grad_enabled() and input.requires_grad:
        r = _Angle.apply(input)
    else:
        r = _angle_values(input)
    if out is not None:
        return out.copy_(r)
    return r


@define("adjoint", "shape")
def adjoint(input):
    """adjoint(input) -> Tensor

    The conjugate transpose of the last two dims (a view): for real tensors, mT."""
    if input.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. "
                           f"Got {input.dim()}-D tensor.")
    return S.transpose(input, -2, -1)


def m_transpose(x, name="mT"):
    """Tensor.mT / mH: the last two dims swapped (a view)."""
    if x.dim() < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {x.dim()}-D tensor.")
    return S.transpose(x, -2, -1)


def h_transpose(x):
    """Tensor.H: the conjugate transpose of a matrix (a 0-d tensor is itself, deprecated)."""
    if x.dim() == 0:
        import warnings
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=3)
        return x
    if x.dim() != 2:
        hint = ". For batches of matrices, consider using tensor.mH" if x.dim() > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {x.dim()}-D tensor{hint}")
    return S.transpose(x, 0, 1)
