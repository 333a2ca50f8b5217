"""Sorting along the last dim of strided views: bitonic sorts of (key, original index) pairs.

Comparing the original index after the key makes every sort stable (PyTorch's stable order,
which its unstable sort also gives on CPU for our cases); NaN sorts as the largest key and
-0.0 equals 0.0. Rows are padded to a power of two with entries whose index is >= the row's
length: they sort after everything in either direction and are never written out.

- `block`: a workgroup sorts each block of up to BLOCK entries of a row in workgroup memory
  (8 KiB of keys and indices); a row that fits one block is written straight to the outputs.
- longer rows (several dispatches chosen by ops/sorting.py): blocks are sorted into work
  buffers, then each merge stage k runs `step` dispatches (a thread per compare-exchange in
  global memory, the first one mirrored, so every block sorts ascending) while the distance is
  >= BLOCK, and one `merge` dispatch (the distances below BLOCK in workgroup memory), which in
  the last stage writes the outputs.

`scatter_add`: out[row, idx[row, k]] += src[row, k] in float32 (a compare-and-swap loop on
the bits: WGSL has no float atomics): the backward of sort, topk, cummax and friends.
"""

import struct

from .elementwise import WORKGROUP, coalesce, param
from .. import errors as ERR
from .wgsl import cas_add_f32, cas_key, helpers_source, load, store

BLOCK = 1024


def _before(t, descending):
    """WGSL function: does (ak, ai) come before (bk, bi) in a row of n entries?"""
    lines = [f"fn tw_before(ak: {t}, ai: u32, bk: {t}, bi: u32, n: u32) -> bool {{",
             "  if (ai >= n) { return false; }",
             "  if (bi >= n) { return true; }"]
    cmp = ">" if descending else "<"
    if t == "f32":
        lines += ["  let an = tw_isnan(ak); let bn = tw_isnan(bk);",
                  f"  if (an != bn) {{ return {'an' if descending else 'bn'}; }}",
                  f"  if (!an && ak != bk) {{ return ak {cmp} bk; }}"]
    else:
        lines.append(f"  if (ak != bk) {{ return ak {cmp} bk; }}")
    lines += ["  return ai < bi;", "}"]
    return "\n".join(lines)


def _header(nparams, storages, writable, t, descending, shared):
    lines = ["enable f16;"] if "f16" in storages else []
    lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
    for s, sto in enumerate(storages):
        access = "read_write" if s in writable else "read"
        lines.append(f"@group(0) @binding({s + 1}) var<storage, {access}> B{s}: array<{sto}>;")
    if shared:
        lines.append(f"var<workgroup> SK: array<{t}, {BLOCK}>;")
        lines.append(f"var<workgroup> SI: array<u32, {BLOCK}>;")
    lines.append(helpers_source({"isnan"}) if t == "f32" else "")
    lines.append(_before(t, descending))
    return "\n".join(lines) + "\n"


_MAIN = ("@compute @workgroup_size({wg})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32) {{\n")


def _network(size, first_k):
    """WGSL: bitonic stages k = first_k..size over SK/SI[0..size) (every block ascending under
    tw_before; each stage's first step mirrored); first_k > size means only the half-cleaners
    of the last stage (distances size/2 .. 1)."""
    code = []
    pairs = f"{size} / 2u"
    code.append(f"  for (var k = {first_k}; k <= {size}; k = k << 1u) {{")
    code.append("    for (var j = k >> 1u; j > 0u; j = j >> 1u) {")
    code.append(f"      for (var q = lid; q < {pairs}; q = q + {WORKGROUP}u) {{")
    code.append("        var i = 0u; var p = 0u;")
    code.append("        if (j == (k >> 1u)) { let blk = q / j; let off = q % j; i = blk * k + off; p = blk * k + k - 1u - off; }")
    code.append("        else { i = (q / j) * 2u * j + q % j; p = i + j; }")
    code.append("        let ak = SK[i]; let ai = SI[i]; let bk = SK[p]; let bi = SI[p];")
    code.append("        if (tw_before(bk, bi, ak, ai, NN)) { SK[i] = bk; SI[i] = bi; SK[p] = ak; SI[p] = ai; }")
    code.append("      }")
    code.append("      workgroupBarrier();")
    code.append("    }")
    code.append("  }")
    return code


