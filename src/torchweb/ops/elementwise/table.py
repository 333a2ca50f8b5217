"""The table of elementwise ops: one row each.

A row names the op, how many operands it takes, its dtype rule, a WGSL expression per compute
class ('f' float computed in f32, 'i' int32/int64 computed in i32, 'u' uint8 and bool computed
in u32, 'b' WGSL bool) with operands as {0}, {1}, ..., and the numpy body used by the cpu device.
Helpers named tw_* in an expression are pulled in from kernels/wgsl.py automatically.

dtype rules:
  arith    result = promoted operands, computed in it             (add, mul, maximum, ...)
  float    like arith, but integers and bool go to the default float  (exp, sin, true div, ...)
  compare  computed in the promoted type, result bool             (eq, lt, ...)
  logical  operands read as bool, result bool                     (logical_and, ...)
  pred     computed in the operand's type, result bool            (isnan, ...)
  intonly  like arith, refused for floating operands              (bitwise ops)
"""

from dataclasses import dataclass, field

from ... import _bfloat16 as _bf16
from .. import special_cephes_np as _CE, special_np as _SP
from . import grads as G, grads_special as _SG


@dataclass(frozen=True)
class ElementwiseOp:
    name: str
    nin: int
    rule: str
    wgsl: dict                      # compute class -> expression template
    np: object                      # numpy body: (np, *arrays) -> array
    no_bool: str = ""               # error text when an operand is bool, PyTorch's words
    # PyTorch's kernel name when it has no kernel for some dtypes: NotImplementedError
    # '"<kernel>" not implemented for ...' for a bool operand, or for any non-float with ints=True
    kernel: str = ""
    ints: bool = False
    promote: int = 0                # how many leading operands decide the dtype (0: all)
    # int64 on the GPU: a WGSL expression of the exact 64-bit result (vec2<u32>, helpers tw_w*)
    # of the i32 operands, for ops whose int64 result can leave the 32 bits it is held in
    wide: str = ""
    divisor: int = -1               # operand that must not be 0 for integers (ZeroDivisionError)
    # autograd, beside the op (PyTorch's derivatives.yaml): the backward rule (grads.py;
    # None: not differentiable, and a float op without one raises when its gradient is needed),
    # what it reads ("x": every operand, "y": the result only, "": nothing, or {operand: the
    # operands whose gradients read it}), the operand whose gradient reads the result
    # (result_for), and PyTorch's node name (or (name with number operands, name with tensors))
    grad: object = None
    saves: object = "x"
    result_for: int = -1
    node: object = None
    # the public forms made from the row (ops/pointwise_api.py): api "unary" -> torch.name(input),
    # "binary" -> torch.name(input, other), "binary_tensor" -> other must be a tensor; "" for rows
    # whose public function is written by hand there (add with alpha, div's rounding modes, ...)
    api: str = ""
    doc: str = ""
    inplace: bool = True            # Tensor.name_ too
    aliases: tuple = ()
    extra: dict = field(default_factory=dict)


OPS = {}


def row_dtypes(row):
    """The input dtype names a row accepts, from its rule and refusals (ops/elementwise.py's
    _plan raises for the others): docs/ops.md's column for the ops made from rows."""
    names = ("bool", "uint8", "int32", "int64", "float16", "float32")
    if row.rule == "intonly":
        names = names[:4]
    if row.rule not in ("logical", "pred") and row.name != "where":
        if row.kernel and row.ints:
            names = tuple(n for n in names if n.startswith("float"))
        if row.kernel or row.no_bool or row.name in ("sub", "sub_alpha"):
            names = tuple(n for n in names if n != "bool")
    return names


# the one int64 quotient that leaves 32 bits: -2^31 / -1
_INT_MIN_BY_MINUS_ONE = "select(tw_w({}), vec2<u32>(0x80000000u, 0u), {{0}} == -2147483647i - 1i && {{1}} == -1i)"


def op(name, nin, rule, wgsl, np, **kw):
    if isinstance(wgsl, str):
        wgsl = {"f": wgsl, "i": wgsl, "u": wgsl, "b": wgsl}
    OPS[name] = ElementwiseOp(name, nin, rule, wgsl, np, **kw)


# -- copies and casts --------------------------------------------------------------------
op("copy", 1, "arith", "{0}", lambda np, a: a,
   grad=G.d_copy, saves="")
op("fill", 1, "arith", "{0}", lambda np, a: a)

# -- arithmetic --------------------------------------------------------------------------
op("add", 2, "arith", "({0} + {1})", lambda np, a, b: a + b, wide="tw_wadd(tw_w({0}), tw_w({1}))",
   grad=G.d_add, saves="")
# alpha (operand 2) is a multiplier, not a value: it takes no part in type promotion
op("add_alpha", 3, "arith", "({0} + {2} * {1})", lambda np, a, b, c: a + c * b, promote=2,
   wide="tw_wadd(tw_w({0}), tw_wmul(tw_w({2}), tw_w({1})))",
   grad=G.d_add_alpha, saves="", node='AddBackward0')
op("sub", 2, "arith", "({0} - {1})", lambda np, a, b: a - b, wide="tw_wadd(tw_w({0}), tw_wneg(tw_w({1})))",
   no_bool="Subtraction, the `-` operator, with two bool tensors is not supported. "
           "Use the `^` or `logical_xor()` operator instead.",
   grad=G.d_sub, saves="")
