"""The trapezoid rule as PyTorch computes it: trapezoid (and its older name trapz) and
cumulative_trapezoid, with spacing from sample points x or a constant dx, from slices, sums
and cumsum (their gradients come from those)."""

from ..._size import wrap_dim
from ..operands import is_tensor
from ..registry import define
from ..._creation import zeros


def _check(name, y, x, dx):
    if not is_tensor(y):
        raise TypeError(f"{name}(): argument 'y' (position 1) must be Tensor, not {type(y).__name__}")
    if x is not None and not is_tensor(x):
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"{type(x).__name__}), but expected one of: (Tensor y, Tensor x, *, int dim = -1), "
                        f"(Tensor y, *, Number dx = 1, int dim = -1)")
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, Tensor, dx=...), "
                        f"but expected one of: (Tensor y, Tensor x, *, int dim = -1), "
                        f"(Tensor y, *, Number dx = 1, int dim = -1)")
    if y.dtype.name == "bool" or (x is not None and x.dtype.name == "bool"):
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, bool):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    if y.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")


def _pairs(y, d):
    """y's neighbours along d summed: y[1:] + y[:-1]."""
    n = y.shape[d]
    return y.narrow(d, min(n, 1), max(n - 1, 0)) + y.narrow(d, 0, max(n - 1, 0))


def _spacing(name, y, x, d):
    """x's differences along d, shaped to broadcast against y's neighbour pairs."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[d] = x.shape[0]
        x = x.reshape(shape)
    elif x.dim() < y.dim():
        x = x.reshape((1,) * (y.dim() - x.dim()) + tuple(x.shape))
    n = x.shape[d]
    return x.narrow(d, 1, max(n - 1, 0)) - x.narrow(d, 0, max(n - 1, 0))


def _trapezoid(name, y, x, dx, dim):
    _check(name, y, x, dx)
    d = wrap_dim(dim, y.dim())
    if y.shape[d] == 0:
        shape = tuple(s for i, s in enumerate(y.shape) if i != d)
        return zeros(shape, dtype=y.dtype, device=y.device)
    if x is not None:
        return (_spacing(name, y, x, d) * _pairs(y, d)).sum(d) / 2.0
    dx = 1 if dx is None else dx
    return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * dx


@define("trapezoid", "reduction", method=False, dtypes="numeric",
        doc="trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor\n\nThe trapezoid rule along dim: samples y "
            "at points x (a tensor), or spaced dx apart (1 by default).")
def trapezoid(y, x=None, *, dx=None, dim=-1, axis=None):
    return _trapezoid("trapezoid", y, x, dx, dim if axis is None else axis)


@define("trapz", "reduction", method=False, dtypes="numeric",
        doc="trapz(y, x=None, *, dx=None, dim=-1) -> Tensor\n\ntrapezoid's older name.")
def trapz(y, x=None, *, dx=None, dim=-1, axis=None):
    return _trapezoid("trapezoid", y, x, dx, dim if axis is None else axis)


@define("cumulative_trapezoid", "reduction", method=False, dtypes="numeric",
        doc="cumulative_trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor\n\nThe running trapezoid rule along "
            "dim (one fewer element than y there).")
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1, axis=None):
    dim = dim if axis is None else axis
    _check("cumulative_trapezoid", y, x, dx)
    d = wrap_dim(dim, y.dim())
    if x is not None:
        return (_spacing("cumulative_trapezoid", y, x, d) * _pairs(y, d)).cumsum(d) / 2.0
    dx = 1 if dx is None else dx
    return (_pairs(y, d) * (dx / 2.0)).cumsum(d)
