"""Pooling windows over the trailing spatial dims (1 to 3 or more): max (with PyTorch's flat
indices), average (count_include_pad, divisor_override), their adaptive forms, and the
backward of each.

A window along one dim is (start, count, step):
    fixed:    start = o * stride - pad, count = kernel, step = dilation
    adaptive: start = floor(o * S / O), count = ceil((o + 1) * S / O) - start, step = 1
Positions outside [0, S) are skipped (max) or count as padding (average's divisor).

Forward: a thread per output element walks its window. Max keeps PyTorch's rule: a value
replaces the running max when it is greater or NaN, so ties keep the first in window order
and the last NaN wins. Backward: a thread per input element walks the windows that contain it
(at most kernel per dim) and sums their gradients: for max only those whose index is it; no
atomics, every thread owns its sum.
"""

from .. import errors as ERR
from .bindings import bind, declarations, kinds
from .elementwise import param
from .im2col import windows_over
from .skeleton import (batch_offset, close_loops, entry_point, launch, loop, nested_loops, ravel, thread_index,
                       uint_params, unravel)
from .wgsl import helpers_source, load, store

_LOWEST = {"f32": "-tw_inf()", "i32": "-2147483647i - 1i", "u32": "0u"}


def _names(r, base):
    return {key: [param(base + j * r + i) for i in range(r)]
            for j, key in enumerate(("S", "O", "k", "s", "p", "d"))}


def _window(i, g, adaptive, o):
    """WGSL lines defining st{i}, cnt{i}, step{i} for output coordinate o along dim i."""
    if adaptive:
        return [f"  let st{i} = i32(({o} * {g['S'][i]}) / {g['O'][i]});",
                f"  let cnt{i} = u32(i32((({o} + 1u) * {g['S'][i]} + {g['O'][i]} - 1u) / {g['O'][i]}) - st{i});",
                f"  let step{i} = 1i;"]
    return [f"  let st{i} = i32({o} * {g['s'][i]}) - i32({g['p'][i]});",
            f"  let cnt{i} = {g['k'][i]};",
            f"  let step{i} = i32({g['d'][i]});"]


def _divisor(r, g, adaptive, cip, override):
    """WGSL expression lines computing `div` (f32) for an average window (st*, cnt* defined)."""
    if adaptive:
        return ["  let div = f32(" + " * ".join(f"cnt{i}" for i in range(r)) + ");"]
    lines = ["  var pool = 1i; var inside = 1i;"]
    for i in range(r):
        S, k, p = g["S"][i], g["k"][i], g["p"][i]
        lines.append(f"  {{ let e = min(st{i} + i32({k}), i32({S} + {p})); pool = pool * (e - st{i});"
                     f" inside = inside * (min(e, i32({S})) - max(st{i}, 0)); }}")
    lines.append(f"  var div = f32(select(inside, pool, {cip} != 0u));")
    lines.append(f"  if ({override} != 0u) {{ div = f32(bitcast<i32>({override})); }}")
    return lines


def _spec_params(spec):
    """The params a pooling's kernels read after the tensors': per spatial dim S, O, k, s, p,
    d, then count_include_pad and divisor_override."""
    g = spec.geom
    return uint_params(g.in_size, g.out_size, g.kernel, g.stride, g.padding, g.dilation) + [
        1 if spec.count_include_pad else 0, int(spec.divisor_override or 0) & 0xFFFFFFFF]


def forward(rt, spec, out, indices, inp, nb):
    """spec: a backends/plans.py PoolSpec (kind 'max' or 'avg'). inp: [*B, *S] (nb batch dims,
    any strides); out, indices (int64, max only, or None): contiguous [*B, *O]."""
    n = out.numel()
    if n == 0:
        return
    kind, adaptive = spec.kind, spec.adaptive
    r = len(spec.geom.in_size)
    params = [n] + list(inp.shape[:nb]) + [inp._offset] + list(inp._stride) + _spec_params(spec)
    acc = "f32" if inp.dtype.is_floating_point else ("u32" if inp.dtype.gpu_storage == "u32" else "i32")
    bufs, slots = bind(out, inp)
    binding_kinds = kinds(bufs)
    if indices is not None:   # a fresh tensor: its own binding, written too
        slots.append(len(bufs))
        bufs.append((indices._storage.buffer_for_write(), indices._storage.size))
        binding_kinds.append("write")
    launch(rt, ("pool", kind, r, nb, adaptive, inp.dtype.name, acc, tuple(slots), len(bufs)),
           lambda nparams: _forward_source(kind, r, nb, adaptive, inp.dtype, out.dtype, slots, len(bufs), nparams,
                                           acc),
           bufs, params, n, binding_kinds)