op("sub_alpha", 3, "arith", "({0} - {2} * {1})", lambda np, a, b, c: a - c * b,
   wide="tw_wadd(tw_w({0}), tw_wneg(tw_wmul(tw_w({2}), tw_w({1}))))",
   no_bool=OPS["sub"].no_bool, promote=2,
   grad=G.d_sub_alpha, saves="", node='SubBackward0')
op("mul", 2, "arith", "({0} * {1})", lambda np, a, b: a * b, wide="tw_wmul(tw_w({0}), tw_w({1}))",
   grad=G.d_mul, saves={0: (1,), 1: (0,)})
op("div", 2, "float", "({0} / {1})", lambda np, a, b: np.true_divide(a, b),
   grad=G.d_div, saves={0: (1,), 1: (0, 1)})
op("div_trunc", 2, "arith", {"f": "trunc({0} / {1})", "i": "select({0} / {1}, 0i, {1} == 0i)",
                             "u": "select({0} / {1}, 0u, {1} == 0u)"},
   lambda np, a, b: np.trunc(np.true_divide(a, b)).astype(a.dtype) if a.dtype.kind == "f"
   else _int_trunc_div(np, a, b), kernel="div_trunc_cpu", divisor=1, wide=_INT_MIN_BY_MINUS_ONE.format("({0} / {1})"),
   grad=G.d_div_trunc, saves="")
op("div_floor", 2, "arith", {"f": "tw_floordivf({0}, {1})", "i": "tw_floordivi({0}, {1})",
                             "u": "select({0} / {1}, 0u, {1} == 0u)"},
   lambda np, a, b: _floor_div(np, a, b), kernel="div_floor_cpu", divisor=1,
   wide=_INT_MIN_BY_MINUS_ONE.format("tw_floordivi({0}, {1})"),
   grad=G.d_div_floor, saves="")
op("remainder", 2, "arith", {"f": "tw_remf({0}, {1})", "i": "({0} - {1} * tw_floordivi({0}, {1}))",
                             "u": "select({0} % {1}, 0u, {1} == 0u)"},
   lambda np, a, b: np.remainder(a, b), kernel="remainder_cpu", divisor=1,
   grad=G.d_remainder, saves={0: (1,), 1: (1,)}, node=('RemainderBackward0', 'RemainderBackward1'),
   api="binary", doc="Python's modulo: input - other * floor(input / other); the sign of other.",
   extra={"scalar_input": True})
op("fmod", 2, "arith", {"f": "tw_fmodf({0}, {1})", "i": "tw_remi({0}, {1})",
                        "u": "select({0} % {1}, 0u, {1} == 0u)"},
   lambda np, a, b: np.fmod(a, b), kernel="fmod_cpu", divisor=1,
   grad=G.d_fmod, saves={0: (1,), 1: (1,)}, node=('FmodBackward0', 'FmodBackward1'),
   api="binary", doc="C's fmod: the remainder with the sign of input.")
op("pow", 2, "arith", {"f": "tw_powf({0}, {1})", "i": "tw_powi({0}, {1})", "u": "tw_powu({0}, {1})"},
   lambda np, a, b: _power(np, a, b), kernel="pow", wide="tw_wpow({0}, {1})",
   grad=G.d_pow, result_for=1, node=('PowBackward0', 'PowBackward1'))
op("maximum", 2, "arith", {"f": "tw_maxf({0}, {1})", "i": "max({0}, {1})", "u": "max({0}, {1})"},
   lambda np, a, b: np.maximum(a, b),
   grad=G.d_maximum,
   api="binary_tensor", inplace=False, doc='The larger of input and other, elementwise (NaN propagates).')
op("minimum", 2, "arith", {"f": "tw_minf({0}, {1})", "i": "min({0}, {1})", "u": "min({0}, {1})"},
   lambda np, a, b: np.minimum(a, b),
   grad=G.d_minimum,
   api="binary_tensor", inplace=False, doc='The smaller of input and other, elementwise (NaN propagates).')
op("clamp", 3, "arith", {"f": "tw_minf(tw_maxf({0}, {1}), {2})", "i": "min(max({0}, {1}), {2})",
                         "u": "min(max({0}, {1}), {2})"},
   lambda np, a, lo, hi: np.minimum(np.maximum(a, lo), hi),
   grad=G.d_clamp, node=('ClampBackward1', 'ClampBackward0'))
op("clamp_min", 2, "arith", {"f": "tw_maxf({0}, {1})", "i": "max({0}, {1})", "u": "max({0}, {1})"},
   lambda np, a, b: np.maximum(a, b),
   grad=G.d_clamp_min, node=('ClampBackward1', 'ClampBackward0'))
op("clamp_max", 2, "arith", {"f": "tw_minf({0}, {1})", "i": "min({0}, {1})", "u": "min({0}, {1})"},
   lambda np, a, b: np.minimum(a, b),
   grad=G.d_clamp_max, node=('ClampBackward1', 'ClampBackward0'))
