"""grid_sample over 2 or 3 spatial dims: bilinear, nearest and (2-D) bicubic sampling with
zeros, border or reflection padding, following PyTorch's GridSampler.h step for step
(unnormalize, clip / reflect, the corner weights, cubic coefficients with A = -0.75).

Forward: a thread per output element. Backward: a thread per output location (n, *spatial),
looping over the channels: the gradient of the grid is a sum over channels it owns; the
gradient of the input goes to up to 2^r (or 16) positions that other locations may also
reach, so it is added with a compare-and-swap loop on the bits (a float atomic add) into a
float32 buffer.
"""

import struct

from .bindings import declarations
from .elementwise import WORKGROUP, param
from .. import errors as ERR
from .wgsl import cas_add_f32, cas_key, helpers_source, load, store

_PAD = {"zeros": 0, "border": 1, "reflection": 2}

_COMMON = """
fn unnorm(c: f32, size: f32, align: bool) -> vec2<f32> {   // (coordinate, d coordinate / d c)
  if (align) { return vec2<f32>((c + 1.0) / 2.0 * (size - 1.0), (size - 1.0) / 2.0); }
  return vec2<f32>(((c + 1.0) * size - 1.0) / 2.0, size / 2.0);
}
fn clipc(x: f32, size: f32) -> vec2<f32> {
  if (x <= 0.0) { return vec2<f32>(0.0, 0.0); }
  if (x >= size - 1.0) { return vec2<f32>(size - 1.0, 0.0); }
  return vec2<f32>(x, 1.0);
}
fn reflectc(x0: f32, twice_low: f32, twice_high: f32) -> vec2<f32> {
  if (twice_low == twice_high) { return vec2<f32>(0.0, 0.0); }
  let mn = twice_low / 2.0;
  let span = (twice_high - twice_low) / 2.0;
  var x = x0 - mn;
  var m = 1.0;
  if (x < 0.0) { m = -1.0; x = -x; }
  let flips = floor(x / span);
  let extra = x - span * flips;
  if (flips - 2.0 * floor(flips / 2.0) == 0.0) { return vec2<f32>(extra + mn, m); }
  return vec2<f32>(span - extra + mn, -m);
}
// padding applied to an unnormalized coordinate: (coordinate, its derivative)
fn padc(x: f32, size: f32, pad: u32, align: bool) -> vec2<f32> {
  if (pad == 1u) { return clipc(x, size); }
  if (pad == 2u) {
    var r: vec2<f32>;
    if (align) { r = reflectc(x, 0.0, 2.0 * (size - 1.0)); } else { r = reflectc(x, -1.0, 2.0 * size - 1.0); }
    let c = clipc(r.x, size);
    return vec2<f32>(c.x, c.y * r.y);
  }
  return vec2<f32>(x, 1.0);
}
fn safe(x: f32) -> f32 {   // PyTorch's safe_downgrade_to_int_range: NaN and huge values -> -100
  if (tw_isnan(x) || abs(x) > 1073741824.0) { return -100.0; }
  return x;
}
fn src_index(c: f32, size: f32, pad: u32, align: bool) -> vec2<f32> {
  let u = unnorm(c, size, align);
  let p = padc(u.x, size, pad, align);
  return vec2<f32>(safe(p.x), u.y * p.y);
}
fn cubic_w(t: f32) -> vec4<f32> {
  let A = -0.75;
  let x1 = t + 1.0; let x2 = 1.0 - t; let x3 = 2.0 - t;
  return vec4<f32>(((A * x1 - 5.0 * A) * x1 + 8.0 * A) * x1 - 4.0 * A,
                   ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0,
                   ((A + 2.0) * x2 - (A + 3.0)) * x2 * x2 + 1.0,
                   ((A * x3 - 5.0 * A) * x3 + 8.0 * A) * x3 - 4.0 * A);
}
fn cubic_g(t: f32) -> vec4<f32> {
  let A = -0.75;
  let x0 = -1.0 - t; let x1 = -t; let x2 = 1.0 - t; let x3 = 2.0 - t;
  return vec4<f32>((-3.0 * A * x0 - 10.0 * A) * x0 - 8.0 * A,
                   (-3.0 * (A + 2.0) * x1 - 2.0 * (A + 3.0)) * x1,
                   (3.0 * (A + 2.0) * x2 - 2.0 * (A + 3.0)) * x2,
                   (3.0 * A * x3 - 10.0 * A) * x3 + 8.0 * A);
}
"""


def _params(inp, grid, pad, align):
    """Shared head: N, C, S[r], O[r], input offset and strides, grid offset and strides."""
    r = inp.dim() - 2
    return ([inp.shape[0], inp.shape[1]] + list(inp.shape[2:]) + list(grid.shape[1:1 + r])
            + [inp._offset] + list(inp._stride) + [grid._offset] + list(grid._stride)
            + [_PAD[pad], 1 if align else 0])


