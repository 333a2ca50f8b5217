"""torch.special: PyTorch's names for the special functions torchweb has (most are the torch.*
ops under another name; ndtr, entr, xlog1py and zeta are composed or rows of their own)."""

import math as _math

from . import _functions as _F
from .ops.pointwise import call as _call

expit = _F.sigmoid
erf = _F.erf
erfc = _F.erfc
erfinv = _F.erfinv
expm1 = _F.expm1
exp2 = _F.exp2
log1p = _F.log1p
logit = _F.logit
xlogy = _F.xlogy
sinc = _F.sinc
round = _F.round
digamma = psi = _F.digamma
gammaln = _F.lgamma
polygamma = _F.polygamma
multigammaln = _F.mvlgamma
gammainc = _F.igamma
gammaincc = _F.igammac
i0 = _F.i0
logsumexp = _F.logsumexp
softmax = _F.softmax
log_softmax = _F.log_softmax


def _out(r, out):
    if out is not None:
        out.copy_(r)
        return out
    return r


def i1(input, *, out=None):
    """The modified Bessel function of the first kind of order 1."""
    return _out(_call("special_i1", input), out)


def ndtr(input, *, out=None):
    """The standard normal CDF: (1 + erf(input / sqrt(2))) / 2."""
    return _out(_call("erfc", input * (-1 / _math.sqrt(2.0))) * 0.5, out)


def entr(input, *, out=None):
    """-input * log(input): 0 at 0, -inf below 0."""
    if not input.dtype.is_floating_point:
        input = input.to(_F.float32)
    r = _call("xlogy", input, input) * -1.0
    return _out(_call("where", input < 0, float("-inf"), r), out)


def xlog1py(input, other, *, out=None):
    """input * log1p(other), 0 where input is 0 (unless other is NaN)."""
    import torchweb
    if not torchweb.is_tensor(input):
        input = torchweb.tensor(input, device=other.device)
    y = _call("log1p", other)
    r = _call("where", (input == 0) & (other == other), 0.0, input * y)
    return _out(r, out)


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function: sum over k >= 0 of (other + k) ** -input."""
    return _out(_call("special_zeta", input, other), out)


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from ._refused import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("special", "torchweb.special")
