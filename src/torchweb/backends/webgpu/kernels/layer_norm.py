"""layer_norm's forward and its input gradient in one dispatch each (issue 21: the composite took
five kernels forward and six backward per layer norm, 130 of a 6-layer nanoGPT step's 519).

A workgroup per row (a thread per row for rows up to SOFTWARE_SHORT where barriers are costly:
SwiftShader, lavapipe), the row read from global memory once a pass (it stays in cache):

- forward: mean = sum(x) / N; rstd = 1 / sqrt(sum((x - mean)^2) / N + eps), the composite's
  two means (not a one-pass variance, whose rounding moved a BERT's embedding gradient);
  y = (x - mean) * rstd * weight + bias; mean and rstd written for the backward;
- backward (PyTorch's native_layer_norm_backward, in its order of operations): with
  gw = g * weight, ds = sum(gw * x), db = sum(gw), b = (db * mean - ds) * rstd^3 / N and
  c = -b * mean - db * rstd / N, dx = rstd * gw + b * x + c.

Rows are contiguous float32 (ops/composite/layer_norm_grad.py composes everything else); weight
and bias (optional) are contiguous rows of N."""

import struct

from . import subgroups as SG
from .elementwise import param
from .reduction import SOFTWARE_SHORT, few_barriers
from .wgsl import helpers_source
from ..runtime import dispatch_head

MAX_WG = 256
# elements a thread where the sums take subgroup operations: a row of 384 (nanoGPT's) in 64
# threads, where 4 a thread made 128 (the nanoGPT step on an H200, bench/gpt_step_table.py:
# 8 a thread 11.45 ms, 12 (one subgroup a row) 11.52, 4 11.49: the layer norms' share of ~0.5 ms
# went from 9 barriers a sum to 2)
PER_THREAD_SG = 8
MAX_ROW = 32 * 65535   # lavapipe ends a loop after 65535 trips: a thread visits at most this many


def fits(row):
    return 0 < row <= MAX_ROW


def _launch(rt, N):
    """(threads a row, short): a thread a row where barriers are costly and rows are short,
    else a workgroup of the smallest power of two (32..256) with a thread per 4 elements
    (PER_THREAD_SG with subgroup sums)."""
    if few_barriers(rt) and N <= SOFTWARE_SHORT:
        return 64, True
    wg, per = 32, (PER_THREAD_SG if SG.use(rt) else 4)
    while wg < MAX_WG and wg * per < N:
        wg *= 2
    return wg, False


