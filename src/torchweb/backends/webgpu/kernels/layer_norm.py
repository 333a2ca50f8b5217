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

from .elementwise import param
from .reduction import SOFTWARE_SHORT, few_barriers
from .wgsl import helpers_source

MAX_WG = 256
MAX_ROW = 32 * 65535   # lavapipe ends a loop after 65535 trips: a thread visits at most this many


def fits(row):
    return 0 < row <= MAX_ROW


def _launch(rt, N):
    """(threads a row, short): a thread a row where barriers are costly and rows are short,
    else a workgroup of the smallest power of two (32..256) with a thread per 4 elements."""
    if few_barriers(rt) and N <= SOFTWARE_SHORT:
        return 64, True
    wg = 32
    while wg < MAX_WG and wg * 4 < N:
        wg *= 2
    return wg, False


def _frame(wg, short, decls, body):
    """The kernel around `body`, which sees: row (the row index), lid, sum2(v, lid) (a pair of
    row sums, every thread gets them) and loops `for (var i = first; i < n; i = i + step)`."""
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
        reduce_fn = (
            "fn sum2(v: vec2<f32>, lid: u32) -> vec2<f32> {\n"
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
    return (decls + "\n" + shared + helpers_source({"rsqrt"}) + "\n" + reduce_fn +
            f"@compute @workgroup_size({wg})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n"
            + "\n".join(head) + "\n" + body + "}\n")


def _decl(slots):
    """The uniform and storage buffers: slots [(name, access)] from binding 1 on."""
    lines = ["@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 2>;"]
    for i, (name, access) in enumerate(slots):
        lines.append(f"@group(0) @binding({i + 1}) var<storage, {access}> {name}: array<f32>;")
    return "\n".join(lines)


def forward(rt, y, mean, rstd, x, weight, bias, eps, N):
    """y (contiguous, fresh), mean and rstd [rows] = layer_norm of x's rows of N elements."""
    rows = x.numel() // N
    wg, short = _launch(rt, N)
    hw, hb = weight is not None, bias is not None
    slots = [("Y", "read_write"), ("MEAN", "read_write"), ("RSTD", "read_write"), ("X", "read")]
    slots += [("W", "read")] * hw + [("BI", "read")] * hb

    def make_code():
        w = f"W[{param(4)} + i]" if hw else "1.0"
        b = f" + BI[{param(5)} + i]" if hb else ""
        body = (f"  let n = {param(1)}; let xb = {param(3)} + row * n;\n"
                "  var s = 0.0;\n"
                "  for (var i = first; i < n; i = i + step) { s = s + X[xb + i]; }\n"
                "  let m = sum2(vec2<f32>(s, 0.0), lid).x / f32(n);\n"
                "  var q = 0.0;\n"
                "  for (var i = first; i < n; i = i + step) { let d = X[xb + i] - m; q = q + d * d; }\n"
                f"  let r = tw_rsqrt(sum2(vec2<f32>(q, 0.0), lid).x / f32(n) + bitcast<f32>({param(2)}));\n"
                "  for (var i = first; i < n; i = i + step) {\n"
                f"    Y[row * n + i] = (X[xb + i] - m) * r * {w}{b};\n"
                "  }\n"
                "  if (lid == 0u || step == 1u) { MEAN[row] = m; RSTD[row] = r; }\n")
        return _frame(wg, short, _decl(slots), body)

    bufs = [y, mean, rstd, x] + [t for t in (weight, bias) if t is not None]
    params = [rows, N, struct.unpack("<I", struct.pack("<f", eps))[0], x._offset,
              weight._offset if hw else 0, bias._offset if hb else 0, 0, 0]
    _dispatch(rt, ("layer_norm", wg, short, hw, hb), make_code, slots, bufs, rows, wg, short, params, N)


def backward(rt, dx, g, x, weight, mean, rstd, N, gx=None):
    """dx (contiguous, fresh) = the input gradient of layer_norm for the output gradient g
    (contiguous), from x's rows of N elements and the forward's mean and rstd [rows]; gx (if
    given, as dx) = g * xhat, the terms of the weight's gradient, written in the same pass."""
    rows = x.numel() // N
    wg, short = _launch(rt, N)
    hw, hg = weight is not None, gx is not None
    slots = [("DX", "read_write")] + [("GX", "read_write")] * hg
    slots += [("G", "read"), ("X", "read"), ("MEAN", "read"), ("RSTD", "read")] + [("W", "read")] * hw

    def make_code():
        gw = f"G[gb + i] * W[{param(5)} + i]" if hw else "G[gb + i]"
        body = (f"  let n = {param(1)}; let gb = {param(2)} + row * n; let xb = {param(3)} + row * n;\n"
                f"  let m = MEAN[{param(4)} + row]; let r = RSTD[{param(6)} + row];\n"
                "  var acc = vec2<f32>(0.0, 0.0);\n"
                f"  for (var i = first; i < n; i = i + step) {{ let gw = {gw}; acc = acc + vec2<f32>(gw * X[xb + i], gw); }}\n"
                "  let t = sum2(acc, lid);\n"
                "  let scale = 1.0 / f32(n);\n"
                "  let bb = (t.y * m - t.x) * (r * r * r) * scale;\n"
                "  let c = -bb * m - t.y * r * scale;\n"
                "  for (var i = first; i < n; i = i + step) {\n"
                f"    DX[row * n + i] = r * ({gw}) + bb * X[xb + i] + c;\n"
                + ("    GX[row * n + i] = G[gb + i] * ((X[xb + i] - m) * r);\n" if hg else "") +
                "  }\n")
        return _frame(wg, short, _decl(slots), body)

    bufs = [dx] + [gx] * hg + [g, x, mean, rstd] + [weight] * hw
    params = [rows, N, g._offset, x._offset, mean._offset, weight._offset if hw else 0, rstd._offset, 0]
    _dispatch(rt, ("layer_norm_backward", wg, short, hw, hg), make_code, slots, bufs, rows, wg, short, params, N)


def _dispatch(rt, key, make_code, slots, tensors, rows, wg, short, params, N):
    kinds = ["uniform"] + ["write" if a == "read_write" else "read" for _, a in slots]
    pid = rt.pipeline(key, make_code, kinds)
    buffers = []
    for t, (_, access) in zip(tensors, slots):
        s = t._storage
        buffers.append((s.buffer_for_write() if access == "read_write" else s.buffer_for_read(), s.size))
    groups = -(-rows // wg) if short else rows
    rt.dispatch(pid, rt.grid(groups), buffers, struct.pack("<8I", *params), work=12 * rows * N)
