"""Interpolation (F.interpolate) over the trailing spatial dims: nearest, nearest-exact, linear
(bi-, tri-) and cubic, separable, with PyTorch's source-index rules (area_pixel_compute_scale,
align_corners, cubic convolution with A = -0.75, taps clamped at the borders).

Each output coordinate has up to 4 taps per dim (index, weight), computed by one WGSL function
that the forward and the backward share. Forward: a thread per output element sums its taps'
products. Backward: a thread per input element walks, per dim, the short range of output
coordinates whose taps can reach it (found by inverting the source-index map, then checked
with the same tap function) and sums gradient * weights: no atomics.
"""

import struct

from .bindings import bind, declarations
from .elementwise import param
from .skeleton import batch_offset, close_loops, entry_point, launch, loop, nested_loops, ravel, thread_index, unravel
from .wgsl import load, store

TAPS = {"nearest": 1, "nearest-exact": 1, "linear": 2, "cubic": 4}
_TRANGE = {"nearest": (0, 0), "nearest-exact": (0, 0), "linear": (0, 1), "cubic": (-1, 2)}


def _f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


_AA_SIZE = {"aa-linear": 2, "aa-cubic": 4}
_AA_FILTER = {
    "aa-linear": "fn aa_filter(x0: f32) -> f32 { let x = abs(x0); if (x < 1.0) { return 1.0 - x; } return 0.0; }\n",
    # Keys' cubic with a = -0.5, as PyTorch's antialiased bicubic
    "aa-cubic": ("fn aa_filter(x0: f32) -> f32 {\n  let a = -0.5; let x = abs(x0);\n"
                 "  if (x < 1.0) { return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0; }\n"
                 "  if (x < 2.0) { return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a; }\n  return 0.0;\n}\n"),
}


def aa_taps(scale, interp_size):
    """PyTorch's max_interp_size for an antialiased window: ceil(support) * 2 + 1."""
    import math
    f = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]   # noqa: E731
    support = f(interp_size * 0.5 * scale) if scale >= 1.0 else interp_size * 0.5
    return int(math.ceil(support)) * 2 + 1


def _taps_fn(mode, T):
    """WGSL: fn taps(o, S, O, scale, align) -> Taps (indices in [0, S), weights, n in use)."""
    head = (f"struct Taps {{ i: array<u32, {T}>, w: array<f32, {T}>, n: u32 }}\n"
            "fn taps(o: u32, S: u32, O: u32, scale: f32, align: u32) -> Taps {\n"
            f"  var t: Taps; t.n = {T}u;\n")
    if mode in _AA_SIZE:
        # PyTorch's _compute_indices_min_size_weights_aa: the filter widened by the scale when
        # shrinking, cut at the borders, renormalized
        body = (f"  let isz = {_AA_SIZE[mode]}.0;\n"
                "  var support = isz * 0.5; var invscale = 1.0;\n"
                "  if (scale >= 1.0) { support = isz * 0.5 * scale; invscale = 1.0 / scale; }\n"
                "  let center = scale * (f32(o) + 0.5);\n"
                "  let xmin = max(i32(center - support + 0.5), 0);\n"
                f"  let xsize = clamp(min(i32(center + support + 0.5), i32(S)) - xmin, 0, {T});\n"
                "  var total = 0.0;\n"
                f"  for (var j = 0; j < {T}; j = j + 1) {{\n"
                "    var w = 0.0;\n"
                "    if (j < xsize) { w = aa_filter((f32(j + xmin) - center + 0.5) * invscale); }\n"
                "    t.i[j] = u32(min(xmin + j, i32(S) - 1)); t.w[j] = w; total = total + w;\n"
                "  }\n"
                f"  if (total != 0.0) {{ for (var j = 0; j < {T}; j = j + 1) {{ t.w[j] = t.w[j] / total; }} }}\n"
                "  t.n = u32(xsize);\n")
        return _AA_FILTER[mode] + head + body + "  return t;\n}\n"
    if mode == "nearest":
        body = ("  var s = o;\n"
                "  if (O != S) { if (O == 2u * S) { s = o >> 1u; } else { s = min(u32(floor(f32(o) * scale)), S - 1u); } }\n"
                "  t.i[0] = s; t.w[0] = 1.0;\n")
    elif mode == "nearest-exact":
        body = ("  var s = o;\n"
                "  if (O != S) { s = min(u32(floor((f32(o) + 0.5) * scale)), S - 1u); }\n"
                "  t.i[0] = s; t.w[0] = 1.0;\n")
    elif mode == "linear":
        body = ("  var src = scale * f32(o);\n"
                "  if (align == 0u) { src = max(scale * (f32(o) + 0.5) - 0.5, 0.0); }\n"
                "  let i0 = min(u32(src), S - 1u);\n"
                "  let l1 = src - f32(i0);\n"
                "  t.i[0] = i0; t.i[1] = select(i0, i0 + 1u, i0 < S - 1u);\n"
                "  t.w[0] = 1.0 - l1; t.w[1] = l1;\n")
    else:
        body = ("  var src = scale * f32(o);\n"
                "  if (align == 0u) { src = scale * (f32(o) + 0.5) - 0.5; }\n"
                "  let fl = floor(src);\n"
                "  let x = src - fl;\n"
                "  let A = -0.75;\n"
                "  let x1 = x + 1.0; let x2 = 1.0 - x; let x3 = 2.0 - x;\n"
                "  t.w[0] = ((A * x1 - 5.0 * A) * x1 + 8.0 * A) * x1 - 4.0 * A;\n"
                "  t.w[1] = ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;\n"
                "  t.w[2] = ((A + 2.0) * x2 - (A + 3.0)) * x2 * x2 + 1.0;\n"
                "  t.w[3] = ((A * x3 - 5.0 * A) * x3 + 8.0 * A) * x3 - 4.0 * A;\n"
                "  let b = i32(fl);\n"
                "  for (var j = 0; j < 4; j = j + 1) { t.i[j] = u32(clamp(b + j - 1, 0, i32(S) - 1)); }\n")
    return head + body + "  return t;\n}\n"