op("neg", 1, "arith", {"f": "(-{0})", "i": "(-{0})", "u": "(0u - {0})"}, lambda np, a: np.negative(a),
   wide="tw_wneg(tw_w({0}))",
   no_bool="Negation, the `-` operator, on a bool tensor is not supported. "
           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
   grad=G.d_neg, saves="",
   api="unary", doc='-input, elementwise.', aliases=('negative',))
op("abs", 1, "arith", {"f": "abs({0})", "i": "abs({0})", "u": "{0}"}, lambda np, a: np.abs(a),
   kernel="abs_cpu", wide="select(tw_w({0}), tw_wneg(tw_w({0})), {0} < 0i)",
   grad=G.d_abs,
   api="unary", doc='|input|, elementwise.', aliases=('absolute',))
# sign(NaN) is 0 in PyTorch ((0 < x) - (x < 0))
op("sign", 1, "arith", {"f": "select(sign({0}), 0.0, tw_isnan({0}))", "i": "sign({0})", "u": "min({0}, 1u)"},
   lambda np, a: np.where(np.isnan(a), 0, np.sign(a)).astype(a.dtype) if a.dtype.kind == "f"
   else (a if a.dtype.kind == "b" else np.sign(a)),
   grad=G.d_sign, saves="",
   api="unary", doc='-1, 0 or 1 by the sign of input (0 for NaN), elementwise.')
op("square", 1, "arith", "({0} * {0})", lambda np, a: a * a, wide="tw_wmul(tw_w({0}), tw_w({0}))",
   grad=G.d_square, node='PowBackward0')
op("relu", 1, "arith", {"f": "select(max({0}, 0.0), {0}, tw_isnan({0}))", "i": "max({0}, 0i)", "u": "{0}"},
   lambda np, a: np.where(np.isnan(a), a, np.maximum(a, 0)) if a.dtype.kind == "f" else np.maximum(a, 0),
   no_bool="Boolean inputs not supported for relu",
   grad=G.d_relu, saves="y",
   api="unary", doc='max(input, 0), elementwise (NaN stays NaN).')
op("floor", 1, "arith", {"f": "floor({0})", "i": "{0}", "u": "{0}"}, lambda np, a: np.floor(a) if a.dtype.kind == "f" else a,
   kernel="floor_vml_cpu",
   grad=G.d_floor, saves="",
   api="unary", doc='The largest integer <= input.')
op("ceil", 1, "arith", {"f": "ceil({0})", "i": "{0}", "u": "{0}"}, lambda np, a: np.ceil(a) if a.dtype.kind == "f" else a,
   kernel="ceil_vml_cpu",
   grad=G.d_ceil, saves="",
   api="unary", doc='The smallest integer >= input.')
op("trunc", 1, "arith", {"f": "trunc({0})", "i": "{0}", "u": "{0}"}, lambda np, a: np.trunc(a) if a.dtype.kind == "f" else a,
   kernel="trunc_vml_cpu",
   grad=G.d_trunc, saves="", aliases=("fix",),
   api="unary", doc='input rounded toward zero.')
op("round", 1, "arith", {"f": "round({0})", "i": "{0}", "u": "{0}"}, lambda np, a: np.round(a) if a.dtype.kind == "f" else a,
   kernel="round_vml_cpu",
   grad=G.d_round, saves="",
   doc='input rounded to the nearest integer, halves to even.')   # public form: math_api.round (decimals=)
# float input rounded to the nearest bfloat16 (halves to even, on the float32 bits; NaN stays
# NaN), kept in its own dtype: what PyTorch's bfloat16 ops round to after each op. WebGPU has no
# bfloat16; optim.Muon's Newton-Schulz iteration emulates PyTorch's bfloat16 one with it. The
# gradient passes through, as that of PyTorch's cast (x.bfloat16().float()).
op("bfloat16_round", 1, "arith", {"f": "tw_bf16round({0})", "i": "{0}", "u": "{0}"},
   lambda np, a: _bf16.round_np(np, a) if a.dtype.kind == "f" else a,
   grad=G.d_copy, saves="", node="ToCopyBackward0", inplace=False)

# -- float functions ---------------------------------------------------------------------
op("exp", 1, "float", "tw_exp({0})", lambda np, a: np.exp(a),
   grad=G.d_exp, saves="y",
   api="unary", doc='e ** input, elementwise.')
op("exp2", 1, "float", "exp2({0})", lambda np, a: np.exp2(a),
   grad=G.d_exp2, saves="y",
   api="unary", doc='2 ** input, elementwise.')
op("log", 1, "float", "tw_log({0})", lambda np, a: np.log(a),
   grad=G.d_log,
   api="unary", doc='The natural logarithm of input, elementwise.')
op("log2", 1, "float", "(tw_log({0}) * 1.4426950408889634)", lambda np, a: np.log2(a),
   grad=G.d_log2,
   api="unary", doc='The base-2 logarithm of input, elementwise.')
op("log10", 1, "float", "(tw_log({0}) * 0.4342944819032518)", lambda np, a: np.log10(a),
   grad=G.d_log10,
   api="unary", doc='The base-10 logarithm of input, elementwise.')
op("log1p", 1, "float", "tw_log1p({0})", lambda np, a: np.log1p(a),
   grad=G.d_log1p, node='Log1PBackward0',
   api="unary", doc='log(1 + input), accurate for small input.')