def _halfcleaners(size):
    """The last stage's steps below BLOCK: distances size/2 .. 1, none mirrored."""
    return ["  for (var j = " + f"{size} >> 1u" + "; j > 0u; j = j >> 1u) {",
            f"    for (var q = lid; q < {size} / 2u; q = q + {WORKGROUP}u) {{",
            "      let i = (q / j) * 2u * j + q % j; let p = i + j;",
            "      let ak = SK[i]; let ai = SI[i]; let bk = SK[p]; let bi = SI[p];",
            "      if (tw_before(bk, bi, ak, ai, NN)) { SK[i] = bk; SI[i] = bi; SK[p] = ak; SI[p] = ai; }",
            "    }",
            "    workgroupBarrier();",
            "  }"]


def block(rt, t, inp, size, descending, values=None, indices=None, work_keys=None, work_idx=None):
    """Sort blocks of `size` (a power of two <= BLOCK) of each row of inp ([*outer, R], any
    strides). With values/indices ([*outer, R] views; size >= R): the sorted row is written
    there. Else into work_keys/work_idx ([rows, Npad] contiguous, Npad a multiple of size)."""
    R = inp.shape[-1]
    rows = inp.numel() // R
    final = values is not None
    lists = [list(inp._stride[:-1]) or [0]]
    if final:
        lists += [list(values._stride[:-1]) or [0], list(indices._stride[:-1]) or [0]]
    shape, merged = coalesce(inp.shape[:-1] or (1,), lists)
    no = len(shape)
    zero = [0] * no
    vstr, xstr = (merged[1], merged[2]) if final else (zero, zero)
    npad = size if final else work_keys.shape[-1]
    nblocks = npad // size
    outs = [values, indices] if final else [work_keys, work_idx]
    tensors = outs + [inp]
    params = ([rows, R, npad, size, nblocks] + list(shape) + merged[0] + vstr + xstr
              + [inp._offset, inp._stride[-1], outs[0]._offset, outs[0]._stride[-1] if final else 1,
                 outs[1]._offset, outs[1]._stride[-1] if final else 1])
    params = [p & 0xFFFFFFFF for p in params]
    storages = [tt.dtype.gpu_storage for tt in tensors]
    out_dtype = values.dtype if final else None
    key = ("sort_block", t, inp.dtype.name, out_dtype and out_dtype.name, no, final, descending, size)

    def make_code():
        b = 5 + 4 * no
        shp = [param(5 + d) for d in range(no)]
        strs = [[param(5 + (1 + s) * no + d) for d in range(no)] for s in range(3)]
        in_off, in_rs, v_off, v_rs, x_off, x_rs = (param(b + k) for k in range(6))
        body = ["  let w = wid.y * nwg.x + wid.x;",
                f"  if (w >= {param(0)} * {param(4)}) {{ return; }}",
                f"  let NN = {param(1)};",
                f"  let row = w / {param(4)}; let blk = w % {param(4)};",
                f"  var ib = {in_off}; var vb = {v_off}; var xb = {x_off};",
                "  { var q = row;"]
        for d in reversed(range(no)):
            body.append(f"    {{ let cc = q % {shp[d]}; q = q / {shp[d]}; ib = ib + cc * {strs[0][d]}; "
                        f"vb = vb + cc * {strs[1][d]}; xb = xb + cc * {strs[2][d]}; }}")
        body.append("  }")
        body += [f"  for (var p = lid; p < {size}u; p = p + {WORKGROUP}u) {{",
                 f"    let g = blk * {size}u + p;",
                 f"    var kv: {t} = {'0.0' if t == 'f32' else ('0i' if t == 'i32' else '0u')};",
                 f"    if (g < NN) {{ kv = {load(f'B2[ib + g * {in_rs}]', inp.dtype.gpu_storage, t)}; }}",
                 "    SK[p] = kv; SI[p] = g;",
                 "  }",
                 "  workgroupBarrier();"]
        body += _network(f"{size}u", "2u")
        body.append(f"  for (var p = lid; p < {size}u; p = p + {WORKGROUP}u) {{")
        if final:
            body += ["    if (p < NN) {",
                     f"      B0[vb + p * {v_rs}] = {store('SK[p]', t, out_dtype)};",
                     f"      B1[xb + p * {x_rs}] = i32(SI[p]);",
                     "    }"]
        else:
            body += [f"    let g = row * {param(2)} + blk * {size}u + p;",
                     "    B0[g] = SK[p]; B1[g] = bitcast<i32>(SI[p]);"]
        body.append("  }")
        return (_header(len(params), storages, (0, 1), t, descending, True)
                + _MAIN.format(wg=WORKGROUP) + "\n".join(body) + "\n}\n")

    pid = rt.pipeline(key, make_code, ["uniform", "write", "write", "read"])
    buffers = [(tt._storage.buffer_for_write(), tt._storage.size) for tt in tensors]
    rt.dispatch(pid, rt.grid(rows * nblocks), buffers, struct.pack(f"<{len(params)}I", *params))


