"""Record test cases from real PyTorch (on the host) for the browser tier to replay in the page.

    python tests/browser/record_cases.py        # writes tests/browser/cases.json

The case format (read by replay.py):
  {"id", "op" (dotted path on torch, or a Tensor method name), "style": "function" | "method"
   | "getitem", "inputs": [{"data": nested list, "shape", "dtype"} | {"gen": "arange", "shape",
   "dtype", optional "then": [[method, args]] (views applied first)}], "args", "kwargs", "tol": [rtol, atol], then either "expected" (one output, or
   {"tuple": [outputs]}), or "raises": exception class name; optional "grad": {"weights": [per
   float output], "grads": [per input, null where none]}, "strides" (view ops), "check": "sum"}
  Argument encoding: {"tensor": i} is inputs[i]; {"float": "nan"|"inf"|"-inf"}, {"tuple": [...]},
  {"slice": [start, stop, step]}, {"dtype": name}, {"ellipsis": true}; plain JSON otherwise.
  Tensor values: NaN and infinities as the strings "nan", "inf", "-inf".
A grad case runs loss = sum((output_k * weights_k).sum()) and compares every leaf's .grad.
"""

import importlib.util
import json
import warnings
import math
import os
import random
import struct
import sys
import types

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
rng = random.Random(20261121)
F32, I64, BOOL, I32 = torch.float32, torch.int64, torch.bool, torch.int32

DEFAULT_TOL = (1e-5, 1e-6)
TRANSCENDENTAL_TOL = (1e-4, 1e-5)   # WGSL allows several ulp for exp/log; sin/cos are our own polynomials
REDUCE_TOL = (1e-4, 1e-5)
GRAD_TOL = (1e-4, 1e-5)


# -- inputs ----------------------------------------------------------------------------------
def _numel(shape):
    return math.prod(shape)


def rand(*shape, lo=-2.0, hi=2.0, dtype=F32, special=()):
    """Short decimals (compact JSON, exact same float32 on both sides); special: values
    (nan/inf...) written over the first elements."""
    n = _numel(shape)
    if dtype == BOOL:
        flat = [rng.random() < 0.5 for _ in range(n)]
    elif dtype in (I64, I32):
        flat = [rng.randint(int(lo), int(hi)) for _ in range(n)]
    else:
        flat = [round(rng.uniform(lo, hi), 2) for _ in range(n)]
    if special:
        flat[:len(special)] = special[:n]
        rng.shuffle(flat)
    return torch.tensor(flat, dtype=dtype).reshape(shape)


