"""Elementwise ops, forward, against PyTorch on the cpu and webgpu devices: unary and binary
ops over broadcast, strided, empty and 0-d shapes, NaN and infinity, Python operators with
scalars (reflected too), in-place forms, clamp, where, nan_to_num."""

import math

import pytest
import torch

import torchweb
from oracle import LAYOUTS, assert_close, check, make, ours, ours_layout

SHAPES = [(), (0,), (1,), (7,), (3, 5), (2, 3, 4), (2, 1, 3, 1, 5), (3, 0, 2)]

# name -> (call on a module, input range). Ranges keep inputs in each op's domain; NaN and
# infinity get their own test below.
UNARY = {
    "neg": (lambda m, x: m.neg(x), (-5, 5)),
    "abs": (lambda m, x: m.abs(x), (-5, 5)),
    "exp": (lambda m, x: m.exp(x), (-10, 10)),
    "log": (lambda m, x: m.log(x), (0.01, 10)),
    "log1p": (lambda m, x: m.log1p(x), (-0.99, 5)),
    "expm1": (lambda m, x: m.expm1(x), (-5, 5)),
    "sqrt": (lambda m, x: m.sqrt(x), (0, 10)),
    "rsqrt": (lambda m, x: m.rsqrt(x), (0.01, 10)),
    "sin": (lambda m, x: m.sin(x), (-10, 10)),
    "cos": (lambda m, x: m.cos(x), (-10, 10)),
    "tanh": (lambda m, x: m.tanh(x), (-5, 5)),
    "sigmoid": (lambda m, x: m.sigmoid(x), (-10, 10)),
    "relu": (lambda m, x: m.relu(x), (-5, 5)),
    "gelu": (lambda m, x: m.nn.functional.gelu(x), (-5, 5)),
    "gelu_tanh": (lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), (-5, 5)),
    "silu": (lambda m, x: m.nn.functional.silu(x), (-5, 5)),
    "square": (lambda m, x: m.square(x), (-5, 5)),
    "reciprocal": (lambda m, x: m.reciprocal(x), (0.1, 5)),
    "sign": (lambda m, x: m.sign(x), (-5, 5)),
    "floor": (lambda m, x: m.floor(x), (-5, 5)),
    "ceil": (lambda m, x: m.ceil(x), (-5, 5)),
    "trunc": (lambda m, x: m.trunc(x), (-5, 5)),
    "round": (lambda m, x: m.round(x), (-5, 5)),
    "erf": (lambda m, x: m.erf(x), (-3, 3)),
}
FLOAT_FUNCS = {"exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
               "gelu", "gelu_tanh", "silu", "reciprocal", "erf"}
# Transcendentals in float32 on a GPU are not correctly rounded (WGSL allows a few ulp, and
# lavapipe's exp/log are within ~2 ulp): 1e-5 relative covers that, 1e-6 absolute near zeros.
TOL = {"rtol": 1e-5, "atol": 1e-6}


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unary_float(device, name, shape):
    fn, (lo, hi) = UNARY[name]
    check(fn, make(shape, low=lo, high=hi), device=device, **TOL)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_unary_strided(device, name, layout):
    fn, (lo, hi) = UNARY[name]
    check(fn, make((4, 6), low=lo, high=hi), device=device, layout=layout, **TOL)


# relu and friends on ints keep the dtype; float functions of ints give the default float;
# gelu, silu, erf and friends refuse integers as PyTorch does
@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
def test_unary_int(device, name, dtype):
    fn, (lo, hi) = UNARY[name]
    lo, hi = max(lo, -5), min(hi, 5)
    if name in ("log", "rsqrt", "reciprocal"):
        lo = 1
    check(fn, make((2, 5), dtype, low=math.ceil(lo), high=math.floor(hi)), device=device, **TOL)


SPECIAL = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e-30, -1e-30, 1e-6, -1e-6,
           0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 20.0, -20.0, 88.5, -88.5, 100.0, -100.0, 1e30, -1e30]


