"""torch.special: PyTorch's names for the special functions torchweb has (most are the torch.*
ops under another name; ndtr, entr, xlog1py and zeta are composed or rows of their own)."""

import math as _math

from . import _functions as _F
from .ops.elementwise import call as _call
from . import _dtype as D
from .autograd.grad_mode import no_grad
from ._creation import tensor
from ._is_tensor import is_tensor
from .ops.out_arg import result_or_out as _result_or_out

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


def i1(input, *, out=None):
    """The modified Bessel function of the first kind of order 1."""
    return _result_or_out(_call("special_i1", input), out, "i1")


def ndtr(input, *, out=None):
    """The standard normal CDF: (1 + erf(input / sqrt(2))) / 2."""
    return _result_or_out(_call("erfc", input * (-1 / _math.sqrt(2.0))) * 0.5, out, "ndtr")


def entr(input, *, out=None):
    """-input * log(input): 0 at 0, -inf below 0."""
    if not input.dtype.is_floating_point:
        input = input.to(_F.float32)
    r = _call("xlogy", input, input) * -1.0
    return _result_or_out(_call("where", input < 0, float("-inf"), r), out, "entr")


def xlog1py(input, other, *, out=None):
    """input * log1p(other), 0 where input is 0 (unless other is NaN)."""
    if not is_tensor(input):
        input = tensor(input, device=other.device)
    y = _call("log1p", other)
    r = _call("where", (input == 0) & (other == other), 0.0, input * y)
    return _result_or_out(r, out, "xlog1py")


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function: sum over k >= 0 of (other + k) ** -input."""
    return _result_or_out(_call("special_zeta", input, other), out, "zeta")


# -- the Cephes-derived functions (rows special_<name> of ops/elementwise/table.py) -------------
def _no_half(name, *operands):
    """PyTorch has no float16 kernel for most of them (i0e and i1e have one)."""
    if D.result_type(*operands) is D.float16:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Half'")


def _differentiable(name, doc):
    def fn(input, *, out=None):
        if name not in ("i0e", "i1e"):
            _no_half(name, input)
        return _result_or_out(_call("special_" + name, input), out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}(input, *, out=None) -> Tensor\n\n{doc}"
    return fn


def _plain(name, doc):
    """PyTorch computes these without a gradient: the result never requires grad."""
    def fn(input, *, out=None):
        _no_half(name, input)
        with no_grad():
            return _result_or_out(_call("special_" + name, input), out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}(input, *, out=None) -> Tensor\n\n{doc}"
    return fn


def _polynomial(name, doc):
    def fn(input, n, *, out=None):
        if not is_tensor(input):
            if not is_tensor(n):
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
            input = tensor(input, device=n.device)
        _no_half(name, input, n)
        with no_grad():
            return _result_or_out(_call("special_" + name, input, n), out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}(input, n, *, out=None) -> Tensor\n\n{doc} n is truncated to an integer; n < 0 gives 0."
    return fn


i0e = _differentiable("i0e", "exp(-|input|) i0(input): the exponentially scaled modified Bessel function of "
                             "the first kind of order 0.")
i1e = _differentiable("i1e", "exp(-|input|) i1(input): the exponentially scaled modified Bessel function of "
                             "the first kind of order 1.")
erfcx = _differentiable("erfcx", "exp(input ** 2) erfc(input), the scaled complementary error function.")
ndtri = _differentiable("ndtri", "The inverse of ndtr: the x at which the standard normal CDF is input.")
log_ndtr = _differentiable("log_ndtr", "log(ndtr(input)), accurate far into the lower tail.")
modified_bessel_i0 = _plain("modified_bessel_i0", "The modified Bessel function of the first kind of order 0.")
modified_bessel_i1 = _plain("modified_bessel_i1", "The modified Bessel function of the first kind of order 1.")
modified_bessel_k0 = _plain("modified_bessel_k0", "The modified Bessel function of the second kind of order 0 "
                                                  "(inf at 0, NaN below).")
modified_bessel_k1 = _plain("modified_bessel_k1", "The modified Bessel function of the second kind of order 1 "
                                                  "(inf at 0, NaN below).")
scaled_modified_bessel_k0 = _plain("scaled_modified_bessel_k0", "exp(input) modified_bessel_k0(input).")
scaled_modified_bessel_k1 = _plain("scaled_modified_bessel_k1", "exp(input) modified_bessel_k1(input).")
bessel_j0 = _plain("bessel_j0", "The Bessel function of the first kind of order 0.")
bessel_j1 = _plain("bessel_j1", "The Bessel function of the first kind of order 1.")
bessel_y0 = _plain("bessel_y0", "The Bessel function of the second kind of order 0 (-inf at 0, NaN below).")
bessel_y1 = _plain("bessel_y1", "The Bessel function of the second kind of order 1 (-inf at 0, NaN below).")
spherical_bessel_j0 = _plain("spherical_bessel_j0", "The spherical Bessel function of the first kind of order 0, "
                                                    "sin(input) / input.")
airy_ai = _plain("airy_ai", "The Airy function Ai.")
chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "The Chebyshev polynomial of the first kind T_n.")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "The Chebyshev polynomial of the second kind U_n.")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", "The Chebyshev polynomial of the third kind V_n.")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", "The Chebyshev polynomial of the fourth kind W_n.")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", "T_n(2 input - 1).")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", "U_n(2 input - 1).")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", "V_n(2 input - 1).")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", "W_n(2 input - 1).")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "The physicists' Hermite polynomial H_n (NaN past "
                                                           "n = 128, as PyTorch for float32).")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", "The probabilists' Hermite polynomial He_n (NaN past "
                                                             "n = 128, as PyTorch for float32).")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "The Laguerre polynomial L_n.")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "The Legendre polynomial P_n.")


# the argument descriptions torch.special's docstrings are formatted with (torch/_torch_docs.py)
common_args = {
    "input": "input (Tensor): the input tensor.",
    "generator": "generator (torch.Generator, optional): a pseudorandom number generator for sampling",
    "out": "out (Tensor, optional): the output tensor.",
    "memory_format": "memory_format (torch.memory_format, optional): the desired memory format of returned "
                     "tensor. Default: torch.preserve_format.",
}
multi_dim_common = dict(common_args, **{
    "dtype": "dtype (torch.dtype, optional): the desired data type of returned tensor. If specified, the input "
             "tensor is casted to dtype before the operation is performed. Default: None.",
    "keepdim": "keepdim (bool): whether the output tensor has dim retained or not.",
    "opt_keepdim": "\n    keepdim (bool, optional): whether the output tensor has dim retained or not. Default: False.\n",
    "dim": "dim (int or tuple of ints): the dimension or dimensions to reduce.",
    "keepdim_details": "\nIf keepdim is True, the output tensor is of the same size as input except in the "
                       "dimension(s) dim where it is of size 1. Otherwise, dim is squeezed.\n",
    "opt_dim": "\n    dim (int or tuple of ints, optional): the dimension or dimensions to reduce.\n",
    "opt_dim_all_reduce": "\n    dim (int or tuple of ints, optional): the dimension or dimensions to reduce. If None, "
                          "all dimensions are reduced.\n",
})


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from ._refused import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("special", "torchweb.special")