def distinct(*shape, scale=0.25):
    """Values without ties (max/min/argmax indices and their gradients are unambiguous)."""
    n = _numel(shape)
    flat = [(k - n // 2) * scale for k in range(n)]
    rng.shuffle(flat)
    return torch.tensor(flat, dtype=F32).reshape(shape)


def positive(*shape, lo=0.1, hi=3.0):
    return rand(*shape, lo=lo, hi=hi)


NAN, INF = float("nan"), float("inf")
SPECIAL = (NAN, INF, -INF, 0.0)


class Gen:
    """An input the page builds itself (torch.arange): large inputs without large JSON."""

    def __init__(self, n, shape=None, dtype=F32):
        self.n, self.shape, self.dtype = n, list(shape or [n]), dtype
        self.tensor = torch.arange(n, dtype=dtype).reshape(self.shape)


class Viewed:
    """An input that reaches the op as a view of a recorded base tensor (non-contiguous
    inputs): steps are (method name, *args), applied in order on both sides. Gradients are
    the base's."""

    def __init__(self, base, *steps):
        self.base, self.steps = base, [(s[0], list(s[1:])) for s in steps]


# -- specs -----------------------------------------------------------------------------------
SPECS = []


def case(name, op, *args, style="function", kwargs=None, grad=False, tol=None, strides=False,
         raises=None, check=None, int64_past_int32=False):
    """int64_past_int32: PyTorch's int64 result leaves int32, which the webgpu device refuses
    with Int64RangeError (a documented deviation: WebGPU has no 64-bit integers)."""
    SPECS.append(dict(name=name, op=op, args=list(args), kwargs=kwargs or {}, grad=grad,
                      tol=tol, strides=strides, raises=raises, check=check, style=style,
                      int64_past_int32=int64_past_int32))


def method(name, op, *args, **kw):
    case(name, op, *args, style="method", **kw)


# Elementwise binary ops, broadcasting and type promotion.
def binary_specs():
    a, b = rand(2, 3), rand(3)
    case("add/bcast", "add", a, b, grad=True)
    case("add/bcast2", "add", rand(4, 1, 3), rand(1, 5, 1), grad=True)
    case("add/scalar", "add", rand(2, 3), 1.5, grad=True)
    case("add/alpha", "add", rand(2, 3), rand(2, 3), kwargs={"alpha": 2.5}, grad=True)
    case("add/int", "add", rand(5, lo=-9, hi=9, dtype=I64), rand(5, lo=-9, hi=9, dtype=I64))
    case("add/int_float_promote", "add", rand(2, 2, lo=-5, hi=5, dtype=I64), rand(2, 2))
    case("add/0d", "add", rand(), rand(3, 2), grad=True)
    case("add/0d_0d", "add", rand(), rand(), grad=True)
    case("add/empty", "add", rand(0, 3), rand(3))
    case("add/special", "add", rand(8, special=SPECIAL), rand(8, special=(INF, NAN, INF)))
    case("add/bool_promote", "add", rand(4, dtype=BOOL), rand(4, dtype=BOOL))
    case("add/5d", "add", rand(2, 1, 2, 1, 3), rand(3, 1, 2, 1), grad=True)
    case("sub/bcast", "sub", rand(3, 1), rand(1, 4), grad=True)
    case("sub/alpha", "sub", rand(2, 3), rand(3), kwargs={"alpha": -0.5}, grad=True)
    case("sub/int", "sub", rand(6, lo=-9, hi=9, dtype=I64), 3)
    case("sub/rsub_method", "__rsub__", rand(2, 2), 1.0, style="method", grad=True)
    case("mul/bcast", "mul", rand(2, 3, 4), rand(3, 1), grad=True)
    case("mul/scalar", "mul", rand(3, 2), -2.0, grad=True)
    case("mul/int", "mul", rand(5, lo=-9, hi=9, dtype=I64), rand(5, lo=-9, hi=9, dtype=I64))
    case("mul/int_by_float_scalar", "mul", rand(4, lo=-9, hi=9, dtype=I64), 0.5)
    case("mul/special", "mul", rand(6, special=(INF, 0.0, NAN)), rand(6, special=(0.0, INF)))
    case("div/bcast", "div", rand(2, 3), positive(3), grad=True)
    case("div/by_zero", "div", torch.tensor([1.0, -1.0, 0.0, 2.0]), torch.tensor([0.0, 0.0, 0.0, -0.0]))
    case("div/int_true", "div", rand(6, lo=-9, hi=9, dtype=I64), torch.tensor([2, -3, 4, 5, -2, 7]))
    case("div/trunc", "div", rand(8, lo=-9, hi=9), rand(8, lo=0.5, hi=3.0), kwargs={"rounding_mode": "trunc"})
    case("div/floor", "div", rand(8, lo=-9, hi=9), rand(8, lo=-3.0, hi=-0.5), kwargs={"rounding_mode": "floor"})
    case("div/floor_int", "div", torch.tensor([7, -7, 7, -7, 0]), torch.tensor([2, 2, -2, -2, 3]),
         kwargs={"rounding_mode": "floor"})
    case("div/trunc_int", "div", torch.tensor([7, -7, 7, -7, 0]), torch.tensor([2, 2, -2, -2, 3]),
         kwargs={"rounding_mode": "trunc"})
    case("div/scalar", "div", rand(2, 3), 4.0, grad=True)
    case("pow/tensor_tensor", "pow", positive(2, 3), rand(2, 3), grad=True, tol=TRANSCENDENTAL_TOL)
    case("pow/square", "pow", rand(2, 3), 2, grad=True)
    case("pow/sqrt", "pow", positive(4), 0.5, grad=True, tol=TRANSCENDENTAL_TOL)
    case("pow/neg_base_int_exp", "pow", torch.tensor([-2.0, -1.5, 3.0, -0.5]), 3.0, grad=True)
    case("pow/reciprocal", "pow", positive(5), -1.0, grad=True, tol=TRANSCENDENTAL_TOL)
    case("pow/neg_base_frac", "pow", torch.tensor([-2.0, 4.0, 0.0]), 0.5)
    case("pow/special", "pow", torch.tensor([0.0, INF, NAN, 1.0, -INF, 2.0]), torch.tensor([0.0, 0.0, 0.0, NAN, 2.0, -INF]))
    case("pow/int", "pow", torch.tensor([2, -3, 4, 0]), 3)
    case("pow/scalar_base", "pow", 2.0, rand(4), grad=True, tol=TRANSCENDENTAL_TOL)
    case("minimum/bcast", "minimum", distinct(3, 4), distinct(4), grad=True)
    case("maximum/bcast", "maximum", distinct(2, 3), distinct(2, 1), grad=True)
    case("maximum/nan", "maximum", torch.tensor([NAN, 1.0, -INF, 2.0]), torch.tensor([0.0, NAN, 1.0, INF]))
    case("minimum/nan", "minimum", torch.tensor([NAN, 1.0, -INF, 2.0]), torch.tensor([0.0, NAN, 1.0, INF]))
    case("maximum/int", "maximum", rand(5, lo=-9, hi=9, dtype=I64), rand(5, lo=-9, hi=9, dtype=I64))


def compare_specs():
    a, b = rand(3, 4, lo=-2, hi=2), rand(4, lo=-2, hi=2)
    b_eq = a[1].clone()  # some equal elements
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        case(f"{op}/bcast", op, a, b_eq)
        case(f"{op}/scalar", op, rand(5), 0.5)
    case("eq/nan", "eq", torch.tensor([NAN, 1.0, INF]), torch.tensor([NAN, 1.0, INF]))
    case("lt/special", "lt", torch.tensor([NAN, -INF, 1.0, INF]), torch.tensor([0.0, 0.0, NAN, INF]))
    case("ne/int", "ne", rand(6, lo=-2, hi=2, dtype=I64), rand(6, lo=-2, hi=2, dtype=I64))
    case("gt/int_float", "gt", rand(6, lo=-3, hi=3, dtype=I64), rand(6))
    for op in ("logical_and", "logical_or", "logical_xor"):
        case(f"{op}/bool", op, rand(2, 3, dtype=BOOL), rand(3, dtype=BOOL))
        case(f"{op}/float", op, rand(6, special=(0.0, NAN, 0.0)), rand(6, special=(0.0,)))
    case("logical_not/bool", "logical_not", rand(5, dtype=BOOL))
    case("logical_not/float", "logical_not", torch.tensor([0.0, 1.0, NAN, -0.0, 2.0]))
    case("where/bcast", "where", rand(2, 3, dtype=BOOL), rand(2, 3), rand(3), grad=True)
    case("where/bcast2", "where", rand(3, 1, dtype=BOOL), rand(1, 4), rand(3, 4), grad=True)
    case("where/scalar", "where", rand(5, dtype=BOOL), rand(5), 0.0, grad=True)
    case("where/int", "where", rand(4, dtype=BOOL), rand(4, lo=0, hi=9, dtype=I64), rand(4, lo=0, hi=9, dtype=I64))
    case("isnan", "isnan", torch.tensor([NAN, 1.0, INF, -INF, 0.0, -NAN]))
    case("isinf", "isinf", torch.tensor([NAN, 1.0, INF, -INF, 0.0, 3.4e38]))
    case("isnan/int", "isnan", rand(3, lo=0, hi=5, dtype=I64))
    case("nan_to_num/default", "nan_to_num", torch.tensor([NAN, INF, -INF, 1.5]))
    case("nan_to_num/custom", "nan_to_num", torch.tensor([NAN, INF, -INF, 1.5]),
         kwargs={"nan": 0.5, "posinf": 100.0, "neginf": -100.0})
    case("nan_to_num/grad", "nan_to_num", rand(2, 3), kwargs={"nan": 0.0}, grad=True)


def unary_specs():
    plain = {  # op: (input maker, tolerance)
        "neg": (lambda: rand(2, 3), DEFAULT_TOL),
        "abs": (lambda: rand(2, 3, special=(0.5,)), DEFAULT_TOL),
        "exp": (lambda: rand(2, 3, lo=-5, hi=5), TRANSCENDENTAL_TOL),
        "log": (lambda: positive(2, 3, lo=0.05, hi=20), TRANSCENDENTAL_TOL),
        "log1p": (lambda: rand(2, 3, lo=-0.9, hi=5), TRANSCENDENTAL_TOL),
        "expm1": (lambda: rand(2, 3, lo=-3, hi=3), TRANSCENDENTAL_TOL),
        "sqrt": (lambda: positive(2, 3, lo=0.01, hi=9), TRANSCENDENTAL_TOL),
        "rsqrt": (lambda: positive(2, 3, lo=0.05, hi=9), TRANSCENDENTAL_TOL),
        "sin": (lambda: rand(2, 3, lo=-3, hi=3), TRANSCENDENTAL_TOL),
        "cos": (lambda: rand(2, 3, lo=-3, hi=3), TRANSCENDENTAL_TOL),
        "tanh": (lambda: rand(2, 3, lo=-4, hi=4), TRANSCENDENTAL_TOL),
        "sigmoid": (lambda: rand(2, 3, lo=-6, hi=6), TRANSCENDENTAL_TOL),
        "relu": (lambda: rand(2, 3), DEFAULT_TOL),
    }
    for op, (make, tol) in plain.items():
        case(f"{op}/basic", op, make(), tol=tol, grad=True)
        method(f"{op}/method", op, make(), tol=tol)
        case(f"{op}/special", op, torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0]), tol=tol)
    case("exp/overflow", "exp", torch.tensor([100.0, -200.0, 88.0, -87.0]), tol=TRANSCENDENTAL_TOL)
    case("log/neg", "log", torch.tensor([-1.0, 0.0, 1e-30, 1e30]), tol=TRANSCENDENTAL_TOL)
    case("sqrt/neg", "sqrt", torch.tensor([-1.0, -0.0, 4.0]))
    case("sigmoid/extreme", "sigmoid", torch.tensor([-100.0, 100.0, -20.0, 20.0]), tol=TRANSCENDENTAL_TOL)
    case("tanh/extreme", "tanh", torch.tensor([-50.0, 50.0, 1e-6, -1e-6]), tol=TRANSCENDENTAL_TOL)
    case("neg/int", "neg", rand(4, lo=-9, hi=9, dtype=I64))
    case("abs/int", "abs", rand(4, lo=-9, hi=9, dtype=I64))
    case("exp/0d", "exp", rand(), grad=True, tol=TRANSCENDENTAL_TOL)
    case("exp/empty", "exp", rand(2, 0))
    case("sqrt/int_promotes", "sqrt", torch.tensor([0, 1, 4, 9]))
    F = "nn.functional."
    case("relu/F", F + "relu", rand(3, 4), grad=True)
    case("gelu/none", F + "gelu", rand(3, 4, lo=-4, hi=4), grad=True, tol=TRANSCENDENTAL_TOL)
    case("gelu/tanh", F + "gelu", rand(3, 4, lo=-4, hi=4), kwargs={"approximate": "tanh"}, grad=True,
         tol=TRANSCENDENTAL_TOL)
    # Not +inf: PyTorch's vectorized CPU gelu gives nan there (its scalar path gives inf).
    case("gelu/special", F + "gelu", torch.tensor([NAN, -INF, 0.0, 9.0, -9.0]), tol=TRANSCENDENTAL_TOL)
    case("gelu/tanh_special", F + "gelu", torch.tensor([NAN, INF, -INF, 0.0, 20.0, -20.0]),
         kwargs={"approximate": "tanh"}, tol=TRANSCENDENTAL_TOL)
    case("silu/F", F + "silu", rand(3, 4, lo=-6, hi=6), grad=True, tol=TRANSCENDENTAL_TOL)
    case("silu/special", F + "silu", torch.tensor([NAN, INF, -INF, 0.0]), tol=TRANSCENDENTAL_TOL)
    case("sigmoid/F", F + "sigmoid", rand(5), tol=TRANSCENDENTAL_TOL)
    case("tanh/F", F + "tanh", rand(5), tol=TRANSCENDENTAL_TOL)
    case("clamp/both", "clamp", rand(3, 4), kwargs={"min": -0.5, "max": 0.5}, grad=True)
    case("clamp/min", "clamp", rand(3, 4), kwargs={"min": 0.0}, grad=True)
    case("clamp/max_pos", "clamp", rand(3, 4), None, 1.0, grad=True)
    case("clamp/tensor_bounds", "clamp", rand(3, 4), rand(4, lo=-2, hi=-0.5), rand(3, 1, lo=0.5, hi=2), grad=True)
    case("clamp/nan", "clamp", torch.tensor([NAN, INF, -INF, 0.3]), -1.0, 1.0)
    case("clamp/int", "clamp", rand(6, lo=-9, hi=9, dtype=I64), -3, 3)
    method("clamp/method", "clamp", rand(2, 3), -1.0, 1.0, grad=True)