def _names(r):
    """The parameters after word 0 (the thread count): see _params."""
    N, C = param(1), param(2)
    S = [param(3 + i) for i in range(r)]
    O = [param(3 + r + i) for i in range(r)]
    base = 3 + 2 * r
    x_off = param(base)
    x_str = [param(base + 1 + i) for i in range(r + 2)]
    g_off = param(base + 3 + r)
    g_str = [param(base + 4 + r + i) for i in range(r + 2)]
    pad, align = param(base + 6 + 2 * r), param(base + 7 + 2 * r)
    return dict(N=N, C=C, S=S, O=O, x_off=x_off, x_str=x_str, g_off=g_off, g_str=g_str, pad=pad, align=align,
                next=base + 8 + 2 * r)


def _locate(r, p, with_c):
    """WGSL decoding the thread's (n, [c,] o...) and its grid position gp."""
    lines = ["  var q = t;"]
    for i in reversed(range(r)):
        lines.append(f"  let o{i} = q % {p['O'][i]}; q = q / {p['O'][i]};")
    if with_c:
        lines.append(f"  let c = q % {p['C']}; q = q / {p['C']};")
    lines.append("  let n = q;")
    gpos = f"{p['g_off']} + n * {p['g_str'][0]}" + "".join(f" + o{i} * {p['g_str'][1 + i]}" for i in range(r))
    lines.append(f"  let gp = {gpos};")
    return lines


def forward(rt, out, inp, grid, mode, pad, align):
    n = out.numel()
    if n == 0:
        return
    r = inp.dim() - 2
    params = _params(inp, grid, pad, align)
    same = grid._storage is inp._storage
    bufs = [(out._storage.buffer_for_write(), out._storage.size), (inp._storage.buffer_for_read(), inp._storage.size)]
    if not same:
        bufs.append((grid._storage.buffer_for_read(), grid._storage.size))
    key = ("grid_sample", r, mode, inp.dtype.name, same)
    params = [n] + params
    nparams = len(params)

    def make_code():
        return _forward_source(r, mode, inp.dtype, same, nparams)

    pid = rt.pipeline(key, make_code, ["uniform", "write"] + ["read"] * (len(bufs) - 1))
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), bufs, struct.pack(f"<{nparams}I", *params))


def _sample_body(r, mode, p):
    """WGSL computing the source coordinate ix{d} of input dim d and m{d} = d ix{d} / d grid
    (the grid's last dim lists x, the last spatial dim, first)."""
    lines = []
    al = f"({p['align']} != 0u)"
    for d in range(r):
        comp = r - 1 - d
        lines.append(f"  let gc{d} = GRID[gp + {comp}u * {p['g_str'][r + 1]}];")
        lines.append(f"  let sz{d} = f32({p['S'][d]});")
        if mode == "bicubic":
            lines.append(f"  let un{d} = unnorm(f32(gc{d}), sz{d}, {al});")
            lines.append(f"  let ix{d} = un{d}.x; let m{d} = un{d}.y;")
        else:
            lines.append(f"  let si{d} = src_index(f32(gc{d}), sz{d}, {p['pad']}, {al});")
            lines.append(f"  let ix{d} = si{d}.x; let m{d} = si{d}.y;")
    return lines


def _in_bounds(r, idx, p):
    return " && ".join(f"{idx[d]} >= 0 && {idx[d]} < i32({p['S'][d]})" for d in range(r))


def _taps(r, mode, p):
    """[(index exprs per dim (i32), weight expr, [d weight / d ix_d exprs])] for the location."""
    if mode == "nearest":
        return [([f"i32(round(ix{d}))" for d in range(r)], "1.0", ["0.0"] * r)]
    if mode == "bilinear":   # one corner in a loop over tb (see _loop): b{d} its bit along dim d
        idx = [f"(i32(fl{d}) + i32(cb{d}))" for d in range(r)]
        ws = [f"cw{d}" for d in range(r)]
        dws = []
        for d in range(r):
            other = [ws[e] for e in range(r) if e != d]
            dws.append(f"(select(-1.0, 1.0, cb{d} == 1u) * " + (" * ".join(other) if other else "1.0") + ")")
        return [(idx, " * ".join(ws), dws)]
    # bicubic (r == 2; dim 0 is y, dim 1 is x): one tap in loops over tj, ti (see _loop)
    return [([f"(i32(fl0) - 1 + i32(tj))", f"(i32(fl1) - 1 + i32(ti))"], "(cy[tj] * cx[ti])",
             ["(cgy[tj] * cx[ti])", "(cy[tj] * cgx[ti])"])]


