"""The Bunch-Kaufman LDL^T of symmetric matrices in one dispatch, as LAPACK's sytf2 (lower): a
workgroup per matrix of a batch works on the lower triangle in the output buffer, in place as
sytf2 does. Step k: the largest |entry| below the diagonal of column k (the first on ties, as
idamax) and the largest off the diagonal in that row (read from the lower triangle) by
workgroup reductions; the 1 x 1 or 2 x 2 choice (alpha = (1 + sqrt 17) / 8), made alike by every
thread from workgroup memory; the interchange within the trailing triangle; the rank-1 or rank-2
update, a thread per column; then column k (and k + 1) scaled into L. The loop runs n steps at
uniform control flow (barriers), a step inside a 2 x 2 block doing nothing. ops/linalg_ldl.py
runs it where the backend has it (ldl_fits); the cpu device composes the same steps.

solve() is sytrs in one dispatch: a thread per right-hand side (64 a workgroup) substitutes its
column through each step's interchange, L's column(s) and D's block, then back through L^T, in
place in the output; no barriers (a thread reads only its own column and the shared factor)."""

import struct
from math import sqrt

from .elementwise import param

THREADS = 256
ALPHA = (1.0 + sqrt(17.0)) / 8.0


def _argmax(T, value, index):
    """WGSL: (bv, bi) of the workgroup, each thread's candidate (value, index; index
    0xffffffff: none), the larger value first, the lower index on ties."""
    return f"""    bv_s[t] = {value}; bi_s[t] = {index};
    workgroupBarrier();
    for (var s = {T // 2}u; s > 0u; s = s >> 1u) {{
      if (t < s) {{
        let ov = bv_s[t + s]; let oi = bi_s[t + s];
        if (oi != NONE && (bi_s[t] == NONE || ov > bv_s[t] || (ov == bv_s[t] && oi < bi_s[t]))) {{
          bv_s[t] = ov; bi_s[t] = oi;
        }}
      }}
      workgroupBarrier();
    }}
"""