@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values(device, name):
    fn, _ = UNARY[name]
    values = SPECIAL  # sin/cos too: their range reduction is exact up to 3.4e38
    if name == "gelu":
        # PyTorch's CPU gelu gives NaN at +inf (its vectorised erf path), its CUDA kernel and
        # the formula x * Phi(x) give +inf: a CPU quirk we do not copy, so +inf is left out
        values = [v for v in SPECIAL if v != float("inf")]
    check(fn, torch.tensor(values), device=device, **TOL)


SMALL = [sign * m * 10.0 ** e for e in range(-7, 0) for m in (1.0, 2.5, 7.0) for sign in (1, -1)] + [0.3, -0.3, 0.5, -0.5]
SMALL_INPUTS = {
    "expm1": SMALL, "log1p": SMALL, "tanh": SMALL, "sin": SMALL, "erf": SMALL, "silu": SMALL,
    "log": [1 + v for v in SMALL if abs(v) >= 1e-5],   # log near 1: small results
    "exp": [-20.0, -50.0, -80.0, 1e-7, -1e-7], "sigmoid": [-20.0, -50.0, -80.0, 1e-7],
}


@pytest.mark.parametrize("name", SMALL_INPUTS)
def test_unary_small_results_relative(device, name):
    # where results are small, their relative accuracy is what matters (expm1 and log1p exist
    # for it): no absolute slack here. 1e-5 relative is a few float32 ulp; the GPU's own log
    # and exp builtins may not be used where they would cancel (WGSL's log near 1 is only
    # specified to an absolute 2^-21)
    fn, _ = UNARY[name]
    check(fn, torch.tensor(SMALL_INPUTS[name]), device=device, rtol=1e-5, atol=1e-30)


@pytest.mark.parametrize("dtype", [torch.float16], ids=str)
@pytest.mark.parametrize("name", ["neg", "abs", "exp", "log", "sqrt", "sigmoid", "tanh", "relu", "gelu"])
def test_unary_half(device, name, dtype):
    fn, (lo, hi) = UNARY[name]
    x = make((3, 7), dtype, low=lo, high=hi, special=True)
    if name == "gelu":   # PyTorch's vectorised CPU gelu gives NaN at +inf (test_unary_special_values)
        x = torch.where(x == float("inf"), torch.zeros((), dtype=dtype), x)
    # float16 results are rounded from float32, as PyTorch's CPU kernels do: equal to 1 ulp
    check(fn, x, device=device, rtol=1e-3, atol=1e-4)


# -- binary ops -------------------------------------------------------------------------------
BINARY = {
    "add": lambda m, a, b: m.add(a, b),
    "add_alpha": lambda m, a, b: m.add(a, b, alpha=2),
    "sub": lambda m, a, b: m.sub(a, b),
    "sub_alpha": lambda m, a, b: m.sub(a, b, alpha=3),
    "mul": lambda m, a, b: m.mul(a, b),
    "div": lambda m, a, b: m.div(a, b),
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "remainder": lambda m, a, b: m.remainder(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b),
    "pow": lambda m, a, b: m.pow(a, b),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
    "eq": lambda m, a, b: m.eq(a, b),
    "ne": lambda m, a, b: m.ne(a, b),
    "lt": lambda m, a, b: m.lt(a, b),
    "le": lambda m, a, b: m.le(a, b),
    "gt": lambda m, a, b: m.gt(a, b),
    "ge": lambda m, a, b: m.ge(a, b),
    "logical_and": lambda m, a, b: m.logical_and(a, b),
    "logical_or": lambda m, a, b: m.logical_or(a, b),
    "logical_xor": lambda m, a, b: m.logical_xor(a, b),
}
DIVIDES = {"div", "div_trunc", "div_floor", "floor_divide", "remainder", "fmod"}

