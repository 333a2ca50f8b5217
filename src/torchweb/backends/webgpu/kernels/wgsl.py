"""WGSL building blocks shared by the kernel generators: type conversions and helper functions."""

import struct

from .. import errors
from ..errors import CONTENTION, wgsl_raise

_F32, _U32 = struct.Struct("<f"), struct.Struct("<I")   # scalar_bits: every scalar operand


def convert(expr, src, dst):
    """Convert a WGSL value of type src to type dst (types: f32, f16, i32, u32, bool)."""
    if src == dst:
        return expr
    if src == "bool":
        one, zero = {"f32": ("1.0", "0.0"), "f16": ("1.0h", "0.0h"), "i32": ("1i", "0i"),
                     "u32": ("1u", "0u")}[dst]
        return f"select({zero}, {one}, {expr})"
    if dst == "bool":
        if src in ("f32", "f16"):
            # on the bits, so that NaN reads as true (`x != 0.0` may be folded to an ordered
            # compare, false for NaN); -0.0 reads as false
            return f"((bitcast<u32>(f32({expr})) & 0x7fffffffu) != 0u)"
        zero = {"i32": "0i", "u32": "0u"}[src]
        return f"({expr} != {zero})"
    if dst == "u32" and src in ("f32", "f16"):
        return f"bitcast<u32>(i32({expr}))"  # float -> uint8 wraps like a C cast via int
    return f"{dst}({expr})"


def load(expr, storage, compute):
    """A value read from a storage element, as the compute type."""
    return convert(expr, storage, compute)


def store(expr, value_type, dtype):
    """A computed value converted for the storage of dtype."""
    if dtype.name == "uint8":
        return f"({convert(expr, value_type, 'u32')} & 255u)"
    if dtype.name == "bool":
        return convert(convert(expr, value_type, "bool"), "bool", "u32")
    if dtype.name == "float16" and dtype.gpu_storage == "f32":
        return round_f16(convert(expr, value_type, "f32"))   # (no shader-f16: see runtime.py)
    if dtype.name == "bfloat16":   # held in f32 words: rounded to bfloat16's values (_dtype.py)
        return round_bf16(convert(expr, value_type, "f32"))
    return convert(expr, value_type, dtype.gpu_storage)


def round_bf16(x):
    """f32 value x rounded to the nearest bfloat16 (ties to even, as c10::BFloat16), as an f32;
    NaN stays NaN (the carry would corrupt it). The inline form of tw_bf16round."""
    b = f"bitcast<u32>({x})"
    rounded = f"bitcast<f32>(({b} + 0x7fffu + (({b} >> 16u) & 1u)) & 0xffff0000u)"
    return f"select({rounded}, {x}, ({b} & 0x7fffffffu) > 0x7f800000u)"


def round_f16(x):
    """f32 value x rounded to the nearest float16, as an f32 (float16 held in f32 words):
    pack2x16float rounds within float16's range; past 65520 it is an infinity, NaN stays NaN
    (pack2x16float leaves both indeterminate, so they are decided on the bits)."""
    a = f"(bitcast<u32>({x}) & 0x7fffffffu)"
    rounded = f"unpack2x16float(pack2x16float(vec2<f32>(clamp({x}, -65504.0, 65504.0), 0.0))).x"
    inf = f"bitcast<f32>((bitcast<u32>({x}) & 0x80000000u) | 0x7f800000u)"
    return f"select(select({rounded}, {inf}, {a} >= 0x477ff000u), {x}, {a} > 0x7f800000u)"


def scalar_bits(value, compute):
    """The u32 parameter word for a Python scalar that a kernel reads as `compute`."""
    if compute in ("f32", "f16"):
        try:
            return _U32.unpack(_F32.pack(float(value)))[0]
        except OverflowError:   # past float32's range: inf, as a C cast to float gives
            return 0x7F800000 if value > 0 else 0xFF800000
    if compute == "bool":
        return 1 if value else 0
    return int(value) & 0xFFFFFFFF


# WGSL has atomics for u32/i32 only: other values are combined into a word with a
# compare-exchange loop of errors.CAS_RETRIES retries. A loop that runs out of retries raises
# errors.CONTENTION (a RuntimeError at the next readback) rather than dropping its update, so
# every kernel using it binds the ERR buffer and tags its dispatch. Read at generation time:
# kernels key their pipelines on cas_key(), so a test can lower the bound.


def cas_key():
    """The part of a pipeline key that the compare-exchange loop's code depends on."""
    return ("cas", errors.CAS_RETRIES)


