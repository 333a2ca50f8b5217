"""gcd, lcm, the bit shifts (functions, methods, in-place forms, << >> operators), fix, frexp and
ldexp against PyTorch, on both devices."""

import pytest
import torch

import torchweb
from oracle import assert_close, check, make, ours
from test_autograd_ops import run_case

INT_DTYPES = (torch.int64, torch.int32, torch.uint8)


def _pair(dt):
    if dt is torch.uint8:
        return torch.tensor([1, 100, 5, 3, 7, 0, 9, 12, 255, 0]), torch.tensor([0, 1, 7, 8, 31, 3, 33, 64, 2, 0])
    return (torch.tensor([1, -8, 5, 3, -7, 0, 9, -12, 1000, 0]),
            torch.tensor([0, 1, 3, 2, -1, 3, 4, 64, 20, 0]))


SHIFTS = {
    "lshift": lambda m, a, b: m.bitwise_left_shift(a, b),
    "rshift": lambda m, a, b: m.bitwise_right_shift(a, b),
    "lshift_op": lambda m, a, b: a << b,
    "rshift_op": lambda m, a, b: a >> b,
    "lshift_scalar": lambda m, a, b: a.bitwise_left_shift(3),
    "rshift_scalar": lambda m, a, b: m.bitwise_right_shift(a, 2),
    "rlshift": lambda m, a, b: 3 << b.clamp(0, 20),
    "rrshift": lambda m, a, b: 1000 >> b,
    "scalar_input": lambda m, a, b: m.bitwise_left_shift(2, b.clamp(0, 20)),
    "inplace": lambda m, a, b: a.clone().bitwise_right_shift_(b),
    "inplace_op": lambda m, a, b: _ishift(a.clone(), b),
    "gcd": lambda m, a, b: m.gcd(a, b),
    "lcm": lambda m, a, b: m.lcm(a, b),
    "gcd_method": lambda m, a, b: a.gcd(b.flip(0)),
    "gcd_": lambda m, a, b: a.clone().gcd_(b),
    "lcm_": lambda m, a, b: a.clone().lcm_(b),
    "gcd_scalar": lambda m, a, b: m.gcd(a, 6),
}


def _ishift(a, b):
    a <<= b.clamp(0, 3)
    a >>= 1
    return a


@pytest.mark.parametrize("name", SHIFTS)
def test_integer_ops(device, name):
    for dt in INT_DTYPES:
        a, b = _pair(dt)
        check(SHIFTS[name], a.to(dt), b.to(dt), device=device)
    a, b = _pair(torch.int64)
    check(SHIFTS[name], a.to(torch.uint8), b, device=device)            # promotion
    check(SHIFTS[name], a.float(), b, device=device)                    # float: refused
    check(SHIFTS[name], a > 0, b > 0, device=device)                    # bool: refused
    check(SHIFTS[name], a[:0], b[:0], device=device)
    check(SHIFTS[name], a.reshape(2, 5).t(), b.reshape(2, 5).t(), device=device)


def test_wide_int64_shift(device):
    a, b = torch.tensor([1, -8, 3]), torch.tensor([31, 32, 40])
    if device == "cpu":
        check(lambda m, x, y: x << y, a, b, device=device)
    else:        # int64 holds 32 bits on the GPU: a result past them is refused, never wrapped
        with pytest.raises(torchweb.webgpu.Int64RangeError):
            (ours(a, device) << ours(b, device)).tolist()
    check(lambda m, x, y: x << y, torch.tensor([1, -8, 3]), torch.tensor([30, 27, 29]), device=device)


def test_fix(device):
    x = make((3, 4), special=True)
    check(lambda m, t: m.fix(t), x, device=device)
    check(lambda m, t: t.fix(), x, device=device)
    check(lambda m, t: t.clone().fix_(), x, device=device)
    check(lambda m, t: m.fix_(t.clone()), x, device=device)
    check(lambda m, t: m.fix(t), make((3, 4), dtype=torch.int64), device=device)
    run_case(device, lambda T, t: T.fix(t), lambda: (make((3, 4)),))


def test_frexp(device):
    x = torch.tensor([0.0, 1, -3.5, float("inf"), float("-inf"), float("nan"), 1e-30, 4.0, 0.75, 1024.0,
                      -0.0, 3e38, 1.5e-38, 0.1, -7.0, 1 - 2 ** -24])
    check(lambda m, t: m.frexp(t), x, device=device)
    check(lambda m, t: t.frexp(), make((3, 5), low=-1e6, high=1e6), device=device)
    check(lambda m, t: m.frexp(t), make((3, 4), dtype=torch.int64), device=device)
    check(lambda m, t: m.frexp(t), torch.zeros(2, 0), device=device)
    check(lambda m, t: m.frexp(t).mantissa, torch.tensor(6.0), device=device)
    r = torchweb.frexp(ours(x, device))
    assert type(r).__name__ == "frexp" and r._fields == ("mantissa", "exponent")
    m, e = ours(torch.zeros(16), device), ours(torch.zeros(16, dtype=torch.int32), device)
    got = torchweb.frexp(ours(x, device), out=(m, e))
    assert got[0] is m and got[1] is e
    assert_close(e, torch.frexp(x).exponent)
    run_case(device, lambda T, t: T.frexp(t).mantissa, lambda: (make((3, 4)),))