op("expm1", 1, "float", "tw_expm1({0})", lambda np, a: np.expm1(a),
   grad=G.d_expm1, saves="y",
   api="unary", doc='exp(input) - 1, accurate for small input.')
op("sqrt", 1, "float", "tw_sqrt({0})", lambda np, a: np.sqrt(a),
   grad=G.d_sqrt, saves="y",
   api="unary", doc='The square root of input, elementwise.')
op("rsqrt", 1, "float", "tw_rsqrt({0})", lambda np, a: 1.0 / np.sqrt(a),
   grad=G.d_rsqrt, saves="y",
   api="unary", doc='1 / sqrt(input), elementwise.')
op("reciprocal", 1, "float", "(1.0 / {0})", lambda np, a: 1.0 / a,
   grad=G.d_reciprocal, saves="y",
   api="unary", doc='1 / input, elementwise.')
op("sin", 1, "float", "tw_sin({0})", lambda np, a: np.sin(a),
   grad=G.d_sin,
   api="unary", doc='The sine of input (radians), correctly range-reduced for every float32.')
op("cos", 1, "float", "tw_cos({0})", lambda np, a: np.cos(a),
   grad=G.d_cos,
   api="unary", doc='The cosine of input (radians), correctly range-reduced for every float32.')
op("tanh", 1, "float", "tw_tanh({0})", lambda np, a: np.tanh(a),
   grad=G.d_tanh, saves="y",
   api="unary", doc='The hyperbolic tangent of input, elementwise.')
op("sigmoid", 1, "float", "tw_sigmoid({0})", lambda np, a: _sigmoid(np, a),
   grad=G.d_sigmoid, saves="y",
   api="unary", doc='1 / (1 + exp(-input)), elementwise.')
op("silu", 1, "float", "({0} * tw_sigmoid({0}))", lambda np, a: a * _sigmoid(np, a), kernel="silu_cpu", ints=True,
   grad=G.d_silu)
op("erf", 1, "float", "tw_erf({0})", lambda np, a: _erf(np, a),
   grad=G.d_erf,
   api="unary", doc='The error function of input, elementwise.')
op("gelu", 1, "float", "(0.5 * {0} * (1.0 + tw_erf({0} * 0.7071067811865476)))",
   lambda np, a: 0.5 * a * (1.0 + _erf(np, a * np.float32(0.7071067811865476))),
   kernel="GeluKernelImpl", ints=True,
   grad=G.d_gelu)
op("gelu_tanh", 1, "float",
   "(0.5 * {0} * (1.0 + tw_tanh(0.7978845608028654 * ({0} + 0.044715 * {0} * {0} * {0}))))",
   lambda np, a: 0.5 * a * (1.0 + np.tanh(np.float32(0.7978845608028654) * (a + np.float32(0.044715) * a * a * a))),
   kernel="GeluKernelImpl", ints=True,
   grad=G.d_gelu_tanh, node='GeluBackward0')
op("nan_to_num", 4, "arith",
   {"f": "select(select(select({0}, {1}, tw_isnan({0})), select({3}, {2}, {0} > 0.0), tw_isinf({0})), {1}, tw_isnan({0}))",
    "i": "{0}", "u": "{0}"},
   lambda np, a, n, p, m: np.where(np.isnan(a), n, np.where(np.isposinf(a), p, np.where(np.isneginf(a), m, a)))
   if a.dtype.kind == "f" else a, promote=1,
   grad=G.d_nan_to_num)

# -- comparisons and logic ----------------------------------------------------------------


def _compare(name, sym, np_fn, aliases=()):
    # Float comparisons test NaN on the bits: compilers may assume no NaN and fold `!=` into
    # an ordered compare (lavapipe does), which makes NaN != NaN false.
    plain = f"({{0}} {sym} {{1}})"
    f = (f"(tw_isnan({{0}}) || tw_isnan({{1}}) || {plain})" if sym == "!=" else
         f"(!tw_isnan({{0}}) && !tw_isnan({{1}}) && {plain})")
    op(name, 2, "compare", {"f": f, "i": plain, "u": plain, "b": plain}, np_fn, api="binary",
       doc=f"input {sym} other, elementwise.", aliases=aliases)


_compare("eq", "==", lambda np, a, b: a == b)
_compare("ne", "!=", lambda np, a, b: a != b, ("not_equal",))
_compare("lt", "<", lambda np, a, b: a < b, ("less",))
_compare("le", "<=", lambda np, a, b: a <= b, ("less_equal",))
_compare("gt", ">", lambda np, a, b: a > b, ("greater",))
_compare("ge", ">=", lambda np, a, b: a >= b, ("greater_equal",))
op("logical_and", 2, "logical", "({0} && {1})", lambda np, a, b: np.logical_and(a, b),
   api="binary_tensor", doc='input and other (nonzero is true), as bool.')
op("logical_or", 2, "logical", "({0} || {1})", lambda np, a, b: np.logical_or(a, b),
   api="binary_tensor", doc='input or other (nonzero is true), as bool.')
op("logical_xor", 2, "logical", "({0} != {1})", lambda np, a, b: np.logical_xor(a, b),
   api="binary_tensor", doc='input xor other (nonzero is true), as bool.')