def reduction_specs():
    x = rand(3, 4, 5)
    case("sum/all", "sum", rand(3, 4), grad=True, tol=REDUCE_TOL)
    case("sum/dim", "sum", x, 1, grad=True, tol=REDUCE_TOL)
    case("sum/dim_neg_keepdim", "sum", rand(3, 4, 5), -1, True, grad=True, tol=REDUCE_TOL)
    case("sum/dim_tuple", "sum", rand(3, 4, 5), {"tuple": [0, 2]}, grad=True, tol=REDUCE_TOL)
    case("sum/dim_tuple_keepdim", "sum", rand(2, 3, 4, 2), kwargs={"dim": {"tuple": [1, -1]}, "keepdim": True},
         grad=True, tol=REDUCE_TOL)
    case("sum/int", "sum", rand(4, 5, lo=-9, hi=9, dtype=I64), 0)
    case("sum/bool", "sum", rand(3, 5, dtype=BOOL))
    case("sum/empty", "sum", rand(0, 3))
    case("sum/empty_dim", "sum", rand(0, 3), 0)
    case("sum/0d", "sum", rand(), grad=True)
    case("sum/nan", "sum", torch.tensor([1.0, NAN, 2.0]))
    case("sum/dtype_kw", "sum", rand(3, 3, lo=0, hi=5, dtype=I64), kwargs={"dtype": {"dtype": "float32"}})
    method("sum/method", "sum", rand(2, 3), 1, grad=True)
    case("mean/all", "mean", rand(4, 5), grad=True, tol=REDUCE_TOL)
    case("mean/dim", "mean", rand(3, 4, 5), 1, grad=True, tol=REDUCE_TOL)
    case("mean/dim_tuple_keepdim", "mean", rand(3, 4, 5), {"tuple": [0, 1]}, True, grad=True, tol=REDUCE_TOL)
    case("mean/empty", "mean", rand(0))
    case("mean/inf", "mean", torch.tensor([INF, 1.0, 2.0]))
    for op in ("max", "min"):
        case(f"{op}/all", op, distinct(3, 4), grad=True)
        case(f"{op}/dim", op, distinct(3, 4, 2), 1, grad=True)
        case(f"{op}/dim_keepdim", op, distinct(3, 4), -1, True, grad=True)
        case(f"{op}/dim_kw", op, distinct(2, 5), kwargs={"dim": 0})
        case(f"{op}/nan", op, torch.tensor([[1.0, NAN, 3.0], [4.0, 5.0, -INF]]), 1)
        case(f"{op}/nan_all", op, torch.tensor([1.0, NAN, 3.0]))
        case(f"{op}/int", op, torch.tensor([[3, -7, 2], [9, 0, -1]]), 0)
        case(f"{op}/binary", op, distinct(2, 3), distinct(3), grad=True)
        method(f"{op}/method_dim", op, distinct(4, 3), 0)
        case(f"{op}/empty_raises", op, rand(0), raises="RuntimeError")
    for op in ("argmax", "argmin"):
        case(f"{op}/all", op, distinct(3, 4))
        case(f"{op}/dim", op, distinct(3, 4, 2), 1)
        case(f"{op}/dim_keepdim", op, distinct(3, 4), -1, True)
        case(f"{op}/nan", op, torch.tensor([[1.0, NAN, 3.0], [4.0, 5.0, -INF]]), 1)
    case("argmax/ties_first", "argmax", torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]))
    case("amax/dim_tuple", "amax", distinct(2, 3, 4), {"tuple": [0, 2]}, grad=True)
    case("amin/dim", "amin", distinct(2, 3, 4), 1)
    case("prod/all", "prod", rand(2, 3, lo=0.5, hi=1.5), grad=True, tol=REDUCE_TOL)
    case("prod/dim", "prod", rand(3, 4, lo=-1.5, hi=1.5), 1, grad=True, tol=REDUCE_TOL)
    case("prod/dim_keepdim", "prod", rand(2, 3, 2, lo=-1.5, hi=1.5), 0, True, grad=True, tol=REDUCE_TOL)
    case("prod/int", "prod", torch.tensor([[2, -3], [4, 5]]), 1)
    case("prod/empty", "prod", rand(0))
    for op in ("var", "std"):
        case(f"{op}/all", op, rand(4, 5), grad=True, tol=REDUCE_TOL)
        case(f"{op}/dim", op, rand(3, 6), 1, grad=True, tol=REDUCE_TOL)
        case(f"{op}/correction0", op, rand(3, 6), kwargs={"dim": 1, "correction": 0}, grad=True, tol=REDUCE_TOL)
        case(f"{op}/correction2_keepdim", op, rand(3, 6), kwargs={"dim": 1, "correction": 2, "keepdim": True},
             tol=REDUCE_TOL)
        case(f"{op}/unbiased_false", op, rand(5), kwargs={"unbiased": False}, tol=REDUCE_TOL)
        case(f"{op}/dim_tuple", op, rand(2, 3, 4), {"tuple": [0, 2]}, grad=True, tol=REDUCE_TOL)
        case(f"{op}/single", op, rand(1))   # n - correction = 0: nan (with a warning in torch)
    for op in ("all", "any"):
        case(f"{op}/bool", op, rand(3, 4, dtype=BOOL))
        case(f"{op}/dim", op, rand(3, 4, dtype=BOOL), 1)
        case(f"{op}/dim_keepdim", op, rand(3, 4, dtype=BOOL), 0, True)
        case(f"{op}/float", op, torch.tensor([[0.0, 1.0], [NAN, 2.0]]), 1)
        case(f"{op}/empty", op, rand(0, dtype=BOOL))
    case("all/true", "all", torch.ones(2, 3, dtype=BOOL))
    case("any/false", "any", torch.zeros(4, dtype=BOOL))
    case("logsumexp/dim", "logsumexp", rand(3, 5, lo=-5, hi=5), 1, grad=True, tol=TRANSCENDENTAL_TOL)
    case("logsumexp/large", "logsumexp", torch.tensor([[1000.0, 1000.0], [-1000.0, -1001.0]]), 1, tol=TRANSCENDENTAL_TOL)
    case("logsumexp/neg_inf", "logsumexp", torch.tensor([[-INF, 0.0], [-INF, -INF]]), 1, tol=TRANSCENDENTAL_TOL)
    case("logsumexp/dim_tuple_keepdim", "logsumexp", rand(2, 3, 4), {"tuple": [0, 2]}, True, grad=True,
         tol=TRANSCENDENTAL_TOL)
    case("norm/all", "norm", rand(3, 4), grad=True, tol=REDUCE_TOL)
    case("norm/p1_dim", "norm", rand(3, 4), 1, 1, grad=True, tol=REDUCE_TOL)
    case("norm/p2_dim_keepdim", "norm", rand(3, 4), kwargs={"p": 2, "dim": 0, "keepdim": True}, grad=True,
         tol=REDUCE_TOL)
    case("norm/inf", "norm", rand(3, 4), kwargs={"p": INF, "dim": 1}, tol=REDUCE_TOL)
    method("norm/method", "norm", rand(5), grad=True, tol=REDUCE_TOL)
    case("vector_norm/ord3", "linalg.vector_norm", rand(2, 5), kwargs={"ord": 3, "dim": 1}, grad=True,
         tol=REDUCE_TOL)


