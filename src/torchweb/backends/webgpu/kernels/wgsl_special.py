"""Gamma-family and Bessel helpers in float32 WGSL (merged into wgsl.HELPERS through
wgsl_math.py): lgamma, digamma, trigamma, the Hurwitz zeta (polygamma of order >= 2), i0, i1.

lgamma: Stirling's series from 8 up; below, the recurrence into [1.5, 2.5] (log of a product of
at most 6 factors going down; log1p / log of the exact shift going up) and the Taylor series of
lgamma(2 + t) = (1 - gamma) t + sum_k (-1)^k (zeta(k) - 1) t^k / k (|t| <= 0.5; coefficients
computed here in float64, 15 terms: 2e-11), so there is no cancellation near the zeros at 1 and
2. Negative arguments by reflection, log(pi / |sin(pi x)|) - lgamma(1 - x); poles give +inf.
digamma / trigamma: the recurrence up to 10 (6 steps for trigamma) then the asymptotic series
(Bernoulli numbers); reflection below 0 / 0.5, as PyTorch does, with sin(pi * x) of the
float32 product (so the huge values PyTorch gives at negative integers match). zeta(s, q): the
direct sum (compensated) until q + k >= 9, then Euler-Maclaurin with 8 Bernoulli terms. i0 / i1: the power
series up to |x| = 12 (positive terms, no cancellation), then the asymptotic expansion
e^x / sqrt(2 pi x) * sum; inf gives NaN, as PyTorch's float kernels do.
"""

_L2 = [0.42278433509846713, 0.3224670334241132, -0.06735230105319794, 0.02058080842778459,
       -0.007385551028674176, 0.0028905103307414657, -0.00119275391170318, 0.0005096695247430727,
       -0.00022315475845359324, 9.9457512781842e-05, -4.4926236738149974e-05, 2.050721277565189e-05,
       -9.439488275253538e-06, 4.374866789899226e-06, -2.0392157537981365e-06]


