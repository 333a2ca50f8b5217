"""Power-of-two FFTs of complex64 (float32 pairs) as Stockham autosort passes, batched, the input
strided (any batch and element strides: no transpose at the edges) and zero-padded on the fly.

A transform of N points is one dispatch up to S points (S = 4096 where the adapter gives 32 KiB
of workgroup memory, 2048 on WebGPU's default 16 KiB) and two past it up to S^2 (a million
points: two passes of 1024), each a Stockham pass of radix R: pass p reads column j's R points
x[j + r N/R] (r < R), multiplies them by exp(sign 2 pi i (j mod Ns) r / (Ns R)) (Ns: the
product of the radices before it), takes their R-point DFT and writes them to
(j div Ns) Ns R + j mod Ns + r Ns, so the last pass leaves the spectrum in natural order. A
workgroup does G columns' R-point DFTs in workgroup memory (G R <= S), themselves radix-4
Stockham passes (a radix-2 one first where log2 R is odd), each thread's butterflies held in
registers between two barriers. Loads and stores take the column or the point as the fastest
index, whichever is contiguous in memory.

Twiddles come from a table of exp(2 pi i m / N) made in double precision on the host: m's low
bits index a fine table, its high bits a coarse one, and their product (an ulp or two) is the
twiddle: accurate for every N, with no sin/cos of large float32 arguments."""

import math
import struct

from ..storage import GPUStorage
from ..transfer import storage_from_values
from .... import _dtype as D

MAX_SHARED = 4096    # points in workgroup memory (vec2<f32>: 32 KiB), where the adapter allows
MAX_THREADS = 512    # a workgroup's threads, where the adapter allows (WebGPU's default: 256)
PER_THREAD = 8       # points a thread holds (more where the threads run out)
MAX_LOG2 = 27        # the largest transform: 2^27 points (a 1 GiB buffer of pairs)

_TABLES = {}


def fits(n):
    return n >= 2 and n & (n - 1) == 0 and n.bit_length() - 1 <= MAX_LOG2


def shared_points(rt):
    """The points a workgroup holds: 32 KiB of pairs, or the adapter's limit (browsers: 16 KiB
    by default)."""
    limit = rt.driver.limit("max-compute-workgroup-storage-size") // 8
    return min(MAX_SHARED, 1 << (limit.bit_length() - 1))


def _threads(rt):
    """The threads a workgroup may have: more of them hide the memory's latency where a few
    long transforms make few workgroups (a million points: 256 of them)."""
    limit = rt.driver.limit("max-compute-invocations-per-workgroup")
    return min(MAX_THREADS, 1 << (limit.bit_length() - 1))


