"""Rejection samplers in one dispatch: a thread per output loops until its draw is accepted
(standard gamma: Marsaglia and Tsang with the alpha < 1 boost; Poisson: Knuth's product below
rate 10, Hörmann's PTRS above; binomial: inversion below mean 10, Hörmann's BTRS above, as
PyTorch samples them). Element i's r-th try reads the Philox block at counter (i, call, r, 0):
one generator call per dispatch, however many tries (random.py's fills use round 0 of theirs).
The cpu device runs the same steps in numpy (backends/cpu_samplers.py); its docstrings say
which words each try reads."""

import struct

from .elementwise import WORKGROUP, param
from .random import PHILOX, counter_words
from .wgsl import helpers_source
from ...sampling import BTRS_MIN_MEAN, LOG_FACTORIAL, MAX_ROUNDS, PTRS_MIN_RATE, STIRLING_TAIL

TINY = "1.17549435e-38"   # float32's smallest normal: PyTorch's floor for gamma draws

_BLOCK = f"""
fn tw_block(i: u32, r: u32) -> vec4<f32> {{
  let x = tw_philox(vec4<u32>(i, {param(4)}, r, 0u), vec2<u32>({param(2)}, {param(3)}));
  return vec4<f32>(x >> vec4<u32>(8u)) * 5.9604644775390625e-08;
}}
"""

_GAMMA = f"""
fn tw_sample(i: u32, alpha: f32) -> f32 {{
  if (tw_isnan(alpha) || alpha < 0.0) {{ return tw_nan(); }}
  if (alpha == 0.0) {{ return {TINY}; }}
  let small = alpha < 1.0;
  let a = select(alpha, alpha + 1.0, small);
  let d = a - 1.0 / 3.0;
  let c = 1.0 / sqrt(9.0 * d);
  for (var r = 0u; r < {MAX_ROUNDS}u; r = r + 1u) {{
    let u = tw_block(i, r);
    let x = sqrt(-2.0 * tw_log(u.x + 5.9604644775390625e-08)) * cos(6.283185307179586 * u.y);
    let y = 1.0 + c * x;
    if (y <= 0.0) {{ continue; }}
    let v = y * y * y;
    let t = 1.0 - u.z;
    let xx = x * x;
    if (t < 1.0 - 0.0331 * xx * xx || tw_log(t) < 0.5 * xx + d * (1.0 - v + tw_log(v))) {{
      var g = d * v;
      if (small) {{ g = g * tw_exp(tw_log(1.0 - u.w) / alpha); }}
      return max(g, {TINY});
    }}
  }}
  return tw_nan();
}}
"""


def _counting(acc, update, stop, result):
    """WGSL: a loop over the uniforms (four a try) setting acc = update, returning the number
    of uniforms before `stop` first held (held in `result`)."""
    return f"""for (var r = 0u; r < {MAX_ROUNDS}u; r = r + 1u) {{
    let u = tw_block(i, r);
    for (var j = 0u; j < 4u; j = j + 1u) {{
      {acc} = {update};
      if ({stop}) {{ return {result}; }}
      {result} = {result} + 1.0;
    }}
  }}
  return tw_nan();"""


# the start of a PTRS or BTRS try: u - 1/2 from word 0 (us = 1/2 - |u - 1/2|, where 0 would
# divide by zero), v from word 1
_TRANSFORMED_TRY = """let u = tw_block(i, r);
    let uu = u.x - 0.5;
    let vv = u.y;
    let us = 0.5 - abs(uu);
    if (us <= 0.0) { continue; }"""


def _table(name, values):
    kind = f"array<f32, {len(values)}>"
    return f"var<private> {name}: {kind} = {kind}({', '.join(map(repr, values))});\n"


_POISSON = _table("LOG_FACTORIAL", LOG_FACTORIAL) + f"""
fn tw_log_pmf(k: f32, rate: f32) -> f32 {{
  if (k < {PTRS_MIN_RATE}) {{ return k * tw_log(rate) - rate - LOG_FACTORIAL[u32(clamp(k, 0.0, 9.0))]; }}
  let e = k - rate;
  return -(k * tw_log1p(e / rate) - e) - 0.5 * tw_log(6.283185307179586 * k)
         - (1.0 / 12.0 - (1.0 / 360.0) / (k * k)) / k;
}}

fn tw_sample(i: u32, rate: f32) -> f32 {{
  if (rate == 0.0) {{ return 0.0; }}
  if (tw_isnan(rate) || tw_isinf(rate) || rate < 0.0) {{ return tw_nan(); }}
  if (rate < {PTRS_MIN_RATE}) {{
    let enlam = tw_exp(-rate);
    var prod = 1.0;
    var count = 0.0;
    {_counting("prod", "prod * u[j]", "prod <= enlam", "count")}
  }}
  let slam = sqrt(rate);
  let b = 0.931 + 2.53 * slam;
  let a = -0.059 + 0.02483 * b;
  let log_invalpha = tw_log(1.1239 + 1.1328 / (b - 3.4));
  let vr = 0.9277 - 3.6224 / (b - 2.0);
  for (var r = 0u; r < {MAX_ROUNDS}u; r = r + 1u) {{
    {_TRANSFORMED_TRY}
    let k = floor((2.0 * a / us + b) * uu + rate + 0.43);
    if (us >= 0.07 && vv <= vr) {{ return k; }}
    if (k < 0.0 || (us < 0.013 && vv > us)) {{ continue; }}
    if (tw_log(vv) + log_invalpha - tw_log(a / (us * us) + b) <= tw_log_pmf(k, rate)) {{ return k; }}
  }}
  return tw_nan();
}}
"""