def cas_loop(word, new_value, tag, indent="  ", prelude=()):
    """WGSL lines that replace the atomic<u32> `word` with `new_value` (an expression of `old`,
    the word's current bits), retrying until no other invocation got in between, at most
    errors.CAS_RETRIES times; then errors.CONTENTION is raised for the dispatch tagged `tag` (a WGSL
    expression; the kernel binds ERR). `prelude`: statements run at the start of each attempt
    (they may compute new_value, or break)."""
    return [f"{indent}var old = atomicLoad(&{word});",
            f"{indent}var cas_t = 0u;",
            f"{indent}loop {{",
            f"{indent}  if (cas_t >= {errors.CAS_RETRIES}u) {{ {wgsl_raise(CONTENTION, tag)} break; }}",
            f"{indent}  cas_t = cas_t + 1u;",
            *(f"{indent}  {line}" for line in prelude),
            f"{indent}  let r = atomicCompareExchangeWeak(&{word}, old, {new_value});",
            f"{indent}  if (r.exchanged) {{ break; }}",
            f"{indent}  old = r.old_value;",
            f"{indent}}}"]


def cas_add_f32(word, value, tag, indent="  "):
    """WGSL lines adding the f32 `value` to the f32 bits held in the atomic<u32> `word`."""
    return cas_loop(word, f"bitcast<u32>(bitcast<f32>(old) + {value})", tag, indent)


def scalar_read(word, compute):
    if compute in ("f32", "f16"):
        return f"bitcast<f32>({word})"
    if compute == "i32":
        return f"bitcast<i32>({word})"
    if compute == "bool":
        return f"({word} != 0u)"
    return word