def _forward_source(kind, r, nb, adaptive, in_dtype, out_dtype, slots, nbuf, nparams, acc):
    storages = {0: out_dtype.gpu_storage, slots[0]: in_dtype.gpu_storage}
    decl = declarations(nparams, [storages[k] for k in range(len(storages))])
    if len(slots) > 1:
        decl += f"\n@group(0) @binding({slots[1] + 1}) var<storage, read_write> B{slots[1]}: array<i32>;"
    bshape = [param(1 + i) for i in range(nb)]
    in_off = param(1 + nb)
    bstr = [param(2 + nb + i) for i in range(nb)]
    sstr = [param(2 + 2 * nb + i) for i in range(r)]
    base = 2 + 2 * nb + r
    g = _names(r, base)
    cip, override = param(base + 6 * r), param(base + 6 * r + 1)
    src = f"B{slots[0]}"
    body = thread_index(param(0)) + ["  var q = t;"] + unravel("o", g["O"]) + batch_offset("xb", in_off, bshape, bstr)
    for i in range(r):
        body += _window(i, g, adaptive, f"o{i}")
    if kind == "max":
        body.append(f"  var m = {_LOWEST[acc]}; var mi = -1i;")
    else:
        body.append(f"  var m = {'0.0' if acc == 'f32' else '0' + acc[0]};")
    loops, indent = nested_loops(r, lambda i, ind: [
        ind + loop(f"j{i}", "0u", f"cnt{i}"),
        f"{ind}  let x{i} = st{i} + i32(j{i}) * step{i};",
        f"{ind}  if (x{i} < 0 || x{i} >= i32({g['S'][i]})) {{ continue; }}"])
    body += loops
    pos = "xb" + "".join(f" + u32(x{i}) * {sstr[i]}" for i in range(r))
    body.append(f"{indent}let v = {load(f'{src}[{pos}]', in_dtype.gpu_storage, acc)};")
    if kind == "max":
        flat = ravel([f"x{i}" for i in range(r)], [f"i32({S})" for S in g["S"]], "0i")
        nan = " || tw_isnan(v)" if acc == "f32" else ""
        body.append(f"{indent}if (mi < 0 || v > m{nan}) {{ m = v; mi = {flat}; }}")
    else:
        body.append(f"{indent}m = m + v;")
    body += close_loops(r)
    if kind == "max":
        body.append(f"  B0[t] = {store('m', acc, out_dtype)};")
        if len(slots) > 1:
            body.append(f"  B{slots[1]}[t] = max(mi, 0i);")
    else:
        body += _divisor(r, g, adaptive, cip, override)
        if acc == "f32":
            body.append(f"  B0[t] = {store('m / div', 'f32', out_dtype)};")
        else:   # integer average: C's truncating division, as PyTorch's CPU kernel
            body.append(f"  B0[t] = {store(f'm / {acc}(div)', acc, out_dtype)};")
    helpers = helpers_source({"inf", "isnan"} if acc == "f32" else set())
    return decl + "\n" + helpers + "\n" + entry_point(body)


def backward(rt, spec, grad_in, grad_out, indices):
    """grad_in: contiguous [B, *S] (written whole); grad_out: contiguous [B, *O]; indices:
    contiguous int64 [B, *O] (max) or None."""
    n = grad_in.numel()
    if n == 0:
        return
    kind, adaptive = spec.kind, spec.adaptive
    r = len(spec.geom.in_size)
    params = [n] + _spec_params(spec) + [grad_out._offset, indices._offset if indices is not None else 0]
    others = [grad_out] + ([indices] if indices is not None else [])
    bufs, slots = bind(grad_in, *others)
    launch(rt, ("pool_bwd", kind, r, adaptive, grad_out.dtype.name, grad_in.dtype.name, tuple(slots), len(bufs)),
           lambda nparams: _backward_source(kind, r, adaptive, grad_out.dtype, grad_in.dtype, slots, len(bufs),
                                            nparams),
           bufs, params, n)