def matmul_specs():
    case("mm/basic", "mm", rand(3, 4), rand(4, 5), grad=True, tol=REDUCE_TOL)
    case("mm/tall", "mm", rand(17, 3), rand(3, 9), grad=True, tol=REDUCE_TOL)
    case("mm/transposed_input", "mm", Viewed(rand(4, 3), ("t",)), rand(4, 2), grad=True, tol=REDUCE_TOL)
    case("mm/k0", "mm", rand(2, 0), rand(0, 3))
    case("mm/int", "mm", rand(2, 3, lo=-5, hi=5, dtype=I64), rand(3, 2, lo=-5, hi=5, dtype=I64))
    case("mm/shape_mismatch", "mm", rand(2, 3), rand(4, 5), raises="RuntimeError")
    case("mm/nan", "mm", torch.tensor([[NAN, 1.0], [1.0, 2.0]]), torch.tensor([[1.0, 0.0], [0.0, INF]]))
    case("bmm/basic", "bmm", rand(2, 3, 4), rand(2, 4, 5), grad=True, tol=REDUCE_TOL)
    case("bmm/batch_mismatch", "bmm", rand(2, 3, 4), rand(3, 4, 5), raises="RuntimeError")
    case("matmul/1d_1d", "matmul", rand(4), rand(4), grad=True, tol=REDUCE_TOL)
    case("matmul/1d_2d", "matmul", rand(3), rand(3, 5), grad=True, tol=REDUCE_TOL)
    case("matmul/2d_1d", "matmul", rand(4, 3), rand(3), grad=True, tol=REDUCE_TOL)
    case("matmul/bcast_batch", "matmul", rand(2, 1, 3, 4), rand(5, 4, 2), grad=True, tol=REDUCE_TOL)
    case("matmul/3d_2d", "matmul", rand(2, 3, 4), rand(4, 2), grad=True, tol=REDUCE_TOL)
    case("matmul/1d_3d", "matmul", rand(4), rand(2, 4, 3), grad=True, tol=REDUCE_TOL)
    method("matmul/operator", "__matmul__", rand(3, 2), rand(2, 3), grad=True, tol=REDUCE_TOL)
    case("matmul/mismatch", "matmul", rand(2, 3), rand(2, 3), raises="RuntimeError")
    case("matmul/large", "matmul", rand(33, 70, lo=-1, hi=1), rand(70, 65, lo=-1, hi=1), tol=(1e-4, 1e-4))
    case("addmm/basic", "addmm", rand(3, 5), rand(3, 4), rand(4, 5), grad=True, tol=REDUCE_TOL)
    case("addmm/bcast_beta_alpha", "addmm", rand(5), rand(3, 4), rand(4, 5), kwargs={"beta": 0.5, "alpha": 2.0},
         grad=True, tol=REDUCE_TOL)
    F = "nn.functional."
    case("linear/bias", F + "linear", rand(2, 3, 4), rand(5, 4), rand(5), grad=True, tol=REDUCE_TOL)
    case("linear/no_bias", F + "linear", rand(6, 4), rand(3, 4), grad=True, tol=REDUCE_TOL)
    case("linear/1d_input", F + "linear", rand(4), rand(2, 4), rand(2), grad=True, tol=REDUCE_TOL)