def _frame(wg, short, decls, body, sg=0):
    """The kernel around `body`, which sees: row (the row index), lid, sum2(v, ARGS) (a pair of
    row sums, every thread gets them) and loops `for (var i = first; i < n; i = i + step)`.
    sg: the sums through subgroup operations (subgroups.py; SG.use's value), two barriers a sum
    where the tree takes log2(wg) + 2 (a 384-wide row: 9)."""
    if short:
        head = [f"  let row = (wid.y * nwg.x + wid.x) * {wg}u + lid;",
                f"  if (row >= {param(0)}) {{ return; }}",
                "  let first = 0u; let step = 1u;"]
        reduce_fn = "fn sum2(v: vec2<f32>, lid: u32) -> vec2<f32> { return v; }\n"
        shared = ""
    else:
        head = ["  let row = wid.y * nwg.x + wid.x;",
                # row is uniform in the workgroup: an excess workgroup of a folded grid leaves whole
                f"  if (row >= {param(0)}) {{ return; }}",
                f"  let first = lid; let step = {wg}u;"]
        shared = f"var<workgroup> SV: array<vec2<f32>, {wg}>;\n"
        sub = ""
        if sg:   # (sgs, sid passed in: the builtins are the entry point's; uniform as parameters)
            sub = (f"  if (sgs >= {SG.MIN_SIZE}u && {wg}u % sgs == 0u) {{\n"
                   "    let p = subgroupAdd(v);\n"
                   f"    if (sgs == {wg}u) {{ return p; }}\n"
                   "    if (sid == 0u) { SV[lid / sgs] = p; }\n"
                   "    workgroupBarrier();\n"
                   "    var x = vec2<f32>(0.0, 0.0);\n"
                   f"    for (var i = sid; i < {wg}u / sgs; i = i + sgs) {{ x = x + SV[i]; }}\n"
                   "    let r = subgroupAdd(x);\n"
                   "    workgroupBarrier();\n"   # before SV is written again
                   "    return r;\n"
                   "  }\n")
        reduce_fn = (
            f"fn sum2(v: vec2<f32>, lid: u32{', sgs: u32, sid: u32' if sg else ''}) -> vec2<f32> {{\n"
            + sub +
            "  SV[lid] = v;\n"
            "  workgroupBarrier();\n"
            f"  for (var s = {wg // 2}u; s > 0u; s = s >> 1u) {{\n"
            "    if (lid < s) { SV[lid] = SV[lid] + SV[lid + s]; }\n"
            "    workgroupBarrier();\n"
            "  }\n"
            "  let r = SV[0];\n"
            "  workgroupBarrier();\n"   # before SV is written again
            "  return r;\n"
            "}\n")
    sg = sg and not short
    body = body.replace("ARGS", "lid, sgs, sid" if sg else "lid")
    return ((SG.enable_line() if sg else "") + decls + "\n" + shared + helpers_source({"rsqrt"}) + "\n" + reduce_fn +
            f"@compute @workgroup_size({wg})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            f"        @builtin(local_invocation_index) lid: u32{', ' + SG.BUILTINS if sg else ''}) {{\n"
            + "\n".join(head) + "\n" + body + "}\n")


def _decl(slots, nparams):
    """The uniform and storage buffers: slots [(name, access)] from binding 1 on."""
    lines = [f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;"]
    for i, (name, access) in enumerate(slots):
        lines.append(f"@group(0) @binding({i + 1}) var<storage, {access}> {name}: array<f32>;")
    return "\n".join(lines)


def _summed(name, parts, base):
    """WGSL reading element i of a row (row start `base`): the buffer `name`, or, where given as
    two parts (a + b, a residual sum), their sum read from NA and NB."""
    if parts is None:
        return f"{name}[{base} + i]"
    return f"({name}A[{name}ao + row * n + i] + {name}B[{name}bo + row * n + i])"


def forward(rt, y, stats, mean_off, rstd_off, x, weight, bias, eps, N, x_parts=None):
    """y (contiguous from its offset, fresh) = layer_norm of x's rows of N elements; their mean and rstd into
    the float32 buffer of `stats` at element offsets mean_off and rstd_off. x_parts: x is the
    sum of these two (storage, offset) buffers, which the kernel adds as it reads them and
    writes into x (fresh)."""
    rows = x.numel() // N
    wg, short = _launch(rt, N)
    sg = SG.use(rt)
    hw, hb, hp = weight is not None, bias is not None, x_parts is not None
    slots = [("Y", "read_write"), ("ST", "read_write")]
    slots += [("XO", "read_write"), ("XA", "read"), ("XB", "read")] if hp else [("X", "read")]
    slots += [("W", "read")] * hw + [("BI", "read")] * hb

    def make_code():
        w = f"W[{param(4)} + i]" if hw else "1.0"
        b = f" + BI[{param(5)} + i]" if hb else ""
        xi = "XO[xb + i]" if hp else "X[xb + i]"
        first_read = (f"let v = {_summed('X', x_parts, 'xb')}; XO[xb + i] = v; s = s + v;" if hp else
                      "s = s + X[xb + i];")
        body = (f"  let n = {param(1)}; let xb = {param(3)} + row * n;\n"
                + (f"  let Xao = {param(8)}; let Xbo = {param(9)};\n" if hp else "") +
                "  var s = 0.0;\n"
                f"  for (var i = first; i < n; i = i + step) {{ {first_read} }}\n"
                "  let m = sum2(vec2<f32>(s, 0.0), ARGS).x / f32(n);\n"
                "  var q = 0.0;\n"
                f"  for (var i = first; i < n; i = i + step) {{ let d = {xi} - m; q = q + d * d; }}\n"
                f"  let r = tw_rsqrt(sum2(vec2<f32>(q, 0.0), ARGS).x / f32(n) + bitcast<f32>({param(2)}));\n"
                "  for (var i = first; i < n; i = i + step) {\n"
                f"    Y[{param(10)} + row * n + i] = ({xi} - m) * r * {w}{b};\n"
                "  }\n"
                f"  if (lid == 0u || step == 1u) {{ ST[{param(6)} + row] = m; ST[{param(7)} + row] = r; }}\n")
        return _frame(wg, short, _decl(slots, 12), body, sg)

    bufs = [y._storage, stats._storage, x._storage]
    if hp:
        bufs += [st for st, _ in x_parts]
    bufs += [t._storage for t in (weight, bias) if t is not None]
    params = [rows, N, struct.unpack("<I", struct.pack("<f", eps))[0], x._offset,
              weight._offset if hw else 0, bias._offset if hb else 0, mean_off, rstd_off,
              x_parts[0][1] if hp else 0, x_parts[1][1] if hp else 0, y._offset, 0]
    _dispatch(rt, ("layer_norm", wg, short, hw, hb, hp, sg), make_code, slots, bufs, rows, wg, short, params, N)


def backward(rt, dx, g, x, weight, stats, mean_off, rstd_off, N, gx=None, g_parts=None):
    """dx (contiguous, fresh) = the input gradient of layer_norm for the output gradient g
    (contiguous), from x's rows of N elements and the forward's mean and rstd (in `stats`'s
    buffer at mean_off, rstd_off); gx (if given, as dx) = g * xhat, the terms of the weight's
    gradient, written in the same pass. g_parts: g is the sum of these two (storage, offset)
    buffers (two gradients summed), added as read and written into g (fresh)."""
    rows = x.numel() // N
    wg, short = _launch(rt, N)
    sg = SG.use(rt)
    hw, hg, hp = weight is not None, gx is not None, g_parts is not None
    slots = [("DX", "read_write")] + [("GX", "read_write")] * hg
    slots += [("GO", "read_write"), ("GA", "read"), ("GB", "read")] if hp else [("G", "read")]
    slots += [("X", "read"), ("ST", "read")] + [("W", "read")] * hw

    def make_code():
        gi = "GO[gb + i]" if hp else "G[gb + i]"
        w = f" * W[{param(5)} + i]" if hw else ""
        first_read = (f"let gv = {_summed('G', g_parts, 'gb')}; GO[gb + i] = gv; let gw = gv{w};" if hp else
                      f"let gw = G[gb + i]{w};")
        body = (f"  let n = {param(1)}; let gb = {param(2)} + row * n; let xb = {param(3)} + row * n;\n"
                + (f"  let Gao = {param(8)}; let Gbo = {param(9)};\n" if hp else "") +
                f"  let m = ST[{param(4)} + row]; let r = ST[{param(6)} + row];\n"
                "  var acc = vec2<f32>(0.0, 0.0);\n"
                f"  for (var i = first; i < n; i = i + step) {{ {first_read} acc = acc + vec2<f32>(gw * X[xb + i], gw); }}\n"
                "  let t = sum2(acc, ARGS);\n"
                "  let scale = 1.0 / f32(n);\n"
                "  let bb = (t.y * m - t.x) * (r * r * r) * scale;\n"
                "  let c = -bb * m - t.y * r * scale;\n"
                "  for (var i = first; i < n; i = i + step) {\n"
                f"    DX[{param(7)} + row * n + i] = r * ({gi}{w}) + bb * X[xb + i] + c;\n"
                + (f"    GX[{param(10)} + row * n + i] = {gi} * ((X[xb + i] - m) * r);\n" if hg else "") +
                "  }\n")
        return _frame(wg, short, _decl(slots, 12), body, sg)

    bufs = [dx._storage] + ([gx._storage] if hg else []) + [g._storage]
    if hp:
        bufs += [st for st, _ in g_parts]
    bufs += [x._storage, stats._storage] + ([weight._storage] if hw else [])
    params = [rows, N, g._offset, x._offset, mean_off, weight._offset if hw else 0, rstd_off, dx._offset,
              g_parts[0][1] if hp else 0, g_parts[1][1] if hp else 0, gx._offset if hg else 0, 0]
    _dispatch(rt, ("layer_norm_backward", wg, short, hw, hg, hp, sg), make_code, slots, bufs, rows, wg, short,
              params, N)


_HEADS = {}   # (runtime id, kernel key, workgroups) -> (its DISPATCH head, which bindings it writes)


def _dispatch(rt, key, make_code, slots, storages, rows, wg, short, params, N):
    sig = (id(rt), key, rows)   # (lost runtimes are kept: an id is never reused)
    kept = _HEADS.get(sig)
    if kept is None:
        kinds = ["uniform"] + ["write" if a == "read_write" else "read" for _, a in slots]
        pid = rt.pipeline(key, make_code, kinds)
        groups = -(-rows // wg) if short else rows
        if len(_HEADS) > 256:
            _HEADS.clear()
        kept = _HEADS[sig] = (dispatch_head(pid, rt.grid(groups), len(slots)),
                              tuple(a == "read_write" for _, a in slots))
    head, writes = kept
    bound = []
    for st, write in zip(storages, writes):
        bound += (st.buffer_for_write() if write else st.buffer_for_read(), 0, st.size)
    rt.record(head, struct.pack(f"<{len(params)}I", *params), bound, 12 * rows * N)