op("logical_not", 1, "logical", "(!{0})", lambda np, a: np.logical_not(a),
   api="unary", doc='not input (nonzero is true), as bool.')
op("bitwise_and", 2, "intonly", "({0} & {1})", lambda np, a, b: a & b,
   api="binary", doc='input & other for integers and bool.', extra={"scalar_input": True})
op("bitwise_or", 2, "intonly", "({0} | {1})", lambda np, a, b: a | b,
   api="binary", doc='input | other for integers and bool.', extra={"scalar_input": True})
op("bitwise_xor", 2, "intonly", "({0} ^ {1})", lambda np, a, b: a ^ b,
   api="binary", doc='input ^ other for integers and bool.', extra={"scalar_input": True})
# shifts as PyTorch's: a shift outside [0, bits) gives 0 (left) or the sign (right)
op("bitwise_left_shift", 2, "intonly",
   {"i": "select({0} << u32({1}), 0i, {1} < 0i || {1} >= 32i)", "u": "({0} << min({1}, 31u))", "f": "{0}"},
   lambda np, a, b: _shift(np, a, b, True), kernel="lshift_cpu", wide="tw_wshl(tw_w({0}), {1})",
   api="binary", doc="input << other for integers: 0 where other is negative or not less than the width.",
   extra={"scalar_input": True})
op("bitwise_right_shift", 2, "intonly",
   {"i": "({0} >> u32(select(min({1}, 31i), 31i, {1} < 0i)))", "u": "({0} >> min({1}, 31u))", "f": "{0}"},
   lambda np, a, b: _shift(np, a, b, False), kernel="rshift_cpu",
   api="binary", doc="input >> other for integers (arithmetic): the sign where other is negative or not "
                     "less than the width.", extra={"scalar_input": True})
op("gcd", 2, "intonly", {"i": "tw_gcdi({0}, {1})", "u": "tw_gcdu({0}, {1})", "f": "{0}"},
   lambda np, a, b: np.gcd(a, b), kernel="gcd_cpu",
   api="binary_tensor", doc="The greatest common divisor of |input| and |other| (gcd(0, 0) = 0), for integers.")
op("bitwise_not", 1, "intonly", {"i": "(~{0})", "u": "(~{0})", "b": "(!{0})", "f": "{0}"},
   lambda np, a: ~a,
   api="unary", doc='~input for integers, not input for bool.')
op("isnan", 1, "pred", {"f": "tw_isnan({0})", "i": "false", "u": "false"}, lambda np, a: np.isnan(a),
   api="unary", doc='Whether input is NaN.', inplace=False)
op("isinf", 1, "pred", {"f": "tw_isinf({0})", "i": "false", "u": "false"}, lambda np, a: np.isinf(a),
   api="unary", doc='Whether input is +inf or -inf.', inplace=False)
op("isfinite", 1, "pred", {"f": "!(tw_isinf({0}) || tw_isnan({0}))", "i": "true", "u": "true"},
   lambda np, a: np.isfinite(a),
   api="unary", doc='Whether input is neither infinite nor NaN.', inplace=False)
# where(cond, a, b): cond is read as bool, a and b promoted (special-cased in elementwise.py).
op("where", 3, "arith", "select({2}, {1}, {0})", lambda np, c, a, b: np.where(c, a, b),
   grad=G.d_where, saves={0: (1, 2)})




def _sigmoid(np, a):
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-a))).astype(a.dtype)


def _erf(np, a):
    import math
    return np.vectorize(math.erf, otypes=[a.dtype])(a) if a.size else a.copy()


def _power(np, a, b):
    if a.dtype.kind == "f" or not (b < 0).any():
        return np.power(a, b)
    # integers to negative powers: 0, except 1 and -1 (numpy refuses them); as the GPU's tw_powi
    safe = np.power(a, np.where(b < 0, 0, b))
    neg = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    return np.where(b < 0, neg, safe).astype(safe.dtype)


def _floor_div(np, a, b):
    if a.dtype.kind == "f":
        return np.floor_divide(a, b)
    with np.errstate(all="ignore"):
        return np.where(b == 0, 0, np.floor_divide(a, np.where(b == 0, 1, b))).astype(a.dtype)


def _shift(np, a, b, left):
    bits = a.dtype.itemsize * 8
    out_of_range = (b < 0) | (b >= bits)
    s = np.where(out_of_range, 0, b).astype(a.dtype)
    if left:
        return np.where(out_of_range, 0, np.left_shift(a, s)).astype(a.dtype)
    fill = np.right_shift(a, bits - 1) if a.dtype.kind == "i" else np.zeros_like(a)
    return np.where(out_of_range, fill, np.right_shift(a, s)).astype(a.dtype)


def _int_trunc_div(np, a, b):
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    return np.where(b == 0, 0, np.where((a < 0) != (safe < 0), -q, q)).astype(a.dtype)


# -- math functions (issue 7): trigonometric, hyperbolic, special --------------------------
# WGSL helpers in kernels/wgsl_math.py (accurate to a few ulp); the numpy bodies compute in
# float64 and round once.
def _math1(name, wgsl, np_fn, grad, doc, saves="x", aliases=(), **kw):
    op(name, 1, "float", {"f": wgsl}, lambda np, a: _f64(np, np_fn, a), grad=grad, saves=saves,
       api="unary", doc=doc, aliases=aliases, **kw)


