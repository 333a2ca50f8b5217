"""Accurate float32 math helpers (WGSL, merged into wgsl.HELPERS): inverse trigonometric and
hyperbolic functions, tan, erfc/erfinv, hypot, logaddexp, nextafter.

WGSL only bounds its builtins loosely (exp: 3 + 2|x| ulp, log: 2^-21 absolute near 1), so the
functions here are built on an exp and a log of our own (tw_expx, tw_logx: Cody-Waite reduction
and a short polynomial, about 1 ulp), avoid cancellation by the usual identities (asinh through
log1p for small arguments, atanh by its series), and take tan from the exact range reduction of
wgsl_trig.py. The polynomials are Cephes' (single precision) except erfc's, fitted here: erfc(x)
= exp(-x^2) * P(1 / (1 + x)) on [0.5, 2] and [2, 10.06] (max 2e-7 relative in float32), with
exp(-x^2) from x split in two so that the big part's square is exact.
"""

_ERFC_A = [-4.488494553811506e-08, 1.2469909904666565e-07, 5.542808594327653e-07, -7.413168532366399e-06,
           3.261871825088747e-05, 7.09214509697631e-05, -0.0020271374378353357, 0.007895801216363907,
           0.18214134871959686, 0.42758357524871826]        # [0.5, 2]: s = (t - 0.5) * 6
_ERFC_B = [2.2966755608422318e-08, -4.585439228321775e-08, -5.116684747008549e-07, 2.778275529635721e-06,
           9.58696000452619e-06, -0.0001302135206060484, -0.0003222774248570204, 0.009054940193891525,
           0.10021577030420303, 0.14656561613082886]         # [2, 10.1]: s = (t - tm) / th
_TM_B, _TH_B = 0.21171171171171171, 0.1216216216216216


def _horner(coeffs, v):
    expr = repr(coeffs[0])
    for c in coeffs[1:]:
        expr = f"({expr}) * {v} + {c!r}"
    return expr