def _dims_params(in_size, out_size, scales):
    return list(in_size) + list(out_size) + [_f32_bits(s) for s in scales]


def _ntaps(mode, scales):
    if mode in _AA_SIZE:
        return max(aa_taps(s, _AA_SIZE[mode]) for s in scales)
    return TAPS[mode]


def forward(rt, mode, out, inp, nb, scales, align):
    """out: contiguous [*B, *O]; inp: [*B, *S] (nb lead dims, any strides); scales: f32 per dim.
    mode: nearest, nearest-exact, linear, cubic, aa-linear, aa-cubic (antialiased)."""
    n = out.numel()
    if n == 0:
        return
    r = len(scales)
    params = [n] + list(inp.shape[:nb]) + [inp._offset] + list(inp._stride)
    params += _dims_params(inp.shape[nb:], out.shape[nb:], scales) + [1 if align else 0]
    bufs, (slot,) = bind(out, inp)
    T = _ntaps(mode, scales)
    launch(rt, ("interp", mode, T, r, nb, inp.dtype.name, slot),
           lambda nparams: _forward_source(mode, T, r, nb, inp.dtype, slot, nparams), bufs, params, n)


def _names(r, base):
    S = [param(base + i) for i in range(r)]
    O = [param(base + r + i) for i in range(r)]
    sc = [f"bitcast<f32>({param(base + 2 * r + i)})" for i in range(r)]
    return S, O, sc, param(base + 3 * r)


def _forward_source(mode, T, r, nb, dtype, slot, nparams):
    storages = [dtype.gpu_storage] + ([dtype.gpu_storage] if slot else [])
    bshape = [param(1 + i) for i in range(nb)]
    in_off = param(1 + nb)
    bstr = [param(2 + nb + i) for i in range(nb)]
    sstr = [param(2 + 2 * nb + i) for i in range(r)]
    S, O, sc, align = _names(r, 2 + 2 * nb + r)
    body = thread_index(param(0)) + ["  var q = t;"] + unravel("o", O) + batch_offset("xb", in_off, bshape, bstr)
    for i in range(r):
        body.append(f"  let tp{i} = taps(o{i}, {S[i]}, {O[i]}, {sc[i]}, {align});")
    body.append("  var acc = 0.0;")
    loops, indent = nested_loops(r, lambda i, ind: [ind + loop(f"j{i}", "0u", f"tp{i}.n")])
    body += loops
    pos = "xb" + "".join(f" + tp{i}.i[j{i}] * {sstr[i]}" for i in range(r))
    w = " * ".join(f"tp{i}.w[j{i}]" for i in range(r))
    body.append(f"{indent}acc = acc + {load(f'B{slot}[{pos}]', dtype.gpu_storage, 'f32')} * ({w});")
    body += close_loops(r)
    body.append(f"  B0[t] = {store('acc', 'f32', dtype)};")
    return declarations(nparams, storages) + "\n" + _taps_fn(mode, T) + entry_point(body)


