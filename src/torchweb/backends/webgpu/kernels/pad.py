"""Padding of the trailing dims: constant, reflect, replicate, circular (negative pads crop).

Forward: a thread per output element maps each padded coordinate back to the input's
(x = o - pad_before, then reflected, clamped or wrapped). Backward: a thread per input element
sums the output gradients of the positions that map to it: per dim a short list of candidate
positions (the element itself, its reflections or wraps; a range at the edges for replicate),
each checked with the forward map. No atomics.
"""


from .bindings import bind, declarations
from .elementwise import param
from .skeleton import close_loops, entry_point, launch, nested_loops, ravel, thread_index
from .wgsl import load, scalar_bits, scalar_read, store

MODES = ("constant", "reflect", "replicate", "circular")


def _map(mode, x, L):
    """WGSL lines turning i32 `x` (o - pad_before) into the source coordinate, in place."""
    if mode == "reflect":
        return [f"if ({x} < 0) {{ {x} = -{x}; }}", f"if ({x} >= {L}) {{ {x} = 2 * ({L} - 1) - {x}; }}"]
    if mode == "replicate":
        return [f"{x} = clamp({x}, 0, {L} - 1);"]
    if mode == "circular":
        return [f"if ({x} < 0) {{ {x} = {x} + {L}; }}", f"if ({x} >= {L}) {{ {x} = {x} - {L}; }}"]
    return []


def forward(rt, mode, out, inp, nb, pads, value=0):
    """out: contiguous [*B, *O]; inp: [*B, *L] (nb lead dims, any strides); pads: per padded
    (trailing) dim, (before, after)."""
    n = out.numel()
    if n == 0:
        return
    r = len(pads)
    st = out.dtype.gpu_storage
    vcls = "f32" if out.dtype.is_floating_point else ("u32" if st == "u32" else "i32")
    params = [n] + list(out.shape) + [inp._offset] + list(inp._stride) + list(inp.shape[nb:])
    params += [p[0] & 0xFFFFFFFF for p in pads] + [scalar_bits(value, vcls)]
    bufs, (slot,) = bind(out, inp)
    launch(rt, ("pad", mode, nb, r, inp.dtype.name, slot),
           lambda nparams: _forward_source(mode, nb, r, inp.dtype, slot, nparams, vcls), bufs, params, n)


def _forward_source(mode, nb, r, dtype, slot, nparams, vcls):
    st = dtype.gpu_storage
    storages = [st] + ([st] if slot else [])
    nd = nb + r
    oshape = [param(1 + i) for i in range(nd)]
    in_off = param(1 + nd)
    istr = [param(2 + nd + i) for i in range(nd)]
    L = [f"i32({param(2 + 2 * nd + i)})" for i in range(r)]
    pb = [f"bitcast<i32>({param(2 + 2 * nd + r + i)})" for i in range(r)]
    value = scalar_read(param(2 + 2 * nd + 2 * r), vcls)
    body = thread_index(param(0)) + ["  var q = t;", f"  var src = {in_off};", "  var inside = true;"]
    for i in reversed(range(nd)):
        body.append(f"  {{ let c = q % {oshape[i]}; q = q / {oshape[i]};")
        if i < nb:
            body.append(f"    src = src + c * {istr[i]}; }}")
            continue
        k = i - nb
        body.append(f"    var x = i32(c) - {pb[k]};")
        body += ["    " + line for line in _map(mode, "x", L[k])]
        body.append(f"    if (x < 0 || x >= {L[k]}) {{ inside = false; x = 0; }}")
        body.append(f"    src = src + u32(x) * {istr[i]}; }}")
    body.append(f"  var v = {store(value, vcls, dtype)};")
    body.append(f"  if (inside) {{ v = B{slot}[src]; }}")
    body.append("  B0[t] = v;")
    return declarations(nparams, storages) + "\n" + entry_point(body)


def backward(rt, mode, grad_in, grad_out, nb, pads):
    """grad_in: contiguous [*B, *L] (written whole); grad_out: contiguous [*B, *O]."""
    n = grad_in.numel()
    if n == 0:
        return
    r = len(pads)
    O = grad_out.shape[nb:]
    params = [n] + list(grad_in.shape[nb:]) + list(O) + [p[0] & 0xFFFFFFFF for p in pads] + [grad_out._offset]
    bufs, (slot,) = bind(grad_in, grad_out)
    launch(rt, ("pad_bwd", mode, r, grad_in.dtype.name, slot),
           lambda nparams: _backward_source(mode, r, grad_in.dtype, slot, nparams), bufs, params, n)


def _candidates(mode, i, x, L, O, pb):
    """(loop header, WGSL expression of the candidate output coordinate o{i} as i32, skip
    condition) along dim i for input coordinate x."""
    if mode == "replicate":
        lo = f"select({x} + {pb}, 0, {x} == 0)"
        hi = f"select({x} + {pb} + 1, {O}, {x} == {L} - 1)"
        return (f"for (var o{i} = max({lo}, 0); o{i} < min({hi}, {O}); o{i} = o{i} + 1) {{", None)
    if mode == "reflect":
        cand = (f"select(select({pb} + 2 * ({L} - 1) - {x}, {pb} - {x}, j{i} == 1u), {x} + {pb}, j{i} == 0u)")
        skip = f"(j{i} == 1u && {x} == 0) || (j{i} == 2u && {x} == {L} - 1)"
    elif mode == "circular":
        cand = f"{x} + {pb} + (i32(j{i}) - 1) * {L}"
        skip = "false"
    else:
        cand = f"{x} + {pb}"
        skip = "false"
    n = 1 if mode == "constant" else 3
    return (f"for (var j{i} = 0u; j{i} < {n}u; j{i} = j{i} + 1u) {{ if ({skip}) {{ continue; }} let o{i} = {cand};", cand)


def _backward_source(mode, r, dtype, slot, nparams):
    st = dtype.gpu_storage
    storages = [st] + ([st] if slot else [])
    L = [f"i32({param(1 + i)})" for i in range(r)]
    O = [f"i32({param(1 + r + i)})" for i in range(r)]
    pb = [f"bitcast<i32>({param(1 + 2 * r + i)})" for i in range(r)]
    g_off = param(1 + 3 * r)
    body = thread_index(param(0)) + ["  var q = t;"]
    for i in reversed(range(r)):
        body.append(f"  let x{i} = i32(q % u32({L[i]})); q = q / u32({L[i]});")
    body.append("  let b = q;")
    O_all = " * ".join(f"u32({o})" for o in O)
    body.append("  var acc = 0.0;")

    def reaching(i, ind):   # the output positions o{i} that map back to x{i}
        inner = ind + "  "
        return ([ind + _candidates(mode, i, f"x{i}", L[i], O[i], pb[i])[0],
                 f"{inner}if (o{i} < 0 || o{i} >= {O[i]}) {{ continue; }}",
                 f"{inner}var y{i} = o{i} - {pb[i]};"]
                + [inner + line for line in _map(mode, f"y{i}", L[i])]
                + [f"{inner}if (y{i} != x{i}) {{ continue; }}"])
    loops, indent = nested_loops(r, reaching)
    body += loops
    flat = ravel([f"u32(o{i})" for i in range(r)], [f"u32({o})" for o in O])
    body.append(f"{indent}acc = acc + {load(f'B{slot}[{g_off} + b * ({O_all}) + {flat}]', st, 'f32')};")
    body += close_loops(r)
    body.append(f"  B0[t] = {store('acc', 'f32', dtype)};")
    return declarations(nparams, storages) + "\n" + entry_point(body)
