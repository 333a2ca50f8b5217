"""One panel of a Householder QR in one dispatch, as LAPACK's geqr2 then larft: a workgroup per
matrix of a batch works on its m x w panel (w <= 32) in the output buffer. Its 256 threads are
32 columns x 8 row groups: for each column j, every column's inner product with column j below
the diagonal (partial sums per row group, totalled in workgroup memory) gives the reflector
(larfg's beta, tau and the scale of v, without its rescaling of tiny norms) and each column's
multiple of v at once; the columns right of j are updated, then column j becomes v. Last, the
compact WY form's T (H_1 ... H_w = I - V T V^T) from the reflectors' inner products, a column
at a time. ops/linalg_qr_blocked.py applies the panel to the trailing columns with matmuls."""

import struct

from .elementwise import param

MAX_W = 32

_CODE = """@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 1>;
@group(0) @binding(1) var<storage, read_write> O: array<f32>;
@group(0) @binding(2) var<storage, read_write> TAU: array<f32>;
@group(0) @binding(3) var<storage, read_write> TT: array<f32>;
@group(0) @binding(4) var<storage, read> I: array<f32>;
var<workgroup> part: array<f32, 256>;
var<workgroup> dots: array<f32, 32>;
var<workgroup> wv: array<f32, 32>;
var<workgroup> taus: array<f32, 32>;
var<workgroup> G: array<f32, 1024>;
var<workgroup> Tm: array<f32, 1024>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let b = wid.y * nwg.x + wid.x;
  let m = M_; let w = W_;
  let live = b < COUNT_;
  let base = b * m * w;
  let c = t % 32u; let g = t / 32u;
  let k = min(m, w);
  if (live) { for (var e = t; e < m * w; e += 256u) { O[base + e] = I[base + e]; } }
  storageBarrier(); workgroupBarrier();
  for (var j = 0u; j < k; j += 1u) {
    var s = 0.0;
    if (live && c >= j && c < w) {
      for (var r = j + 1u + g; r < m; r += 8u) { s += O[base + r * w + j] * O[base + r * w + c]; }
    }
    part[t] = s;
    workgroupBarrier();
    if (t < 32u) {
      var tot = 0.0;
      for (var q = 0u; q < 8u; q += 1u) { tot += part[q * 32u + t]; }
      dots[t] = tot;
    }
    workgroupBarrier();
    var alpha = 0.0;
    if (live) { alpha = O[base + j * w + j]; }
    let xn2 = dots[j];
    let norm = sqrt(alpha * alpha + xn2);
    let beta = select(norm, -norm, alpha >= 0.0);
    let act = xn2 > 0.0;
    let tj = select(0.0, (beta - alpha) / beta, act);
    let scale = select(0.0, 1.0 / (alpha - beta), act);
    if (t < 32u) {
      var wc = 0.0;
      if (live && t > j && t < w) { wc = tj * (O[base + j * w + t] + dots[t] * scale); }
      wv[t] = wc;
      if (t == j) { taus[j] = tj; }
    }
    storageBarrier(); workgroupBarrier();
    if (live && act && c > j && c < w) {
      for (var r = j + g; r < m; r += 8u) {
        let v = select(O[base + r * w + j] * scale, 1.0, r == j);
        O[base + r * w + c] -= v * wv[c];
      }
    }
    storageBarrier(); workgroupBarrier();
    if (live && act && c == j) {
      for (var r = j + 1u + g; r < m; r += 8u) { O[base + r * w + j] *= scale; }
      if (g == 0u) { O[base + j * w + j] = beta; }
    }
    storageBarrier(); workgroupBarrier();
  }
  // G[i][c] = v_i . v_c (i < c < k): v_c is 1 at row c and zero above
  for (var i = 0u; i < k; i += 1u) {
    var s = 0.0;
    if (live && c > i && c < k) {
      for (var r = c + 1u + g; r < m; r += 8u) { s += O[base + r * w + i] * O[base + r * w + c]; }
    }
    part[t] = s;
    workgroupBarrier();
    if (live && t > i && t < k) {
      var tot = O[base + t * w + i];
      for (var q = 0u; q < 8u; q += 1u) { tot += part[q * 32u + t]; }
      G[i * 32u + t] = tot;
    }
    workgroupBarrier();
  }
  if (t < 32u) { for (var q = 0u; q < 32u; q += 1u) { Tm[q * 32u + t] = 0.0; } }
  workgroupBarrier();
  // larft (forward, columnwise): T[:j, j] = -tau_j T[:j, :j] G[:j, j]
  for (var j = 0u; j < k; j += 1u) {
    if (t < j) {
      var s = 0.0;
      for (var l = t; l < j; l += 1u) { s += Tm[t * 32u + l] * G[l * 32u + j]; }
      Tm[t * 32u + j] = -taus[j] * s;
    }
    if (t == j) { Tm[j * 32u + j] = taus[j]; }
    workgroupBarrier();
  }
  if (live) {
    for (var e = t; e < w * w; e += 256u) { TT[b * w * w + e] = Tm[(e / w) * 32u + e % w]; }
    if (t < w) { TAU[b * w + t] = select(0.0, taus[t], t < k); }
  }
}
"""


def run(rt, plan, out, tau, t, inp):
    """out [count, m, w] = inp's panels as geqr2 leaves them (float32, contiguous, offset 0);
    tau [count, w]; t [count, w, w] (plan: plans.QRPanelPlan)."""
    m, w, count = plan.m, plan.w, plan.count
    if count == 0 or m == 0 or w == 0:
        return

    def make_code():
        return _CODE.replace("M_", param(0)).replace("W_", param(1)).replace("COUNT_", param(2))

    pid = rt.pipeline(("qr_panel",), make_code, ["uniform", "write", "write", "write", "read"])
    rt.dispatch(pid, rt.grid(count),
                [(out._storage.buffer_for_write(), out._storage.size),
                 (tau._storage.buffer_for_write(), tau._storage.size),
                 (t._storage.buffer_for_write(), t._storage.size),
                 (inp._storage.buffer_for_read(), inp._storage.size)],
                struct.pack("<4I", m, w, count, 0), work=12 * count * m * w * w)