def backward(rt, mode, grad_in, grad_out, scales, align):
    """grad_in: contiguous [B, *S] (written whole); grad_out: contiguous [B, *O]."""
    n = grad_in.numel()
    if n == 0:
        return
    r = len(scales)
    nb = grad_in.dim() - r
    params = [n] + _dims_params(grad_in.shape[nb:], grad_out.shape[nb:], scales) + [1 if align else 0,
                                                                                   grad_out._offset]
    bufs, (slot,) = bind(grad_in, grad_out)
    T = _ntaps(mode, scales)
    launch(rt, ("interp_bwd", mode, T, r, grad_in.dtype.name, slot),
           lambda nparams: _backward_source(mode, T, r, grad_in.dtype, slot, nparams), bufs, params, n)


def _backward_source(mode, T, r, dtype, slot, nparams):
    storages = [dtype.gpu_storage] + ([dtype.gpu_storage] if slot else [])
    S, O, sc, align = _names(r, 1)
    g_off = param(2 + 3 * r)
    body = thread_index(param(0)) + ["  var q = t;"] + unravel("x", S) + ["  let b = q;"]
    # the output coordinates whose source index can reach x: src(o) = o * scale + c falls in
    # [x - tmax, x - tmin + 1) (unbounded below at 0, above at S - 1), widened by one
    if mode in _AA_SIZE:
        # window o spans center(o) +- (support + 0.5), center(o) = (o + 0.5) * scale
        isz = _AA_SIZE[mode]
        for i in range(r):
            body += [f"  var lo{i} = 0u; var hi{i} = {O[i]};",
                     f"  {{ let sc = {sc[i]}; let c = 0.5 * sc;",
                     f"    var sup = {isz}.0 * 0.5; if (sc >= 1.0) {{ sup = {isz}.0 * 0.5 * sc; }}",
                     "    if (sc > 0.0) {",
                     f"      lo{i} = u32(max(floor((f32(x{i}) - sup - 1.0 - c) / sc) - 1.0, 0.0));",
                     f"      hi{i} = u32(clamp(ceil((f32(x{i}) + sup + 1.0 - c) / sc) + 2.0, 0.0, f32({O[i]})));",
                     "    }",
                     "  }"]
    else:
        tmin, tmax = _TRANGE[mode]
        if mode == "nearest":
            c = "0.0"
        elif mode == "nearest-exact":
            c = "0.5 * sc"
        else:
            c = f"select(0.5 * sc - 0.5, 0.0, {align} != 0u)"
        for i in range(r):
            body += [f"  var lo{i} = 0u; var hi{i} = {O[i]};",
                     f"  {{ let sc = {sc[i]}; let c = {c};",
                     "    if (sc > 0.0) {",
                     f"      if (x{i} > {max(tmax, 0)}u) {{ lo{i} = u32(max(floor((f32(i32(x{i}) - ({tmax})) - c) / sc) - 1.0, 0.0)); }}",
                     f"      if (x{i} + 1u < {S[i]}) {{ hi{i} = u32(clamp(ceil((f32(i32(x{i}) - ({tmin}) + 1) - c) / sc) + 2.0, 0.0, f32({O[i]}))); }}",
                     "    }",
                     "  }"]
    O_all = " * ".join(O)
    body.append(f"  let gb = {g_off} + b * ({O_all});")
    body.append("  var acc = 0.0;")

    def reaching(i, ind):   # the output coordinates o{i} whose taps include x{i}, with their weight w{i}
        inner = ind + "  "
        return [ind + loop(f"o{i}", f"lo{i}", f"hi{i}"),
                f"{inner}let tp{i} = taps(o{i}, {S[i]}, {O[i]}, {sc[i]}, {align});",
                f"{inner}var w{i} = 0.0; var hit{i} = false;",
                f"{inner}for (var j = 0u; j < tp{i}.n; j = j + 1u) {{ if (tp{i}.i[j] == x{i}) "
                f"{{ w{i} = w{i} + tp{i}.w[j]; hit{i} = true; }} }}",
                f"{inner}if (!hit{i}) {{ continue; }}"]
    loops, indent = nested_loops(r, reaching)
    body += loops
    flat = ravel([f"o{i}" for i in range(r)], O)
    w = " * ".join(f"w{i}" for i in range(r))
    body.append(f"{indent}acc = acc + {load(f'B{slot}[gb + {flat}]', dtype.gpu_storage, 'f32')} * ({w});")
    body += close_loops(r)
    body.append(f"  B0[t] = {store('acc', 'f32', dtype)};")
    return declarations(nparams, storages) + "\n" + _taps_fn(mode, T) + entry_point(body)