def run(rt, out, pivots, info, inp, n, count):
    """out [count, n, n] = the LD factors of inp's lower triangles (float32, contiguous from
    offset 0; upper triangle zero); pivots [count, n] (int32, LAPACK's); info [count] (int32)."""
    if count == 0 or n == 0:
        return
    T = THREADS

    def make_code():
        return f"""@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 1>;
@group(0) @binding(1) var<storage, read_write> A: array<f32>;
@group(0) @binding(2) var<storage, read_write> PIV: array<i32>;
@group(0) @binding(3) var<storage, read_write> INFO: array<i32>;
@group(0) @binding(4) var<storage, read> I: array<f32>;
const NONE = 0xffffffffu;
var<workgroup> bv_s: array<f32, {T}>;
var<workgroup> bi_s: array<u32, {T}>;
var<workgroup> second: u32;
var<workgroup> failed: u32;

// sytf2's d11, d22 and d21 of the 2 x 2 block at k (the multipliers' scalars)
fn block_scalars(base: u32, k: u32, n: u32) -> vec3<f32> {{
  let b = A[base + (k + 1u) * n + k];
  let d11 = A[base + (k + 1u) * n + k + 1u] / b;
  let d22 = A[base + k * n + k] / b;
  return vec3<f32>(d11, d22, (1.0 / (d11 * d22 - 1.0)) / b);
}}

@compute @workgroup_size({T})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {{
  let b = wid.y * nwg.x + wid.x;
  let n = {param(0)};
  let live = b < {param(1)};
  let base = b * n * n;
  if (live) {{ for (var e = t; e < n * n; e += {T}u) {{ A[base + e] = I[base + e]; }} }}
  if (t == 0u) {{ second = 0u; failed = 0u; }}
  storageBarrier(); workgroupBarrier();
  for (var k = 0u; k < n; k += 1u) {{
    // column k below the diagonal: its largest |entry| (colmax at row imax)
    var cv = 0.0; var ci = NONE;
    if (live) {{
      for (var r = k + 1u + t; r < n; r += {T}u) {{
        let v = abs(A[base + r * n + k]);
        if (ci == NONE || v > cv) {{ cv = v; ci = r; }}
      }}
    }}
{_argmax(T, "cv", "ci")}    let colmax = select(bv_s[0], 0.0, bi_s[0] == NONE);
    let imax = select(bi_s[0], k, bi_s[0] == NONE);
    workgroupBarrier();
    // row imax off its diagonal, from the lower triangle: A(imax, k..imax-1), A(imax+1.., imax)
    var rv = 0.0; var ri = NONE;
    if (live) {{
      for (var r = k + t; r < n; r += {T}u) {{
        if (r != imax) {{
          let v = abs(select(A[base + r * n + imax], A[base + imax * n + r], r < imax));
          if (ri == NONE || v > rv) {{ rv = v; ri = r; }}
        }}
      }}
    }}
{_argmax(T, "rv", "ri")}    let rowmax = select(bv_s[0], 0.0, bi_s[0] == NONE);
    let skip = second != 0u;
    let absakk = abs(A[base + k * n + k]);
    let zero = max(absakk, colmax) == 0.0 || absakk != absakk;
    var kp = k; var two = false;
    if (!zero && !(absakk >= {ALPHA!r} * colmax)) {{
      if (!(absakk >= {ALPHA!r} * colmax * (colmax / rowmax))) {{
        kp = imax;
        two = !(abs(A[base + imax * n + imax]) >= {ALPHA!r} * rowmax);
      }}
    }}
    let act = live && !skip;
    let kk = k + select(0u, 1u, two);
    workgroupBarrier();
    // the interchange of kk and kp within the trailing lower triangle
    if (act && kp != kk) {{
      for (var r = kp + 1u + t; r < n; r += {T}u) {{
        let x = A[base + r * n + kk]; A[base + r * n + kk] = A[base + r * n + kp]; A[base + r * n + kp] = x;
      }}
      for (var j = kk + 1u + t; j < kp; j += {T}u) {{
        let x = A[base + j * n + kk]; A[base + j * n + kk] = A[base + kp * n + j]; A[base + kp * n + j] = x;
      }}
      if (t == 0u) {{
        let x = A[base + kk * n + kk]; A[base + kk * n + kk] = A[base + kp * n + kp]; A[base + kp * n + kp] = x;
        if (two) {{
          let y = A[base + (k + 1u) * n + k]; A[base + (k + 1u) * n + k] = A[base + kp * n + k]; A[base + kp * n + k] = y;
        }}
      }}
    }}
    storageBarrier(); workgroupBarrier();
    // the update of the trailing triangle, a thread per column j (rows i >= j)
    if (act && !zero && !two) {{
      let d11 = 1.0 / A[base + k * n + k];
      for (var j = k + 1u + t; j < n; j += {T}u) {{
        let tj = -d11 * A[base + j * n + k];
        for (var i = j; i < n; i += 1u) {{ A[base + i * n + j] += A[base + i * n + k] * tj; }}
      }}
    }}
    var wk = 0.0; var wkp1 = 0.0;
    if (act && two) {{
      let d = block_scalars(base, k, n);
      let d11 = d.x; let d22 = d.y; let d21 = d.z;
      for (var j = k + 2u + t; j < n; j += {T}u) {{
        let wj = d21 * (d11 * A[base + j * n + k] - A[base + j * n + k + 1u]);
        let wj1 = d21 * (d22 * A[base + j * n + k + 1u] - A[base + j * n + k]);
        for (var i = j; i < n; i += 1u) {{
          A[base + i * n + j] -= A[base + i * n + k] * wj + A[base + i * n + k + 1u] * wj1;
        }}
      }}
    }}
    storageBarrier(); workgroupBarrier();
    // the step's columns of L (sytf2 writes them as it goes; here after every read of them)
    if (act && !zero && !two) {{
      let d11 = 1.0 / A[base + k * n + k];
      for (var r = k + 1u + t; r < n; r += {T}u) {{ A[base + r * n + k] *= d11; }}
    }}
    if (act && two) {{
      let d = block_scalars(base, k, n);
      let d11 = d.x; let d22 = d.y; let d21 = d.z;
      for (var j = k + 2u + t; j < n; j += {T}u) {{
        let a0 = A[base + j * n + k]; let a1 = A[base + j * n + k + 1u];
        A[base + j * n + k] = d21 * (d11 * a0 - a1);
        A[base + j * n + k + 1u] = d21 * (d22 * a1 - a0);
      }}
    }}
    if (t == 0u && act) {{
      PIV[b * n + k] = select(i32(kp) + 1, -(i32(kp) + 1), two);
      if (two) {{ PIV[b * n + k + 1u] = -(i32(kp) + 1); }}
      if (zero && failed == 0u) {{ failed = k + 1u; }}
    }}
    storageBarrier(); workgroupBarrier();
    if (t == 0u) {{ second = select(0u, 1u, act && two); }}
    workgroupBarrier();
  }}
  if (live) {{
    for (var e = t; e < n * n; e += {T}u) {{ if (e % n > e / n) {{ A[base + e] = 0.0; }} }}
    if (t == 0u) {{ INFO[b] = i32(failed); }}
  }}
}}
"""

    pid = rt.pipeline(("ldl", T), make_code, ["uniform", "write", "write", "write", "read"])
    rt.dispatch(pid, rt.grid(count),
                [(out._storage.buffer_for_write(), out._storage.size),
                 (pivots._storage.buffer_for_write(), pivots._storage.size),
                 (info._storage.buffer_for_write(), info._storage.size),
                 (inp._storage.buffer_for_read(), inp._storage.size)],
                struct.pack("<4I", n, count, 0, 0), work=4 * count * n * n * n)