def join_specs():
    case("cat/dim0", "cat", [rand(2, 3), rand(1, 3), rand(3, 3)], grad=True)
    case("cat/dim1", "cat", [rand(2, 3), rand(2, 1)], 1, grad=True)
    case("cat/neg_dim_kw", "cat", [rand(2, 2, 1), rand(2, 2, 3)], kwargs={"dim": -1}, grad=True)
    case("cat/with_empty", "cat", [rand(2, 3), rand(0, 3), rand(1, 3)], grad=True)
    case("cat/legacy_empty_1d", "cat", [rand(0), rand(2, 3)])
    case("cat/int", "cat", [rand(2, lo=0, hi=9, dtype=I64), rand(3, lo=0, hi=9, dtype=I64)])
    case("cat/promote", "cat", [rand(2, lo=0, hi=9, dtype=I64), rand(3)])
    case("cat/tuple", "cat", {"tuple": [rand(1, 2), rand(1, 2)]}, 0)
    case("cat/shape_mismatch", "cat", [rand(2, 3), rand(2, 4)], raises="RuntimeError")
    case("stack/dim0", "stack", [rand(2, 3), rand(2, 3), rand(2, 3)], grad=True)
    case("stack/dim_last", "stack", [rand(2, 3), rand(2, 3)], -1, grad=True)
    case("stack/dim1", "stack", [rand(3), rand(3)], 1, grad=True)
    case("stack/0d", "stack", [rand(), rand()], grad=True)
    case("split/int", "split", rand(5, 2), 2, grad=True)
    case("split/sizes_dim1", "split", rand(2, 6), [1, 3, 2], 1, grad=True)
    method("split/method", "split", rand(4, 3), 3, grad=True)
    case("chunk/uneven", "chunk", rand(7, 2), 3, grad=True)
    case("chunk/dim1", "chunk", rand(2, 6), 2, 1, grad=True)
    method("chunk/method_more_than_size", "chunk", rand(2, 3), 5, 1, grad=True)


def softmax_specs():
    F = "nn.functional."
    for op in ("softmax", "log_softmax"):
        case(f"{op}/last", op, rand(3, 5, lo=-4, hi=4), -1, grad=True, tol=TRANSCENDENTAL_TOL)
        case(f"{op}/dim0", op, rand(4, 3), 0, grad=True, tol=TRANSCENDENTAL_TOL)
        case(f"{op}/F_middle", F + op, rand(2, 3, 4), kwargs={"dim": 1}, grad=True, tol=TRANSCENDENTAL_TOL)
        case(f"{op}/large_values", op, torch.tensor([[1000.0, 999.0, -1000.0], [50.0, 50.0, 50.0]]), 1,
             tol=TRANSCENDENTAL_TOL)
        case(f"{op}/neg_inf", op, torch.tensor([[-INF, 0.0, 1.0], [-INF, 2.0, -INF]]), 1, tol=TRANSCENDENTAL_TOL)
        case(f"{op}/nan", op, torch.tensor([[NAN, 0.0], [1.0, 2.0]]), 1, tol=TRANSCENDENTAL_TOL)
        case(f"{op}/long_row", op, rand(2, 1000, lo=-3, hi=3), 1, grad=True, tol=TRANSCENDENTAL_TOL)
        method(f"{op}/method", op, rand(2, 3), 1, tol=TRANSCENDENTAL_TOL)
        case(f"{op}/0d", op, rand(), 0, tol=TRANSCENDENTAL_TOL)


def view_specs():
    V = dict(grad=True, strides=True)
    method("view/basic", "view", rand(2, 6), 3, 4, **V)
    method("view/minus1", "view", rand(2, 3, 4), -1, 6, **V)
    method("view/tuple", "view", rand(6), {"tuple": [2, 3]}, **V)
    method("view/0d_to_1", "view", rand(), 1, **V)
    method("view/noncontig_raises", "view", Viewed(rand(3, 4), ("t",)), 12, raises="RuntimeError")
    case("reshape/fn", "reshape", rand(2, 6), {"tuple": [4, 3]}, **V)
    method("reshape/noncontig", "reshape", Viewed(rand(3, 4), ("t",)), -1, grad=True)
    method("reshape/empty", "reshape", rand(0, 4), 2, 0, 3)
    case("permute/fn", "permute", rand(2, 3, 4), {"tuple": [2, 0, 1]}, **V)
    method("permute/method_varargs", "permute", rand(2, 3, 4), 1, -1, 0, **V)
    case("transpose/fn", "transpose", rand(2, 3, 4), 0, 2, **V)
    method("transpose/neg", "transpose", rand(2, 3), -1, -2, **V)
    case("t/fn", "t", rand(3, 4), **V)
    method("t/1d", "t", rand(3), **V)
    method("expand/basic", "expand", rand(3, 1), 3, 4, **V)
    method("expand/minus1_new_dims", "expand", rand(1, 3), 2, -1, 3, **V)
    method("expand/0d", "expand", rand(), 4, **V)
    case("squeeze/all", "squeeze", rand(1, 3, 1, 2), **V)
    case("squeeze/dim", "squeeze", rand(1, 3, 1, 2), 2, **V)
    case("squeeze/dim_not1", "squeeze", rand(2, 3), 0, **V)
    case("squeeze/dims_tuple", "squeeze", rand(1, 3, 1, 1), {"tuple": [0, 3]}, **V)
    case("unsqueeze/0", "unsqueeze", rand(2, 3), 0, **V)
    case("unsqueeze/neg", "unsqueeze", rand(2, 3), -1, **V)
    case("unsqueeze/0d", "unsqueeze", rand(), 0, **V)
    case("flatten/all", "flatten", rand(2, 3, 4), **V)
    case("flatten/range", "flatten", rand(2, 3, 4, 5), 1, 2, **V)
    case("flatten/0d", "flatten", rand(), **V)
    method("flatten/noncontig", "flatten", Viewed(rand(3, 4), ("t",)), grad=True)
    case("narrow/basic", "narrow", rand(4, 5), 1, 1, 3, **V)
    case("narrow/neg_start", "narrow", rand(6, 2), 0, -3, 2, **V)
    case("select/basic", "select", rand(3, 4), 1, 2, **V)
    case("select/neg", "select", rand(3, 4, 2), 0, -1, **V)
    method("select/out_of_range", "select", rand(3, 4), 0, 5, raises="IndexError")
    G = dict(style="getitem", grad=True, strides=True)
    case("getitem/int", "getitem", rand(4, 3), 2, **G)
    case("getitem/neg_int", "getitem", rand(4, 3), -1, **G)
    case("getitem/slice_step", "getitem", rand(10), {"slice": [1, 8, 3]}, **G)
    case("getitem/slice_neg", "getitem", rand(10), {"slice": [-4, None, None]}, **G)
    case("getitem/slice_neg_stop", "getitem", rand(10), {"slice": [None, -3, 2]}, **G)
    case("getitem/2d_slices", "getitem", rand(5, 6), {"tuple": [{"slice": [1, None, 2]}, {"slice": [None, None, 3]}]}, **G)
    case("getitem/int_and_slice", "getitem", rand(4, 5), {"tuple": [-2, {"slice": [1, 4, None]}]}, **G)
    case("getitem/ellipsis", "getitem", rand(2, 3, 4), {"tuple": [{"ellipsis": True}, 1]}, **G)
    case("getitem/none", "getitem", rand(3, 2), {"tuple": [None, {"slice": [None, None, None]}, None]}, **G)
    case("getitem/empty_slice", "getitem", rand(5), {"slice": [3, 1, None]}, **G)
    case("getitem/out_of_range_slice", "getitem", rand(4), {"slice": [2, 100, None]}, **G)
    case("getitem/index_error", "getitem", rand(4), 4, style="getitem", raises="IndexError")
    case("getitem/0d_from_1d", "getitem", rand(3), 0, **G)
    method("contiguous/transposed", "contiguous", Viewed(rand(3, 4), ("t",)), **V)
    method("contiguous/sliced", "contiguous", Viewed(rand(6, 4), ("__getitem__", {"tuple": [{"slice": [None, None, 2]}, {"slice": [1, None, None]}]})), **V)
    case("clone/basic", "clone", rand(2, 3), **V)
    method("clone/noncontig", "clone", Viewed(rand(4, 3), ("t",)), grad=True)
    method("clone/int", "clone", rand(3, lo=0, hi=9, dtype=I64))
    # A chain of views over a transposed input: strides compose.
    method("view_of_view/permute_then_slice", "permute", Viewed(rand(4, 6), ("t",), ("__getitem__", {"tuple": [{"slice": [1, None, None]}, {"slice": [None, None, 2]}]})), 1, 0, **V)