# Helper functions. NaN and infinity are tested on the bits: WGSL lets compilers assume
# that float arithmetic sees neither, so `x != x` may be folded away.
HELPERS = {
    "isnan": "fn tw_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }",
    "isinf": "fn tw_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }",
    "maxf": "fn tw_maxf(a: f32, b: f32) -> f32 { if (tw_isnan(a) || tw_isnan(b)) { return a + b; } return max(a, b); }",
    "minf": "fn tw_minf(a: f32, b: f32) -> f32 { if (tw_isnan(a) || tw_isnan(b)) { return a + b; } return min(a, b); }",
    # through a `let`: Tint refuses an infinite or NaN f32 constant expression
    "nan": "fn tw_nan() -> f32 { let bits = 0x7fc00000u; return bitcast<f32>(bits); }",
    "inf": "fn tw_inf() -> f32 { let bits = 0x7f800000u; return bitcast<f32>(bits); }",
    "exp": """fn tw_exp(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }  // SwiftShader's exp(NaN) is inf
  if (x > 88.72283935546875) { return tw_inf(); }
  if (x < -103.97) { return 0.0; }
  return exp(x);
}""",
    # log(1 + x) = 2 atanh(s), s = x / (2 + x): the series for |s| <= 0.18 (7 terms reach
    # 1e-12). Used near 1 by log and log1p, where WGSL's log is only specified to an absolute
    # 2^-21, which is no relative accuracy at all for results near 0.
    "atanh2": """fn tw_atanh2(s: f32) -> f32 {
  let s2 = s * s;
  let p = 1.0 + s2 * (0.3333333333 + s2 * (0.2 + s2 * (0.1428571429 + s2 * (0.1111111111
          + s2 * (0.0909090909 + s2 * 0.0769230769)))));
  return 2.0 * s * p;
}""",
    "log": """fn tw_log(x: f32) -> f32 {
  if (tw_isnan(x) || x < 0.0) { return tw_nan(); }
  if (x == 0.0) { return -tw_inf(); }
  if (tw_isinf(x)) { return x; }
  if (x > 0.7 && x < 1.4) { return tw_atanh2((x - 1.0) / (x + 1.0)); }  // x - 1 is exact here
  if (x < 1.17549435e-38) { return log(x * 16777216.0) - 16.635532333438686; }  // subnormal: * 2^24
  return log(x);
}""",
    "log1p": """fn tw_log1p(x: f32) -> f32 {
  if (tw_isnan(x) || x < -1.0) { return tw_nan(); }
  if (x == -1.0) { return -tw_inf(); }
  if (tw_isinf(x)) { return x; }
  if (x > -0.3 && x < 0.4) { return tw_atanh2(x / (2.0 + x)); }
  return log(1.0 + x);
}""",
    # exp(x) - 1: a Taylor polynomial for |x| < 0.35 (the error term x^9/9! is below 1e-9
    # relative), else exp(x) - 1, which no longer cancels (exp(x) is at least 1.4 or at most 0.7)
    "expm1": """fn tw_expm1(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  if (x > 88.72283935546875) { return tw_inf(); }
  if (x < -20.0) { return -1.0; }
  if (abs(x) < 0.35) {
    let p = 0.5 + x * (0.1666666667 + x * (0.0416666667 + x * (0.0083333333 + x * (0.0013888889
            + x * (0.0001984127 + x * 0.0000248016)))));
    return x + x * x * p;
  }
  return exp(x) - 1.0;
}""",
    "sqrt": """fn tw_sqrt(x: f32) -> f32 {
  if (tw_isnan(x) || x < 0.0) { return tw_nan(); }
  if (tw_isinf(x)) { return x; }
  return sqrt(x);
}""",
    "rsqrt": """fn tw_rsqrt(x: f32) -> f32 {
  if (tw_isnan(x) || x < 0.0) { return tw_nan(); }
  if (x == 0.0) { return select(tw_inf(), -tw_inf(), bitcast<u32>(x) != 0u); }  // 1/sqrt(-0) = -inf
  if (tw_isinf(x)) { return 0.0; }
  return 1.0 / sqrt(x);
}""",
    # tanh|x| = -e / (2 + e) with e = expm1(-2|x|): no cancellation for small x, unlike
    # (1 - exp(-2|x|)) / (1 + exp(-2|x|))
    "tanh": """fn tw_tanh(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  if (abs(x) > 9.1) { return sign(x); }
  let e = tw_expm1(-2.0 * abs(x));
  return sign(x) * (-e / (2.0 + e));
}""",
    "sigmoid": """fn tw_sigmoid(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  if (x >= 0.0) { return 1.0 / (1.0 + tw_exp(-x)); }
  let e = tw_exp(x);
  return e / (1.0 + e);
}""",
    # erf: Eigen's rational approximation on [-4, 4], accurate to a few ulp in float32.
    "erf": """fn tw_erf(a: f32) -> f32 {
  if (tw_isnan(a)) { return a; }
  let x = clamp(a, -4.0, 4.0);
  let x2 = x * x;
  var p = x2 * -2.72614225801306e-10 + 2.77068142495902e-08;
  p = x2 * p + -2.10102402082508e-06;
  p = x2 * p + -5.69250639462346e-05;
  p = x2 * p + -7.34990630326855e-04;
  p = x2 * p + -2.95459980854025e-03;
  p = x2 * p + -1.60960333262415e-02;
  p = x * p;
  var q = x2 * -1.45660718464996e-05 + -2.13374055278905e-04;
  q = x2 * q + -1.68282697438203e-03;
  q = x2 * q + -7.37332916720468e-03;
  q = x2 * q + -1.42647390514189e-02;
  return p / q;
}""",
    # PyTorch's pow: 0^0 = 1, x^0 = 1 even for NaN, 1^y = 1, negative bases only to integer powers.
    "powf": """fn tw_powf(a: f32, b: f32) -> f32 {
  if (b == 0.0 || a == 1.0) { return 1.0; }
  if (tw_isnan(a) || tw_isnan(b)) { return tw_nan(); }
  let b_int = b == floor(b) && !tw_isinf(b);
  let b_odd = b_int && abs(b) < 16777216.0 && (abs(b) % 2.0) == 1.0;
  if (a == 0.0) {
    if (b > 0.0) { return select(0.0, a, b_odd); }
    return select(tw_inf(), select(tw_inf(), -tw_inf(), bitcast<u32>(a) != 0u), b_odd);
  }
  if (tw_isinf(b)) {
    let m = abs(a);
    if (m == 1.0) { return 1.0; }
    if ((m > 1.0) == (b > 0.0)) { return tw_inf(); }
    return 0.0;
  }
  if (tw_isinf(a)) {
    if (a > 0.0) { return select(0.0, a, b > 0.0); }
    let r = select(0.0, tw_inf(), b > 0.0);
    return select(r, -r, b_odd);
  }
  if (a < 0.0 && !b_int) { return tw_nan(); }
  let r = exp2(b * log2(abs(a)));
  return select(r, -r, a < 0.0 && b_odd);
}""",
    "powi": """fn tw_powi(a: i32, b: i32) -> i32 {
  if (b < 0) { if (a == 1) { return 1; } if (a == -1) { return select(-1, 1, (b & 1) == 0); } return 0; }
  var r = 1i; var base = a; var e = b;
  loop { if (e == 0) { break; } if ((e & 1) == 1) { r = r * base; } base = base * base; e = e >> 1u; }
  return r;
}""",
    "powu": """fn tw_powu(a: u32, b: u32) -> u32 {
  var r = 1u; var base = a; var e = b;
  loop { if (e == 0u) { break; } if ((e & 1u) == 1u) { r = r * base; } base = base * base; e = e >> 1u; }
  return r;
}""",
    # C's fmod, exact like libm's: long division by b * 2^k (each subtraction is exact, as
    # the divisor is within a factor 2 of the remainder); `a - b * trunc(a / b)` loses
    # everything once a / b passes 2^24. fmodpos: r >= 0, m > 0 normal and finite.
    "fmodpos": """fn tw_fmodpos(r0: f32, m: f32) -> f32 {
  var r = r0;
  if (r < m) { return r; }
  let em = frexp(m).exp;
  for (var i = 0; i < 300 && r >= m; i = i + 1) {
    var d = ldexp(m, frexp(r).exp - em);
    if (d > r) { d = d * 0.5; }
    r = r - d;
  }
  return r;
}""",
    # A subnormal divisor m: first modulo m * 2^24 (a multiple of m, normal), then both sides
    # scaled up by 2^24 (exact), where frexp/ldexp see normal numbers only.
    "fmodf": """fn tw_fmodf(a: f32, b: f32) -> f32 {
  if (tw_isnan(a) || tw_isnan(b) || tw_isinf(a) || b == 0.0) { return tw_nan(); }
  if (tw_isinf(b)) { return a; }
  let m = abs(b);
  var r: f32;
  if (m < 1.17549435e-38) {
    let big = m * 16777216.0;
    r = tw_fmodpos(tw_fmodpos(abs(a), big) * 16777216.0, big) * 5.9604644775390625e-8;
  } else {
    r = tw_fmodpos(abs(a), m);
  }
  return select(r, -r, (bitcast<u32>(a) >> 31u) == 1u);   // the sign of a, -0.0 included
}""",
    # Python's modulo for floats (c10: fmod, then shifted into b's sign)
    "remf": """fn tw_remf(a: f32, b: f32) -> f32 {
  let m = tw_fmodf(a, b);
  if (m != 0.0 && !tw_isnan(m) && ((b < 0.0) != (m < 0.0))) { return m + b; }
  return m;
}""",
    # PyTorch's floor division for floats (c10 div_floor_floating).
    "floordivf": """fn tw_floordivf(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return a / b; }
  let m = tw_fmodf(a, b);
  var d = (a - m) / b;
  if (tw_isnan(d)) { return tw_nan(); }
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { d = d - 1.0; }
  if (d != 0.0) {
    var f = floor(d);
    if (d - f > 0.5) { f = f + 1.0; }
    return f;
  }
  // a zero quotient keeps the sign of a / b
  return bitcast<f32>((bitcast<u32>(a) ^ bitcast<u32>(b)) & 0x80000000u);
}""",
    # The full 64-bit product of two u32 as (low word, high word): WGSL has no 64-bit integers.
    "mulwide": """fn tw_mulwide(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}""",
    # a value rounded to float16 precision, on the bits (NVIDIA's compiler folds f32(f16(x)) to
    # x, and f16() of a value past f16's range is undefined): nearest-even at mantissa bit 13 for
    # normal halves, multiples of 2^-24 below 2^-14 (half's subnormals)
    "f16round": """fn tw_f16round(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  if (abs(x) >= 65520.0) { return select(tw_inf(), -tw_inf(), x < 0.0); }
  if (abs(x) < 6.103515625e-5) { return round(x * 16777216.0) * 5.9604644775390625e-8; }
  let b = bitcast<u32>(x);
  return bitcast<f32>((b + 0xfffu + ((b >> 13u) & 1u)) & 0xffffe000u);
}""",
    # a value rounded to bfloat16 precision, kept in f32 (WebGPU has no bfloat16): nearest-even
    # at mantissa bit 16, as PyTorch's c10::BFloat16; NaN stays NaN (the carry would corrupt it)
    "bf16round": """fn tw_bf16round(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  let b = bitcast<u32>(x);
  return bitcast<f32>((b + 0x7fffu + ((b >> 16u) & 1u)) & 0xffff0000u);
}""",
    # 64-bit integers as vec2<u32> (low word, high word), two's complement, wrapping mod 2^64
    # as int64 does in PyTorch: int64 results are computed exactly this way, then refused if
    # they leave the 32 bits the GPU holds int64 in (errors.py).
    "w": "fn tw_w(a: i32) -> vec2<u32> { return vec2<u32>(bitcast<u32>(a), select(0u, 0xffffffffu, a < 0i)); }",
    "wadd": """fn tw_wadd(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}""",
    "wneg": "fn tw_wneg(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(0u - a.x, ~a.y + select(0u, 1u, a.x == 0u)); }",
    "wmul": """fn tw_wmul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let p = tw_mulwide(a.x, b.x);
  return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}""",
    "wfits": "fn tw_wfits(a: vec2<u32>) -> bool { return a.y == select(0u, 0xffffffffu, bitcast<i32>(a.x) < 0i); }",
    "wpow": """fn tw_wpow(a: i32, b: i32) -> vec2<u32> {
  if (b < 0) { return tw_w(tw_powi(a, b)); }
  var r = vec2<u32>(1u, 0u); var base = tw_w(a); var e = b;
  loop { if (e == 0) { break; } if ((e & 1) == 1) { r = tw_wmul(r, base); } base = tw_wmul(base, base); e = e >> 1u; }
  return r;
}""",
    # Euclid's gcd, on magnitudes in u32 (abs of i32's minimum is 2^31 there)
    "gcdu": """fn tw_gcdu(a: u32, b: u32) -> u32 {
  var x = a; var y = b;
  loop { if (y == 0u) { break; } let t = x % y; x = y; y = t; }
  return x;
}""",
    "gcdi": "fn tw_gcdi(a: i32, b: i32) -> i32 { return bitcast<i32>(tw_gcdu(bitcast<u32>(abs(a)), bitcast<u32>(abs(b)))); }",
    # a << s as int64 (s outside [0, 64): 0), for the exact int64 result
    "wshl": """fn tw_wshl(a: vec2<u32>, s: i32) -> vec2<u32> {
  if (s < 0 || s >= 64) { return vec2<u32>(0u, 0u); }
  if (s == 0) { return a; }
  if (s >= 32) { return vec2<u32>(0u, a.x << u32(s - 32)); }
  return vec2<u32>(a.x << u32(s), (a.y << u32(s)) | (a.x >> u32(32 - s)));
}""",
    # i32 remainder spelled out: WGSL's % on negative i32 gave wrong results on NVIDIA (Vulkan)
    "remi": "fn tw_remi(a: i32, b: i32) -> i32 { if (b == 0) { return 0; } return a - b * (a / b); }",
    "floordivi": """fn tw_floordivi(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let q = a / b;
  if ((a - q * b != 0) && ((a < 0) != (b < 0))) { return q - 1; }
  return q;
}""",
}