def radices(n, shared):
    """The passes' radices: as few passes as workgroups of `shared` points allow, of about equal
    size (a million points: two passes of 1024)."""
    logn = n.bit_length() - 1
    passes = -(-logn // (shared.bit_length() - 1))
    sizes = [logn // passes + (1 if p < logn % passes else 0) for p in range(passes)]
    return [1 << s for s in sizes]


def _table(rt, n):
    """(storage, fine bits) of exp(2 pi i m / n): the fine part for m < 2^fb, then the coarse
    part exp(2 pi i h 2^fb / n) for h < n / 2^fb."""
    key = (id(rt), n)
    got = _TABLES.get(key)
    if got is None or got[0].rt is not rt:   # (an id reused by a later runtime)
        logn = n.bit_length() - 1
        fb = (logn + 1) // 2
        vals = []
        for m in list(range(1 << fb)) + [h << fb for h in range(n >> fb)]:
            t = 2 * math.pi * m / n
            vals += (math.cos(t), math.sin(t))
        got = _TABLES[key] = (storage_from_values(vals, D.float32), fb)
    return got


def _code(R, G, T, real, cols_first):
    """The WGSL of one pass of radix R, G columns a workgroup of T threads."""
    E = G * R // T
    L = R.bit_length() - 1
    lines = []
    # load: element i of the workgroup's G x R block, its column's twiddle, into S[jj R + r]
    for k in range(E):
        i = f"(t + {k * T}u)"
        if cols_first:
            jj, r = f"({i} & {G - 1}u)", f"({i} >> {G.bit_length() - 1}u)"
        else:
            jj, r = f"({i} >> {L}u)", f"({i} & {R - 1}u)"
        val = "vec2<f32>(IN[a], 0.0)" if real else "vec2<f32>(IN[a], IN[a + 1u])"
        lines.append(f"""  {{ let jj = {jj}; let r = {r}; let q = q0 + jj;
    var v = vec2<f32>(0.0, 0.0);
    let jn = (q & (nr - 1u)) + (r << lognr);
    if (q < Q && jn < P[3].x) {{
      let b = q >> lognr; let j = q & (nr - 1u);
      let a = off + (b / B2) * S1 + (b % B2) * S2 + jn * JS;
      v = {val};
      if (logns > 0u) {{ v = cmul(v, tw(((j & (ns - 1u)) * r) << (logn - logns - {L}u))); }}
    }}
    S[jj * {R}u + r] = v; }}""")
    lines.append("  workgroupBarrier();")
    # the R-point DFTs in workgroup memory
    steps = ([2] if L % 2 else []) + [4] * (L // 2)
    ns = 1
    for rp in steps:
        m = R // rp
        nb = E // rp
        lines.append("  {")
        for k in range(nb):
            u = f"(t + {k * T}u)"
            lines.append(f"    let u{k} = {u}; let base{k} = (u{k} / {m}u) * {R}u; let jb{k} = u{k} % {m}u;")
            for r in range(rp):
                lines.append(f"    var a{k}_{r} = S[base{k} + jb{k} + {r * m}u];")
            if ns > 1:
                lines.append(f"    let e{k} = (jb{k} % {ns}u) << (logn - {(ns * rp).bit_length() - 1}u);")
                for r in range(1, rp):
                    lines.append(f"    a{k}_{r} = cmul(a{k}_{r}, tw(e{k} * {r}u));")
        lines.append("    workgroupBarrier();")
        for k in range(nb):
            lines.append(f"    let o{k} = base{k} + (jb{k} / {ns}u) * {ns * rp}u + jb{k} % {ns}u;")
            if rp == 2:
                outs = [f"a{k}_0 + a{k}_1", f"a{k}_0 - a{k}_1"]
            else:
                lines.append(f"    let s0_{k} = a{k}_0 + a{k}_2; let d0_{k} = a{k}_0 - a{k}_2;"
                             f" let s1_{k} = a{k}_1 + a{k}_3; let d1_{k} = rot(a{k}_1 - a{k}_3);")
                outs = [f"s0_{k} + s1_{k}", f"d0_{k} + d1_{k}", f"s0_{k} - s1_{k}", f"d0_{k} - d1_{k}"]
            for r, o in enumerate(outs):
                lines.append(f"    S[o{k} + {r * ns}u] = {o};")
        lines.append("    workgroupBarrier();")
        lines.append("  }")
        ns *= rp
    # store: the run of consecutive outputs is (j mod Ns, then r): a = min(Ns, G) columns first
    for k in range(E):
        i = f"(t + {k * T}u)"
        lines.append(f"""  {{ let i = {i}; let jlo = i & (ga - 1u); let r = (i >> logga) & {R - 1}u;
    let jj = ((i >> (logga + {L}u)) << logga) | jlo; let q = q0 + jj;
    if (q < Q) {{
      let b = q >> lognr; let j = q & (nr - 1u);
      OUT[(b << logn) + ((j >> logns) << (logns + {L}u)) + (j & (ns - 1u)) + (r << logns)] = S[jj * {R}u + r];
    }} }}""")
    body = "\n".join(lines)
    return f"""@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 4>;
@group(0) @binding(1) var<storage, read_write> OUT: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> IN: array<f32>;
@group(0) @binding(3) var<storage, read> TW: array<vec2<f32>>;
var<workgroup> S: array<vec2<f32>, {G * R}>;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {{
  return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}}

// exp(sign 2 pi i m / N): the fine entry of m's low bits times the coarse one of its high bits
fn tw(m: u32) -> vec2<f32> {{
  let fb = P[2].z;
  let w = cmul(TW[m & ((1u << fb) - 1u)], TW[(1u << fb) + (m >> fb)]);
  return vec2<f32>(w.x, select(w.y, -w.y, P[2].w == 1u));
}}

// sign i times a (the radix-4 butterfly's quarter turn)
fn rot(a: vec2<f32>) -> vec2<f32> {{
  return select(vec2<f32>(-a.y, a.x), vec2<f32>(a.y, -a.x), P[2].w == 1u);
}}

@compute @workgroup_size({T})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {{
  let logn = P[0].x; let logns = P[0].y; let lognr = P[0].z; let Q = P[0].w;
  let B2 = P[1].x; let S1 = P[1].y; let S2 = P[1].z; let JS = P[1].w;
  let off = P[2].x; let logga = P[2].y;
  let ns = 1u << logns; let nr = 1u << lognr; let ga = 1u << logga;
  let q0 = (wid.y * nwg.x + wid.x) * {G}u;
{body}
}}
"""


def run(rt, spec, out, inp):
    """out [B1, B2, n, 2] (contiguous, offset 0) = the unnormalized transforms (spec.sign) of
    inp [B1, B2, m, 2] (pairs) or [B1, B2, m] (spec.real), any strides, m <= n points (the
    rest zeros: the first pass reads only the given ones)."""
    n = spec.n
    B1, B2 = inp.shape[0], inp.shape[1]
    B = B1 * B2
    if B == 0:
        return
    logn = n.bit_length() - 1
    table, fb = _table(rt, n)
    s1, s2, js = inp._stride[:3]          # (in floats: the real tensor's, or the pairs')
    shared, threads = shared_points(rt), _threads(rt)
    steps = radices(n, shared)
    scratch = GPUStorage(rt, B * n * 2, D.float32) if len(steps) > 1 else None
    # ping-pong so that the last pass writes out
    targets = [out if (len(steps) - 1 - p) % 2 == 0 else scratch for p in range(len(steps))]
    src = (inp._storage, inp._offset, B2, s1, s2, js, spec.real)
    given = inp.shape[2]
    ns = 1
    for p, R in enumerate(steps):
        G = max(1, min(shared // R, _pow2_at_least(B * n // R)))
        T = max(1, min(threads, G * R // PER_THREAD))
        storage, off, b2, t1, t2, tj, real = src
        nr = n // R
        # columns first where consecutive columns are closer in memory than a column's points
        col_step = tj if nr > 1 else (t2 if b2 > 1 else t1)
        cols_first = G > 1 and col_step < tj * nr
        pid = rt.pipeline(("fft_stockham", R, G, T, real, cols_first),
                          lambda: _code(R, G, T, real, cols_first), ["uniform", "write", "read", "read"])
        dst = targets[p]
        dst_storage = dst._storage if dst is out else dst
        ga = min(ns, G)
        words = struct.pack("<16I", logn, ns.bit_length() - 1, nr.bit_length() - 1, B * nr,
                            b2, t1, t2, tj, off, ga.bit_length() - 1, fb, 1 if spec.sign < 0 else 0,
                            given, 0, 0, 0)
        rt.dispatch(pid, rt.grid(-(-B * nr // G)),
                    [(dst_storage.buffer_for_write(), dst_storage.size),
                     (storage.buffer_for_read(), storage.size),
                     (table.buffer_for_read(), table.size)],
                    words, work=16 * B * n)
        src = (dst_storage, 0, 1, 2 * n, 0, 2, False)
        given = n
        ns *= R


def _pow2_at_least(x):
    return 1 << max(0, (x - 1).bit_length())