def creation_specs():
    case("zeros/shape", "zeros", 2, 3)
    case("zeros/tuple", "zeros", {"tuple": [2, 0]})
    case("zeros/int", "zeros", 3, kwargs={"dtype": {"dtype": "int64"}})
    case("ones/shape", "ones", {"tuple": [3, 2]})
    case("ones/bool", "ones", 2, 2, kwargs={"dtype": {"dtype": "bool"}})
    case("ones/0d", "ones", {"tuple": []})
    case("full/float", "full", {"tuple": [2, 3]}, 1.5)
    case("full/int_infers_int64", "full", {"tuple": [2]}, 7)
    case("full/bool", "full", {"tuple": [3]}, True)
    case("full/nan", "full", {"tuple": [2]}, {"float": "nan"})
    case("full/dtype", "full", {"tuple": [2, 2]}, 3, kwargs={"dtype": {"dtype": "float32"}})
    case("arange/int", "arange", 5)
    case("arange/float", "arange", 6.0)
    case("arange/start_stop_step", "arange", 1, 10, 3)
    case("arange/neg_step", "arange", 5.0, -1.0, -1.5)
    case("arange/float_step", "arange", 0, 1, 0.1)
    case("arange/empty", "arange", 3, 3)
    case("arange/dtype", "arange", 4, kwargs={"dtype": {"dtype": "float32"}})
    case("linspace/basic", "linspace", 0, 1, 5)
    case("linspace/neg", "linspace", 3.0, -2.0, 7)
    case("linspace/one", "linspace", 2.0, 5.0, 1)
    case("linspace/zero", "linspace", 2.0, 5.0, 0)
    case("linspace/many", "linspace", -1.0, 1.0, 101)
    case("eye/n", "eye", 3)
    case("eye/n_m", "eye", 2, 4)
    case("eye/dtype", "eye", 3, kwargs={"dtype": {"dtype": "int64"}})
    case("tensor/nested", "tensor", [[1.0, 2.0], [3.0, 4.0]])
    case("tensor/int", "tensor", [1, 2, 3])
    case("tensor/bool", "tensor", [True, False])
    case("tensor/scalar", "tensor", 2.5)
    case("zeros_like", "zeros_like", rand(2, 3))
    case("ones_like/int", "ones_like", rand(4, lo=0, hi=3, dtype=I64))
    case("full_like", "full_like", rand(2, 2), 0.25)


def more_grad_specs():
    """Gradients of the differentiable ops the groups above leave out, and of in-place ops
    and writes through views (steps on a recorded base, applied on both sides)."""
    T = TRANSCENDENTAL_TOL
    for op, make in (("erf", lambda: rand(2, 3)), ("reciprocal", lambda: positive(2, 3)),
                     ("square", lambda: rand(2, 3)), ("log2", lambda: positive(2, 3)),
                     ("log10", lambda: positive(2, 3)), ("exp2", lambda: rand(2, 3)),
                     ("sign", lambda: rand(2, 3)), ("floor", lambda: rand(2, 3)),
                     ("ceil", lambda: rand(2, 3)), ("trunc", lambda: rand(2, 3)),
                     ("round", lambda: rand(2, 3))):
        case(f"{op}/grad", op, make(), grad=True, tol=T)
    case("remainder/grad", "remainder", rand(2, 3), positive(3), grad=True, tol=T)
    case("fmod/grad", "fmod", rand(2, 3), positive(3), grad=True, tol=T)
    case("clamp_min/grad", "clamp_min", rand(3, 4), 0.1, grad=True)
    case("clamp_max/grad", "clamp_max", rand(3, 4), -0.1, grad=True)
    case("div/floor_grad", "div", rand(2, 3), positive(3), kwargs={"rounding_mode": "floor"}, grad=True)
    case("dot/grad", "dot", rand(5), rand(5), grad=True, tol=REDUCE_TOL)
    case("mv/grad", "mv", rand(3, 4), rand(4), grad=True, tol=REDUCE_TOL)
    case("amin/grad", "amin", distinct(3, 4), 1, grad=True)
    case("max/nodim_grad", "max", distinct(3, 4), grad=True)
    case("movedim/grad", "movedim", rand(2, 3, 4), 0, 2, grad=True)
    case("unflatten/grad", "unflatten", rand(2, 6), 1, {"tuple": [2, 3]}, grad=True)
    case("as_strided/grad", "as_strided", rand(4, 4), {"tuple": [2, 3]}, {"tuple": [4, 1]}, 1, grad=True)
    case("unbind/grad", "unbind", rand(3, 2), 1, grad=True)
    method("expand_as/grad", "expand_as", rand(3, 1), rand(3, 4), grad=True)
    case("tensor_split/grad", "tensor_split", rand(7, 2), 3, grad=True)
    method("float/grad", "float", Viewed(rand(2, 3), ("mul", 2.0)), grad=True)
    # in-place on non-leaves, then the op: the leaf's gradient goes through the in-place node
    case("inplace/mul_exp_", "sum", Viewed(rand(2, 3), ("mul", 1.0), ("mul_", 2.0), ("exp_",)), grad=True, tol=T)
    case("inplace/add_tensor_", "sum", Viewed(rand(2, 3), ("mul", 1.5), ("add_", 0.5), ("sigmoid_",)), grad=True, tol=T)
    case("inplace/clamp_", "mul", Viewed(rand(3, 4), ("mul", 1.0), ("clamp_", -0.5, 0.5)), rand(3, 4), grad=True)
    # a write through a view: the base takes a CopySlices node
    case("view_write/narrow_mul_", "mul", Viewed(rand(4, 3), ("clone",), ("narrow", 0, 1, 2), ("mul_", 3.0)),
         rand(2, 3), grad=True)
    case("view_write/select_fill_", "sum", Viewed(rand(3, 4), ("clone",), ("select", 1, 2), ("fill_", 0.0)),
         grad=True)


