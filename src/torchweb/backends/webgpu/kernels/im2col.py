"""im2col (unfold) and col2im (fold) for any number of spatial dims: the data movement of
convolution, whose arithmetic is then the tiled matmul.

    im2col: cols[n, c * K + k, l] = x[n, c, l_pos * stride - pad + k_pos * dilation] (0 outside)
    col2im: x[n, c, i] = sum of the cols entries that im2col would read from position i

K is the product of the kernel sizes, L of the output sizes, k and l are row-major flat indices
over them. im2col runs a thread per cols element; col2im a thread per input element, which
walks the kernel offsets that can reach it (no atomics: each thread owns its sum). Both read
and write through strides, so cols can be laid out as [N, C*K, L] or [C*K, N, L] (the weight
gradient's layout) without a copy.
"""


from .bindings import bind, declarations
from .elementwise import param
from .skeleton import close_loops, entry_point, launch, loop, nested_loops, ravel, thread_index, uint_params, unravel
from .wgsl import load, store

_ZERO = {"f32": "0.0", "f16": "0.0h", "i32": "0i", "u32": "0u"}


def _run(rt, key, source, image, cols, src, dst, g, l0):
    """Both directions: a thread per element of dst, reading src (image [N, C, *S] and cols
    [., ., Lc] in one order or the other); source(slot, nparams) is the kernel's WGSL.
    g: the windows (a backends/plans.py ConvGeometry)."""
    n = dst.numel()
    if n == 0:
        return
    params = ([n, image.shape[0], image.shape[1], src._offset] + list(src._stride) + [dst._offset]
              + list(dst._stride) + uint_params(image.shape[2:], g.kernel, g.stride, g.padding, g.dilation, g.out_size)
              + [cols.shape[2], l0])
    bufs, (slot,) = bind(dst, src)
    launch(rt, key + (slot,), lambda nparams: source(slot, nparams), bufs, params, n)


def windows_over(i, g, indent):
    """WGSL lines opening the loop, along dim i, over the windows (o{i}, kernel offset j{i})
    that cover input position x{i}: x = o * s - p + j * d, at most k of them, no division
    that is not exact. g: _geometry_names; the loop's body starts one indent deeper."""
    inner = indent + "  "
    return [indent + loop(f"j{i}", "0u", g["k"][i]),
            f"{inner}let t{i} = i32(x{i} + {g['p'][i]}) - i32(j{i} * {g['d'][i]});",
            f"{inner}if (t{i} < 0 || u32(t{i}) % {g['s'][i]} != 0u) {{ continue; }}",
            f"{inner}let o{i} = u32(t{i}) / {g['s'][i]};",
            f"{inner}if (o{i} >= {g['O'][i]}) {{ continue; }}"]


def _geometry_names(r, base):
    """WGSL expressions for S, k, s, p, d, O of each spatial dim, from param index base."""
    names = {}
    for j, key in enumerate(("S", "k", "s", "p", "d", "O")):
        names[key] = [param(base + j * r + i) for i in range(r)]
    return names


def im2col(rt, out, inp, g, l0=0):
    """inp: [N, C, *S] (any strides); out: a view shaped [N, C * K, Lc] (any strides) that
    receives the columns of output positions l0 .. l0 + Lc - 1 (all L of them by default)."""
    r = len(g.kernel)
    _run(rt, ("im2col", r, inp.dtype.gpu_storage, out.dtype.gpu_storage),
         lambda slot, nparams: _im2col_source(r, inp.dtype, out.dtype, slot, nparams),
         inp, out, inp, out, g, l0)