PAIRS = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (3,)), ((5,), ()), ((), ()),
         ((2, 1, 3, 1, 5), (4, 1, 5)), ((2, 3, 1, 4, 1), (1, 3, 5, 1, 2)), ((0, 3), (1, 3)), ((7, 1), (0,))]


def _binary_inputs(name, sa, sb, dtype):
    if name == "pow":
        if dtype.is_floating_point:
            return make(sa, dtype, low=0.1, high=3), make(sb, dtype, low=-3, high=3)
        return make(sa, dtype, low=-3, high=3), make(sb, dtype, low=0, high=5)
    return make(sa, dtype, low=-6, high=6), make(sb, dtype, low=-6, high=6, nonzero=name in DIVIDES)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_binary(device, name, shapes, dtype):
    a, b = _binary_inputs(name, *shapes, dtype)
    # pow in float32 as exp2(b * log2(a)) loses a little: 2e-6 relative is what GPUs give
    tol = {"rtol": 2e-5, "atol": 1e-5} if name == "pow" else {}
    check(BINARY[name], a, b, device=device, **tol)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_binary_strided(device, name, layout):
    a, b = _binary_inputs(name, (4, 6), (4, 6), torch.float32)
    check(lambda m, x: BINARY[name](m, x, ours_layout(b, device, "transposed") if m is torchweb else b),
          a, device=device, layout=layout, rtol=2e-5)


def test_binary_strided_expanded_operands(device):
    a = make((4, 1, 6))
    b = make((1, 5, 1))
    x, y = ours(a, device), ours(b, device)
    assert_close(x.expand(4, 5, 6)[:, ::2, 1:] * y.expand(4, 5, 6)[:, ::2, 1:],
                 a.expand(4, 5, 6)[:, ::2, 1:] * b.expand(4, 5, 6)[:, ::2, 1:])
    assert_close(x.permute(2, 0, 1) - y.permute(2, 0, 1), a.permute(2, 0, 1) - b.permute(2, 0, 1))


BIN_SPECIAL = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0,
               0.5, -2.5, 1e30, -1e-30]


@pytest.mark.parametrize("name", [n for n in BINARY if n not in ("logical_and", "logical_or", "logical_xor")])
def test_binary_special_values(device, name):
    v = torch.tensor(BIN_SPECIAL)
    tol = {"rtol": 2e-5, "atol": 1e-5} if name == "pow" else {}
    check(BINARY[name], v[:, None], v[None, :], device=device, **tol)


@pytest.mark.parametrize("name", BINARY)
def test_binary_half(device, name):
    a, b = _binary_inputs(name, (3, 5), (5,), torch.float16)
    # add/sub with alpha: PyTorch's CPU kernel rounds alpha * b to half in its scalar tail (the
    # last < 32 elements) but not in its vectorized body, so either answer is PyTorch's: ours is
    # the body's (one rounding), and the tail's differs by the product's half rounding
    atol = 2e-2 if name in ("add_alpha", "sub_alpha") else 1e-3
    check(BINARY[name], a, b, device=device, rtol=1e-3, atol=atol)


INT_DTYPES = [torch.int32, torch.int64, torch.uint8, torch.bool]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_binary_int_dtypes(device, name, dtype):
    a, b = _binary_inputs(name, (4, 5), (5,), dtype)
    if dtype is torch.uint8 and name == "sub_alpha":
        a = a + 20  # stay clear of uint8 wrap-around, which differs in where it saturates
    check(BINARY[name], a, b, device=device)