def large_specs():
    # Inputs built in the page by torch.arange: grids past 65535 workgroups, multi-pass reductions.
    big = Gen(17_000_000)          # over 65535 * 256 elements
    case("large/sum_17M", "sum", big, tol=(1e-5, 0.0))
    case("large/max_17M", "max", big)
    case("large/neg_17M_checksum", "neg", big, tol=(1e-5, 0.0), check="sum")
    case("large/argmax_300k", "argmax", Gen(300_000))
    case("large/mean_rows", "mean", Gen(1 << 20, [256, 4096]), 1, tol=REDUCE_TOL)
    case("large/sum_cols", "sum", Gen(1 << 18, [4096, 64]), 0, tol=REDUCE_TOL)
    case("large/softmax_row", "softmax", Gen(8192, [2, 4096]), 1, tol=TRANSCENDENTAL_TOL)
    case("large/matmul_checksum", "matmul", Gen(128 * 256, [128, 256]), Gen(256 * 96, [256, 96]),
         tol=(1e-4, 0.0), check="sum")


# -- encoding ----------------------------------------------------------------------------------
# Errors only the GPU sees, raised at the next readback (backends/webgpu/errors.py).
def device_error_specs():
    big = torch.full((2, 3), 2**30, dtype=I64)
    divisor = torch.tensor([[1, 0, 2], [3, 1, 1]], dtype=I64)
    for op in ("floor_divide", "remainder", "fmod"):
        case(f"{op}/int_zero_divisor", op, rand(2, 3, lo=-9, hi=9, dtype=I64), divisor, raises="RuntimeError")
    case("floor_divide/int32_zero_bcast", "floor_divide", rand(2, 3, lo=1, hi=9, dtype=I32),
         torch.tensor([0, 1, 2], dtype=I32), raises="RuntimeError")
    case("add/int64_past_int32", "add", big, big, int64_past_int32=True)
    case("mul/int64_past_int32", "mul", big, 4, int64_past_int32=True)
    case("sum/int64_past_int32", "sum", big, int64_past_int32=True)
    case("prod/int64_past_int32", "prod", torch.full((40,), 3, dtype=I64), int64_past_int32=True)
    # past int32 on the way, back in range at the end: exact, no refusal
    case("sum/int64_partials_past_int32", "sum", torch.tensor([2**31 - 1, 2**31 - 1, -(2**31 - 1), -5], dtype=I64))
    case("prod/int64_wraps_to_zero", "prod", torch.full((64,), 2, dtype=I64))


def num(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return _short32(v)
    return v


def _short32(v):
    """The shortest decimal that reads back as the same float32 (compact JSON, exact)."""
    want = struct.pack("<f", v)
    for digits in range(6, 9):
        s = float(f"{v:.{digits}g}")
        if struct.pack("<f", s) == want:
            return s
    return float(f"{v:.9g}")   # 9 significant digits always round-trip a float32


def nested(t):
    data = t.detach().tolist()

    def walk(x):
        return [walk(v) for v in x] if isinstance(x, list) else num(x)
    return walk(data)


def dtype_name(d):
    return str(d).replace("torch.", "")


def tensor_json(t, strides=False):
    out = {"data": nested(t), "shape": list(t.shape), "dtype": dtype_name(t.dtype)}
    if strides:
        out["stride"] = list(t.stride())
    return out


class Encoder:
    """Turns spec arguments into JSON, collecting tensors as inputs."""

    def __init__(self):
        self.inputs = []
        self.tensors = []

    def enc(self, x):
        if isinstance(x, Gen):
            self.tensors.append(x.tensor)
            self.inputs.append({"gen": "arange", "n": x.n, "shape": x.shape, "dtype": dtype_name(x.dtype)})
            return {"tensor": len(self.tensors) - 1}
        if isinstance(x, Viewed):
            self.tensors.append(x.base)
            self.inputs.append({**tensor_json(x.base),
                                "then": [[name, [self.enc(a) for a in args]] for name, args in x.steps]})
            return {"tensor": len(self.tensors) - 1}
        if isinstance(x, torch.Tensor):
            self.tensors.append(x)
            self.inputs.append(tensor_json(x))
            return {"tensor": len(self.tensors) - 1}
        if isinstance(x, dict):
            if "tuple" in x:
                return {"tuple": [self.enc(v) for v in x["tuple"]]}
            return x
        if isinstance(x, list):
            return [self.enc(v) for v in x]
        if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
            return {"float": num(x)}
        return x


def decode(x, tensors):
    """The torch value for an encoded argument (tensors: the actual inputs)."""
    if isinstance(x, dict):
        if "tensor" in x:
            return tensors[x["tensor"]]
        if "tuple" in x:
            return tuple(decode(v, tensors) for v in x["tuple"])
        if "slice" in x:
            return slice(*x["slice"])
        if "float" in x:
            return float(x["float"])
        if "dtype" in x:
            return getattr(torch, x["dtype"])
        if "ellipsis" in x:
            return Ellipsis
    if isinstance(x, list):
        return [decode(v, tensors) for v in x]
    return x


def apply_views(tensors, inputs):
    """The tensors the op sees: each base with its input's "then" steps applied."""
    out = []
    for t, spec in zip(tensors, inputs):
        for name, args in spec.get("then", ()):
            t = getattr(t, name)(*decode(args, []))
        out.append(t)
    return out


def decode_kw(kwargs, tensors):
    return {k: decode(v, tensors) for k, v in kwargs.items()}


def call(spec, args, kwargs):
    if spec["style"] == "getitem":
        return args[0][args[1]]
    if spec["style"] == "method":
        return getattr(args[0], spec["op"])(*args[1:], **kwargs)
    fn = torch
    for part in spec["op"].split("."):
        fn = getattr(fn, part)
    return fn(*args, **kwargs)


def outputs(result):
    """The output tensors of a result, and whether it is a tuple."""
    if isinstance(result, (tuple, list)):
        return list(result), True
    return [result], False


def record(spec, grad):
    """The case of a spec: forward only, or forward and gradients (grad=True)."""
    e = Encoder()
    args = [e.enc(a) for a in spec["args"]]
    kwargs = {k: e.enc(v) for k, v in spec["kwargs"].items()}
    c = {"id": spec["name"] + ("/grad" if grad else ""), "op": spec["op"], "style": spec["style"], "inputs": e.inputs,
         "args": args, "kwargs": kwargs, "tol": list(spec["tol"] or DEFAULT_TOL)}
    seen = apply_views(e.tensors, e.inputs)
    if spec["int64_past_int32"]:
        got = call(spec, decode(args, seen), decode_kw(kwargs, seen))
        assert not (-2**31 <= got.min().item() and got.max().item() < 2**31), spec["name"]
        c["int64_past_int32"] = True   # replay on webgpu expects Int64RangeError
    if spec["raises"]:
        try:
            call(spec, decode(args, seen), decode_kw(kwargs, seen))
        except Exception as err:
            assert type(err).__name__ == spec["raises"], (spec["name"], err)
            c["raises"] = spec["raises"]
            return c
        raise AssertionError(f"{spec['name']}: expected {spec['raises']}")
    if grad:
        leaves = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in e.tensors]
        views = apply_views(leaves, e.inputs)
        result = call(spec, decode(args, views), decode_kw(kwargs, views))
    else:
        result = call(spec, decode(args, seen), decode_kw(kwargs, seen))
    outs, is_tuple = outputs(result)
    if spec["check"] == "sum":
        c["check"] = "sum"
        c["expected"] = tensor_json(outs[0].detach().sum())
    else:
        js = [tensor_json(o, spec["strides"]) for o in outs]
        c["expected"] = {"tuple": js} if is_tuple else js[0]
    if grad:
        weights, loss = [], 0
        for o in outs:
            if o.is_floating_point() and o.requires_grad:
                w = rand(*o.shape, lo=-1, hi=1)
                weights.append(nested(w))
                loss = loss + (o * w).sum()
            else:
                weights.append(None)
        loss.backward()
        c["grad"] = {"weights": weights,
                     "grads": [tensor_json(t.grad) if t.grad is not None else None for t in leaves]}
        c["tol_grad"] = [max(a, b) for a, b in zip(spec["tol"] or GRAD_TOL, GRAD_TOL)]
    return c