def _im2col_source(r, in_dtype, out_dtype, slot, nparams):
    storages = [out_dtype.gpu_storage] + ([in_dtype.gpu_storage] if slot else [])
    C = param(2)
    in_off = param(3)
    in_n, in_c = param(4), param(5)
    in_s = [param(6 + i) for i in range(r)]
    out_off = param(6 + r)
    on, orow, ol = param(7 + r), param(8 + r), param(9 + r)
    g = _geometry_names(r, 10 + r)
    Lc, l0 = param(10 + 7 * r), param(11 + 7 * r)
    body = thread_index(param(0)) + [f"  let lc = t % {Lc};", f"  var q = t / {Lc};", f"  var ql = {l0} + lc;"]
    # t = (((n * C + c) * K + k) * Lc + lc), k and l = l0 + lc row-major over the spatial dims
    body += unravel("o", g["O"], "ql") + unravel("k", g["k"])
    body.append(f"  let c = q % {C}; let n = q / {C};")
    k_expr = ravel([f"k{i}" for i in range(r)], g["k"])
    K = " * ".join(g["k"]) if r else "1u"
    body.append(f"  let row = c * ({K}) + {k_expr};")
    body.append(f"  var src = {in_off} + n * {in_n} + c * {in_c};")
    body.append("  var inside = true;")
    for i in range(r):
        body.append(f"  {{ let pos = i32(o{i} * {g['s'][i]} + k{i} * {g['d'][i]}) - i32({g['p'][i]});")
        body.append(f"    if (pos < 0 || pos >= i32({g['S'][i]})) {{ inside = false; }}")
        body.append(f"    src = src + u32(max(pos, 0)) * {in_s[i]}; }}")
    st = out_dtype.gpu_storage
    val = load(f"B{slot}[src]", in_dtype.gpu_storage, st) if in_dtype.gpu_storage != st else f"B{slot}[src]"
    body.append(f"  var v = {_ZERO[st]};")
    body.append(f"  if (inside) {{ v = {val}; }}")
    body.append(f"  B0[{out_off} + n * {on} + row * {orow} + lc * {ol}] = v;")
    return declarations(nparams, storages) + "\n" + entry_point(body)


def col2im(rt, out, cols, g, acc, l0=0, accumulate=False):
    """out: [N, C, *S] (written whole, through its strides); cols: [N, C * K, Lc] (any strides),
    the columns of output positions l0 .. l0 + Lc - 1 (all L by default). acc: the accumulation
    type ('f32' or 'i32'); accumulate: add to out's values instead of replacing them."""
    r = len(g.kernel)
    _run(rt, ("col2im", r, cols.dtype.gpu_storage, out.dtype.name, acc, accumulate),
         lambda slot, nparams: _col2im_source(r, cols.dtype, out.dtype, slot, nparams, acc, accumulate),
         out, cols, cols, out, g, l0)


def _col2im_source(r, in_dtype, out_dtype, slot, nparams, acc, accumulate):
    storages = [out_dtype.gpu_storage] + ([in_dtype.gpu_storage] if slot else [])
    C = param(2)
    c_off = param(3)
    cn, crow, cl = param(4), param(5), param(6)
    out_off = param(7)
    out_n, out_c = param(8), param(9)
    out_s = [param(10 + i) for i in range(r)]
    g = _geometry_names(r, 10 + r)
    Lc, l0 = param(10 + 7 * r), param(11 + 7 * r)
    body = thread_index(param(0)) + ["  var q = t;"] + unravel("x", g["S"])
    body.append(f"  let c = q % {C}; let n = q / {C};")
    K = " * ".join(g["k"]) if r else "1u"
    body.append(f"  let base = {c_off} + n * {cn} + c * ({K}) * {crow};")
    body.append(f"  var acc = {_ZERO[acc]};")
    loops, indent = nested_loops(r, lambda i, ind: windows_over(i, g, ind))
    body += loops
    l_expr = ravel([f"o{i}" for i in range(r)], g["O"])
    k_expr = ravel([f"j{i}" for i in range(r)], g["k"])
    val = load(f"B{slot}[base + ({k_expr}) * {crow} + (l - {l0}) * {cl}]", in_dtype.gpu_storage, acc)
    body.append(f"{indent}let l = {l_expr};")
    body.append(f"{indent}if (l < {l0} || l >= {l0} + {Lc}) {{ continue; }}")
    body.append(f"{indent}acc = acc + {val};")
    body += close_loops(r)
    oidx = f"{out_off} + n * {out_n} + c * {out_c}" + "".join(f" + x{i} * {out_s[i]}" for i in range(r))
    if accumulate:
        body.append(f"  acc = acc + {load(f'B0[{oidx}]', out_dtype.gpu_storage, acc)};")
    body.append(f"  B0[{oidx}] = {store('acc', acc, out_dtype)};")
    return declarations(nparams, storages) + "\n" + entry_point(body)
