"""sin and cos for every float32 argument (WGSL helpers, merged into wgsl.HELPERS).

WGSL only bounds the builtins' absolute error (2^-11): NVIDIA's fast sin loses all relative
accuracy near 0 and SwiftShader's cos was off by 2e-4, and past 8192 any float32 range reduction
loses bits. So the reduction to [-pi/4, pi/4] is our own, then minimax polynomials (Cephes).
"""

HELPERS = {
    # sin and cos: Cephes' range reduction to [-pi/4, pi/4] and minimax polynomials, because
    # WGSL only bounds the builtins' absolute error (2^-11): NVIDIA's fast sin loses all relative
    # accuracy near 0 and SwiftShader's cos was off by 2e-4. Past 8192 the reduction in f32
    # loses bits, so the builtins take over there.
    "sincos": """fn tw_sincos(a: f32, want_cos: bool) -> f32 {
  var sgn = 1.0;
  var x = abs(a);
  if (!want_cos && a < 0.0) { sgn = -1.0; }
  var j = u32(x * 1.2732395447351628);
  var y = f32(j);
  if ((j & 1u) == 1u) { j = j + 1u; y = y + 1.0; }
  j = j & 7u;
  if (j > 3u) { sgn = -sgn; j = j - 4u; }
  if (want_cos && j > 1u) { sgn = -sgn; }
  x = ((x - y * 0.78515625) - y * 2.4187564849853515625e-4) - y * 3.77489497744594108e-8;
  let z = x * x;
  let c = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
  let s = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * x + x;
  let use_cos = (j == 1u || j == 2u) != want_cos;
  return sgn * select(s, c, use_cos);
}""",
    "sin": """fn tw_sin(x: f32) -> f32 {
  if (tw_isnan(x) || tw_isinf(x)) { return tw_nan(); }
  if (abs(x) > 8192.0) { return sin(x); }
  return tw_sincos(x, false);
}""",
    "cos": """fn tw_cos(x: f32) -> f32 {
  if (tw_isnan(x) || tw_isinf(x)) { return tw_nan(); }
  if (abs(x) > 8192.0) { return cos(x); }
  return tw_sincos(x, true);
}""",
}

HELPER_DEPS = {
    "sin": ("isnan", "isinf", "nan", "sincos"), "cos": ("isnan", "isinf", "nan", "sincos"),
}
