"""Cyclic Jacobi rounds for eigh and svd (backends/base.py's jacobi_sweep; the cpu device's
numpy twin is backends/cpu_jacobi.py). A round's N / 2 pairs are disjoint, so a round is one
dispatch: workgroups take pairs (on a GPU one each, on lavapipe a quarter of them), the pairs
computed in the kernel from the round index (the round-robin order of plans.JacobiSweep). Up
to SWEEP_N, one workgroup holds a whole matrix's pairs and runs all N - 1 rounds of a sweep in
one dispatch, barriers between rounds.

- 'eigh' (two-sided): each thread takes 2 x 2 blocks (row pair k, column pair k') of a round
  and computes them from the round's input half of X into the other half: its rows' rotation
  and its columns' (the column pairs' rotations computed once a workgroup, into workgroup
  memory; every workgroup computes them alike from the input's a, d, b), rows first then
  columns, as the cpu's; the pair's own block is set to (a - t b, d + t b). Reading one half
  and writing the other, no workgroup waits on another.
- 'svd' (one-sided, Hestenes): G threads a pair sum the pair's squared norms and inner product
  over its two rows (a workgroup reduction), then rotate both rows and V's in place.
"""

import struct

from .elementwise import param

SWEEP_N = 64     # N up to this: a sweep in one dispatch (a workgroup per matrix)
CHUNK = 1024     # eigh: column pairs whose rotations a workgroup holds at a time
THREADS = 256

_COMMON = """
// the index at position i of round r's order (N even): 0 stays first, the others turn
fn tw_member(i: u32, r: u32, N: u32) -> u32 {
  if (i == 0u) { return 0u; }
  let j = i - 1u + (N - 1u - r);   // (i - 1 - r) mod (N - 1), without a division
  return 1u + select(j, j - (N - 1u), j >= N - 1u);
}

// (t, s, s / (1 + c)) of the rotation zeroing b in [[a, b], [b, d]]; none where b is at float32
// rounding of a and d
fn tw_rotation(a: f32, d: f32, b: f32) -> vec3<f32> {
  if (abs(b) <= 1.1920928955078125e-07 * sqrt(abs(a)) * sqrt(abs(d))) { return vec3<f32>(0.0); }
  let tau = (d - a) / (2.0 * b);
  var t = 0.5 / tau;   // (1 + tau^2 would overflow)
  if (abs(tau) <= 1e18) { t = select(-1.0, 1.0, tau >= 0.0) / (abs(tau) + sqrt(1.0 + tau * tau)); }
  let c = 1.0 / sqrt(1.0 + t * t);
  let s = t * c;
  return vec3<f32>(t, s, s / (1.0 + c));
}

// Rutishauser's form of (c x_p - s x_q, s x_p + c x_q), rot = (t, s, r)
fn tw_turn(xp: f32, xq: f32, rot: vec3<f32>) -> vec2<f32> {
  return vec2<f32>(xp - rot.y * (xq + rot.z * xp), xq + rot.y * (xp - rot.z * xq));
}
"""

# params: N, count, first round, rounds, pairs a workgroup, threads a pair (svd), sweep parity (eigh), length (svd)
_HEAD = """@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 2>;
@group(0) @binding(1) var<storage, read_write> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> V: array<f32>;
"""

