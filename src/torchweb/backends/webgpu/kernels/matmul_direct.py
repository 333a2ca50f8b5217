"""Barrier-free matmul kernels for software adapters (SwiftShader): no workgroup memory, no
workgroupBarrier. Each invocation computes an rm x rn block of outputs (rn in vec4s), reading A
and B straight from their storage buffers; the CPU's cache does what a tile in workgroup memory
does on a GPU, while each barrier costs SwiftShader milliseconds (it runs a workgroup's
invocations as 4 SIMD lanes, switching between groups of lanes at every barrier).

SwiftShader reads a storage buffer at a computed index as a gather: one scalar load per lane and
component, whether the element is a scalar or a vec4. So loads are scalars, and what pays is
the block: per K step an invocation makes rm + rn loads for rm * rn multiply-adds. jax-js's
WebGPU matmul has the same shape (no shared memory, 4x4 outputs per invocation); larger blocks
win on SwiftShader (16x16 outputs, K unrolled 4 times: about twice the 128x128 tile's speed,
see matmul_tiles.SOFTWARE_VARIANTS).

Variants (matmul_tiles.Variant with wx, wy set, vec off: scalar reads) go through
matmul_tiles.run and _plan: the same parameters, batches, split-K and grids split over several
dispatches; this module only writes the kernel. Edges: the rows and columns a thread reads are
clamped into the matrix, so the K loop has no branch; what the clamped reads feed is never
stored.
"""

from .matmul_wgsl import cv, header, lit, store_acc


def source(v, ast, bst, odt, T, nb, nparams, sa, sb, nbuf, amode, bmode, ovec=False, epi=False):
    RM, RN, WX, WY = v.rm, v.rn, v.wx, v.wy
    assert RN % 4 == 0 and "4" not in amode + bmode, "scalar reads, vec4 accumulators"
    decl, P, pre = header(ast, bst, odt, T, nb, nparams, sa, sb, nbuf, amode, bmode, ovec)
    M, N = P.M, P.N
    V = f"vec4<{T}>"
    HB = RN // 4
    # element offsets of this thread's rows of A and columns of B (at k = 0)
    setup = [f"  let ar{i} = ab + min(row0 + {i}u, {M} - 1u) * {P.sam};" for i in range(RM)]
    setup += [f"  let bc{j} = bb + min(col0 + {j}u, {N} - 1u) * {P.sbn};" for j in range(RN)]

    def step(u):
        """One K step, at k + u."""
        kk = f"(k + {u}u)" if u else "k"
        body = [f"    {{ let ka = {kk} * {P.sak}; let kb = {kk} * {P.sbk};"]
        body += [f"    let a{i} = {cv(f'B{sa}[ar{i} + ka]', ast, T)};" for i in range(RM)]
        for h in range(HB):
            cols = ", ".join(cv(f"B{sb}[bc{4 * h + q} + kb]", bst, T) for q in range(4))
            body.append(f"    let b{h} = {V}({cols});")
        body += [f"    acc{i}_{h} = acc{i}_{h} + a{i} * b{h};" for i in range(RM) for h in range(HB)]
        return body + ["    }"]

    KT = v.kt   # K steps per loop trip (fewer trips: SwiftShader keeps the accumulators in memory
    body = [line for u in range(KT) for line in step(u)]   # between them); the rest one by one
    tail = step(0) if KT > 1 else []
    accs = [f"  var acc{i}_{h} = {V}({lit(T, 0)});" for i in range(RM) for h in range(HB)]
    rows = []
    for i in range(RM):
        for h in range(HB):
            put = store_acc(f"acc{i}_{h}", ovec, odt, T, N, epi)
            rows.append(f"""  {{ let gr = row0 + {i}u; let gc = col0 + {4 * h}u;
    if (gr < {M}) {{
      let o = {P.o_off} + s * {P.sstride} + (bi * {M} + gr) * {N} + gc;
{put}
    }}
  }}""")
    nl = "\n"
    return decl + f"""
@compute @workgroup_size({WX}, {WY})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
  let row0 = ((wid.y + {P.ybase}) * {WY}u + lid.y) * {RM}u;
  let col0 = ((wid.x + {P.xbase}) * {WX}u + lid.x) * {RN}u;
  if (row0 >= {M} || col0 >= {N}) {{ return; }}   // no barrier to reach: idle threads leave
{nl.join(pre)}
{nl.join(setup)}
{nl.join(accs)}
  for (var k0 = kbeg; k0 < kend; k0 = k0 + 4096u) {{   // lavapipe ends a loop at 65535 trips
   let k1 = min(kend, k0 + 4096u);
   var k = k0;
   for (; k + {KT - 1}u < k1; k = k + {KT}u) {{
{nl.join(body)}
   }}
   for (; k < k1; k = k + 1u) {{
{nl.join(tail)}
   }}
  }}
{nl.join(rows)}
}}
"""
