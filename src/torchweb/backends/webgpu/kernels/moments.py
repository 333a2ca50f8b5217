"""var / std and the mean of rows in one dispatch: one workgroup per row (a thread per row for
short rows), three passes over the row, which stays in cache (or in registers):

1. the scale: the largest |x|, as the bits of |x| (for non-negative floats the u32 order is the
   float order, and NaN's bits are above inf's, so NaN propagates without float compares);
2. the mean of x / 2^k - p, 2^k the power of two at the scale (an exact scaling: squares and
   sums of values near 1e30 don't overflow float32, where PyTorch accumulates in double), p the
   row's first element / 2^k (a shift: a constant row's deviations are exactly 0, so its var);
3. the sum of squared deviations of x / 2^k - p from that mean.

Special values as PyTorch's CPU kernel (a sequential Welford update): a NaN makes var and mean
NaN; an infinity makes var NaN and the mean NaN, unless the row's last element is its only
infinity (then the mean is that infinity). n <= correction gives inf (NaN where every
deviation is 0). Computed in f32; float16 rows are read as f16 and the results rounded once.
"""

import struct

from .bindings import bind, kinds
from .elementwise import WORKGROUP, coalesce, param
from .wgsl import helpers_source, load, store

# lavapipe silently ends a loop after 65535 trips: a thread visits at most this many elements
MAX_ROW = WORKGROUP * 65535

# vec: float32 rows starting at multiples of 4, 4k long, are read as vec4s (0: off); cache: a
# row of at most CACHE_UNITS units a thread is read once into registers (else 3 times); wg: the
# threads of a row, halved (down to 32) while a half still has a unit each (fit); short: rows at
# most this long take a thread each (no barriers: costly on CPU adapters). Pipelines are keyed
# on these, as softmax's FAST (kernels/softmax.py).
FAST = {"vec": 4, "cache": 1, "wg": 256, "short": 64, "fit": 1}
CACHE_UNITS = 8

_INF_BITS = "0x7f800000u"


def fits(row, rows):
    """Whether one kernel does better than the composite (ops/reduction.py): not for an empty
    or too long row, nor for few long rows, which one workgroup each would leave most of the
    GPU idle (the composite's reductions split them)."""
    return 0 < row <= MAX_ROW and not (row >= 65536 and rows < 256)