_EIGH = """var<workgroup> rots: array<vec2<f32>, {CHUNK}>;

@compute @workgroup_size({T})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let N = {N}; let count = {count}; let r0 = {r0}; let R = {R}; let PW = {PW}; let parity = {parity};
  let H = N / 2u;
  let groups = (H + PW - 1u) / PW;   // (the last one may hold fewer)
  let wg = wid.y * nwg.x + wid.x;
  let b = wg / groups;
  let k0 = (wg % groups) * PW;
  let k1 = min(k0 + PW, H);
  let live = b < count;
  let nn = N * N;
  // threads as a grid: C along the column pairs (or V's columns), T / C along the row pairs
  // (the threads past the grid's last full row have none: PW stands for no row)
  let C = min(H, {T}u); let kc = t % C; let kr = select(PW, t / C, t / C < {T}u / C);
  let CV = min(N, {T}u); let jc = t % CV; let jr = select(PW, t / CV, t / CV < {T}u / CV);
  for (var rr = 0u; rr < R; rr = rr + 1u) {
    let r = r0 + rr;
    let src = ((parity + r) % 2u) * count * nn + b * nn;
    let dst = ((parity + r + 1u) % 2u) * count * nn + b * nn;
    for (var c0 = 0u; c0 < H; c0 = c0 + {CHUNK}u) {   // the column pairs' rotations, a chunk at a time
      let cn = min({CHUNK}u, H - c0);
      if (live) {
        for (var i = t; i < cn; i = i + {T}u) {
          let pp = tw_member(c0 + i, r, N); let qq = tw_member(N - 1u - c0 - i, r, N);
          rots[i] = tw_rotation(X[src + pp * N + pp], X[src + qq * N + qq], X[src + pp * N + qq]).yz;
        }
      }
      workgroupBarrier();
      if (live) {
        for (var k = k0 + kr; k < k1; k = k + {T}u / C) {
          let p = tw_member(k, r, N); let q = tw_member(N - 1u - k, r, N);
          let a = X[src + p * N + p]; let d = X[src + q * N + q]; let bpq = X[src + p * N + q];
          let rot = tw_rotation(a, d, bpq);
          for (var kk = c0 + kc; kk < c0 + cn; kk = kk + C) {
            if (kk == k) {
              X[dst + p * N + p] = a - rot.x * bpq; X[dst + q * N + q] = d + rot.x * bpq;
              X[dst + p * N + q] = 0.0; X[dst + q * N + p] = 0.0;
              continue;
            }
            let pp = tw_member(kk, r, N); let qq = tw_member(N - 1u - kk, r, N);
            let cot = vec3<f32>(0.0, rots[kk - c0]);
            let c1 = tw_turn(X[src + p * N + pp], X[src + q * N + pp], rot);   // rows p, q of column pp
            let c2 = tw_turn(X[src + p * N + qq], X[src + q * N + qq], rot);   // ... of column qq
            let rp = tw_turn(c1.x, c2.x, cot);   // then columns pp, qq of row p
            let rq = tw_turn(c1.y, c2.y, cot);
            X[dst + p * N + pp] = rp.x; X[dst + p * N + qq] = rp.y;
            X[dst + q * N + pp] = rq.x; X[dst + q * N + qq] = rq.y;
          }
        }
      }
      workgroupBarrier();
    }
    if (live) {
      for (var k = k0 + jr; k < k1; k = k + {T}u / CV) {
        let p = tw_member(k, r, N); let q = tw_member(N - 1u - k, r, N);
        let rot = tw_rotation(X[src + p * N + p], X[src + q * N + q], X[src + p * N + q]);
        if (rot.y != 0.0) {
          for (var j = jc; j < N; j = j + CV) {
            let v = tw_turn(V[b * nn + p * N + j], V[b * nn + q * N + j], rot);
            V[b * nn + p * N + j] = v.x; V[b * nn + q * N + j] = v.y;
          }
        }
      }
    }
    storageBarrier(); workgroupBarrier();
  }
}
"""

