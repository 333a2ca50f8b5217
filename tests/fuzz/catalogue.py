"""What the fuzz calls, in one place. Every function here takes the library module `m` (torch or
torchweb) first, then the case's decoded arguments, and runs the same call on either library.

The elementwise ops come from torchweb's table (torchweb.ops.elementwise.table.OPS): a row is
called as m.<name>(*operands) (m.special.<f>(...) for a row named special_<f>) unless
ELEMENTWISE_CALLS maps it, so a new row joins the fuzz
without new code here (tests/test_fuzz.py fails for a row that neither works by default nor is
mapped). Its in-place form is x.<name>_(...) where PyTorch has that method.
"""

import operator

import torch

from torchweb.ops.elementwise.table import OPS


def _nn(m):
    return m.nn.functional


# -- elementwise: table rows -----------------------------------------------------------------
def _copy(m, x, *rest, form="clone", dtype=None):
    if form == "clone":
        return x.clone()
    if form == "to":
        return x.to(dtype)
    if form == "copy_":               # x is the destination, rest[0] the source
        return x.copy_(rest[0])
    raise ValueError(form)


def _bfloat16_round(m, x):
    """torchweb's bfloat16_round row (optim.Muon's bfloat16 emulation), against PyTorch's cast
    to bfloat16 and back (integers pass unchanged)."""
    if m is not torch:
        from torchweb.ops.elementwise import call
        return call("bfloat16_round", x)
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(torch.bfloat16).to(x.dtype)
    return torch.clone(x)


ELEMENTWISE_CALLS = {
    # internal rows: the public call that reaches them
    "copy": _copy,
    "fill": lambda m, x, v: x.fill_(v),
    "add_alpha": lambda m, a, b, alpha=2: m.add(a, b, alpha=alpha),
    "sub_alpha": lambda m, a, b, alpha=2: m.sub(a, b, alpha=alpha),
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "gelu": lambda m, a: _nn(m).gelu(a),
    "gelu_tanh": lambda m, a: _nn(m).gelu(a, approximate="tanh"),
    "silu": lambda m, a: _nn(m).silu(a),
    "clamp": lambda m, x, lo=None, hi=None: m.clamp(x, lo, hi),
    "bfloat16_round": _bfloat16_round,
}


def _polynomial(name):
    """torch.special's orthogonal polynomials with the degree kept to [-2, 10] and NaN input made 0:
    PyTorch runs its recurrence n times (2**31 fuzzed degrees take it minutes), for large n its
    closed form cos(n acos x) turns one ulp of acos into noise, and for NaN its result is unset
    (tests/test_special_more.py checks them)."""
    def call(m, x, n):
        n = n.clamp(-2, 10) if isinstance(n, (torch.Tensor, m.Tensor)) else max(-2, min(n, 10))
        # NaN input: PyTorch's recurrences return a value they never set (undefined behaviour)
        x = x.nan_to_num(0.0) if isinstance(x, (torch.Tensor, m.Tensor)) else x
        return getattr(m.special, name)(x, n)
    return call


for _kind in "tuvw":
    for _pre in ("", "shifted_"):
        _name = f"{_pre}chebyshev_polynomial_{_kind}"
        ELEMENTWISE_CALLS["special_" + _name] = _polynomial(_name)
for _name in ("hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"):
    ELEMENTWISE_CALLS["special_" + _name] = _polynomial(_name)

# In-place forms of rows whose in-place call is not x.<name>_(...).
INPLACE_CALLS = {
    "copy": lambda m, x, src: x.copy_(src),
    "fill": lambda m, x, v: x.fill_(v),
    "add_alpha": lambda m, a, b, alpha=2: a.add_(b, alpha=alpha),
    "sub_alpha": lambda m, a, b, alpha=2: a.sub_(b, alpha=alpha),
    "div_trunc": lambda m, a, b: a.div_(b, rounding_mode="trunc"),
    "div_floor": lambda m, a, b: a.div_(b, rounding_mode="floor"),
    "silu": lambda m, a: _nn(m).silu(a, inplace=True),
    "clamp": lambda m, x, lo=None, hi=None: x.clamp_(lo, hi),
}
# Rows with no in-place form in PyTorch (nothing to compare with).
NO_INPLACE = {name for name in OPS
              if name not in INPLACE_CALLS and not hasattr(torch.Tensor, name + "_")}


def _namespace(m, name):
    """Where a row's function lives: rows named special_<f> are torch.special.<f>."""
    if name.startswith("special_"):
        return m.special, name[len("special_"):]
    return m, name


def elementwise_call(name):
    if name in ELEMENTWISE_CALLS:
        return ELEMENTWISE_CALLS[name]

    def call(m, *a, **k):
        ns, short = _namespace(m, name)
        return getattr(ns, short)(*a, **k)
    return call


def inplace_call(name):
    if name in INPLACE_CALLS:
        return INPLACE_CALLS[name]
    if name.startswith("__i"):
        return lambda m, x, *a: getattr(x, name)(*a)
    return lambda m, x, *a, **k: getattr(x, name + "_")(*a, **k)