def _f64(np, fn, *arrays):
    with np.errstate(all="ignore"):
        return np.asarray(fn(np, *(x.astype(np.float64) for x in arrays))).astype(arrays[0].dtype)


_math1("tan", "tw_tan({0})", lambda np, a: np.tan(a), G.d_tan, 'The tangent of input (radians), correctly range-reduced for every float32.', saves="y")
_math1("asin", "tw_asin({0})", lambda np, a: np.arcsin(a), G.d_asin, 'The arcsine of input (NaN outside [-1, 1]).', aliases=("arcsin",))
_math1("acos", "tw_acos({0})", lambda np, a: np.arccos(a), G.d_acos, 'The arccosine of input (NaN outside [-1, 1]).', aliases=("arccos",))
_math1("atan", "tw_atan({0})", lambda np, a: np.arctan(a), G.d_atan, 'The arctangent of input.', aliases=("arctan",))
_math1("sinh", "tw_sinh({0})", lambda np, a: np.sinh(a), G.d_sinh, 'The hyperbolic sine of input.')
_math1("cosh", "tw_cosh({0})", lambda np, a: np.cosh(a), G.d_cosh, 'The hyperbolic cosine of input.')
_math1("asinh", "tw_asinh({0})", lambda np, a: np.arcsinh(a), G.d_asinh, 'The inverse hyperbolic sine of input.', aliases=("arcsinh",))
_math1("acosh", "tw_acosh({0})", lambda np, a: np.arccosh(a), G.d_acosh, 'The inverse hyperbolic cosine of input (NaN below 1).', aliases=("arccosh",))
_math1("atanh", "tw_atanh({0})", lambda np, a: np.arctanh(a), G.d_atanh, 'The inverse hyperbolic tangent of input (NaN outside [-1, 1]).', aliases=("arctanh",))
_math1("erfc", "tw_erfc({0})", lambda np, a: _vec(np, "erfc", a), G.d_erfc, '1 - erf(input), accurate where erf(input) is near 1.')
_math1("erfinv", "tw_erfinv({0})", lambda np, a: _erfinv(np, a), G.d_erfinv, 'The inverse of erf (NaN outside [-1, 1]).', saves="y")
_math1("sinc", "tw_sinc({0})", lambda np, a: _sinc(np, a), G.d_sinc, 'sin(pi * input) / (pi * input), 1 at 0.')
_math1("deg2rad", "({0} * 0.017453292519943295)", lambda np, a: a * np.float32(0.017453292519943295),
       G.d_deg2rad, 'input converted from degrees to radians.', saves="", node="Deg2RadBackward0")
_math1("rad2deg", "({0} * 57.29577951308232)", lambda np, a: a * np.float32(57.29577951308232),
       G.d_rad2deg, 'input converted from radians to degrees.', saves="", node="Rad2DegBackward0")
# logit(input, eps) is written in pointwise_math (the clamp); this row is log(x / (1 - x)) as PyTorch
op("logit", 1, "float", {"f": "tw_log({0} / (1.0 - {0}))"}, lambda np, a: np.log(a / (1 - a)),
   grad=G.d_logit)
op("frac", 1, "arith", {"f": "({0} - trunc({0}))"}, lambda np, a: a - np.trunc(a), kernel="frac_cpu", ints=True,
   grad=G.d_copy, saves="", api="unary", doc='input - trunc(input): the fractional part, with the sign of input.')
op("sgn", 1, "arith", OPS["sign"].wgsl, OPS["sign"].np, grad=G.d_sign, saves="",
   api="unary", doc='The sign of input (sign for real tensors: -1, 0 or 1, 0 for NaN).')
op("signbit", 1, "pred", {"f": "((bitcast<u32>({0}) >> 31u) == 1u)", "i": "({0} < 0i)", "u": "false"},
   lambda np, a: np.signbit(a) if a.dtype.kind == "f" else (a < 0 if a.dtype.kind == "i" else np.zeros(a.shape, bool)),
   api="unary", inplace=False, doc='Whether the sign bit of input is set (-0.0 included).')


def _math2(name, wgsl, np_fn, grad, doc, rule="float", api="binary_tensor", inplace=True, aliases=(), **kw):
    op(name, 2, rule, wgsl if isinstance(wgsl, dict) else {"f": wgsl}, np_fn, grad=grad, api=api, doc=doc,
       inplace=inplace, aliases=aliases, **kw)


_math2("atan2", "tw_atan2({0}, {1})", lambda np, a, b: _f64(np, lambda np, x, y: np.arctan2(x, y), a, b), G.d_atan2,
       'The angle of the point (other, input): arctan(input / other) in the right quadrant.', aliases=("arctan2",))
_math2("hypot", "tw_hypot({0}, {1})", lambda np, a, b: _f64(np, lambda np, x, y: np.hypot(x, y), a, b), G.d_hypot,
       'sqrt(input ** 2 + other ** 2) without overflow or underflow.', rule="arith", kernel="hypot_cpu", ints=True)
