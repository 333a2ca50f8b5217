"""One panel of a partially pivoted LU in one dispatch: a workgroup per matrix of a batch works
on its m x w panel (w <= 32 columns) in the output buffer. For each column j: the pivot row (the
largest |entry| at or below row j, the first on ties, NaN above all: as argmax), found by the
workgroup's threads over the rows and a reduction in workgroup memory; rows j and the pivot's
swapped across the panel (and in the row order); the column below divided by the pivot (a zero
pivot divides nothing, as getrf skips it) and the rank-1 update of the panel's columns right of
j, a thread per row. Storage barriers order the steps. ops/linalg_kernels.py's blocked LU runs
it on each panel instead of a Python step per column."""

import struct

from .elementwise import param

MAX_W = 32
THREADS = 256


def run(rt, out, pivots, order, inp, m, w, count):
    """out [count, m, w] = inp's panels factored in place of a copy (float32, contiguous, offset
    0); pivots [count, w] (int32) the 1-based pivot rows; order [count, m] (int32) the row each
    row of out came from."""
    if count == 0 or m == 0 or w == 0:
        return
    T = THREADS

    def make_code():
        return f"""@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 1>;
@group(0) @binding(1) var<storage, read_write> B0: array<f32>;
@group(0) @binding(2) var<storage, read_write> B1: array<i32>;
@group(0) @binding(3) var<storage, read_write> B2: array<i32>;
@group(0) @binding(4) var<storage, read> B3: array<f32>;
var<workgroup> best_v: array<f32, {T}>;
var<workgroup> best_i: array<u32, {T}>;

// a beats b: larger |value| (NaN above all), the lower row on ties
fn tw_better(av: f32, ai: u32, bv: f32, bi: u32) -> bool {{
  let an = av != av; let bn = bv != bv;
  if (an != bn) {{ return an; }}
  if (an || av == bv) {{ return ai < bi; }}
  return av > bv;
}}

@compute @workgroup_size({T})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {{
  let b = wid.y * nwg.x + wid.x;
  let m = {param(0)}; let w = {param(1)};
  let live = b < {param(2)};
  let base = b * m * w;
  if (live) {{
    for (var r = t; r < m; r = r + {T}u) {{
      for (var c = 0u; c < w; c = c + 1u) {{ B0[base + r * w + c] = B3[base + r * w + c]; }}
      B2[b * m + r] = i32(r);
    }}
  }}
  storageBarrier(); workgroupBarrier();
  let k = min(m, w);
  for (var j = 0u; j < k; j = j + 1u) {{
    var bv = -1.0; var bi = 0xffffffffu;
    if (live) {{
      for (var r = j + t; r < m; r = r + {T}u) {{
        let v = abs(B0[base + r * w + j]);
        if (bi == 0xffffffffu || tw_better(v, r, bv, bi)) {{ bv = v; bi = r; }}
      }}
    }}
    best_v[t] = bv; best_i[t] = bi;
    workgroupBarrier();
    for (var s = {T // 2}u; s > 0u; s = s >> 1u) {{
      if (t < s) {{
        let ov = best_v[t + s]; let oi = best_i[t + s];
        if (oi != 0xffffffffu && (best_i[t] == 0xffffffffu || tw_better(ov, oi, best_v[t], best_i[t]))) {{
          best_v[t] = ov; best_i[t] = oi;
        }}
      }}
      workgroupBarrier();
    }}
    let p = best_i[0];
    if (live) {{
      if (t == 0u) {{
        B1[b * w + j] = i32(p) + 1;
        if (p != j) {{
          let o = B2[b * m + j]; B2[b * m + j] = B2[b * m + p]; B2[b * m + p] = o;
        }}
      }}
      if (p != j && t < w) {{
        let x = B0[base + j * w + t];
        B0[base + j * w + t] = B0[base + p * w + t];
        B0[base + p * w + t] = x;
      }}
    }}
    storageBarrier(); workgroupBarrier();
    if (live) {{
      let pivot = B0[base + j * w + j];
      let d = select(pivot, 1.0, pivot == 0.0);
      for (var r = j + 1u + t; r < m; r = r + {T}u) {{
        let l = B0[base + r * w + j] / d;
        B0[base + r * w + j] = l;
        for (var c = j + 1u; c < w; c = c + 1u) {{
          B0[base + r * w + c] = B0[base + r * w + c] - l * B0[base + j * w + c];
        }}
      }}
    }}
    storageBarrier(); workgroupBarrier();
  }}
}}
"""

    pid = rt.pipeline(("lu_panel", T), make_code, ["uniform", "write", "write", "write", "read"])
    rt.dispatch(pid, rt.grid(count),
                [(out._storage.buffer_for_write(), out._storage.size),
                 (pivots._storage.buffer_for_write(), pivots._storage.size),
                 (order._storage.buffer_for_write(), order._storage.size),
                 (inp._storage.buffer_for_read(), inp._storage.size)],
                struct.pack("<4I", m, w, count, 0), work=8 * count * m * w * w)