def step(rt, t, work_keys, work_idx, R, k, j, descending):
    """One global compare-exchange step of merge stage k at distance j (mirrored when j == k/2)."""
    rows, npad = work_keys.shape
    n = rows * npad // 2
    params = [n, R, npad, k, j]
    storages = [work_keys.dtype.gpu_storage, "i32"]
    key = ("sort_step", t, work_keys.dtype.name, descending)

    def make_code():
        body = [f"  let q0 = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
                f"  if (q0 >= {param(0)}) {{ return; }}",
                f"  let NN = {param(1)}; let half = {param(2)} / 2u; let k = {param(3)}; let j = {param(4)};",
                f"  let base = (q0 / half) * {param(2)}; let q = q0 % half;",
                "  var i = 0u; var p = 0u;",
                "  if (j == (k >> 1u)) { let blk = q / j; let off = q % j; i = blk * k + off; p = blk * k + k - 1u - off; }",
                "  else { i = (q / j) * 2u * j + q % j; p = i + j; }",
                "  i = base + i; p = base + p;",
                "  let ak = B0[i]; let ai = bitcast<u32>(B1[i]); let bk = B0[p]; let bi = bitcast<u32>(B1[p]);",
                "  if (tw_before(bk, bi, ak, ai, NN)) { B0[i] = bk; B1[i] = bitcast<i32>(bi); B0[p] = ak; B1[p] = bitcast<i32>(ai); }"]
        return (_header(len(params), storages, (0, 1), t, descending, False)
                + _MAIN.format(wg=WORKGROUP) + "\n".join(body) + "\n}\n")

    pid = rt.pipeline(key, make_code, ["uniform", "write", "write"])
    buffers = [(tt._storage.buffer_for_write(), tt._storage.size) for tt in (work_keys, work_idx)]
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers, struct.pack(f"<{len(params)}I", *params))