_BINOMIAL = _table("STIRLING_TAIL", STIRLING_TAIL) + f"""
fn tw_tail(k: f32) -> f32 {{
  if (k <= 9.0) {{ return STIRLING_TAIL[u32(clamp(k, 0.0, 9.0))]; }}
  let kp1sq = (k + 1.0) * (k + 1.0);
  return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0) / kp1sq) / kp1sq) / (k + 1.0);
}}

fn tw_inversion(i: u32, count: f32, p: f32) -> f32 {{
  let logq = tw_log1p(-p);
  var total = 0.0;
  var geoms = 0.0;
  {_counting("total", "total + ceil(tw_log(u[j]) / logq)", "total > count", "geoms")}
}}

fn tw_btrs(i: u32, count: f32, p: f32) -> f32 {{
  let stddev = sqrt(count * p * (1.0 - p));
  let b = 1.15 + 2.53 * stddev;
  let a = -0.0873 + 0.0248 * b + 0.01 * p;
  let c = count * p + 0.5;
  let v_r = 0.92 - 4.2 / b;
  let odds = p / (1.0 - p);
  let alpha = (2.83 + 5.1 / b) * stddev;
  let m = floor((count + 1.0) * p);
  let fixed = tw_log(odds * (count - m + 1.0) / (m + 1.0));
  let tails_m = tw_tail(m) + tw_tail(count - m);
  for (var r = 0u; r < {MAX_ROUNDS}u; r = r + 1u) {{
    {_TRANSFORMED_TRY}
    let k = floor((2.0 * a / us + b) * uu + c);
    if (k < 0.0 || k > count) {{ continue; }}
    if (us >= 0.07 && vv <= v_r) {{ return k; }}
    let delta = k - m;
    let bound = -(k + 0.5) * tw_log1p(delta / (m + 1.0)) + (count - k + 0.5) * tw_log1p(delta / (count - k + 1.0))
                + delta * fixed + tails_m - tw_tail(k) - tw_tail(count - k);
    if (tw_log(vv * alpha / (a / (us * us) + b)) <= bound) {{ return k; }}
  }}
  return tw_nan();
}}

fn tw_sample(i: u32, count: f32, prob: f32) -> f32 {{
  if (count <= 0.0 || prob <= 0.0) {{ return 0.0; }}
  if (prob >= 1.0) {{ return count; }}
  if (tw_isnan(count) || tw_isnan(prob) || tw_isinf(count)) {{ return tw_nan(); }}
  let flip = prob > 0.5;
  let p = select(prob, 1.0 - prob, flip);
  var k = 0.0;
  if (count * p < {BTRS_MIN_MEAN}) {{ k = tw_inversion(i, count, p); }} else {{ k = tw_btrs(i, count, p); }}
  return select(k, count - k, flip);
}}
"""

_SAMPLERS = {"gamma": (_GAMMA, 1), "poisson": (_POISSON, 1), "binomial": (_BINOMIAL, 2)}


def run(rt, kind, out, params, seed, call):
    """out (float32, contiguous) = draws of kind at params' elements (float32, contiguous, out's
    numel each: gamma's alpha; poisson's rate; binomial's count and prob)."""
    n = out.numel()
    if n == 0:
        return
    body, nparams = _SAMPLERS[kind]
    offsets = [p._offset for p in params] + [0] * (2 - len(params))
    words = [n, out._offset, *counter_words(seed, call), *offsets, 0]   # (counter words where random.py has them)

    def make_code():
        reads = "".join(f"@group(0) @binding({2 + k}) var<storage, read> B{1 + k}: array<f32>;\n"
                        for k in range(nparams))
        args = ", ".join(f"B{1 + k}[{param(5 + k)} + i]" for k in range(nparams))
        return ("@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 2>;\n"
                "@group(0) @binding(1) var<storage, read_write> B0: array<f32>;\n" + reads
                + PHILOX + helpers_source({"log", "log1p", "exp", "nan", "isnan", "isinf"}) + _BLOCK + body +
                f"@compute @workgroup_size({WORKGROUP})\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                "        @builtin(local_invocation_index) lid: u32) {\n"
                f"  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;\n"
                f"  if (i >= {param(0)}) {{ return; }}\n"
                f"  B0[{param(1)} + i] = tw_sample(i, {args});\n}}\n")

    pid = rt.pipeline(("sample", kind), make_code, ["uniform", "write"] + ["read"] * nparams)
    buffers = [(out._storage.buffer_for_write(), out._storage.size)]
    buffers += [(p._storage.buffer_for_read(), p._storage.size) for p in params]
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers, struct.pack("<8I", *words), work=64 * n)