_SVD = """var<workgroup> sums: array<vec3<f32>, {T}>;

@compute @workgroup_size({T})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
  let N = {N}; let count = {count}; let r0 = {r0}; let R = {R}; let PW = {PW}; let G = {G}; let L = {L};
  let H = N / 2u;
  let groups = (H + PW - 1u) / PW;   // (the last one may hold fewer)
  let wg = wid.y * nwg.x + wid.x;
  let b = wg / groups;
  let k0 = (wg % groups) * PW;
  let lane = t % G; let kt = t / G;
  let base = b * N * L;
  let vbase = b * N * N;
  for (var rr = 0u; rr < R; rr = rr + 1u) {
    let r = r0 + rr;
    for (var kb = 0u; kb < PW; kb = kb + {T}u / G) {   // G threads a pair, T / G pairs at a time
      let k = k0 + kb + kt;
      let live = b < count && kb + kt < PW && k < H;
      let p = tw_member(k, r, N); let q = tw_member(N - 1u - k, r, N);
      var acc = vec3<f32>(0.0);
      if (live) {
        for (var i = lane; i < L; i = i + G) {
          let xp = X[base + p * L + i]; let xq = X[base + q * L + i];
          acc = acc + vec3<f32>(xp * xp, xq * xq, xp * xq);
        }
      }
      sums[t] = acc;
      workgroupBarrier();
      for (var h = G / 2u; h > 0u; h = h >> 1u) {
        if (lane < h) { sums[t] = sums[t] + sums[t + h]; }
        workgroupBarrier();
      }
      let tot = sums[t - lane];
      let rot = tw_rotation(tot.x, tot.y, tot.z);
      if (live && rot.y != 0.0) {
        for (var i = lane; i < L; i = i + G) {
          let x = tw_turn(X[base + p * L + i], X[base + q * L + i], rot);
          X[base + p * L + i] = x.x; X[base + q * L + i] = x.y;
        }
        for (var j = lane; j < N; j = j + G) {
          let v = tw_turn(V[vbase + p * N + j], V[vbase + q * N + j], rot);
          V[vbase + p * N + j] = v.x; V[vbase + q * N + j] = v.y;
        }
      }
      workgroupBarrier();   // (sums read before the next pairs write them)
    }
    storageBarrier(); workgroupBarrier();
  }
}
"""

_NAMES = dict(N=param(0), count=param(1), r0=param(2), R=param(3), PW=param(4), G=param(5),
              parity=param(6), L=param(7))


def _code(kind, T):
    body = (_EIGH if kind == "eigh" else _SVD).replace("{T}", str(T)).replace("{CHUNK}", str(CHUNK))
    for name, value in _NAMES.items():
        body = body.replace("{" + name + "}", value)
    return _HEAD + _COMMON + body


def _pow2_at_most(x):
    return 1 << (max(x, 1).bit_length() - 1)


def _layout(rt, plan):
    """(threads a workgroup, pairs a workgroup, threads a pair for svd, whole sweep in one dispatch)."""
    N, H = plan.N, plan.N // 2
    if N <= SWEEP_N:   # (lavapipe: few threads; a thread's loops in all stay short of its 65535 trips)
        T = 32 if rt.software_adapter else THREADS
        return T, H, _pow2_at_most(T // H), True
    if rt.software_adapter:
        # lavapipe: a few workgroups of few threads (a core each), each thread's loops short of
        # lavapipe's 65535 trips (a quarter of the pairs a workgroup, 64 at most)
        T, PW = 32, min(-(-H // 4), 64)
        return T, PW, _pow2_at_most(T // PW), False
    T = 64 if (N if plan.kind == "eigh" else plan.length) <= 128 else THREADS
    return T, 1, T, False


def run(rt, plan, X, V, sweep):
    """One sweep (plans.JacobiSweep) over X and V in place (backends/base.py's jacobi_sweep)."""
    N, count = plan.N, plan.count
    if count == 0 or N < 2:
        return
    T, PW, G, whole = _layout(rt, plan)
    pid = rt.pipeline(("jacobi", plan.kind, T), lambda: _code(plan.kind, T), ["uniform", "write", "write"])
    buffers = [(X._storage.buffer_for_write(), X._storage.size), (V._storage.buffer_for_write(), V._storage.size)]
    grid = rt.grid(count * -(-(N // 2) // PW))
    R = N - 1 if whole else 1
    work = 8 * count * N * (N if plan.kind == "eigh" else plan.length + N) * R
    for r0 in range(0, N - 1, R):
        rt.dispatch(pid, grid, buffers, struct.pack("<8I", N, count, r0, R, PW, G, sweep % 2, plan.length), work=work)