def merge(rt, t, work_keys, work_idx, R, descending, values=None, indices=None):
    """The distances below BLOCK of a merge stage, a workgroup per BLOCK entries; with
    values/indices ([*outer, R] views; the last stage) the sorted rows are written there."""
    rows, npad = work_keys.shape
    nseg = npad // BLOCK
    final = values is not None
    if final:
        shape, (vstr, xstr) = coalesce(values.shape[:-1] or (1,), [list(values._stride[:-1]) or [0],
                                                                   list(indices._stride[:-1]) or [0]])
    else:
        shape, vstr, xstr = [1], [0], [0]
    no = len(shape)
    params = ([rows, R, npad, nseg] + list(shape) + vstr + xstr
              + [values._offset if final else 0, values._stride[-1] if final else 0,
                 indices._offset if final else 0, indices._stride[-1] if final else 0])
    params = [p & 0xFFFFFFFF for p in params]
    tensors = [work_keys, work_idx] + ([values, indices] if final else [])
    storages = [tt.dtype.gpu_storage for tt in tensors]
    key = ("sort_merge", t, work_keys.dtype.name, values.dtype.name if final else None, no, final, descending)

    def make_code():
        shp = [param(4 + d) for d in range(no)]
        vs = [param(4 + no + d) for d in range(no)]
        xs = [param(4 + 2 * no + d) for d in range(no)]
        b = 4 + 3 * no
        v_off, v_rs, x_off, x_rs = (param(b + k) for k in range(4))
        body = ["  let w = wid.y * nwg.x + wid.x;",
                f"  if (w >= {param(0)} * {param(3)}) {{ return; }}",
                f"  let NN = {param(1)};",
                f"  let row = w / {param(3)}; let seg = w % {param(3)};",
                f"  let base = row * {param(2)} + seg * {BLOCK}u;",
                f"  for (var p = lid; p < {BLOCK}u; p = p + {WORKGROUP}u) {{ SK[p] = B0[base + p]; SI[p] = bitcast<u32>(B1[base + p]); }}",
                "  workgroupBarrier();"]
        body += _halfcleaners(f"{BLOCK}u")
        if final:
            body += [f"  var vb = {v_off}; var xb = {x_off};", "  { var q = row;"]
            for d in reversed(range(no)):
                body.append(f"    {{ let cc = q % {shp[d]}; q = q / {shp[d]}; vb = vb + cc * {vs[d]}; xb = xb + cc * {xs[d]}; }}")
            body += ["  }",
                     f"  for (var p = lid; p < {BLOCK}u; p = p + {WORKGROUP}u) {{",
                     f"    let g = seg * {BLOCK}u + p;",
                     "    if (g < NN) {",
                     f"      B2[vb + g * {v_rs}] = {store('SK[p]', t, values.dtype)};",
                     f"      B3[xb + g * {x_rs}] = i32(SI[p]);",
                     "    }",
                     "  }"]
        else:
            body.append(f"  for (var p = lid; p < {BLOCK}u; p = p + {WORKGROUP}u) {{ B0[base + p] = SK[p]; B1[base + p] = bitcast<i32>(SI[p]); }}")
        return (_header(len(params), storages, (0, 1, 2, 3), t, descending, True)
                + _MAIN.format(wg=WORKGROUP) + "\n".join(body) + "\n}\n")

    kinds = ["uniform", "write", "write"] + (["write", "write"] if final else [])
    pid = rt.pipeline(key, make_code, kinds)
    buffers = [(tt._storage.buffer_for_write(), tt._storage.size) for tt in tensors]
    rt.dispatch(pid, rt.grid(rows * nseg), buffers, struct.pack(f"<{len(params)}I", *params))


def scatter_add(rt, out, idx, src):
    """out[row, idx[row, k]] += src[row, k]: out a contiguous float32 [rows, N], idx (int64) and
    src (float) contiguous [rows, K]."""
    rows, N = out.shape
    K = idx.shape[-1]
    n = rows * K
    if n == 0:
        return
    tag = rt.errors.tag("the backward of sort/topk/kthvalue/cummax/cummin (a scatter_add of the gradient)",
                        hint="Run it on the cpu device.")
    params = [n, K, N, out._offset, idx._offset, src._offset, tag]
    tensors = [out, idx, src]
    key = ("scatter_add", src.dtype.name) + cas_key()

    def make_code():
        lines = ["enable f16;"] if src.dtype.gpu_storage == "f16" else []
        lines += [f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-len(params) // 4)}>;",
                  "@group(0) @binding(1) var<storage, read_write> B0: array<atomic<u32>>;",
                  "@group(0) @binding(2) var<storage, read> B1: array<i32>;",
                  f"@group(0) @binding(3) var<storage, read> B2: array<{src.dtype.gpu_storage}>;",
                  f"@group(0) @binding(4) {ERR.WGSL_DECL}"]
        body = [f"  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
                f"  if (i >= {param(0)}) {{ return; }}",
                f"  let row = i / {param(1)};",
                f"  let a = {param(3)} + row * {param(2)} + u32(B1[{param(4)} + i]);",
                f"  let v = {load(f'B2[{param(5)} + i]', src.dtype.gpu_storage, 'f32')};"]
        body += cas_add_f32("B0[a]", "v", param(6))
        return "\n".join(lines) + "\n" + _MAIN.format(wg=WORKGROUP) + "\n".join(body) + "\n}\n"

    pid = rt.pipeline(key, make_code, ["uniform", "write", "read", "read", "write"])
    buffers = [(tt._storage.buffer_for_write(), tt._storage.size) for tt in tensors] + [rt.errors.binding]
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers, struct.pack(f"<{len(params)}I", *params))