HELPERS = {
    # copysign on the bits (signed zeros and NaN included)
    "copysign": "fn tw_copysign(a: f32, b: f32) -> f32 { return bitcast<f32>((bitcast<u32>(a) & 0x7fffffffu) | (bitcast<u32>(b) & 0x80000000u)); }",
    "expx": """fn tw_expx(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  if (x > 88.72283935546875) { return tw_inf(); }
  if (x < -103.97208404541016) { return 0.0; }
  let n = floor(1.4426950408889634 * x + 0.5);
  var r = x - n * 0.693359375;                 // exact: n * 0.693359375 has at most 17 bits
  r = r - n * -2.1219444005469057e-4;
  let z = r * r;
  let p = (((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r + 4.1665795894e-2) * r
           + 1.6666665459e-1) * r + 5.0000001201e-1) * z + r + 1.0;
  let k = i32(n);
  return ldexp(ldexp(p, k / 2), k - k / 2);     // two steps: 2^128 is past ldexp's range
}""",
    "logx": """fn tw_logx(x0: f32) -> f32 {
  if (tw_isnan(x0) || x0 < 0.0) { return tw_nan(); }
  if (x0 == 0.0) { return -tw_inf(); }
  if (tw_isinf(x0)) { return x0; }
  var x = x0;
  var e0 = 0.0;
  if (x < 1.17549435e-38) { x = x * 16777216.0; e0 = -24.0; }
  let fe = frexp(x);
  var m = fe.fract;
  var e = f32(fe.exp) + e0;
  if (m < 0.70710678118654752) { m = m * 2.0; e = e - 1.0; }
  let r = tw_atanh2((m - 1.0) / (m + 1.0));     // m - 1 is exact
  return e * 0.693359375 + (r + e * -2.1219444005469057e-4);
}""",
    "log1px": """fn tw_log1px(x: f32) -> f32 {
  if (tw_isnan(x) || x < -1.0) { return tw_nan(); }
  if (x == -1.0) { return -tw_inf(); }
  if (tw_isinf(x)) { return x; }
  if (x > -0.29 && x < 0.41) { return tw_atanh2(x / (2.0 + x)); }
  let u = 1.0 + x;
  return tw_logx(u) + (x - (u - 1.0)) / u;      // the rounding of 1 + x, corrected
}""",
    "tan": """fn tw_tan(a: f32) -> f32 {
  if (tw_isnan(a) || tw_isinf(a)) { return tw_nan(); }
  var x = a;
  var j = 0u;
  if (abs(a) > 0.78539818525314331) { let rj = tw_trigred(abs(a)); x = rj.x; j = u32(rj.y); }
  let z = x * x;
  let c = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
  let s = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * x + x;
  var t = select(s / c, -c / s, (j & 2u) != 0u);   // octants 2 and 6: tan(pi/2 + r) = -cot(r)
  if (abs(a) > 0.78539818525314331 && a < 0.0) { t = -t; }
  return t;
}""",
    "asinpoly": """fn tw_asinpoly(x: f32) -> f32 {
  let z = x * x;
  return ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z
          + 1.6666752422e-1) * z * x + x;
}""",
    "asin": """fn tw_asin(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  let a = abs(x);
  if (a > 1.0) { return tw_nan(); }
  var r = tw_asinpoly(a);
  if (a > 0.5) { r = (1.5707963705062866 - 2.0 * tw_asinpoly(sqrt(0.5 * (1.0 - a)))) + -4.371139000186243e-8; }
  return tw_copysign(r, x);
}""",
    "acos": """fn tw_acos(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  if (abs(x) > 1.0) { return tw_nan(); }
  if (x < -0.5) { return (3.1415927410125732 - 2.0 * tw_asinpoly(sqrt(0.5 * (1.0 + x)))) + -8.742278000372485e-8; }
  if (x > 0.5) { return 2.0 * tw_asinpoly(sqrt(0.5 * (1.0 - x))); }
  return (1.5707963705062866 - tw_asinpoly(x)) + -4.371139000186243e-8;
}""",
    # atan of a >= 0 (inf included)
    "atanpos": """fn tw_atanpos(a0: f32) -> f32 {
  var a = a0;
  var y = 0.0;
  var lo = 0.0;
  if (a > 2.414213562373095) { y = 1.5707963705062866; lo = -4.371139000186243e-8; a = -1.0 / a; }
  else if (a > 0.41421356237309503) { y = 0.78539818525314331; lo = -2.1855695e-8; a = (a - 1.0) / (a + 1.0); }
  let z = a * a;
  let p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * a + a;
  return y + (p + lo);
}""",
    "atan": """fn tw_atan(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  return tw_copysign(tw_atanpos(abs(x)), x);
}""",
    "atan2": """fn tw_atan2(y: f32, x: f32) -> f32 {
  if (tw_isnan(x) || tw_isnan(y)) { return tw_nan(); }
  let xneg = (bitcast<u32>(x) >> 31u) == 1u;
  let ay = abs(y);
  let ax = abs(x);
  var r: f32;
  if (tw_isinf(ax) && tw_isinf(ay)) { r = select(0.78539818525314331, 2.3561944961547852, xneg); }
  else if (ay == 0.0 || tw_isinf(ax)) { r = select(0.0, 3.1415927410125732, xneg); }
  else if (ax == 0.0 || tw_isinf(ay)) { r = 1.5707963705062866; }
  else {
    r = tw_atanpos(ay / ax);
    if (xneg) { r = (3.1415927410125732 - r) + -8.742278000372485e-8; }
  }
  return tw_copysign(r, y);
}""",
    "sinh": """fn tw_sinh(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  let a = abs(x);
  var r: f32;
  if (a < 1.0) {
    let z = a * a;
    r = a + a * z * (0.16666666666666666 + z * (0.008333333333333333 + z * (1.984126984126984e-4
        + z * (2.755731922398589e-6 + z * (2.505210838544172e-8 + z * 1.6059043836821613e-10)))));
  } else if (a < 88.0) {
    let e = tw_expx(a);
    r = 0.5 * e - 0.5 / e;
  } else {
    let s = tw_expx(0.5 * a);                   // e^a / 2 without overflowing first
    r = (0.5 * s) * s;
  }
  return tw_copysign(r, x);
}""",
    "cosh": """fn tw_cosh(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  let a = abs(x);
  if (a < 88.0) { let e = tw_expx(a); return 0.5 * e + 0.5 / e; }
  let s = tw_expx(0.5 * a);
  return (0.5 * s) * s;
}""",
    "asinh": """fn tw_asinh(x: f32) -> f32 {
  if (tw_isnan(x) || tw_isinf(x)) { return x; }
  let a = abs(x);
  var r: f32;
  if (a > 268435456.0) { r = tw_logx(a) + 0.6931471805599453; }
  else if (a > 2.0) { r = tw_logx(2.0 * a + 1.0 / (sqrt(a * a + 1.0) + a)); }
  else { let z = a * a; r = tw_log1px(a + z / (1.0 + sqrt(1.0 + z))); }
  return tw_copysign(r, x);
}""",
    "acosh": """fn tw_acosh(x: f32) -> f32 {
  if (tw_isnan(x) || x < 1.0) { return tw_nan(); }
  if (tw_isinf(x)) { return x; }
  if (x > 268435456.0) { return tw_logx(x) + 0.6931471805599453; }
  if (x > 2.0) { return tw_logx(2.0 * x - 1.0 / (x + sqrt(x * x - 1.0))); }
  let t = x - 1.0;
  return tw_log1px(t + sqrt(2.0 * t + t * t));
}""",
    "atanh": """fn tw_atanh(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  let a = abs(x);
  if (a > 1.0) { return tw_nan(); }
  var r: f32;
  if (a == 1.0) { r = tw_inf(); }
  else if (a < 0.17) { r = 0.5 * tw_atanh2(a); }
  else { r = 0.5 * tw_log1px(2.0 * a / (1.0 - a)); }
  return tw_copysign(r, x);
}""",
    "hypot": """fn tw_hypot(a: f32, b: f32) -> f32 {
  let x = abs(a);
  let y = abs(b);
  if (tw_isinf(x) || tw_isinf(y)) { return tw_inf(); }
  if (tw_isnan(x) || tw_isnan(y)) { return tw_nan(); }
  let m = max(x, y);
  if (m == 0.0) { return 0.0; }
  let q = min(x, y) / m;
  return m * sqrt(1.0 + q * q);
}""",
    # exp(-a * a) for a >= 0 with the square's rounding avoided: a = ah + al, ah * ah exact
    "expmsq": """fn tw_expmsq(a: f32) -> f32 {
  let ah = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
  let al = a - ah;
  return tw_expx(-ah * ah) * tw_expx(-al * (a + ah));
}""",
    "erfc": f"""fn tw_erfc(x: f32) -> f32 {{
  if (tw_isnan(x)) {{ return x; }}
  let a = abs(x);
  if (a < 0.5) {{ return 1.0 - tw_erf(x); }}
  var r = 0.0;
  if (a < 10.06) {{
    let t = 1.0 / (1.0 + a);
    var p: f32;
    if (a < 2.0) {{ let s = (t - 0.5) * 6.0; p = {_horner(_ERFC_A, "s")}; }}
    else {{ let s = (t - {_TM_B!r}) * {1 / _TH_B!r}; p = {_horner(_ERFC_B, "s")}; }}
    r = tw_expmsq(a) * p;
  }}
  return select(r, 2.0 - r, x < 0.0);
}}""",
    # PyTorch's calc_erfinv: a rational first guess, then two Newton steps
    "erfinv": """fn tw_erfinv(y: f32) -> f32 {
  if (tw_isnan(y)) { return y; }
  let ya = abs(y);
  if (ya > 1.0) { return tw_nan(); }
  if (ya == 1.0) { return tw_copysign(tw_inf(), y); }
  var x: f32;
  if (ya <= 0.7) {
    let z = y * y;
    let num = ((-0.140543331 * z + 0.914624893) * z + -1.645349621) * z + 0.886226899;
    let dem = (((0.012229801 * z + -0.329097515) * z + 1.442710462) * z + -2.118377725) * z + 1.0;
    x = y * num / dem;
  } else {
    let z = sqrt(-tw_logx((1.0 - ya) / 2.0));
    let num = ((1.641345311 * z + 3.429567803) * z + -1.624906493) * z + -1.970840454;
    let dem = (1.6370678 * z + 3.5438892) * z + 1.0;
    x = tw_copysign(num, y) / dem;
  }
  if (ya <= 0.7) {
    x = x - (tw_erf(x) - y) / (1.1283791670955126 * tw_expx(-x * x));
    x = x - (tw_erf(x) - y) / (1.1283791670955126 * tw_expx(-x * x));
    return x;
  }
  // near +-1 Newton's steps on erfc(|x|) = 1 - |y| (exact): erf(x) - y has no digits left there
  var xa = abs(x);
  let q = 1.0 - ya;
  xa = xa + (tw_erfc(xa) - q) / (1.1283791670955126 * tw_expmsq(xa));
  xa = xa + (tw_erfc(xa) - q) / (1.1283791670955126 * tw_expmsq(xa));
  return tw_copysign(xa, y);
}""",
    "fmaxf": "fn tw_fmaxf(a: f32, b: f32) -> f32 { if (tw_isnan(a)) { return b; } if (tw_isnan(b)) { return a; } return max(a, b); }",
    "fminf": "fn tw_fminf(a: f32, b: f32) -> f32 { if (tw_isnan(a)) { return b; } if (tw_isnan(b)) { return a; } return min(a, b); }",
    "logaddexp": """fn tw_logaddexp(a: f32, b: f32) -> f32 {
  if (tw_isnan(a) || tw_isnan(b)) { return tw_nan(); }
  if (tw_isinf(a) && a == b) { return a; }
  return max(a, b) + tw_log1px(tw_expx(-abs(a - b)));
}""",
    "logaddexp2": """fn tw_logaddexp2(a: f32, b: f32) -> f32 {
  if (tw_isnan(a) || tw_isnan(b)) { return tw_nan(); }
  if (tw_isinf(a) && a == b) { return a; }
  return max(a, b) + tw_log1px(tw_expx(-abs(a - b) * 0.6931471805599453)) * 1.4426950408889634;
}""",
    "xlogy": """fn tw_xlogy(x: f32, y: f32) -> f32 {
  if (tw_isnan(y)) { return tw_nan(); }
  if (x == 0.0 && !tw_isnan(x)) { return 0.0; }
  return x * tw_logx(y);
}""",
    "sinc": """fn tw_sinc(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  if (x == 0.0) { return 1.0; }
  let p = 3.1415927410125732 * x;
  return tw_sin(p) / p;
}""",
    "nextafter": """fn tw_nextafter(a: f32, b: f32) -> f32 {
  if (tw_isnan(a) || tw_isnan(b)) { return tw_nan(); }
  if (a == b) { return b; }
  if (a == 0.0) { return tw_copysign(bitcast<f32>(1u), b); }
  let bits = bitcast<u32>(a);
  return bitcast<f32>(select(bits - 1u, bits + 1u, (b > a) == (a > 0.0)));
}""",
}