def _loop(mode, lines, indent, r=2):
    """The tap's lines inside a loop over the taps: the 2^r corners for bilinear, 4 x 4 for
    bicubic (unrolled taps made shaders that SwiftShader took minutes to compile)."""
    if mode == "bilinear":
        head = [f"{indent}for (var tb = 0u; tb < {1 << r}u; tb = tb + 1u) {{"]
        for d in range(r):
            head.append(f"{indent}  let cb{d} = (tb >> {r - 1 - d}u) & 1u;")
            head.append(f"{indent}  let cw{d} = select(fl{d} + 1.0 - ix{d}, ix{d} - fl{d}, cb{d} == 1u);")
        return head + ["  " + line for line in lines] + [f"{indent}}}"]
    if mode != "bicubic":
        return lines
    return ([f"{indent}for (var tj = 0u; tj < 4u; tj = tj + 1u) {{ for (var ti = 0u; ti < 4u; ti = ti + 1u) {{"]
            + ["  " + line for line in lines] + [f"{indent}}} }}"])


def _bounded(r, idx, p, mode):
    """For bicubic, each tap's coordinate goes through the padding (PyTorch's
    get_value_bounded): the lines, and the new index names."""
    if mode != "bicubic":
        return [], idx
    al = f"({p['align']} != 0u)"
    lines, out = [], []
    for d in range(r):
        lines.append(f"let bb{d} = i32(safe(padc(f32({idx[d]}), sz{d}, {p['pad']}, {al}).x));")
        out.append(f"bb{d}")
    return lines, out


def _prelude(r, mode):
    lines = [f"  let fl{d} = floor(ix{d});" for d in range(r)]
    if mode == "bicubic":
        lines += ["  let cy = cubic_w(ix0 - fl0); let cx = cubic_w(ix1 - fl1);",
                  "  let cgy = cubic_g(ix0 - fl0); let cgx = cubic_g(ix1 - fl1);"]
    return lines