def _poly_t(coeffs, v):
    """c0 v + c1 v^2 + ... by Horner."""
    expr = repr(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        expr = f"({expr}) * {v} + {c!r}"
    return f"({expr}) * {v}"


HELPERS = {
    "lgamma2": f"""fn tw_lgamma2(t: f32) -> f32 {{   // lgamma(2 + t), |t| <= 0.5
  return {_poly_t(_L2, "t")};
}}""",
    "lgammapos": """fn tw_lgammapos(x: f32) -> f32 {   // x > 0, finite
  if (x >= 8.0) {
    let lx = tw_logx(x);
    let r = 1.0 / x;
    let r2 = r * r;
    let s = r * (0.083333333333333333 - r2 * (0.0027777777777777778 - r2 * (0.00079365079365079365
             - r2 * 0.00059523809523809524)));
    return (x - 0.5) * (lx - 1.0) + (0.41893853320467274 + s);
  }
  if (x >= 2.5) {
    var y = x;
    var p = 1.0;
    for (var i = 0; i < 6 && y >= 2.5; i = i + 1) { y = y - 1.0; p = p * y; }
    return tw_lgamma2(y - 2.0) + tw_logx(p);
  }
  if (x >= 1.5) { return tw_lgamma2(x - 2.0); }
  if (x >= 0.5) { let t = x - 1.0; return tw_lgamma2(t) - tw_log1px(t); }
  return tw_lgamma2(x) - tw_log1px(x) - tw_logx(x);
}""",
    "lgamma": """fn tw_lgamma(x: f32) -> f32 {
  if (tw_isnan(x)) { return x; }
  if (tw_isinf(x)) { return tw_inf(); }
  if (x > 0.0) { return tw_lgammapos(x); }
  if (x == floor(x)) { return tw_inf(); }          // 0 and the negative integers: poles
  let r = x - round(x);                             // exact; sin(pi x) = +-sin(pi r)
  let s = abs(tw_sin(3.14159265358979 * r));
  return 1.1447298858494002 - tw_logx(s) - tw_lgammapos(1.0 - x);
}""",
    "digamma": """fn tw_digamma(x0: f32) -> f32 {
  if (tw_isnan(x0)) { return x0; }
  if (x0 == 0.0) { return tw_copysign(tw_inf(), -x0); }
  var x = x0;
  var res = 0.0;
  if (x < 0.0) {
    if (x == floor(x)) { return tw_nan(); }
    let r = x - round(x);                           // exact, and tan has period pi
    res = -3.14159265358979 / tw_tan(3.14159265358979 * r);
    x = 1.0 - x;
  }
  for (var i = 0; i < 10 && x < 10.0; i = i + 1) { res = res - 1.0 / x; x = x + 1.0; }
  let z = 1.0 / (x * x);
  let y = z * (0.083333333333333333 - z * (0.0083333333333333333 - z * (0.003968253968253968
           - z * (0.0041666666666666667 - z * (0.007575757575757576 - z * 0.021092796092796094)))));
  return res + tw_logx(x) - 0.5 / x - y;
}""",
    "trigamma": """fn tw_trigamma(x0: f32) -> f32 {
  if (tw_isnan(x0)) { return x0; }
  var x = x0;
  var sign = 1.0;
  var res = 0.0;
  if (x < 0.5) {
    sign = -1.0;
    let s = tw_sin(3.1415927410125732 * x);
    res = res - 9.869604401089358 / (s * s);
    x = 1.0 - x;
  }
  for (var i = 0; i < 6; i = i + 1) { res = res + 1.0 / (x * x); x = x + 1.0; }
  let ixx = 1.0 / (x * x);
  res = res + (1.0 + 1.0 / (2.0 * x) + ixx * (0.16666666666666667 - ixx * (0.033333333333333333
               - ixx * 0.023809523809523808))) / x;
  return sign * res;
}""",
    "powneg": """fn tw_powneg(a: f32, s: f32) -> f32 {   // a^-s (a < 0: s an integer)
  var m = 0.0;
  if (s == floor(s) && s <= 64.0) {               // by squaring: exact for dyadic a, few ulp else
    var b = abs(a);
    var e = u32(s);
    var p = 1.0;
    for (var i = 0; i < 7 && e != 0u; i = i + 1) {
      if ((e & 1u) != 0u) { p = p * b; }
      b = b * b;
      e = e >> 1u;
    }
    m = 1.0 / p;
  } else {
    m = tw_expx(-s * tw_logx(abs(a)));
  }
  return select(m, -m, a < 0.0 && (s - 2.0 * floor(s * 0.5)) == 1.0);
}""",
    "zeta": """fn tw_zeta(s: f32, q: f32) -> f32 {   // Hurwitz zeta for s > 1
  if (tw_isnan(s) || tw_isnan(q)) { return tw_nan(); }
  if (s == 1.0) { return tw_inf(); }
  if (s < 1.0) { return tw_nan(); }
  if (q <= 0.0) {
    if (q == floor(q)) { return tw_inf(); }
    if (s != floor(s)) { return tw_nan(); }
  }
  if (tw_isinf(q)) { return tw_nan(); }   // +inf (-inf is a pole above), as PyTorch
  var a = q;
  var sum = 0.0;
  var comp = 0.0;   // Neumaier's compensation: below 0 the terms cancel in pairs
  for (var i = 0; i < 4096 && a < 9.0; i = i + 1) {
    let v = tw_powneg(a, s);
    let t = sum + v;
    if (!tw_isinf(t)) { comp = comp + select((v - t) + sum, (sum - t) + v, abs(sum) >= abs(v)); }
    sum = t;
    a = a + 1.0;
  }
  let b = tw_powneg(a, s);
  sum = comp + (sum + (a * b / (s - 1.0) + 0.5 * b));
  // Euler-Maclaurin: B2j / (2j)! * s (s + 1) ... (s + 2j - 2) / a^(s + 2j - 1)
  var f = b / a * s;
  let ia2 = 1.0 / (a * a);
  sum = sum + f * 0.083333333333333333;
  f = f * (s + 1.0) * (s + 2.0) * ia2;
  sum = sum - f * 0.0013888888888888889;
  f = f * (s + 3.0) * (s + 4.0) * ia2;
  sum = sum + f * 3.3068783068783069e-05;
  f = f * (s + 5.0) * (s + 6.0) * ia2;
  sum = sum - f * 8.2671957671957672e-07;
  f = f * (s + 7.0) * (s + 8.0) * ia2;
  sum = sum + f * 2.0876756987868099e-08;
  f = f * (s + 9.0) * (s + 10.0) * ia2;
  sum = sum - f * 5.2841901386874932e-10;
  f = f * (s + 11.0) * (s + 12.0) * ia2;
  sum = sum + f * 1.3382536530684679e-11;
  f = f * (s + 13.0) * (s + 14.0) * ia2;
  sum = sum - f * 3.3896802963225829e-13;
  return sum;
}""",
    "polygamma": """fn tw_polygamma(n: f32, x: f32) -> f32 {
  if (n == 0.0) { return tw_digamma(x); }
  if (n == 1.0) { return tw_trigamma(x); }
  var fact = 1.0;
  for (var k = 2.0; k <= n && k < 64.0; k = k + 1.0) { fact = fact * k; }
  let z = tw_zeta(n + 1.0, x);
  return select(-fact, fact, (n - 2.0 * floor(n * 0.5)) == 1.0) * z;
}""",
    "bessel": """fn tw_bessel(nu: f32, x0: f32) -> f32 {   // I0 (nu = 0) or I1 (nu = 1)
  if (tw_isnan(x0) || tw_isinf(x0)) { return tw_nan(); }
  let x = abs(x0);
  var r = 0.0;
  if (x <= 12.0) {
    let q = 0.25 * x * x;
    var term = select(1.0, 0.5 * x, nu == 1.0);
    var sum = term;
    for (var k = 1.0; k < 40.0; k = k + 1.0) {
      term = term * q / (k * (k + nu));
      sum = sum + term;
      if (term < sum * 1e-9) { break; }
    }
    r = sum;
  } else {
    let mu = 4.0 * nu * nu;
    var term = 1.0;
    var sum = 1.0;
    for (var k = 1.0; k < 12.0; k = k + 1.0) {
      let c = 2.0 * k - 1.0;
      term = term * -(mu - c * c) / (8.0 * k * x);
      sum = sum + term;
    }
    r = tw_expx(x) * (sum * 0.3989422804014327 * inverseSqrt(x));
  }
  return select(r, -r, nu == 1.0 && x0 < 0.0);
}""",
    # the regularized incomplete gamma functions P(a, x) (upper: Q = 1 - P): P by its power series,
    # Q by Lentz's continued fraction where x > 1.1 and x > a (as PyTorch splits), each times
    # x^a e^-x / Gamma(a); PyTorch's special values first
}

_BASE = ("isnan", "isinf", "nan", "inf")
HELPER_DEPS = {
    "lgammapos": ("lgamma2", "logx", "log1px"),
    "lgamma": _BASE + ("lgammapos", "sin", "logx"),
    "digamma": _BASE + ("copysign", "tan", "logx"),
    "trigamma": ("isnan", "sin"),
    "powneg": ("expx", "logx"),
    "zeta": _BASE + ("powneg",),
    "polygamma": ("digamma", "trigamma", "zeta"),
    "bessel": _BASE + ("expx",),
}
