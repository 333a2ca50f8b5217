"""sin and cos for every float32 argument (WGSL helpers, merged into wgsl.HELPERS).

WGSL only bounds the builtins' absolute error (2^-11): NVIDIA's fast sin loses all relative
accuracy near 0 and SwiftShader's cos was off by 2e-4, and past 8192 any float32 range reduction
loses bits. So the reduction to [-pi/4, pi/4] is our own, then minimax polynomials (Cephes).

The reduction (Payne-Hanek) is exact integer arithmetic: x = m * 2^E times a 96-bit window of
the bits of 4/pi chosen by E gives x*4/pi mod 8 (the octant, top 3 bits) and a 93-bit fraction,
exact to 2^-69 octants. The float32 closest to a multiple of pi/2 is 1.6e-9 away from it (an
exhaustive search), so 40 significant bits remain even there. Every |x| > pi/4 takes this path:
Cephes' float32 reduction, used below 8192 before, was off by 5e-5 relatively at x = 252.898.
"""


def _four_over_pi_words(nbits=224, pad=32):
    """floor(4/pi * 2^(nbits-1)) as big-endian u32 words after `pad` zero bits: bit i of the
    table (0 = top of word 0) weighs 2^(pad-i)."""
    g = nbits + 64  # guard bits

    def atan_inv(n):  # atan(1/n) * 2^g, Taylor series in integers
        total, term, k, sign = 0, (1 << g) // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total

    pi = 16 * atan_inv(5) - 4 * atan_inv(239)  # Machin; off by a few units in 2^-g
    t = (4 << (g + nbits - 1)) // pi
    n = (pad + nbits) // 32
    return [(t >> (32 * (n - 1 - i))) & 0xFFFFFFFF for i in range(n)]


_TABLE = ", ".join(f"0x{w:08x}u" for w in _four_over_pi_words())

HELPERS = {
    "fouroverpi": f"const tw_four_over_pi = array<u32, 8>({_TABLE});",
    # (r, j): |x| = (j + r / (pi/4)) modulo 8 octants, j even, |r| <= pi/4; for |x| > pi/4
    "trigred": """fn tw_trigred(x: f32) -> vec2<f32> {
  let bits = bitcast<u32>(x);
  let m = (bits & 0x7fffffu) | 0x800000u;           // x = m * 2^(e - 23)
  let off = (bits >> 23u) - 120u;                   // table bit of weight 2^2 / 2^(e - 23)
  let w = off >> 5u;
  let s = off & 31u;
  let t = tw_four_over_pi;
  var win = vec3<u32>(t[w], t[w + 1u], t[w + 2u]);   // 96 bits from bit `off` on (hi first)
  if (s != 0u) {                                     // shifts by 32 are not allowed
    win = (win << vec3<u32>(s)) | (vec3<u32>(t[w + 1u], t[w + 2u], t[w + 3u]) >> vec3<u32>(32u - s));
  }
  // p = m * win mod 2^96; its top 3 bits weigh 4, 2, 1 octants
  let lo = tw_mulwide(m, win.z);
  let mid = tw_mulwide(m, win.y);
  let p1 = lo.y + mid.x;
  let p0 = mid.y + m * win.x + select(0u, 1u, p1 < lo.y);
  var j = p0 >> 29u;
  var a = p0 & 0x1fffffffu;                          // fraction (a, b, c): 93 bits
  var b = p1;
  var c = lo.x;
  var sgn = 1.0;
  if ((j & 1u) == 1u) {
    // odd octant: j + 1 and fraction - 1, as 2^93 - fraction with borrows (no float cancelling)
    j = j + 1u;
    sgn = -1.0;
    let bc = select(0u, 1u, c != 0u);
    let bb = select(0u, 1u, b != 0u || bc != 0u);
    c = 0u - c;
    b = 0u - b - bc;
    a = 0x20000000u - a - bb;
  }
  // normalise to a leading 1 in a, then (hi + lo) exactly enough, times pi/4 split in two
  var sh = 29i;
  for (var k = 0; k < 2 && a == 0u; k++) { a = b; b = c; c = 0u; sh += 32i; }
  let n = countLeadingZeros(a);
  if (n != 0u && n != 32u) { a = (a << n) | (b >> (32u - n)); b = (b << n) | (c >> (32u - n)); }
  let hi = f32(a & 0xffffff00u);
  let lof = f32(a & 0xffu) + f32(b) * 2.3283064365386963e-10;
  let r = fma(hi, 0.78539818525314331, lof * 0.78539818525314331 + hi * -2.1855694143368964e-8);
  return vec2<f32>(sgn * ldexp(r, -sh - i32(n)), f32(j & 7u));
}""",
    # sin (want_cos false) or cos of a finite a: the reduction above past pi/4, then Cephes'
    # minimax polynomials on [-pi/4, pi/4]
    "sincos": """fn tw_sincos(a: f32, want_cos: bool) -> f32 {
  var sgn = 1.0;
  if (!want_cos && a < 0.0) { sgn = -1.0; }
  var x = abs(a);
  var j = 0u;
  if (x > 0.78539818525314331) { let rj = tw_trigred(x); x = rj.x; j = u32(rj.y); }
  if (j > 3u) { sgn = -sgn; j = j - 4u; }
  if (want_cos && j > 1u) { sgn = -sgn; }
  let z = x * x;
  let c = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
  let s = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * x + x;
  let use_cos = (j == 1u || j == 2u) != want_cos;
  return sgn * select(s, c, use_cos);
}""",
    "sin": """fn tw_sin(x: f32) -> f32 {
  if (tw_isnan(x) || tw_isinf(x)) { return tw_nan(); }
  return tw_sincos(x, false);
}""",
    "cos": """fn tw_cos(x: f32) -> f32 {
  if (tw_isnan(x) || tw_isinf(x)) { return tw_nan(); }
  return tw_sincos(x, true);
}""",
}

HELPER_DEPS = {
    "trigred": ("fouroverpi", "mulwide"), "sincos": ("trigred",),
    "sin": ("isnan", "isinf", "nan", "sincos"), "cos": ("isnan", "isinf", "nan", "sincos"),
}
