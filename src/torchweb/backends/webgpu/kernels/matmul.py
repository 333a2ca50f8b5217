"""Batched matmul out[b] = A[b] @ B[b] with a register-tiled kernel.

Each workgroup (16x16 threads) computes a 128x64 tile of the output; each thread an 8x4
block held in eight named vec4 accumulators (a local array indexed in loops is ~40x slower
on NVIDIA). Tiles of A are kept transposed in workgroup memory, so that a thread reads four
rows of A and four columns of B as two vec4s per step of K. A and B are read through their strides, so transposed and broadcast-batch views
need no copy. Batches beyond the grid's z limit go in several dispatches.
"""

import struct

from .bindings import bind, declarations, kinds
from .elementwise import param
from .wgsl import load, store

TM, TN, KT = 128, 64, 16


def run(rt, out, a, b, compute, epi=None):
    """a: [*batch, M, K], b: [*batch, K, N] (batch dims already broadcast, any strides);
    out: contiguous [*batch, M, N]. compute: 'f32' or 'i32'. epi: a float32 product's
    epilogue, stored in its place (kernels/matmul_epilogue.py)."""
    M, K = a.shape[-2], a.shape[-1]
    N = b.shape[-1]
    batch = out.shape[:-2]
    nbatch = 1
    for s in batch:
        nbatch *= s
    if M == 0 or N == 0 or nbatch == 0:
        return
    gx, gy = -(-N // TN), -(-M // TM)
    if gx > rt.max_workgroups or gy > rt.max_workgroups:
        raise RuntimeError(f"torchweb: matmul output of {M}x{N} is beyond this adapter's grid "
                           f"({rt.max_workgroups} workgroups of {TM}x{TN} tiles)")
    nb = len(batch)
    key = ("mm2", a.dtype.name, b.dtype.name, out.dtype.name, compute, nb)
    head = [M, N, K, 0, nbatch, a._offset, a._stride[-2], a._stride[-1],
            b._offset, b._stride[-2], b._stride[-1], out._offset]
    tail = list(batch) + list(a._stride[:-2]) + list(b._stride[:-2])
    nparams = len(head) + len(tail)
    bufs, (sa, sb) = bind(out, a, b)
    key = key + (sa, sb, len(bufs), epi and epi.key)
    nbuf = len(bufs)
    binding_kinds = kinds(bufs)
    extra = b""
    if epi is not None:
        bufs += epi.buffers
        binding_kinds += epi.kinds()
        extra = epi.words

    def make_code():
        if epi is None:
            return _source(a.dtype, b.dtype, out.dtype, compute, nb, nparams, sa, sb, nbuf)
        return (_source(a.dtype, b.dtype, out.dtype, compute, nb, nparams + epi.nwords, sa, sb, nbuf, True)
                + epi.code(nbuf, nparams))

    pid = rt.pipeline(key, make_code, binding_kinds)
    zmax = rt.max_workgroups
    for start in range(0, nbatch, zmax):
        head[3] = start
        count = min(zmax, nbatch - start)
        rt.dispatch(pid, (gx, gy, count), bufs, struct.pack(f"<{nparams}I", *(head + tail)) + extra)


def _source(adt, bdt, odt, T, nb, nparams, sa, sb, nbuf, epi=False):
    storages = {0: odt.gpu_storage, sa: adt.gpu_storage, sb: bdt.gpu_storage}
    decl = declarations(nparams, [storages[k] for k in range(nbuf)])
    zero = "0.0" if T == "f32" else "0i"
    M, N, K, base = param(0), param(1), param(2), param(3)
    a_off, sam, sak = param(5), param(6), param(7)
    b_off, sbk, sbn = param(8), param(9), param(10)
    o_off = param(11)
    bshape = [param(12 + d) for d in range(nb)]
    astr = [param(12 + nb + d) for d in range(nb)]
    bstr = [param(12 + 2 * nb + d) for d in range(nb)]
    batch_code = ["  let bi = wid.z + " + base + ";", "  var ab = " + a_off + ";", "  var bb = " + b_off + ";"]
    if nb:
        batch_code.append("  { var q = bi;")
        for d in reversed(range(nb)):
            batch_code.append(f"    {{ let c = q % {bshape[d]}; q = q / {bshape[d]}; ab = ab + c * {astr[d]}; bb = bb + c * {bstr[d]}; }}")
        batch_code.append("  }")
    la = load(f"B{sa}[ab + row * {sam} + col * {sak}]", adt.gpu_storage, T)
    lb = load(f"B{sb}[bb + row * {sbk} + col * {sbn}]", bdt.gpu_storage, T)
    rows = []
    for i in range(8):
        rows.append(f"""  {{ let gr = row0 + ty * 8u + {i}u;
    if (gr < {M}) {{
      let o = {o_off} + (bi * {M} + gr) * {N};
      for (var j = 0u; j < 4u; j = j + 1u) {{
        let gc = col0 + tx * 4u + j;
        if (gc < {N}) {{ B0[o + gc] = {f"tw_epilogue(o + gc, acc{i}[j])" if epi else store(f"acc{i}[j]", T, odt)}; }}
      }}
    }}
  }}""")
    accs = "\n".join(f"  var acc{i} = vec4<{T}>({zero});" for i in range(8))
    fma = "\n".join(f"      acc{i} = acc{i} + a{i // 4}[{i % 4}] * bv;" for i in range(8))
    # The loops inside a K step are unrolled here rather than written as WGSL loops: lavapipe
    # ends an invocation's loops after 65535 trips in all (its infinite-loop guard), which cut
    # K short from ~36000 on; only the K loop is left (K / 16 trips).
    load_a = "\n".join(f"""    {{ let e = lid + {j * 256}u;
      let r = e / {KT}u; let c = e % {KT}u; let row = row0 + r; let col = k0 + c;
      var v = {T}({zero});
      if (row < {M} && col < {K}) {{ v = {la}; }}
      AS[c * {TM // 4}u + r / 4u][r % 4u] = v;
    }}""" for j in range(TM * KT // 256))
    load_b = "\n".join(f"""    {{ let e = lid + {j * 256}u;
      let r = e / {TN}u; let c = e % {TN}u; let row = k0 + r; let col = col0 + c;
      var v = {T}({zero});
      if (row < {K} && col < {N}) {{ v = {lb}; }}
      BS[r * {TN // 4}u + c / 4u][c % 4u] = v;
    }}""" for j in range(TN * KT // 256))
    steps = "\n".join(f"""    {{ let a0 = AS[{kk * TM // 4}u + ty * 2u];
      let a1 = AS[{kk * TM // 4}u + ty * 2u + 1u];
      let bv = BS[{kk * TN // 4}u + tx];
{fma}
    }}""" for kk in range(KT))
    return decl + f"""
var<workgroup> AS: array<vec4<{T}>, {KT * TM // 4}>;   // [k][m / 4]: A's tile, transposed
var<workgroup> BS: array<vec4<{T}>, {KT * TN // 4}>;   // [k][n / 4]
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let tx = lid3.x; let ty = lid3.y;
  let row0 = wid.y * {TM}u; let col0 = wid.x * {TN}u;
{chr(10).join(batch_code)}
{accs}
  for (var k0 = 0u; k0 < {K}; k0 = k0 + {KT}u) {{
{load_a}
{load_b}
    workgroupBarrier();
{steps}
    workgroupBarrier();
  }}
{chr(10).join(rows)}
}}
"""
