"""The WGSL pieces every generated matmul kernel shares, the tiled ones (matmul_tiles.py) and the
barrier-free ones (matmul_direct.py): the header (bindings, parameters, the batch entry and K
slice of a workgroup), literals, loads converted to the compute type, the accumulator's store."""

from collections import namedtuple

from .elementwise import param
from .wgsl import load, store


def lit(T, x):
    return {"f32": f"{x}.0", "f16": f"{x}.0h", "i32": f"{x}i"}[T]


def cv(expr, src, T, vec=False):
    """Convert a loaded value (scalar or vec4 of storage type src) to the compute type T."""
    if src == T:
        return expr
    if vec:
        return f"vec4<{T}>({expr})"
    return load(expr, src, T)


def store_acc(acc, ovec, odt, T, N, epi=False):
    """The WGSL storing accumulator `acc` (a vec4 of T, outputs gc..gc+3 of a row) at B0[o]:
    one vec4 store (ovec) or four masked scalar ones. epi: each value stored through the
    epilogue's tw_epilogue(element, value) (kernels/matmul_epilogue.py; float32, o the
    element: an offset-0 output, one K slice)."""
    if epi:
        if ovec:
            val = f"vec4<f32>({', '.join(f'tw_epilogue(o + {j}u, {acc}[{j}])' for j in range(4))})"
            return f"      if (gc < {N}) {{ B0[o / 4u] = {val}; }}"
        return f"""      for (var j = 0u; j < 4u; j = j + 1u) {{
        if (gc + j < {N}) {{ B0[o + j] = tw_epilogue(o + j, {acc}[j]); }}
      }}"""
    if ovec:
        ost = odt.gpu_storage
        if odt.name in ("bfloat16", "float16") and ost == "f32":   # held rounded in f32 words
            val = f"vec4<f32>({', '.join(store(f'{acc}[{j}]', T, odt) for j in range(4))})"
        else:
            val = acc if ost == T else f"vec4<{ost}>({acc})"
        return f"      if (gc < {N}) {{ B0[o / 4u] = {val}; }}"
    return f"""      for (var j = 0u; j < 4u; j = j + 1u) {{
        if (gc + j < {N}) {{ B0[o + j] = {store(f"{acc}[j]", T, odt)}; }}
      }}"""


def header(ast, bst, odt, T, nb, nparams, sa, sb, nbuf, amode, bmode, ovec):
    """What every generated matmul kernel starts with: (declarations, P: the parameter
    expressions by name, prelude: WGSL lines giving s (the K slice), bi (the batch entry), ab/bb
    (A's and B's offsets for it) and kbeg/kend (the slice's K range), from wid)."""
    types = {0: f"vec4<{odt.gpu_storage}>" if ovec else odt.gpu_storage}
    types[sa] = f"vec4<{ast}>" if amode.endswith("4") else ast
    types[sb] = f"vec4<{bst}>" if bmode.endswith("4") else bst
    lines = ["enable f16;"] if "f16" in (ast, bst, odt.gpu_storage, T) else []
    lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
    for s in range(nbuf):
        acc = "read_write" if s == 0 else "read"
        lines.append(f"@group(0) @binding({s + 1}) var<storage, {acc}> B{s}: array<{types[s]}>;")
    names = ("M N K zbase nbatch a_off sam sak b_off sbk sbn o_off nsplit kchunk sstride xbase "
             "ybase").split()
    P = namedtuple("Params", names)(*(param(i) for i in range(len(names))))
    bshape = [param(17 + d) for d in range(nb)]
    astr = [param(17 + nb + d) for d in range(nb)]
    bstr = [param(17 + 2 * nb + d) for d in range(nb)]
    pre = ["  let s = wid.z % " + P.nsplit + ";", "  let bi = wid.z / " + P.nsplit + " + " + P.zbase + ";",
           "  var ab = " + P.a_off + ";", "  var bb = " + P.b_off + ";"]
    if nb:
        pre.append("  { var q = bi;")
        for d in reversed(range(nb)):
            pre.append(f"    {{ let c = q % {bshape[d]}; q = q / {bshape[d]}; ab = ab + c * {astr[d]}; bb = bb + c * {bstr[d]}; }}")
        pre.append("  }")
    pre.append(f"  let kbeg = s * {P.kchunk}; let kend = min({P.K}, kbeg + {P.kchunk});")
    return "\n".join(lines), P, pre