def default_callable(name):
    """Whether a row works by default: both libraries have m.<name> (m.special.<f> for a row
    named special_<f>)."""
    import torchweb
    return all(hasattr(*_namespace(m, name)) for m in (torch, torchweb))


# Rows whose integer division PyTorch's own CPU kernel traps on (SIGFPE) for int32 -2**31 / -1:
# the generator keeps that pair out (a documented exclusion, not a torchweb deviation).
TRAPS_ON_INT_MIN = {"div_trunc"}

# -- Python operators ------------------------------------------------------------------------
BINARY_OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}
UNARY_OPERATORS = {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert, "abs": abs}
INPLACE_OPERATORS = ["__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
                     "__ipow__", "__iand__", "__ior__", "__ixor__"]


def operator_call(name):
    if name in BINARY_OPERATORS:
        return lambda m, a, b: BINARY_OPERATORS[name](a, b)
    return lambda m, a: UNARY_OPERATORS[name](a)


# -- reductions: the one list -------------------------------------------------------------------
# name -> what its call takes:
#   dims: which `dim` arguments ("none": omitted, "int", "tuple"); dim_required: never omitted
#   keepdim; dtype: a dtype= argument sometimes; var: correction/unbiased; p: norm orders
REDUCTIONS = {
    "sum": dict(dims=("none", "int", "tuple"), keepdim=True, dtype=True),
    "mean": dict(dims=("none", "int", "tuple"), keepdim=True, dtype=True),
    "prod": dict(dims=("none", "int"), keepdim=True, dtype=True),
    "max": dict(dims=("none", "int"), keepdim=True),
    "min": dict(dims=("none", "int"), keepdim=True),
    "amax": dict(dims=("none", "int", "tuple"), keepdim=True),
    "amin": dict(dims=("none", "int", "tuple"), keepdim=True),
    "argmax": dict(dims=("none", "int"), keepdim=True),
    "argmin": dict(dims=("none", "int"), keepdim=True),
    "all": dict(dims=("none", "int", "tuple"), keepdim=True),
    "any": dict(dims=("none", "int", "tuple"), keepdim=True),
    "var": dict(dims=("none", "int", "tuple"), keepdim=True, var=True),
    "std": dict(dims=("none", "int", "tuple"), keepdim=True, var=True),
    "var_mean": dict(dims=("none", "int", "tuple"), keepdim=True, var=True),
    "std_mean": dict(dims=("none", "int", "tuple"), keepdim=True, var=True),
    "logsumexp": dict(dims=("int", "tuple"), keepdim=True, dim_required=True),
    "norm": dict(dims=("none", "int", "tuple"), keepdim=True, p=(1, 2, float("inf"), float("-inf"), 0, 3, "fro", 1.5)),
    "linalg.vector_norm": dict(dims=("none", "int", "tuple"), keepdim=True, p=(1, 2, float("inf"), float("-inf"), 0, 3, 0.5)),
    "softmax": dict(dims=("int",), dim_required=True, dtype=True),
    "log_softmax": dict(dims=("int",), dim_required=True, dtype=True),
}


def reduction_call(name, form="fn"):
    """form: 'fn' (m.<name>(x, ...)) or 'method' (x.<name>(...)) where PyTorch has the method."""
    if name == "linalg.vector_norm":
        return lambda m, x, **k: m.linalg.vector_norm(x, **k)
    if name in ("softmax", "log_softmax") and form == "nn":
        return lambda m, x, **k: getattr(_nn(m), name)(x, **k)
    if form == "method":
        return lambda m, x, **k: getattr(x, name)(**k)
    return lambda m, x, **k: getattr(m, name)(x, **k)


def has_method(name):
    return "." not in name and hasattr(torch.Tensor, name)


# -- matmul -----------------------------------------------------------------------------------
MATMUL = {
    "mm": lambda m, a, b: m.mm(a, b),
    "bmm": lambda m, a, b: m.bmm(a, b),
    "matmul": lambda m, a, b: m.matmul(a, b),
    "@": lambda m, a, b: a @ b,
    "mv": lambda m, a, b: m.mv(a, b),
    "dot": lambda m, a, b: m.dot(a, b),
    "addmm": lambda m, c, a, b, **k: m.addmm(c, a, b, **k),
    "linear": lambda m, x, w, *b: _nn(m).linear(x, w, *b),
}

# -- views and writes ---------------------------------------------------------------------------
# view steps: see case.py (apply_step). Writes into a view, then the base is compared.
WRITES = {
    "add_": lambda m, x, v: x.add_(v),
    "mul_": lambda m, x, v: x.mul_(v),
    "copy_": lambda m, x, v: x.copy_(v),
    "fill_": lambda m, x, v: x.fill_(v),
    "zero_": lambda m, x: x.zero_(),
    "clamp_": lambda m, x, lo, hi: x.clamp_(lo, hi),
    "setitem": lambda m, x, idx, v: x.__setitem__(idx, v),
}