def test_int_division_negative(device):
    # C-style truncation vs Python-style floor, for every sign combination
    a = torch.tensor([7, -7, 7, -7, 6, -6, 0, 1, -1], dtype=torch.int64)
    b = torch.tensor([2, 2, -2, -2, 3, 3, 5, -5, 5], dtype=torch.int64)
    for fn in (BINARY["div_trunc"], BINARY["div_floor"], BINARY["remainder"], BINARY["fmod"],
               BINARY["div"], lambda m, x, y: x // y, lambda m, x, y: x % y):
        check(fn, a, b, device=device)


def test_pow_cases(device):
    # 0^0, negative bases with integer exponents, fractional exponents of negative bases (NaN)
    base = torch.tensor([0.0, 0.0, -2.0, -2.0, -2.0, -8.0, 2.0, -0.0, -0.0, 1.0, float("nan")])
    exp = torch.tensor([0.0, -1.0, 2.0, 3.0, -3.0, 1 / 3, 0.5, 3.0, -3.0, float("nan"), 0.0])
    check(lambda m, a, b: m.pow(a, b), base, exp, device=device)
    # int pow: negative bases, zero exponents, negative exponents (0 except for 1 and -1)
    ib = torch.tensor([0, 0, -2, -3, 2, 1, -1, -1, 5], dtype=torch.int64)
    ie = torch.tensor([0, 3, 3, 2, -1, -5, -5, -4, 0], dtype=torch.int64)
    check(lambda m, a, b: m.pow(a, b), ib, ie, device=device)
    # scalar exponents and bases
    x = make((5,), low=-3, high=3)
    for e in (2, 3, 0, -1, 0.5, 2.0, -2.5):
        check(lambda m, a: m.pow(a, e), x, device=device, rtol=2e-5)
    xi = make((5,), torch.int64, low=-3, high=3)
    for e in (0, 1, 2, 3, 2.0, 0.5, -1):
        check(lambda m, a: m.pow(a, e), xi, device=device, rtol=2e-5)
    for b in (2, 2.0, -2.0, 0, 0.5):
        check(lambda m, a: m.pow(b, a), x, device=device, rtol=2e-5)
        check(lambda m, a: m.pow(b, a), xi.abs(), device=device, rtol=2e-5)


# -- Python scalars and operators --------------------------------------------------------------
SCALAR_OPS = {
    "add": lambda x, s: x + s, "radd": lambda x, s: s + x,
    "sub": lambda x, s: x - s, "rsub": lambda x, s: s - x,
    "mul": lambda x, s: x * s, "rmul": lambda x, s: s * x,
    "truediv": lambda x, s: x / s, "rtruediv": lambda x, s: s / x,
    "floordiv": lambda x, s: x // s, "rfloordiv": lambda x, s: s // x,
    "mod": lambda x, s: x % s, "rmod": lambda x, s: s % x,
    "pow": lambda x, s: x ** s, "rpow": lambda x, s: s ** x,
    "eq": lambda x, s: x == s, "ne": lambda x, s: x != s, "lt": lambda x, s: x < s,
    "le": lambda x, s: x <= s, "gt": lambda x, s: x > s, "ge": lambda x, s: x >= s,
    "rlt": lambda x, s: s < x, "rge": lambda x, s: s >= x,
}
SCALARS = [2, -3, 2.5, -0.5, True]


@pytest.mark.parametrize("op", SCALAR_OPS)
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32, torch.uint8, torch.bool, torch.float16], ids=str)
def test_scalar_operators(device, op, scalar, dtype):
    fn = SCALAR_OPS[op]
    x = make((2, 3), dtype, low=1, high=4)  # positive: nonzero divisors, real powers
    if op.startswith("r") and op[1:] in ("truediv", "floordiv", "mod", "pow") and dtype is torch.bool:
        x = torch.ones(2, 3, dtype=torch.bool)
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype is torch.float16 else {"rtol": 2e-5}
    check(lambda m, a: fn(a, scalar), x, device=device, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
def test_unary_operators(device, dtype):
    x = make((3, 4), dtype, low=-4, high=4)
    check(lambda m, a: -a, x, device=device)
    check(lambda m, a: abs(a), x, device=device)
    check(lambda m, a: +a, x, device=device)
    check(lambda m, a: ~a, x, device=device)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("other", ["tensor", 3, True], ids=str)
def test_bitwise_operators(device, dtype, other):
    x = make((3, 4), dtype, low=-8, high=8)
    y = make((4,), dtype, low=-8, high=8) if other == "tensor" else other
    for fn in (lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b,
               lambda a, b: b & a, lambda a, b: b | a, lambda a, b: b ^ a):
        if isinstance(y, torch.Tensor):
            check(lambda m, a, b: fn(a, b), x, y, device=device)
        else:
            check(lambda m, a: fn(a, y), x, device=device)


def test_bitwise_refuses_floats(device):
    x = make((3,))
    check(lambda m, a: a & a, x, device=device)
    check(lambda m, a: a | 1, x, device=device)
    check(lambda m, a: ~a, x, device=device)


def test_matmul_operator(device):
    a, b = make((3, 4)), make((4, 2))
    check(lambda m, x, y: x @ y, a, b, device=device)
    check(lambda m, x, y: x @ y, make((4,)), b, device=device)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8], ids=str)