def test_frexp_half(device):
    x = torch.tensor([0.0, 1, -3.5, 4.0, 0.75, 1000.0, 0.1], dtype=torch.float16)
    check(lambda m, t: m.frexp(t), x, device=device)


LDEXP = {
    "int_exp": lambda m, a, b: m.ldexp(a, b),
    "float_exp": lambda m, a, b: m.ldexp(a, b.float()),
    "method": lambda m, a, b: a.ldexp(b),
    "int_input": lambda m, a, b: m.ldexp(a.round().long(), b),
    "inplace": lambda m, a, b: a.clone().ldexp_(b),
    "inplace_fn": lambda m, a, b: m.ldexp_(a.clone(), b),
    "broadcast": lambda m, a, b: m.ldexp(a, b[0]),
    "scalar_exp": lambda m, a, b: m.ldexp(a, 2),
}


@pytest.mark.parametrize("name", LDEXP)
def test_ldexp(device, name):
    a, b = make((3, 4)), make((3, 4), dtype=torch.int64, low=-5, high=5)
    check(LDEXP[name], a, b, device=device)
    if name in ("int_exp", "float_exp", "method", "broadcast"):
        # PyTorch 2.13's ldexp backward takes 2**other in other's integer dtype, so a negative integer
        # exponent gets gradient 0 there: integer exponents are compared where they are >= 0
        e = b.float() if name == "float_exp" else b.clamp(min=0)
        run_case(device, lambda T, x: LDEXP[name](T, x, T.tensor(e.tolist()).to(x.device)), lambda: (make((3, 4)),))
        run_case(device, lambda T, x: T.ldexp(x, T.tensor(b.tolist(), dtype=T.float32).to(x.device)),
                 lambda: (make((3, 4)),))


IGAMMA = {
    "igamma": lambda m, a, x: m.igamma(a, x),
    "igammac": lambda m, a, x: m.igammac(a, x),
    "method": lambda m, a, x: a.igamma(x),
    "method_c": lambda m, a, x: a.igammac(x),
    "inplace": lambda m, a, x: a.clone().igamma_(x),
    "inplace_c": lambda m, a, x: a.clone().igammac_(x),
    "gammainc": lambda m, a, x: m.special.gammainc(a, x),
    "gammaincc": lambda m, a, x: m.special.gammaincc(a, x),
    "broadcast": lambda m, a, x: m.igamma(a[:1], x),
    "int": lambda m, a, x: m.igamma(a[:8].round().long(), x[:8].round().long()),
}


@pytest.mark.parametrize("name", IGAMMA)
def test_igamma(device, name):
    a = torch.tensor([0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 0.1, 3.0, 0.0, 0.0, -1.0, float("inf"), 2.0, 7.5, 15.0,
                      1.0, float("nan"), 4.0])
    x = torch.tensor([0.3, 2.0, 2.5, 1.0, 12.0, 25.0, 5.0, 0.0, 1.0, 0.0, 1.0, 3.0, float("inf"), 7.0, 3.0,
                      30.0, 1.0, -2.0])
    check(IGAMMA[name], a, x, device=device, rtol=1e-4, atol=1e-6)
    check(IGAMMA[name], make((3, 4), low=0.1, high=12), make((3, 4), low=0.01, high=20), device=device,
          rtol=1e-4, atol=1e-6)


def test_igamma_backward(device):
    from test_autograd_ops import NoGrad
    for fn in ("igamma", "igammac"):
        run_case(device, lambda T, a, x: getattr(T, fn)(a, x),
                 lambda: (NoGrad(make((3, 4), low=0.5, high=8)), make((3, 4), low=0.1, high=10)), rtol=1e-3)


def test_igamma_has_no_derivative_in_a(device):
    for fn in ("igamma", "igammac"):
        a = torch.tensor([1.5, 2.0], requires_grad=True)
        with pytest.raises(NotImplementedError):
            getattr(torch, fn)(a, torch.tensor([1.0, 3.0])).sum().backward()
        b = ours(a.detach(), device, requires_grad=True)
        with pytest.raises(NotImplementedError, match=fn):
            getattr(torchweb, fn)(b, ours(torch.tensor([1.0, 3.0]), device)).sum().backward()


def test_zeta_gradient_in_q(device):
    from test_autograd_ops import NoGrad
    run_case(device, lambda T, s, q: T.special.zeta(s, q),
             lambda: (NoGrad(make((3, 4), low=1.5, high=4)), make((3, 4), low=0.5, high=3)), rtol=1e-3)
    run_case(device, lambda T, q: T.special.zeta(2.5, q), lambda: (make((5,), low=0.5, high=3),), rtol=1e-3)
    s = ours(torch.tensor([2.5]), device, requires_grad=True)
    with pytest.raises(NotImplementedError):
        torchweb.special.zeta(s, ours(torch.tensor([1.5]), device)).sum().backward()


def test_polygamma_takes_a_one_element_integer_tensor_as_n(device):
    x = make((4,), low=0.5, high=3)
    check(lambda m, t: m.polygamma(m.tensor(1), t), x, device=device, rtol=1e-4)
    check(lambda m, t: t.polygamma(m.tensor(2)), x, device=device, rtol=1e-4)
    check(lambda m, t: m.polygamma(m.tensor(1.5), t), x, device=device)
    check(lambda m, t: m.polygamma(m.tensor([1, 2]), t), x, device=device)