_math2("copysign", "tw_copysign({0}, {1})", lambda np, a, b: np.copysign(a, b), G.d_copysign,
       'The magnitude of input with the sign of other (signed zeros and NaN included).', api="binary",
       result_for=0, node=("CopysignBackward1", "CopysignBackward0"))
_math2("xlogy", "tw_xlogy({0}, {1})", lambda np, a, b: _xlogy(np, a, b), G.d_xlogy,
       'input * log(other), 0 where input is 0 (unless other is NaN).', api="binary",
       node=("XlogyBackward2", "XlogyBackward0"), extra={"scalar_input": True})
_math2("logaddexp", "tw_logaddexp({0}, {1})", lambda np, a, b: _f64(np, lambda np, x, y: np.logaddexp(x, y), a, b),
       G.d_logaddexp, 'log(exp(input) + exp(other)), computed stably.', rule="arith", kernel="logaddexp_cpu",
       ints=True, inplace=False)
_math2("logaddexp2", "tw_logaddexp2({0}, {1})", lambda np, a, b: _f64(np, lambda np, x, y: np.logaddexp2(x, y), a, b),
       G.d_logaddexp2, 'log2(2 ** input + 2 ** other), computed stably.', rule="arith", kernel="logaddexp2_cpu",
       ints=True, inplace=False)
_math2("fmax", {"f": "tw_fmaxf({0}, {1})", "i": "max({0}, {1})", "u": "max({0}, {1})"},
       lambda np, a, b: np.fmax(a, b), G.d_fmax, 'The larger of input and other, NaN ignored where the other is a number.',
       rule="arith", inplace=False)
_math2("fmin", {"f": "tw_fminf({0}, {1})", "i": "min({0}, {1})", "u": "min({0}, {1})"},
       lambda np, a, b: np.fmin(a, b), G.d_fmin, 'The smaller of input and other, NaN ignored where the other is a number.',
       rule="arith", inplace=False)
_math2("nextafter", "tw_nextafter({0}, {1})", lambda np, a, b: np.nextafter(a, b), G.d_nextafter,
       'The next float after input in the direction of other.', rule="arith", kernel="nextafter_cpu", ints=True,
       saves="")
# heaviside's public form checks the dtypes first (ops/math_api.py)
op("heaviside", 2, "arith", {"f": "select(select(0.0, 1.0, {0} > 0.0), {1}, {0} == 0.0)",
                             "i": "select(select(0i, 1i, {0} > 0i), {1}, {0} == 0i)",
                             "u": "select(select(0u, 1u, {0} > 0u), {1}, {0} == 0u)"},
   lambda np, a, b: np.where(a == 0, b, (a > 0).astype(a.dtype)).astype(a.dtype))


# gamma family and Bessel functions (issue 7): WGSL in kernels/wgsl_special.py, numpy in special_np.py

_math1("lgamma", "tw_lgamma({0})", _SP.lgamma, G.d_lgamma, 'The log of the absolute value of the gamma function (+inf at the poles).')
_math1("digamma", "tw_digamma({0})", _SP.digamma, G.d_digamma, "The logarithmic derivative of the gamma function (NaN at the negative integers, -inf at +0, +inf at -0).")
_math1("i0", "tw_bessel(0.0, {0})", lambda np, a: _SP.bessel(np, 0, a), G.d_i0, 'The modified Bessel function of the first kind of order 0.')
# torch.polygamma(n, input) and Tensor.polygamma(n) are written in ops/special_ops.py: the row's
# operands are (input, n), n taking no part in the dtype
op("polygamma", 2, "float", {"f": "tw_polygamma({1}, {0})"}, lambda np, a, n: _f64(np, _SP.polygamma, a, n),
   promote=1, grad=G.d_polygamma)
op("special_i1", 1, "float", {"f": "tw_bessel(1.0, {0})"}, lambda np, a: _f64(np, lambda np, x: _SP.bessel(np, 1, x), a),
   grad=G.d_i1, node="SpecialI1Backward0")
op("special_zeta", 2, "float", {"f": "tw_zeta({0}, {1})"}, lambda np, a, b: _f64(np, _SP.zeta, a, b),
   grad=G.d_zeta)


def _igamma_np(np, name, a, b):
    """PyTorch's calc_igamma / calc_igammac (series, continued fraction, Temme's expansion), run in
    float32 as its float kernel: special_cephes_np.gammainc / gammaincc."""
    return _CE.vectorize(getattr(_CE, name), "float32")(np, a, b).astype(a.dtype)


_math2("igamma", "tw_igam({0}, {1})", lambda np, a, b: _igamma_np(np, "gammainc", a, b), G.d_igamma,
       "The regularized lower incomplete gamma function P(input, other) (differentiable in other only).",
       kernel="igamma_cpu", ints=True)
_math2("igammac", "tw_igamc({0}, {1})", lambda np, a, b: _igamma_np(np, "gammaincc", a, b),
       G.d_igammac, "The regularized upper incomplete gamma function Q(input, other) = 1 - P (differentiable in other only).",
       kernel="igammac_cpu", ints=True)

# torch.special's Cephes-derived functions (torchweb/special.py): WGSL in kernels/wgsl_cephes.py,
# numpy in special_cephes_np.py; PyTorch differentiates i0e, i1e, erfcx, ndtri and log_ndtr only