_SOLVE = """@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 1>;
@group(0) @binding(1) var<storage, read_write> X: array<f32>;
@group(0) @binding(2) var<storage, read> A: array<f32>;
@group(0) @binding(3) var<storage, read> PIV: array<i32>;

fn swap_rows(a: u32, b: u32) { let x = X[a]; X[a] = X[b]; X[b] = x; }

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let lin = wid.y * nwg.x + wid.x;
  let n = N_; let k = K_; let ncb = NCB_;
  let mat = lin / ncb;
  let c = (lin % ncb) * 64u + t;
  if (mat >= COUNT_ || c >= k) { return; }
  let ab = mat * n * n; let xb = mat * n * k + c; let pb = mat * n;
  // L D y = P^T b, a step (1 x 1 or 2 x 2) at a time
  var i = 0u;
  loop {
    if (i >= n) { break; }
    let p = PIV[pb + i];
    if (p > 0) {
      let kp = u32(p - 1);
      if (kp != i) { swap_rows(xb + i * k, xb + kp * k); }
      let bi = X[xb + i * k];
      for (var r = i + 1u; r < n; r += 1u) { X[xb + r * k] -= A[ab + r * n + i] * bi; }
      X[xb + i * k] = bi * (1.0 / A[ab + i * n + i]);
      i += 1u;
    } else {
      let kp = u32(-p - 1);
      if (kp != i + 1u) { swap_rows(xb + (i + 1u) * k, xb + kp * k); }
      let b0 = X[xb + i * k]; let b1 = X[xb + (i + 1u) * k];
      for (var r = i + 2u; r < n; r += 1u) {
        X[xb + r * k] = (X[xb + r * k] - A[ab + r * n + i] * b0) - A[ab + r * n + i + 1u] * b1;
      }
      let akm1k = A[ab + (i + 1u) * n + i];
      let akm1 = A[ab + i * n + i] / akm1k;
      let ak = A[ab + (i + 1u) * n + i + 1u] / akm1k;
      let denom = akm1 * ak - 1.0;
      let bkm1 = b0 / akm1k; let bk = b1 / akm1k;
      X[xb + i * k] = (ak * bkm1 - bk) / denom;
      X[xb + (i + 1u) * k] = (akm1 * bk - bkm1) / denom;
      i += 2u;
    }
  }
  // L^T x = y, from the last step back
  var j = n;
  loop {
    if (j == 0u) { break; }
    let kk = j - 1u;
    let p = PIV[pb + kk];
    var s = 0.0;
    for (var r = kk + 1u; r < n; r += 1u) { s += A[ab + r * n + kk] * X[xb + r * k]; }
    X[xb + kk * k] -= s;
    if (p < 0 && kk > 0u) {
      var s1 = 0.0;
      for (var r = kk + 1u; r < n; r += 1u) { s1 += A[ab + r * n + kk - 1u] * X[xb + r * k]; }
      X[xb + (kk - 1u) * k] -= s1;
    }
    let kp = u32(select(p, -p, p < 0) - 1);
    if (kp != kk) { swap_rows(xb + kk * k, xb + kp * k); }
    j = select(kk, kk - 1u, p < 0 && kk > 0u);
  }
}
"""


def solve(rt, x, ld, pivots, n, k, count):
    """x [count, n, k] (float32, contiguous, offset 0: B on entry) = A^-1 B from A's LD and
    pivots (contiguous, offset 0)."""
    if count == 0 or n == 0 or k == 0:
        return
    ncb = -(-k // 64)

    def make_code():
        return (_SOLVE.replace("N_", param(0)).replace("K_", param(1)).replace("NCB_", param(2))
                .replace("COUNT_", param(3)))

    pid = rt.pipeline(("ldl_solve",), make_code, ["uniform", "write", "read", "read"])
    rt.dispatch(pid, rt.grid(count * ncb),
                [(x._storage.buffer_for_write(), x._storage.size),
                 (ld._storage.buffer_for_read(), ld._storage.size),
                 (pivots._storage.buffer_for_read(), pivots._storage.size)],
                struct.pack("<4I", n, k, ncb, count), work=8 * count * n * n * k)