def test_tensor_operators_broadcast(device, dtype):
    a, b = make((2, 1, 3), dtype, low=1, high=5), make((4, 1), dtype, low=1, high=5)
    for fn in (lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
               lambda x, y: x // y, lambda x, y: x % y, lambda x, y: x ** y, lambda x, y: x < y,
               lambda x, y: x == y):
        check(lambda m, x, y: fn(x, y), a, b, device=device, rtol=2e-5)


def test_zero_dim_tensor_operands(device):
    # 0-d tensors mix with dimensioned ones like scalars of their category
    x = make((2, 3), torch.int32, low=1, high=5)
    for z in (torch.tensor(2), torch.tensor(2.5), torch.tensor(True), torch.tensor(3, dtype=torch.uint8)):
        check(lambda m, a, b: a + b, x, z, device=device)
        check(lambda m, a, b: b * a, x, z, device=device)
        check(lambda m, a, b: a / b, x, z, device=device)


# -- in place -------------------------------------------------------------------------------
INPLACE = {
    "iadd": lambda x, y: x.__iadd__(y), "isub": lambda x, y: x.__isub__(y),
    "imul": lambda x, y: x.__imul__(y), "itruediv": lambda x, y: x.__itruediv__(y),
    "ifloordiv": lambda x, y: x.__ifloordiv__(y), "imod": lambda x, y: x.__imod__(y),
    "ipow": lambda x, y: x.__ipow__(y),
    "add_": lambda x, y: x.add_(y, alpha=2), "sub_": lambda x, y: x.sub_(y),
    "mul_": lambda x, y: x.mul_(y), "div_": lambda x, y: x.div_(y),
    "div_floor_": lambda x, y: x.div_(y, rounding_mode="floor"),
    "pow_": lambda x, y: x.pow_(y), "clamp_min_": lambda x, y: x.clamp_min_(y),
    "maximum_": lambda x, y: x.copy_(x.maximum(y)), "copy_": lambda x, y: x.copy_(y),
}