def _cephes(name, wgsl, fn, nin=1, **kw):
    if nin == 1:
        body = _CE.vectorize(getattr(_CE, fn))
        np_fn = lambda np, *a: _f64(np, body, *a)  # noqa: E731
    else:   # the polynomials' recurrences in float32, as PyTorch's
        body = _CE.vectorize(getattr(_CE, fn), "float32")
        np_fn = lambda np, *a: body(np, *a).astype(a[0].dtype)  # noqa: E731
    op("special_" + name, nin, "float", {"f": wgsl}, np_fn, **kw)


_cephes("i0e", "tw_i0e({0})", "i0e", grad=_SG.d_i0e, node="SpecialI0EBackward0")
_cephes("i1e", "tw_i1e({0})", "i1e", grad=_SG.d_i1e, node="SpecialI1EBackward0")
_cephes("erfcx", "tw_erfcx({0})", "erfcx", grad=_SG.d_erfcx, node="SpecialErfcxBackward0")
_cephes("ndtri", "tw_ndtri({0})", "ndtri", grad=_SG.d_ndtri, saves="y", node="SpecialNdtriBackward0")
_cephes("log_ndtr", "tw_logndtr({0})", "log_ndtr", grad=_SG.d_log_ndtr, node="SpecialLogNdtrBackward0")
_cephes("modified_bessel_i0", "tw_mi0({0})", "modified_bessel_i0")
_cephes("modified_bessel_i1", "tw_mi1({0})", "modified_bessel_i1")
_cephes("modified_bessel_k0", "tw_mk({0}, 0, false)", "modified_bessel_k0")
_cephes("modified_bessel_k1", "tw_mk({0}, 1, false)", "modified_bessel_k1")
_cephes("scaled_modified_bessel_k0", "tw_mk({0}, 0, true)", "scaled_modified_bessel_k0")
_cephes("scaled_modified_bessel_k1", "tw_mk({0}, 1, true)", "scaled_modified_bessel_k1")
_cephes("bessel_j0", "tw_j0({0})", "bessel_j0")
_cephes("bessel_j1", "tw_j1({0})", "bessel_j1")
_cephes("bessel_y0", "tw_y0({0})", "bessel_y0")
_cephes("bessel_y1", "tw_y1({0})", "bessel_y1")
_cephes("spherical_bessel_j0", "tw_sj0({0})", "spherical_bessel_j0")
_cephes("airy_ai", "tw_airy({0})", "airy_ai")
for _kind, _thr, _sthr in (("t", 6, 6), ("u", 8, 6), ("v", 8, 6), ("w", 8, 4)):
    _cephes(f"chebyshev_polynomial_{_kind}", f"tw_cheb{_kind}({{0}}, tw_degree({{1}}), {_thr}.0)",
            f"chebyshev_polynomial_{_kind}", nin=2)
    _cephes(f"shifted_chebyshev_polynomial_{_kind}", f"tw_cheb{_kind}({{0}} + {{0}} - 1.0, tw_degree({{1}}), {_sthr}.0)",
            f"shifted_chebyshev_polynomial_{_kind}", nin=2)
_cephes("hermite_polynomial_h", "tw_hermiteh({0}, {1})", "hermite_polynomial_h", nin=2)
_cephes("hermite_polynomial_he", "tw_hermitehe({0}, {1})", "hermite_polynomial_he", nin=2)
_cephes("laguerre_polynomial_l", "tw_laguerre({0}, {1})", "laguerre_polynomial_l", nin=2)
_cephes("legendre_polynomial_p", "tw_legendre({0}, {1})", "legendre_polynomial_p", nin=2)


def _vec(np, name, a):
    import math
    fn = getattr(math, name)

    def safe(v):
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return math.inf if name == "lgamma" else math.nan
    return np.vectorize(safe, otypes=[np.float64])(a) if a.size else a.copy()


def _erfinv(np, a):
    """Newton's method on math.erf in float64 from a rough start: accurate to float64."""
    import math
    def one(y):
        if not -1.0 <= y <= 1.0:
            return math.nan
        if abs(y) == 1.0:
            return math.copysign(math.inf, y)
        x = 0.0 if y == 0 else math.copysign(math.sqrt(-math.log((1 - abs(y)) / 2) * 0.9), y) if abs(y) > 0.7 else y * 0.886
        for _ in range(60):
            e = math.erf(x) - y
            d = 2 / math.sqrt(math.pi) * math.exp(-x * x)
            if d == 0:
                break
            step = e / d
            x -= step
            if abs(step) <= 1e-17 * max(1.0, abs(x)):
                break
        return x
    return np.vectorize(one, otypes=[np.float64])(a) if a.size else a.copy()


def _sinc(np, a):
    # as PyTorch: pi * x rounded to the input's precision first
    p = (np.float32(np.pi) * a.astype(np.float32)).astype(np.float64)
    with np.errstate(all="ignore"):
        return np.where(a == 0, 1.0, np.sin(p) / p)


def _xlogy(np, a, b):
    with np.errstate(all="ignore"):
        r = (a.astype(np.float64) * np.log(b.astype(np.float64))).astype(a.dtype)
    return np.where(np.isnan(b), np.nan, np.where(a == 0, 0, r)).astype(a.dtype)
