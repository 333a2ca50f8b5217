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

from .... import _dtype as D
from ..storage import GPUStorage
from . import subgroups as SG
from .plans import PlanCache, dispatch_plan
from .bindings import bind, kinds
from .elementwise import WORKGROUP, coalesce, param
from .reduction import few_barriers
from .softmax import row_launch
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
# Few long rows (and rows past MAX_ROW) go in chunks of about CHUNK elements, a workgroup each,
# whose partial moments a second kernel merges (ops/lowering.py's thresholds for reductions)
SPLIT_MIN, SPLIT_MAX_ROWS, CHUNK, MAX_CHUNKS = 65536, 256, 8192, 1024
SOFTWARE_SHORT = 256   # a thread per row up to this long where barriers are costly (SwiftShader)

_INF_BITS = "0x7f800000u"


def fits(row, rows):
    """Whether the kernel takes these rows (ops/reduction.py composes reductions otherwise):
    every length but 0 (long rows go in chunks)."""
    return row > 0


def _chunks(R, n_rows):
    """(chunks a row, elements a chunk: a multiple of 4); one chunk: no split."""
    if R <= MAX_ROW and not (R >= SPLIT_MIN and n_rows < SPLIT_MAX_ROWS):
        return 1, R
    size = -(-R // min(MAX_CHUNKS, -(-R // CHUNK)))
    size += -size % 4
    return -(-R // size), size


_PLANS = PlanCache(FAST, rows=True)


def run(rt, out, inp, denom, std, with_mean):
    """_run, its plan reused by a call whose signature was seen before (shapes, strides,
    offsets, dtypes, options); not for the rows that go in chunks (a scratch buffer each)."""
    so, si = out._storage, inp._storage
    sig = (denom, std, with_mean, inp._shape, inp._stride, inp._offset, inp.dtype, out._offset, out.dtype,
           si is so, SG.ENABLED, SG.MIN_SIZE, few_barriers(rt))
    plan = _PLANS.get(rt, sig)
    if plan is None:
        plan = _run(rt, out, inp, denom, std, with_mean)
        if plan is not None:
            _PLANS.put(sig, plan)
        return
    if plan is not False:   # (bind's buffers: out, then inp, which is never out's storage)
        dispatch_plan(rt, plan, so, si)


def _run(rt, out, inp, denom, std, with_mean):
    """Reduce each row of inp (its last dim, of stride 1; other dims any strides) into out
    (contiguous): out[w] = var of row w (std if std), out[n_rows + w] = its mean if with_mean.
    denom: the divisor of the sum of squares, n - correction clamped at 0. Few long rows go in
    chunks: partial moments (4 floats a chunk) in a scratch buffer, then _merge. Returns the
    plan that run() may reuse (pipeline, grid, params), False for no rows, None when split."""
    R = inp.shape[-1]
    n_rows = inp.numel() // R if R else 0
    if n_rows == 0:
        return False
    assert inp._stride[-1] == 1 or R == 1
    oshape, (istr,) = coalesce(inp.shape[:-1] or (1,), [list(inp._stride[:-1]) or [0]])
    nch, size = _chunks(R, n_rows)
    split = nch > 1
    if split:
        partial = GPUStorage(rt, n_rows * nch * 4, D.float32)
        buffers, slot = [(partial.buffer_for_write(), partial.size), (inp._storage.buffer_for_read(), inp._storage.size)], 1
        out_dtype, out_off = D.float32, 0
    else:
        buffers, (slot,) = bind(out, inp)
        assert slot, "out must be a fresh tensor"
        out_dtype, out_off = out.dtype, out._offset
    # (SwiftShader: rows up to SOFTWARE_SHORT long, a thread each, no barriers; shorter than
    # reductions' limit: one thread's running sums of shifted values drift with the row's
    # length, a mean 3.6e-4 off at 4096 where the workgroup's tree is 4e-7 off)
    short = R <= (SOFTWARE_SHORT if FAST["short"] and few_barriers(rt) else FAST["short"])
    lanes = 4 if (FAST["vec"] == 4 and not short and inp.dtype.name == "float32" and R % 4 == 0
                  and all(v % 4 == 0 for v in [inp._offset] + istr)) else 1
    units = size // lanes   # a workgroup's: a row's or a chunk's
    wg, per, cache = row_launch(units, 1 if short else FAST["wg"] if lanes == 4 else WORKGROUP,
                                not short and FAST["fit"], FAST["cache"], CACHE_UNITS)
    denom_bits = struct.unpack("<I", struct.pack("<f", float(denom)))[0]
    params = ([n_rows * nch, R // lanes] + list(oshape) + [inp._offset // lanes] + [v // lanes for v in istr]
              + [out_off, denom_bits, nch, units])
    sg = not short and SG.use(rt)
    key = ("moments", inp.dtype.name, out_dtype.name, len(oshape), short, lanes, wg, cache, std, with_mean, split,
           sg)

    def make_code():
        return _source(inp.dtype, out_dtype, len(oshape), len(params), short, lanes, wg, cache, std,
                       with_mean, split, sg)

    pid = rt.pipeline(key, make_code, kinds(buffers))
    groups = -(-n_rows // WORKGROUP) if short else n_rows * nch
    grid, packed = rt.grid(groups), struct.pack(f"<{len(params)}I", *params)
    rt.dispatch(pid, grid, buffers, packed)
    if split:
        _merge(rt, out, inp, partial, nch, size, oshape, istr, denom_bits, std, with_mean)
        return None
    return pid, grid, packed


def _source(in_dtype, out_dtype, no, nparams, short, lanes, wg, cache, std, with_mean, split, sg=False):
    """The kernel of a row (split: of a chunk of a row, writing e, the mean of x / 2^e, the sum
    of squared deviations and a state: 0, the count of infinities, or -1 for NaN)."""
    vec, slot = lanes == 4, 1
    T, U = ("vec4<f32>", "vec4<u32>") if vec else ("f32", "u32")
    n_rows, units = param(0), param(1)
    shape = [param(2 + d) for d in range(no)]
    in_off = param(2 + no)
    istr = [param(3 + no + d) for d in range(no)]
    out_off, denom = param(3 + 2 * no), f"bitcast<f32>({param(4 + 2 * no)})"
    nch, chunk_units = param(5 + 2 * no), param(6 + 2 * no)
    src = f"B{slot}"
    unit = f"{src}[ib + r]" if vec else load(f"{src}[ib + r]", in_dtype.gpu_storage, "f32")
    last = f"{src}[ib + nu - 1u].w" if vec else load(f"{src}[ib + nu - 1u]", in_dtype.gpu_storage, "f32")
    first = f"{src}[ib].x" if vec else load(f"{src}[ib]", in_dtype.gpu_storage, "f32")

    if short:
        body = [f"  let w = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;"]
    else:
        body = ["  let w = wid.y * nwg.x + wid.x;"]   # uniform: a folded grid's excess group leaves whole
    body += [f"  if (w >= {n_rows}) {{ return; }}",
             f"  var ib = {in_off};",
             f"  {{ var q = w{f' / {nch}' if split else ''};"]
    for d in reversed(range(no)):
        body.append(f"    {{ let c = q % {shape[d]}; q = q / {shape[d]}; ib = ib + c * {istr[d]}; }}")
    body.append("  }")
    if split:
        body += [f"  let chunk = w % {nch};",
                 f"  ib = ib + chunk * {chunk_units};",
                 f"  let nu = min({chunk_units}, {units} - chunk * {chunk_units});"]
    else:
        body.append(f"  let nu = {units};")
    if cache:
        body.append(f"  var xs: array<{T}, {cache}>;")

    def each(first, stmt):
        """stmt (on v, the unit at r) over the thread's units; `first` fills the cache."""
        if short:
            return [f"  for (var r = 0u; r < nu; r = r + 1u) {{ let v = {unit}; {stmt} }}"]
        if not cache:
            return [f"  for (var r = lid; r < nu; r = r + {wg}u) {{ let v = {unit}; {stmt} }}"]
        get = f"let v = {unit}; xs[k] = v;" if first else "let v = xs[k];"
        return [f"  for (var k = 0u; k < {cache}u; k = k + 1u) {{",
                f"    let r = lid + k * {wg}u;",
                f"    if (r < nu) {{ {get} {stmt} }}",
                "  }"]

    def fold(x, op):
        if not vec:
            return x
        return op.format(a=op.format(a=f"{x}.x", b=f"{x}.y"), b=op.format(a=f"{x}.z", b=f"{x}.w"))

    def tree(name, local, array, op, part=0, last=False):
        """`let name` = local combined over the workgroup (op), seen by every thread (with
        subgroups: partials in half `part` of the array; last: the array is not used again)."""
        if short:
            return [f"  let {name} = {local};"]
        if sg:
            kind, t = ("max", "u32") if op == mx else ("add", "f32")
            return SG.reduce_lines(name, local, kind, t, array, wg, op, part, reuse=not last)
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
             # x / 2^e by ldexp, not x * 2^-e: NVIDIA's compiler rewrote v * inv - first * inv as
             # (v - first) * inv, which overflows for values of opposite signs near 3e38
             f"  let ne = {'vec4<i32>(-e)' if vec else '-e'};",
             f"  let p = ldexp({first}, -e);",   # the pivot: deviations from a row element, 0 in a constant row
             f"  var a = {T}(0.0);",
             "  if (special) {"]
    is_inf = f"(bitcast<{U}>(v) & {U}(0x7fffffffu)) == {U}({_INF_BITS})"
    body += ["  " + s for s in each(False, f"a = a + select({T}(0.0), {T}(1.0), {is_inf});")]
    body.append("  } else {")
    body += ["  " + s for s in each(False, f"a = a + (ldexp(v, ne) - {T}(p));")]
    body.append("  }")
    body += tree("sa", fold("a", add), "SV", add)
    body.append(f"  let m = sa / f32(nu * {lanes}u);")
    # 3. the sum of squared deviations
    body += [f"  var q = {T}(0.0);",
             "  if (!special) {"]
    body += ["  " + s for s in each(False, f"let d = (ldexp(v, ne) - {T}(p)) - {T}(m); q = q + d * d;")]
    body.append("  }")
    body += tree("ss", fold("q", add), "SV", add, part=1, last=True)
    if not short:
        body.append("  if (lid != 0u) { return; }")
    if split:
        body += [f"  let state = select(0.0, select(sa, -1.0, su > {_INF_BITS}), special);",
                 f"  B0[{out_off} + 4u * w] = f32(e);",
                 f"  B0[{out_off} + 4u * w + 1u] = p + m;",
                 f"  B0[{out_off} + 4u * w + 2u] = ss;",
                 f"  B0[{out_off} + 4u * w + 3u] = state;"]
        return _module(body, [out_dtype.gpu_storage, T if vec else in_dtype.gpu_storage], nparams,
                       short, wg, {"inf", "nan", "isinf"}, sg)
    res = "tw_sqrt(v0) * scale" if std else "tw_scale2(v0, e)"
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

    return _module(body, [out_dtype.gpu_storage, T if vec else in_dtype.gpu_storage], nparams, short, wg,
                   {"inf", "nan", "isinf"} | ({"sqrt"} if std else set()), sg)


# v * 2^(2e) for a variance v >= 0 of values scaled by 2^-e (|e| <= 126): `v * scale * scale`
# may be computed as v * (scale * scale), which overflows to inf (0 * inf = NaN for a constant
# row) where NVIDIA's compiler reassociates; one ldexp by 2e is indeterminate past 128 in WGSL.
# So: the overflow decided from v's exponent, then two exact steps of at most 126 each.
_SCALE2 = """
fn tw_scale2(v: f32, e: i32) -> f32 {
  let b = bitcast<u32>(v) & 0x7fffffffu;
  if (b == 0u || b >= 0x7f800000u) { return v; }
  if (i32(b >> 23u) - 127 + 2 * e > 127) { return tw_inf(); }
  return ldexp(ldexp(v, e), e);
}
"""


def _module(body, storages, nparams, short, wg, helpers, sg=False):
    """The WGSL module around a kernel body: bindings (B0 written), workgroup arrays, helpers
    (sg: the subgroup builtins, subgroups.py)."""
    lines = ["enable f16;"] if "f16" in storages else []
    if sg:
        lines.append(SG.enable_line().strip())
        helpers = helpers | SG.HELPERS
    lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
    for s, st in enumerate(storages):
        lines.append(f"@group(0) @binding({s + 1}) var<storage, {'read_write' if s == 0 else 'read'}> B{s}: array<{st}>;")
    if not short:
        lines += [f"var<workgroup> SU: array<u32, {wg}>;", f"var<workgroup> SV: array<f32, {wg}>;"]
    size = WORKGROUP if short else wg
    return ("\n".join(lines) + "\n" + helpers_source(helpers) + "\n" + _SCALE2 + "\n"
            f"@compute @workgroup_size({size})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            f"        @builtin(local_invocation_index) lid: u32{', ' + SG.BUILTINS if sg else ''}) {{\n"
            + "\n".join(body) + "\n}\n")


def _merge(rt, out, inp, partial, nch, size, oshape, istr, denom_bits, std, with_mean):
    """A thread a row merges its chunks' partial moments into out (as run's)."""
    R = inp.shape[-1]
    n_rows = inp.numel() // R
    buffers = [(out._storage.buffer_for_write(), out._storage.size), (partial.buffer_for_read(), partial.size),
               (inp._storage.buffer_for_read(), inp._storage.size)]
    params = [n_rows, nch, R, size] + list(oshape) + [inp._offset] + list(istr) + [out._offset, denom_bits]
    key = ("moments_merge", inp.dtype.name, out.dtype.name, len(oshape), std, with_mean)

    def make_code():
        return _merge_source(inp.dtype, out.dtype, len(oshape), len(params), std, with_mean)

    pid = rt.pipeline(key, make_code, kinds(buffers))
    rt.dispatch(pid, rt.grid(-(-n_rows // WORKGROUP)), buffers, struct.pack(f"<{len(params)}I", *params))


def _merge_source(in_dtype, out_dtype, no, nparams, std, with_mean):
    """Chunk c holds n_c elements, e_c, M_c (its mean / 2^e_c), S_c (squared deviations / 4^e_c)
    and its state. With E the largest e_c, each chunk's mean in units of 2^E is exact (a power of
    two); deviations are taken from the first chunk's (p), so a constant row's are 0:
    mean = (p + m) 2^E, m = sum n_c (M_c' - p) / n, var = (sum S_c' + n_c (M_c' - p - m)^2) / denom 4^E."""
    n_rows, nch, R, size = (param(k) for k in range(4))
    shape = [param(4 + d) for d in range(no)]
    in_off = param(4 + no)
    istr = [param(5 + no + d) for d in range(no)]
    out_off, denom = param(5 + 2 * no), f"bitcast<f32>({param(6 + 2 * no)})"
    last = load(f"B2[ib + {R} - 1u]", in_dtype.gpu_storage, "f32")
    body = [f"  let w = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            f"  if (w >= {n_rows}) {{ return; }}",
            f"  var ib = {in_off};",
            "  { var q = w;"]
    for d in reversed(range(no)):
        body.append(f"    {{ let c = q % {shape[d]}; q = q / {shape[d]}; ib = ib + c * {istr[d]}; }}")
    res = "tw_sqrt(v0) * scale" if std else "tw_scale2(v0, E)"
    body += ["  }",
             f"  let pb = w * {nch} * 4u;",
             "  var E = -126; var nan_ = false; var ninf = 0.0;",
             f"  for (var c = 0u; c < {nch}; c = c + 1u) {{",
             "    let st = B1[pb + 4u * c + 3u];",
             "    if (st < 0.0) { nan_ = true; }",
             "    ninf = ninf + max(st, 0.0);",
             "    E = max(E, i32(B1[pb + 4u * c]));",
             "  }",
             "  var r = tw_nan(); var mean = tw_nan();",
             "  if (nan_) {",
             "  } else if (ninf > 0.0) {",
             f"    let xl = {last};",
             "    if (ninf == 1.0 && tw_isinf(xl)) { mean = xl; }",
             "  } else {",
             "    let piv = ldexp(B1[pb + 1u], i32(B1[pb]) - E);",
             "    var s = 0.0;",
             f"    for (var c = 0u; c < {nch}; c = c + 1u) {{",
             f"      let n = f32(min({size}, {R} - c * {size}));",
             "      s = s + n * (ldexp(B1[pb + 4u * c + 1u], i32(B1[pb + 4u * c]) - E) - piv);",
             "    }",
             f"    let m = s / f32({R});",
             "    var ss = 0.0;",
             f"    for (var c = 0u; c < {nch}; c = c + 1u) {{",
             f"      let n = f32(min({size}, {R} - c * {size}));",
             "      let ec = i32(B1[pb + 4u * c]) - E;",
             "      let d = (ldexp(B1[pb + 4u * c + 1u], ec) - piv) - m;",
             "      ss = ss + ldexp(B1[pb + 4u * c + 2u], 2 * ec) + n * d * d;",
             "    }",
             "    let scale = ldexp(1.0, E);",
             "    var v0 = tw_nan();",
             f"    if ({denom} > 0.0) {{ v0 = ss / {denom}; }} else if (ss > 0.0) {{ v0 = tw_inf(); }}",
             f"    r = {res};",
             "    mean = (piv + m) * scale;",
             "  }",
             f"  B0[{out_off} + w] = {store('r', 'f32', out_dtype)};"]
    if with_mean:
        body.append(f"  B0[{out_off} + {n_rows} + w] = {store('mean', 'f32', out_dtype)};")
    return _module(body, [out_dtype.gpu_storage, "f32", in_dtype.gpu_storage], nparams, True, WORKGROUP,
                   {"inf", "nan", "isinf"} | ({"sqrt"} if std else set()))