_BASE = ("isnan", "isinf", "nan", "inf")
HELPER_DEPS = {
    "expx": ("isnan", "inf"), "logx": _BASE + ("atanh2",), "log1px": _BASE + ("atanh2", "logx"),
    "tan": ("isnan", "isinf", "nan", "trigred"), "asin": ("isnan", "nan", "asinpoly", "copysign"),
    "acos": ("isnan", "nan", "asinpoly"), "atan": ("isnan", "atanpos", "copysign"),
    "atan2": _BASE + ("atanpos", "copysign"), "sinh": ("isnan", "expx", "copysign"), "cosh": ("isnan", "expx"),
    "asinh": ("isnan", "isinf", "logx", "log1px", "copysign"), "acosh": _BASE + ("logx", "log1px"),
    "atanh": _BASE + ("atanh2", "log1px", "copysign"), "hypot": _BASE, "expmsq": ("expx",),
    "erfc": ("isnan", "erf", "expmsq"), "erfinv": _BASE + ("logx", "erf", "expx", "copysign", "erfc", "expmsq"),
    "fmaxf": ("isnan",), "fminf": ("isnan",), "logaddexp": _BASE + ("log1px", "expx"),
    "logaddexp2": _BASE + ("log1px", "expx"), "xlogy": ("isnan", "nan", "logx"), "sinc": ("isnan", "sin"),
    "nextafter": ("isnan", "nan", "copysign"),
}

# gamma family and Bessel functions (lgamma, digamma, trigamma, zeta, polygamma, i0, i1)
from .wgsl_special import HELPERS as _SPECIAL, HELPER_DEPS as _SPECIAL_DEPS  # noqa: E402
HELPERS.update(_SPECIAL)
HELPER_DEPS.update(_SPECIAL_DEPS)

# torch.special's Cephes-derived functions (i0e, i1e, Bessel J/Y/I/K, Airy, ndtri, erfcx, log_ndtr,
# orthogonal polynomials)
from .wgsl_cephes import HELPERS as _CEPHES, HELPER_DEPS as _CEPHES_DEPS  # noqa: E402
HELPERS.update(_CEPHES)
HELPER_DEPS.update(_CEPHES_DEPS)