@pytest.mark.parametrize("name", INPLACE)
@pytest.mark.parametrize("other", ["tensor", "broadcast", 2, 1.5], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_inplace(device, name, other, dtype):
    fn = INPLACE[name]
    x = make((3, 4), dtype, low=1, high=4)
    y = {"tensor": make((3, 4), dtype, low=1, high=3), "broadcast": make((4,), dtype, low=1, high=3)}.get(other, other)

    def run(m, a, *b):
        alias = a[:]        # the same storage: in-place ops write through to it
        r = fn(a, b[0] if b else y)
        assert r is a
        return alias

    if isinstance(y, torch.Tensor):
        check(run, x, y, device=device, rtol=2e-5)
    else:
        check(run, x, device=device, rtol=2e-5)


def test_inplace_through_view_changes_base(device):
    base = make((4, 6))
    for fn in (lambda v: v.__iadd__(1), lambda v: v.mul_(-2), lambda v: v.clamp_(-0.5, 0.5),
               lambda v: v.fill_(7), lambda v: v.zero_(), lambda v: v.exp_(), lambda v: v.__ipow__(2)):
        def run(m, b):
            b = b.clone()
            fn(b[1:, ::2])
            fn(b.t()[0])
            return b
        check(run, base, device=device)


@pytest.mark.parametrize("name", ["exp_", "log_", "sqrt_", "neg_", "abs_", "sigmoid_", "tanh_",
                                  "relu_", "floor_", "round_", "sin_", "square_"])
def test_unary_inplace(device, name):
    x = make((3, 5), low=0.1, high=4)
    check(lambda m, a: (getattr(a, name)(), a)[1], x, device=device, **TOL)


def test_inplace_int_with_float_refused(device):
    x = make((3,), torch.int64)
    check(lambda m, a: a.__iadd__(1.5), x, device=device)
    check(lambda m, a: a.__itruediv__(2), x, device=device)
    check(lambda m, a: a.add_(torch.ones(3) if m is torch else m.ones(3, device=a.device)), x, device=device)


# -- clamp, where, nan_to_num, predicates -------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16], ids=str)
def test_clamp(device, dtype):
    x = make((4, 5), dtype, low=-5, high=5, special=dtype.is_floating_point)
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype is torch.float16 else {}
    check(lambda m, a: m.clamp(a, -2, 3), x, device=device, **tol)
    check(lambda m, a: m.clamp(a, min=-1), x, device=device, **tol)
    check(lambda m, a: m.clamp(a, max=1), x, device=device, **tol)
    check(lambda m, a: a.clamp(min=-1.5, max=2.5), x, device=device, **tol)
    check(lambda m, a: m.clamp(a, 3, -2), x, device=device, **tol)        # min > max: all max
    check(lambda m, a: m.clip(a, -1, 1), x, device=device, **tol)
    check(lambda m, a: m.clamp(a), x, device=device)                      # neither: refused
    lo, hi = make((5,), dtype, low=-4, high=0), make((4, 1), dtype, low=0, high=4)
    check(lambda m, a, l, h: m.clamp(a, l, h), x, lo, hi, device=device, **tol)
    check(lambda m, a, l: m.clamp(a, min=l), x, lo, device=device, **tol)
    check(lambda m, a, h: m.clamp(a, max=h), x, hi, device=device, **tol)
    check(lambda m, a: m.clamp(a, min=float("nan")), x, device=device, **tol)


def test_clamp_strided(device):
    x = make((4, 6), special=True)
    for layout in LAYOUTS:
        check(lambda m, a: a.clamp(-1, 1), x, device=device, layout=layout)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (3, 4)),
                                    ((2, 1, 3, 1, 2), (4, 1, 2), (3, 1, 1)), ((), (3,), ()), ((0, 2), (2,), ())],
                         ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_where(device, shapes, dtype):
    c, a, b = make(shapes[0], torch.bool), make(shapes[1], dtype), make(shapes[2], dtype)
    check(lambda m, c, a, b: m.where(c, a, b), c, a, b, device=device)
    check(lambda m, c, a: m.where(c, a, 0), c, a, device=device)
    check(lambda m, c, a: m.where(c, 1.5, a), c, a, device=device)
    check(lambda m, c, a, b: a.where(c, b), c, a, b, device=device)


