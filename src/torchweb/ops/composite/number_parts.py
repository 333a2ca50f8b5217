"""Integer and floating-point parts: lcm (from the gcd row), frexp (mantissa and exponent) and
ldexp (input * 2**other), written from elementwise rows so the float ones differentiate."""

from collections import namedtuple

from ... import _dtype as D
from ..operands import is_tensor
from ..elementwise import call
from ..registry import define

frexp_t = namedtuple("frexp", ["mantissa", "exponent"])


def _lcm(input, other):
    if not is_tensor(other):
        raise TypeError(f"lcm(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    g = call("gcd", input, other)
    zero = call("eq", g, 0)
    q = call("div_trunc", input, call("where", zero, 1, g))
    return call("where", zero, 0, call("abs", q * other))


def _lcm_(self, other):
    """In-place lcm."""
    return self.copy_(_lcm(self, other))


@define("lcm", "elementwise", inplace=_lcm_, dtypes=("uint8", "int32", "int64"), differentiable=False,
        doc="lcm(input, other, *, out=None) -> Tensor\n\nThe least common multiple of |input| and |other| "
            "(0 where either is 0), for integers.")
def lcm(input, other, *, out=None):
    r = _lcm(input, other)
    return r if out is None else out.copy_(r)


def _times_pow2(v, k):
    """v * 2**k with 2**k in two halves: 2**-128 alone is subnormal, and GPUs flush those to zero."""
    half = call("floor", k * 0.5)
    return v * call("exp2", half) * call("exp2", k - half)


@define("frexp", "elementwise", dtypes="floating",
        doc="frexp(input, *, out=None) -> (mantissa, exponent)\n\ninput = mantissa * 2**exponent with "
            "|mantissa| in [0.5, 1) (0, inf and NaN: mantissa input, exponent 0); exponent is int32.")
def frexp(input, *, out=None):
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.detach()
    a = call("abs", x)
    special = call("logical_or", call("eq", a, 0), call("logical_not", call("isfinite", x)))
    safe = call("where", special, 1.0, a).float()
    e = call("floor", call("log2", safe)) + 1
    # log2 can be off by one next to a power of two: bring |m| into [0.5, 1)
    m = _times_pow2(safe, -e)
    e = call("where", m >= 1, e + 1, call("where", m < 0.5, e - 1, e))
    e = call("where", special, 0.0, e)
    mantissa = _times_pow2(input, -e.to(input.dtype))
    exponent = e.to(D.int32)
    if out is not None:
        out[0].copy_(mantissa)
        out[1].copy_(exponent)
        return frexp_t(*out)
    return frexp_t(mantissa, exponent)


def _ldexp_(self, other):
    """In-place ldexp."""
    return self.mul_(call("exp2", other) if is_tensor(other) else 2.0 ** other)


@define("ldexp", "elementwise", inplace=_ldexp_,
        doc="ldexp(input, other, *, out=None) -> Tensor\n\ninput * 2**other (a float result).")
def ldexp(input, other, *, out=None):
    if not is_tensor(other):
        raise TypeError(f"ldexp(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    r = input * call("exp2", other)
    return r if out is None else out.copy_(r)