def _backward_source(kind, r, adaptive, g_dtype, out_dtype, slots, nbuf, nparams):
    storages = {0: out_dtype.gpu_storage, slots[0]: g_dtype.gpu_storage}
    if len(slots) > 1:
        storages[slots[1]] = "i32"
    decl = declarations(nparams, [storages[k] for k in range(nbuf)])
    g = _names(r, 1)
    base = 1 + 6 * r
    cip, override, g_off, i_off = (param(base + j) for j in range(4))
    S_all = " * ".join(g["S"])
    O_all = " * ".join(g["O"])
    body = thread_index(param(0)) + ["  var q = t;"] + unravel("x", g["S"])
    body.append("  let b = q;")
    body.append(f"  let me = i32(t - b * ({S_all}));")
    body.append(f"  let gb = b * ({O_all});")
    body.append("  var acc = 0.0;")

    def adaptive_windows(i, ind):   # the adaptive windows o{i} that contain x{i}
        S, O = g["S"][i], g["O"][i]
        return [f"{ind}let lo{i} = (x{i} * {O}) / {S};",
                f"{ind}let hi{i} = ((x{i} + 1u) * {O} + {S} - 1u) / {S};",
                ind + loop(f"o{i}", f"lo{i}", f"hi{i}")]
    # the fixed geometry's windows: col2im's walk
    loops, indent = nested_loops(r, adaptive_windows if adaptive else (lambda i, ind: windows_over(i, g, ind)))
    body += loops
    flat = ravel([f"o{i}" for i in range(r)], g["O"])
    body.append(f"{indent}let w = gb + {flat};")
    gv = load(f"B{slots[0]}[{g_off} + w]", g_dtype.gpu_storage, "f32")
    if kind == "max":
        body.append(f"{indent}if (B{slots[1]}[{i_off} + w] == me) {{ acc = acc + {gv}; }}")
    else:
        inner = []
        for i in range(r):
            inner += _window(i, g, adaptive, f"o{i}")
        inner += _divisor(r, g, adaptive, cip, override)
        body += [indent + line.strip() for line in inner]
        body.append(f"{indent}acc = acc + {gv} / div;")
    body += close_loops(r)
    body.append(f"  B0[t] = {store('acc', 'f32', out_dtype)};")
    return decl + "\n" + entry_point(body)


def _tag(rt, what):
    """An error tag whose INDEX error raises RuntimeError, as PyTorch's max_unpool does (where
    the runtime's tag() takes the exception; IndexError otherwise)."""
    try:
        return rt.errors.tag(what, RuntimeError, "Found an invalid max index")
    except TypeError:
        return rt.errors.tag(what)


def unpool(rt, out, inp, indices, what):
    """out: contiguous [B, L_out], zeroed; inp, indices: contiguous [B, L_in]: out[b, idx] = inp.
    An index outside [0, L_out) raises (errors.INDEX) at the next readback."""
    _unpool(rt, out, inp, indices, what, backward=False)


def unpool_backward(rt, grad_in, grad_out, indices, what):
    """grad_in: contiguous [B, L_in] = grad_out[b, idx] (grad_out contiguous [B, L_out])."""
    _unpool(rt, grad_in, grad_out, indices, what, backward=True)


def _unpool(rt, dst, src, indices, what, backward):
    n = (dst if backward else src).numel()
    if n == 0:
        return
    L_in = (dst if backward else src).shape[-1]
    L_out = (src if backward else dst).shape[-1]
    params = [n, L_in, L_out, src._offset, indices._offset, dst._offset]
    bufs, slots = bind(dst, src, indices)
    binding_kinds = kinds(bufs)
    params.append(_tag(rt, what))
    bufs = bufs + [rt.errors.binding]
    binding_kinds = binding_kinds + ["write"]

    def make_code(nparams):
        storages = {0: dst.dtype.gpu_storage, slots[0]: src.dtype.gpu_storage, slots[1]: "i32"}
        decl = declarations(nparams, [storages[k] for k in range(len(bufs) - 1)])
        decl += f"\n@group(0) @binding({len(bufs)}) " + ERR.WGSL_DECL
        s, ix = f"B{slots[0]}", f"B{slots[1]}"
        if backward:
            move = f"B0[{param(5)} + t] = {s}[{param(3)} + b * {param(2)} + u32(k)];"
        else:
            move = f"B0[{param(5)} + b * {param(2)} + u32(k)] = {s}[{param(3)} + t];"
        return decl + "\n" + entry_point(thread_index(param(0)) + [
            f"  let b = t / {param(1)};",
            f"  let k = {ix}[{param(4)} + t];",
            f"  if (k < 0 || u32(k) >= {param(2)}) {{ {ERR.wgsl_raise(ERR.INDEX, param(6))} return; }}",
            f"  {move}"])

    launch(rt, ("unpool", backward, dst.dtype.name, tuple(slots), len(bufs)), make_code, bufs, params, n,
           binding_kinds)