def _forward_source(r, mode, dtype, same, nparams):
    st = dtype.gpu_storage
    p = _names(r)
    decl = declarations(nparams, [st, st])
    grid_buf = "B1" if same else "B2"
    if not same:
        decl += f"\n@group(0) @binding(3) var<storage, read> B2: array<{st}>;"
    body = [f"  let t = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            f"  if (t >= {param(0)}) {{ return; }}"]
    body += _locate(r, p, with_c=True)
    body += [line.replace("GRID[", f"{grid_buf}[") for line in _sample_body(r, mode, p)]
    body += _prelude(r, mode)
    xb = f"{p['x_off']} + n * {p['x_str'][0]} + c * {p['x_str'][1]}"
    body.append(f"  let xb = {xb};")
    body.append("  var acc = 0.0;")
    for idx, w, _ in _taps(r, mode, p):
        pre, bidx = _bounded(r, idx, p, mode)
        pos = "xb" + "".join(f" + u32({bidx[d]}) * {p['x_str'][2 + d]}" for d in range(r))
        tap = ["  { " + " ".join(pre),
               f"    if ({_in_bounds(r, bidx, p)}) {{ acc = acc + {load(f'B1[{pos}]', st, 'f32')} * {w}; }} }}"]
        body += _loop(mode, tap, "  ", r)
    body.append(f"  B0[t] = {store('acc', 'f32', dtype)};")
    return (decl + "\n" + helpers_source({"isnan"}) + _COMMON +
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")


def backward(rt, grad_in, grad_grid, grad_out, inp, grid, mode, pad, align):
    """grad_in: contiguous float32 [N, C, *S], zeroed, added into (or None); grad_grid:
    contiguous [N, *O, r] (or None); grad_out: contiguous [N, C, *O]."""
    r = inp.dim() - 2
    N = inp.shape[0]
    locs = N
    for s in grid.shape[1:1 + r]:
        locs *= s
    if locs == 0:
        return
    params = [locs] + _params(inp, grid, pad, align) + [grad_out._offset]
    if grad_in is not None:   # its compare-exchange adds may run out of retries (errors.CONTENTION)
        params.append(rt.errors.tag("grid_sample backward", hint="Run it on the cpu device."))
    ins = [grad_out, inp, grid]
    bufs, slot_of, slots = [], {}, []
    for t in ins:
        sid = id(t._storage)
        if sid not in slot_of:
            slot_of[sid] = len(bufs)
            bufs.append((t._storage.buffer_for_read(), t._storage.size, t.dtype.gpu_storage))
        slots.append(slot_of[sid])
    gi, gg = grad_in, grad_grid
    # bindings: uniform, then read buffers, then the written ones
    kinds = ["uniform"] + ["read"] * len(bufs)
    all_bufs = [(b, s) for b, s, _ in bufs]
    if gi is not None:
        kinds.append("write")
        all_bufs.append((gi._storage.buffer_for_write(), gi._storage.size))
    if gg is not None:
        kinds.append("write")
        all_bufs.append((gg._storage.buffer_for_write(), gg._storage.size))
    if gi is not None:
        kinds.append("write")
        all_bufs.append(rt.errors.binding)
    key = ("grid_sample_bwd", r, mode, inp.dtype.name, tuple(slots), gi is not None, gg is not None,
           gg.dtype.name if gg is not None else "") + (cas_key() if gi is not None else ())
    nparams = len(params)

    def make_code():
        return _backward_source(r, mode, [st for _, _, st in bufs], slots, gi is not None,
                                gg.dtype if gg is not None else None, nparams)

    pid = rt.pipeline(key, make_code, kinds)
    rt.dispatch(pid, rt.grid(-(-locs // WORKGROUP)), all_bufs, struct.pack(f"<{nparams}I", *params))


def _backward_source(r, mode, storages, slots, want_in, gg_dtype, nparams):
    p = _names(r)
    go_off = param(p["next"])
    lines = [f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;"]
    if "f16" in storages or (gg_dtype is not None and gg_dtype.gpu_storage == "f16"):
        lines.insert(0, "enable f16;")
    for k, st in enumerate(storages):
        lines.append(f"@group(0) @binding({k + 1}) var<storage, read> R{k}: array<{st}>;")
    b = len(storages) + 1
    if want_in:
        lines.append(f"@group(0) @binding({b}) var<storage, read_write> GI: array<atomic<u32>>;")
        b += 1
    if gg_dtype is not None:
        lines.append(f"@group(0) @binding({b}) var<storage, read_write> GG: array<{gg_dtype.gpu_storage}>;")
        b += 1
    if want_in:
        lines.append(f"@group(0) @binding({b}) {ERR.WGSL_DECL}")
    g_src, x_src, grid_src = (f"R{s}" for s in slots)
    gst, xst = storages[slots[0]], storages[slots[1]]
    body = [f"  let t = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            f"  if (t >= {param(0)}) {{ return; }}"]
    body += _locate(r, p, with_c=False)
    body += [line.replace("GRID[", f"{grid_src}[") for line in _sample_body(r, mode, p)]
    body += _prelude(r, mode)
    O_all = " * ".join(p["O"])
    S_all = " * ".join(p["S"])
    oflat = "0u"
    for i in range(r):
        oflat = f"({oflat}) * {p['O'][i]} + o{i}"
    body.append(f"  let ofl = {oflat};")
    body += [f"  var gx{d} = 0.0;" for d in range(r)]
    body.append(f"  for (var c = 0u; c < {p['C']}; c = c + 1u) {{")
    C = p["C"]
    body.append(f"    let g = {load(f'{g_src}[{go_off} + (n * {C} + c) * ({O_all}) + ofl]', gst, 'f32')};")
    body.append(f"    let xb = {p['x_off']} + n * {p['x_str'][0]} + c * {p['x_str'][1]};")
    body.append(f"    let ib = (n * {p['C']} + c) * ({S_all});")
    sign = "-" if mode == "bicubic" else "+"
    for idx, w, dws in _taps(r, mode, p):
        pre, bidx = _bounded(r, idx, p, mode)
        pos = "xb" + "".join(f" + u32({bidx[d]}) * {p['x_str'][2 + d]}" for d in range(r))
        flat = "0u"
        for d in range(r):
            flat = f"({flat}) * {p['S'][d]} + u32({bidx[d]})"
        tap = ["    { " + " ".join(pre), f"      if ({_in_bounds(r, bidx, p)}) {{"]
        if want_in:
            tap.append(f"        addf(ib + {flat}, {w} * g);")
        if gg_dtype is not None and mode != "nearest":
            tap.append(f"        let v = {load(f'{x_src}[{pos}]', xst, 'f32')};")
            for d in range(r):
                tap.append(f"        gx{d} = gx{d} {sign} v * {dws[d]} * g;")
        tap.append("      } }")
        body += _loop(mode, tap, "    ", r)
    body.append("  }")
    if gg_dtype is not None:
        for d in range(r):
            comp = r - 1 - d
            body.append(f"  GG[t * {r}u + {comp}u] = {store(f'm{d} * gx{d}', 'f32', gg_dtype)};")
    addf = ("fn addf(i: u32, v: f32) {\n" + "\n".join(cas_add_f32("GI[i]", "v", param(nparams - 1)))
            + "\n}\n") if want_in else ""
    return ("\n".join(lines) + "\n" + helpers_source({"isnan"}) + _COMMON + addf +
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")