HELPER_DEPS = {
    "maxf": ("isnan",), "minf": ("isnan",), "exp": ("isnan", "inf"), "log": ("isnan", "isinf", "nan", "inf", "atanh2"),
    "log1p": ("isnan", "isinf", "nan", "inf", "atanh2"), "expm1": ("isnan", "inf"), "sqrt": ("isnan", "isinf", "nan"),
    "rsqrt": ("isnan", "isinf", "nan", "inf"), "tanh": ("isnan", "expm1"), "sigmoid": ("isnan", "exp"),
    "erf": ("isnan",),
    "powf": ("isnan", "isinf", "nan", "inf"), "fmodf": ("isnan", "isinf", "nan", "fmodpos"),
    "remf": ("fmodf", "isnan"), "floordivf": ("fmodf", "isnan", "nan"),
    "wmul": ("mulwide",), "f16round": ("isnan", "inf"), "bf16round": ("isnan",), "wpow": ("w", "wmul", "powi"), "gcdi": ("gcdu",),
}


from .wgsl_trig import HELPERS as _TRIG, HELPER_DEPS as _TRIG_DEPS  # noqa: E402

HELPERS.update(_TRIG)
HELPER_DEPS.update(_TRIG_DEPS)
from .wgsl_math import HELPERS as _MATH, HELPER_DEPS as _MATH_DEPS  # noqa: E402

HELPERS.update(_MATH)
HELPER_DEPS.update(_MATH_DEPS)


def helpers_source(names):
    """Source of the named helpers and what they use, each once, dependencies first."""
    seen, order = set(), []

    def visit(n):
        if n in seen:
            return
        seen.add(n)
        for d in HELPER_DEPS.get(n, ()):
            visit(d)
        order.append(n)

    for n in sorted(names):
        visit(n)
    return "\n".join(HELPERS[n] for n in order)
