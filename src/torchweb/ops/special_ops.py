"""The public forms of the gamma-family rows whose signatures a row cannot give: polygamma(n,
input) (n first, an int) and Tensor.polygamma(n); mvlgamma(input, p) as a sum of lgamma rows."""

import math

from .operands import is_tensor
from .elementwise import call
from .inplace import call_inplace
from .registry import define, register
from . import reduction as R, shape as S
from .. import _dtype as D
from .._creation import tensor


def _check_n(n):
    """n as an int: a Python int, or a one-element integer tensor (read as an index, as PyTorch)."""
    if is_tensor(n) and n.numel() == 1 and not n.dtype.is_floating_point and n.dtype.name != "bool":
        n = int(n.item())
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return n


def _polygamma_method(self, n):
    """polygamma(n) -> Tensor

    torch.polygamma(n, self)."""
    return polygamma(n, self)


def _polygamma_(self, n):
    n = _check_n(n)
    return call_inplace("polygamma", self, n)


@define("polygamma", "elementwise", method=False)
def polygamma(n, input, *, out=None):
    """polygamma(n, input, *, out=None) -> Tensor

    The n-th derivative of digamma (n = 0: digamma, 1: trigamma; n >= 2 through the Hurwitz
    zeta function: (-1)^(n+1) n! zeta(n + 1, input))."""
    n = _check_n(n)
    if not is_tensor(input):
        raise TypeError(f"polygamma(): argument 'input' (position 2) must be Tensor, not {type(input).__name__}")
    r = call("polygamma", input, n)
    if out is not None:
        out.copy_(r)
        return out
    return r


register("polygamma", _polygamma_method, "elementwise", key="Tensor.polygamma", torch=False,
         inplace=_polygamma_)


def _mvlgamma_(self, p):
    return self.copy_(mvlgamma(self, p))


@define("mvlgamma", "elementwise", inplace=_mvlgamma_)
def mvlgamma(input, p, *, out=None):
    """mvlgamma(input, p, *, out=None) -> Tensor

    The multivariate log-gamma function of dimension p: sum over i < p of lgamma(input - i / 2),
    plus p (p - 1) / 4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = input if input.dtype.is_floating_point else input.to(_default_float())
    shifts = [-(p - 1 - i) / 2 for i in range(p)]   # -(p-1)/2, ..., -1/2, 0 as PyTorch
    args = S.unsqueeze(x, -1) + tensor(shifts, dtype=x.dtype, device=x.device)
    r = R.sum(call("lgamma", args), -1) + p * (p - 1) * math.log(math.pi) / 4
    if out is not None:
        out.copy_(r)
        return out
    return r


def _default_float():
    return D.get_default_dtype()
