"""float32 products of few rows (M <= MAX_M): out (M, N) = a (M, K) @ b (K, N), any strides, the
decode step's linears (a token's row times a weight). The tiled kernels spend a 64- or 128-row
tile on the one row (63/64 of its multiply-adds wasted, and few workgroups: one per 64 or 128
columns); here every thread's products count, as matmul_packed.py's gemv for packed weights.

Two thread layouts, by which of b's strides is 1 (both correct for any strides):
- "rows" (b's k-stride 1: an nn.Linear's weight.T, rows of the (N, K) weight contiguous): a
  workgroup per ROWS outputs, its 64 threads on consecutive k (coalesced), all M rows of a at
  once, then a tree sum in workgroup memory.
- "cols" (b's n-stride 1: GPT-2's Conv1D weight, (K, N) row-major): the same with COL_ROWS
  outputs a workgroup, so each thread reads 32 contiguous bytes of a weight row per k. (A
  workgroup per 64 outputs with threads on consecutive n made only N/64 workgroups, 12 for
  GPT-2's 768 columns: its decode step ran at 108 tokens/s against 292 this way on an H200.)
Sums are float32 in k order per thread (as the tiled kernels, not bit-equal to them)."""

import struct

from .bindings import bind, declarations, kinds
from .elementwise import param
from .wgsl import load

MAX_M = 4
ROWS, WG = 4, 64          # "rows": outputs per workgroup, threads per workgroup
COL_ROWS = 8              # "cols": outputs per workgroup (32 contiguous bytes of a weight row)


_FLOATS = ("float32", "float16", "bfloat16")


def fits(M, N, K, out, a, b, barriers_costly):
    """Whether this product goes here: a float32 result (operands of any float dtype, read as
    f32), few rows, no batch, a loop lavapipe finishes; not where barriers are costly
    (SwiftShader keeps its barrier-free tiles)."""
    return (M <= MAX_M and out.dtype.name == "float32" and a.dtype.name in _FLOATS and b.dtype.name in _FLOATS
            and out.numel() == M * N and 0 < K < 65536 and not barriers_costly)


def layout(b):
    return "rows" if b._stride[-2] == 1 else "cols"


def run(rt, out, a, b):
    """out (M, N) contiguous float32 = a (M, K) @ b (K, N) float32 (M <= MAX_M, no batch)."""
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    if out.numel() == 0:
        return
    mode = layout(b)
    params = [M, N, K, a._offset, a._stride[-2], a._stride[-1], b._offset, b._stride[-2], b._stride[-1],
              out._offset]
    bufs, (sa, sb) = bind(out, a, b)
    storages = ["f32"] * len(bufs)
    storages[sa], storages[sb] = a.dtype.gpu_storage, b.dtype.gpu_storage
    key = ("mm_gemv", mode, M, sa, sb, tuple(storages))
    pid = rt.pipeline(key, lambda: _source(mode, M, len(params), sa, sb, storages), kinds(bufs))
    groups = -(-N // (ROWS if mode == "rows" else COL_ROWS))
    rt.dispatch(pid, rt.grid(groups), bufs, struct.pack(f"<{len(params)}I", *params), work=4 * K * N)


def rows_body(mt, N, loop, x, weight, product, write, rows=ROWS):
    """The "rows" gemv's body (shared with matmul_packed.py's): a workgroup per `rows` outputs from
    n0, its WG threads striding over k (loop: the for's opening lines, k set), x(m) / weight(r)
    the operands, product(r, m) their product, then a tree sum over the threads in RED
    (rows * mt * WG floats); write(value) stores one output, m and n set."""
    nacc = rows * mt
    body = [f"  let n0 = (wid.y * nwg.x + wid.x) * {rows}u;", f"  if (n0 >= {N}) {{ return; }}"]
    body += [f"  var a{r}_{m} = 0.0;" for r in range(rows) for m in range(mt)]
    body += loop + [f"    let x{m} = {x(m)};" for m in range(mt)]
    for r in range(rows):
        body.append(f"    let w{r} = {weight(r)};")
        body += [f"    a{r}_{m} = a{r}_{m} + {product(r, m)};" for m in range(mt)]
    body += ["  }"]
    body += [f"  RED[{r * mt + m}u * {WG}u + lid] = a{r}_{m};" for r in range(rows) for m in range(mt)]
    body += [f"  for (var s = {WG // 2}u; s > 0u; s = s >> 1u) {{", "    workgroupBarrier();", "    if (lid < s) {"]
    body += [f"      RED[{j}u * {WG}u + lid] = RED[{j}u * {WG}u + lid] + RED[{j}u * {WG}u + lid + s];"
             for j in range(nacc)]
    body += ["    }", "  }", f"  if (lid < {nacc}u) {{",
             f"    let r = lid / {mt}u; let m = lid % {mt}u; let n = n0 + r;",
             f"    if (n < {N}) {{ {write(f'RED[lid * {WG}u]')} }}", "  }"]
    return body


def _source(mode, mt, nparams, sa, sb, storages):
    decl = declarations(nparams, storages)
    N, K, a_off, sam, sak, b_off, sbk, sbn, o_off = (param(1 + i) for i in range(9))
    la = lambda m: load(f"B{sa}[{a_off} + {m}u * {sam} + k * {sak}]", storages[sa], "f32")   # noqa: E731
    lb = lambda n: load(f"B{sb}[{b_off} + k * {sbk} + {n} * {sbn}]", storages[sb], "f32")   # noqa: E731
    rows = ROWS if mode == "rows" else COL_ROWS
    decl += f"\nvar<workgroup> RED: array<f32, {WG * rows * mt}>;"
    body = rows_body(mt, N, [f"  for (var k = lid; k < {K}; k = k + {WG}u) {{"], la,
                     lambda r: lb(f"min(n0 + {r}u, {N} - 1u)"),
                     lambda r, m: f"x{m} * w{r}", lambda v: f"B0[{o_off} + m * {N} + n] = {v};", rows=rows)
    return decl + (f"\n@compute @workgroup_size({WG})\n"
                   "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                   "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")