def _spec_modules():
    """tests/browser/specs/*.py: each op group's cases, in a file of its own. Each defines
    `add_specs(R)`, R being this module (R.case, R.method, R.rand, R.positive, ...)."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "specs")
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py") and not name.startswith("_"):
            spec = importlib.util.spec_from_file_location(f"browser_specs_{name[:-3]}", os.path.join(folder, name))
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            out.append(mod.add_specs)
    return out


SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT_TOL = (2e-4, 2e-5)


def script_json(value):
    """A script's result: numbers, nested lists and dicts of them (nan/inf as strings)."""
    if isinstance(value, dict):
        return {k: script_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [script_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def script_modules(code):
    """The repository's modules a script imports, named on its `# modules: PATH ...` line (paths
    from the repository root): [{"name", "path", "source"}], shipped with the case so that the
    page imports the same files' text (replay.py install_modules)."""
    for line in code.splitlines():
        if line.startswith("# modules:"):
            out = []
            for path in line[len("# modules:"):].split():
                with open(os.path.join(REPO, path), encoding="utf-8") as f:
                    out.append({"name": _module_name(path), "path": path, "source": f.read()})
            return out
    return []


def _module_name(path):
    """A file's module name: src/torchweb/a/b.py is torchweb.a.b (its imports name it so);
    elsewhere, the file's base name."""
    parts = os.path.splitext(path)[0].split("/")
    return ".".join(parts[1:]) if parts[0] == "src" else parts[-1]


def _import_files(modules):
    """The script's modules imported from the repository's files (with PyTorch as torch)."""
    for m in modules:
        spec = importlib.util.spec_from_file_location(m["name"], os.path.join(REPO, m["path"]))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[m["name"]] = mod
        spec.loader.exec_module(mod)


def script_cases():
    """tests/browser/scripts/*.py: whole PyTorch programs (`import torch`, nn, optim, data) run
    here with PyTorch; the page runs the same source with torchweb standing in for torch and
    compares the `result` each script sets."""
    # PyPI's torchvision links its C++ operators against CUDA torch: its registrations of them
    # fail on the CPU torch; the scripts use only its Python parts (as tests/torchvision_ref.py)
    for reg in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
        sys.modules.setdefault(reg, types.ModuleType(reg))
    out = []
    for name in sorted(os.listdir(SCRIPTS)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(SCRIPTS, name), encoding="utf-8") as f:
            code = f.read()
        modules = script_modules(code)
        ns = {"__name__": "__script__"}
        torch.manual_seed(0)
        saved = sys.modules.get("torchweb")
        sys.modules["torchweb"] = torch     # torchweb's own files a script ships import `torchweb as torch`
        try:
            _import_files(modules)
            exec(compile(code, name, "exec"), ns)
        finally:
            for m in modules:
                sys.modules.pop(m["name"], None)
            sys.modules.pop("torchweb")
            if saved is not None:
                sys.modules["torchweb"] = saved
        case = {"id": "script/" + name[:-3], "op": name, "style": "script", "code": code,
                "result": script_json(ns["result"]), "tol": list(SCRIPT_TOL),
                "inputs": [], "args": [], "kwargs": {}}
        if modules:
            case["modules"] = modules
        out.append(case)
    return out


def main():
    warnings.simplefilter("ignore")   # torch warns on var of one element: that is the case
    for make in (binary_specs, compare_specs, unary_specs, reduction_specs, matmul_specs, join_specs,
                 softmax_specs, view_specs, creation_specs, more_grad_specs, large_specs,
                 device_error_specs):
        make()
    for make in _spec_modules():
        make(sys.modules[__name__])
    # A spec with grad=True gives two cases, so a missing backward hides no forward result.
    cases = [record(s, g) for s in SPECS for g in ((False, True) if s["grad"] else (False,))]
    cases += script_cases()
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    doc = {"torch": torch.__version__, "count": len(cases), "cases": cases}
    with open(OUT, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    grads = sum(1 for c in cases if "grad" in c)
    print(f"{len(cases)} cases ({grads} with gradients) -> {OUT} ({os.path.getsize(OUT) // 1024} KiB)")


if __name__ == "__main__":
    main()