def test_where_mixed_dtypes(device):
    c = make((6,), torch.bool)
    check(lambda m, c, a, b: m.where(c, a, b), c, make((6,), torch.int32), make((6,), torch.float32), device=device)
    check(lambda m, c, a, b: m.where(c, a, b), c, make((6,), torch.uint8), make((6,), torch.int64), device=device)
    check(lambda m, c: m.where(c, 1, 0), c, device=device)
    check(lambda m, c, a: m.where(c, a, float("nan")), c, make((6,), special=True), device=device)
    check(lambda m, c, a: m.where(c.int(), a, a), c, make((6,)), device=device)  # refused: not bool


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_nan_to_num(device, dtype):
    x = torch.tensor([float("nan"), float("inf"), float("-inf"), 1.5, -0.0, 3.0], dtype=dtype)
    check(lambda m, a: m.nan_to_num(a), x, device=device)
    check(lambda m, a: m.nan_to_num(a, nan=2.0, posinf=10.0, neginf=-10.0), x, device=device)
    check(lambda m, a: a.nan_to_num(posinf=1.0), x, device=device)
    check(lambda m, a: m.nan_to_num(a, neginf=0.0), x.reshape(2, 3).t(), device=device)
    check(lambda m, a: m.nan_to_num(a), make((2, 3), torch.int64), device=device)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool], ids=str)
def test_predicates(device, name, dtype):
    x = make((4, 6), dtype, special=True)
    check(lambda m, a: getattr(m, name)(a), x, device=device)
    check(lambda m, a: getattr(m, name)(a), x, device=device, layout="transposed")


@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float32), (torch.float32, torch.int64),
                                    (torch.bool, torch.int32), (torch.uint8, torch.float16)], ids=str)
def test_logical(device, dtypes):
    a = make((3, 4), dtypes[0], low=-1, high=1, special=dtypes[0].is_floating_point)
    b = make((4,), dtypes[1], low=-1, high=1)
    for name in ("logical_and", "logical_or", "logical_xor"):
        check(lambda m, x, y: getattr(m, name)(x, y), a, b, device=device)
    check(lambda m, x: m.logical_not(x), a, device=device)


@pytest.mark.parametrize("dtypes", [(torch.float32, torch.int64), (torch.int32, torch.int64),
                                    (torch.uint8, torch.int32), (torch.bool, torch.float32),
                                    (torch.float16, torch.float32), (torch.uint8, torch.bool)], ids=str)
def test_comparisons_mixed_dtypes(device, dtypes):
    a = make((3, 4), dtypes[0], low=-2, high=2)
    b = make((4,), dtypes[1], low=-2, high=2)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        check(lambda m, x, y: getattr(m, name)(x, y), a, b, device=device)


def test_comparisons_nan(device):
    v = torch.tensor([float("nan"), 1.0, float("inf"), float("-inf"), 0.0, -0.0])
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        check(lambda m, x, y: getattr(m, name)(x, y), v[:, None], v[None, :], device=device)


def test_function_out_argument(device):
    a, b = make((3, 4)), make((4,))

    def run(m, x, y):
        out = m.empty(3, 4, device=x.device) if m is torchweb else torch.empty(3, 4)
        r = m.add(x, y, out=out)
        assert r is out
        return out
    check(run, a, b, device=device)


def test_package_entry_apply(device):
    """ops.elementwise.apply, the package's one entry: a result, a result with its node, or out=
    written (and refused under autograd with PyTorch's message)."""
    from torchweb.ops import elementwise as EW
    a, b = make((3, 4)), make((4,))
    x, y = ours(a, device), ours(b, device)
    assert_close(EW.apply("mul", (x, y)), torch.mul(a, b))
    out = torchweb.empty(3, 4, device=device)
    assert EW.apply("mul", (x, y), out=out) is out
    assert_close(out, torch.mul(a, b))
    xg = ours(a, device).requires_grad_()
    r = EW.apply("mul", (xg, 2.0))
    r.sum().backward()
    at = a.clone().requires_grad_()
    torch.mul(at, 2.0).sum().backward()
    assert r.grad_fn.name() == torch.mul(at, 2.0).grad_fn.name()
    assert_close(xg.grad, at.grad)
    with pytest.raises(RuntimeError) as theirs:
        torch.mul(at, 2.0, out=torch.empty(3, 4))
    with pytest.raises(RuntimeError) as mine:
        EW.apply("mul", (xg, 2.0), out=torchweb.empty(3, 4, device=device))
    assert str(mine.value) == str(theirs.value)