def run(rt, out, inp, denom, std, with_mean):
    """Reduce each row of inp (its last dim, of stride 1; other dims any strides) into out
    (contiguous): out[w] = var of row w (std if std), out[n_rows + w] = its mean if with_mean.
    denom: the divisor of the sum of squares, n - correction clamped at 0."""
    R = inp.shape[-1]
    n_rows = inp.numel() // R if R else 0
    if n_rows == 0:
        return
    assert inp._stride[-1] == 1 or R == 1
    oshape, (istr,) = coalesce(inp.shape[:-1] or (1,), [list(inp._stride[:-1]) or [0]])
    buffers, (slot,) = bind(out, inp)
    assert slot, "out must be a fresh tensor"
    short = R <= FAST["short"]
    lanes = 4 if (FAST["vec"] == 4 and not short and slot and inp.dtype.name == "float32" and R % 4 == 0
                  and all(v % 4 == 0 for v in [inp._offset] + istr)) else 1
    units = R // lanes
    wg = 1 if short else FAST["wg"] if lanes == 4 else WORKGROUP
    while not short and FAST["fit"] and wg > 32 and wg // 2 >= units:
        wg //= 2
    per = -(-units // wg)
    k = 1
    while k < per:
        k *= 2
    cache = k if FAST["cache"] and k <= CACHE_UNITS else 0
    params = ([n_rows, units] + list(oshape) + [inp._offset // lanes] + [v // lanes for v in istr]
              + [out._offset, struct.unpack("<I", struct.pack("<f", float(denom)))[0]])
    key = ("moments", inp.dtype.name, out.dtype.name, len(oshape), slot, short, lanes, wg, cache, std, with_mean)

    def make_code():
        return _source(inp.dtype, out.dtype, len(oshape), slot, len(params), short, lanes, wg, cache, std,
                       with_mean)

    pid = rt.pipeline(key, make_code, kinds(buffers))
    groups = -(-n_rows // WORKGROUP) if short else n_rows
    rt.dispatch(pid, rt.grid(groups), buffers, struct.pack(f"<{len(params)}I", *params))


def _source(in_dtype, out_dtype, no, slot, nparams, short, lanes, wg, cache, std, with_mean):
    vec = lanes == 4
    T, U = ("vec4<f32>", "vec4<u32>") if vec else ("f32", "u32")
    n_rows, units = param(0), param(1)
    shape = [param(2 + d) for d in range(no)]
    in_off = param(2 + no)
    istr = [param(3 + no + d) for d in range(no)]
    out_off, denom = param(3 + 2 * no), f"bitcast<f32>({param(4 + 2 * no)})"
    src = f"B{slot}"
    unit = f"{src}[ib + r]" if vec else load(f"{src}[ib + r]", in_dtype.gpu_storage, "f32")
    last = f"{src}[ib + {units} - 1u].w" if vec else load(f"{src}[ib + {units} - 1u]", in_dtype.gpu_storage, "f32")
    first = f"{src}[ib].x" if vec else load(f"{src}[ib]", in_dtype.gpu_storage, "f32")

    if short:
        body = [f"  let w = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;"]
    else:
        body = ["  let w = wid.y * nwg.x + wid.x;"]   # uniform: a folded grid's excess group leaves whole
    body += [f"  if (w >= {n_rows}) {{ return; }}",
             f"  var ib = {in_off};",
             "  { var q = w;"]
    for d in reversed(range(no)):
        body.append(f"    {{ let c = q % {shape[d]}; q = q / {shape[d]}; ib = ib + c * {istr[d]}; }}")
    body.append("  }")
    if cache:
        body.append(f"  var xs: array<{T}, {cache}>;")

    def each(first, stmt):
        """stmt (on v, the unit at r) over the thread's units; `first` fills the cache."""
        if short:
            return [f"  for (var r = 0u; r < {units}; r = r + 1u) {{ let v = {unit}; {stmt} }}"]
        if not cache:
            return [f"  for (var r = lid; r < {units}; r = r + {wg}u) {{ let v = {unit}; {stmt} }}"]
        get = f"let v = {unit}; xs[k] = v;" if first else "let v = xs[k];"
        return [f"  for (var k = 0u; k < {cache}u; k = k + 1u) {{",
                f"    let r = lid + k * {wg}u;",
                f"    if (r < {units}) {{ {get} {stmt} }}",
                "  }"]

    def fold(x, op):
        if not vec:
            return x
        return op.format(a=op.format(a=f"{x}.x", b=f"{x}.y"), b=op.format(a=f"{x}.z", b=f"{x}.w"))

    def tree(name, local, array, op):
        """`let name` = local combined over the workgroup (op), seen by every thread."""
        if short:
            return [f"  let {name} = {local};"]
        return [f"  {array}[lid] = {local};",
                "  workgroupBarrier();",
                f"  for (var s = {wg // 2}u; s > 0u; s = s >> 1u) {{",
                f"    if (lid < s) {{ {array}[lid] = {op.format(a=f'{array}[lid]', b=f'{array}[lid + s]')}; }}",
                "    workgroupBarrier();",
                "  }",
                f"  let {name} = {array}[0];",
                "  workgroupBarrier();"]   # before the array is written again

    mx, add = "max({a}, {b})", "({a} + {b})"
    # 1. the largest |x| as bits (NaN above inf above every finite value)
    body.append(f"  var mb = {U}(0u);")
    body += each(True, f"mb = max(mb, bitcast<{U}>(v) & {U}(0x7fffffffu));")
    body += tree("su", fold("mb", mx), "SU", mx)
    # 2. the scale 2^e (e clamped so that 2^e and 2^-e are normal floats), then the mean of x / 2^e;
    # with an infinity (or NaN) in the row, the count of infinities instead
    body += [f"  let special = su >= {_INF_BITS};",
             "  let e = clamp(i32(su >> 23u) - 127, -126, 126);",
             "  let scale = bitcast<f32>(u32(127 + e) << 23u);",
             "  let inv = bitcast<f32>(u32(127 - e) << 23u);",
             f"  let p = {first} * inv;",   # the pivot: deviations from a row element, 0 in a constant row
             f"  var a = {T}(0.0);",
             "  if (special) {"]
    body += ["  " + s for s in each(False, f"a = a + select({T}(0.0), {T}(1.0), (bitcast<{U}>(v) & {U}(0x7fffffffu)) == {U}({_INF_BITS}));")]
    body.append("  } else {")
    body += ["  " + s for s in each(False, f"a = a + (v * inv - {T}(p));")]
    body.append("  }")
    body += tree("sa", fold("a", add), "SV", add)
    body.append(f"  let m = sa / f32({units} * {lanes}u);")
    # 3. the sum of squared deviations
    body += [f"  var q = {T}(0.0);",
             "  if (!special) {"]
    body += ["  " + s for s in each(False, f"let d = (v * inv - {T}(p)) - {T}(m); q = q + d * d;")]
    body.append("  }")
    body += tree("ss", fold("q", add), "SV", add)
    if not short:
        body.append("  if (lid != 0u) { return; }")
    res = "tw_sqrt(v0) * scale" if std else "v0 * scale * scale"
    body += ["  var r = tw_nan(); var mean = tw_nan();",
             f"  if (su > {_INF_BITS}) {{",
             "  } else if (special) {",   # var NaN; the mean: PyTorch's Welford keeps a last, lone infinity
             f"    let xl = {last};",
             "    if (sa == 1.0 && tw_isinf(xl)) { mean = xl; }",
             "  } else {",
             f"    var v0 = tw_nan();",
             f"    if ({denom} > 0.0) {{ v0 = ss / {denom}; }} else if (ss > 0.0) {{ v0 = tw_inf(); }}",
             f"    r = {res};",
             "    mean = (p + m) * scale;",
             "  }",
             f"  B0[{out_off} + w] = {store('r', 'f32', out_dtype)};"]
    if with_mean:
        body.append(f"  B0[{out_off} + {n_rows} + w] = {store('mean', 'f32', out_dtype)};")

    storages = [out_dtype.gpu_storage] + ([T if vec else in_dtype.gpu_storage] if slot else [])
    lines = ["enable f16;"] if "f16" in storages else []
    lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
    for s, st in enumerate(storages):
        lines.append(f"@group(0) @binding({s + 1}) var<storage, {'read_write' if s == 0 else 'read'}> B{s}: array<{st}>;")
    if not short:
        lines += [f"var<workgroup> SU: array<u32, {wg}>;", f"var<workgroup> SV: array<f32, {wg}>;"]
    helpers = helpers_source({"inf", "nan", "isinf"} | ({"sqrt"} if std else set()))
    size = WORKGROUP if short else wg
    return ("\n".join(lines) + "\n" + helpers + "\n"
            f"@compute @workgroup_size({size})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")
