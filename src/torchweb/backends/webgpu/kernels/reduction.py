"""Reductions over the trailing dims of a (permuted, strided) view: sum, mean, prod, max, min,
argmax, argmin, all, any.

Two launch shapes from one generator: a workgroup per output (256 threads stride over the
reduced elements, then a tree in workgroup memory) when the reduction is long, or a thread per
output when there are many short ones.
"""

import struct

from . import subgroups as SG
from .plans import PlanCache, dispatch_plan
from .elementwise import coalesce, param, WGSL_TYPE, WORKGROUP
from .wgsl import convert, helpers_source, load, store
from .. import errors as ERR

# Fast paths, for a reduced extent contiguous in memory (one dim of stride 1 once coalesced):
# its index is the loop counter (no division per element); with `vec` 4 a workgroup-per-output
# sum/mean/prod/max/min reads vec4s where the input is 32-bit, is already the accumulator's type
# and every start is a multiple of 4 (else scalars). `vec` 0 turns both off; `wg`: the threads
# of a workgroup-per-output launch. bench/bandwidth.py sets these; pipelines are keyed on them.
FAST = {"vec": 4, "wg": 256, "col_rows": 16, "short": 64,   # col_rows 16: best of 4/8/16/32 on an H100
        "few_barriers": None, "fit": 1, "col_fill": 128}
# fit: a workgroup per output over a contiguous row shrinks (halving, down to 32 threads) while
# it keeps a thread per `fit` elements (vec4s) of the row; 0: off. Attention's softmax-backward
# row sums (256 floats) left 3 of 4 threads idle at 256 threads (6 x 50 us a nanoGPT step on an
# H200; 32 us at a thread a vec4).
# col_fill: the column sums take more row groups (col_rows doubled, up to 64) while they would
# make fewer than this many workgroups: a layer norm's weight gradient (384 outputs over 4096
# rows) made 24 workgroups at 16 rows, the GPU ~1/6 busy; 0: off.
# few_barriers: on SwiftShader (the browser's CPU fallback) every workgroup barrier costs tens
# of microseconds: reductions (and softmax rows) up to SOFTWARE_SHORT long take a thread per
# output, without barriers (a browser GPT step's cross-entropy sums over 65 classes took 57 ms as
# workgroup trees). None: by adapter; True/False force it (tests run it on lavapipe).
SOFTWARE_SHORT = 4096


def few_barriers(rt):
    """Whether this adapter's kernels should avoid workgroup barriers where they can."""
    forced = FAST["few_barriers"]
    return rt.barriers_costly if forced is None else forced
# col_rows: for a strided reduced dim over outputs that are neighbours in memory (x.sum(0) of a
# row-major matrix), a workgroup takes 256 / col_rows neighbouring outputs, its threads
# reading whole rows of them (coalesced) in col_rows groups, folded in workgroup memory; 0: off.

# kind -> (accumulator class: 'acc' uses the compute type, 'bool'), combine, identity per type
_IDENTITY = {
    "sum": {"f32": "0.0", "i32": "0i", "u32": "0u"},
    "mean": {"f32": "0.0"},
    "prod": {"f32": "1.0", "i32": "1i", "u32": "1u"},
    "max": {"f32": "-tw_inf()", "i32": "-2147483647i - 1i", "u32": "0u"},
    "min": {"f32": "tw_inf()", "i32": "2147483647i", "u32": "4294967295u"},
    # all/any accumulate 0/1 in u32: bool arrays in workgroup memory break on NVIDIA's driver
    "all": {"u32": "1u"},
    "any": {"u32": "0u"},
}
_IDENTITY["argmax"] = _IDENTITY["max"]
_IDENTITY["argmin"] = _IDENTITY["min"]


def _combine(kind, t):
    if kind in ("sum", "mean"):
        return "{a} + {b}"
    if kind == "prod":
        return "{a} * {b}"
    if kind in ("max", "min"):
        return f"tw_{kind}f({{a}}, {{b}})" if t == "f32" else f"{kind}({{a}}, {{b}})"
    if kind == "all":
        return "{a} & {b}"
    if kind == "any":
        return "{a} | {b}"
    raise ValueError(kind)


def _better(kind, t):
    """For argmax/argmin: does candidate (bv, bi) replace (av, ai)? NaN wins, ties go low."""
    cmp = ">" if kind == "argmax" else "<"
    plain = f"({{bv}} {cmp} {{av}} || ({{bv}} == {{av}} && {{bi}} < {{ai}}))"
    if t != "f32":
        return plain
    return ("((tw_isnan({bv}) && (!tw_isnan({av}) || {bi} < {ai})) || "
            "(!tw_isnan({av}) && !tw_isnan({bv}) && " + plain + "))")


_PLANS = PlanCache(FAST, rows=True)


def run(rt, p, out, inp, index_from=None):
    """Reduce inp's last p.nred dims into out (p: a backends/plans.py ReducePass): see _run. A
    call whose signature was seen before (same pass, shapes, strides, offsets, dtypes) reuses
    its plan: ~25 us less per call."""
    so, si = out._storage, inp._storage
    sig = (p, si is so, inp._shape, inp._stride, inp._offset, inp.dtype, out._shape, out._offset, out.dtype,
           SG.ENABLED, SG.MIN_SIZE)
    plan = _PLANS.get(rt, sig) if index_from is None else None
    if plan is None:
        plan = _run(rt, p.kind, out, inp, p.nred, p.acc_cls, p.nchunks, p.divisor, index_from, p.pairs_in,
                    p.pairs_out)
        if plan is not None and index_from is None:
            _PLANS.put(sig, plan)
        return
    if plan is not False:
        dispatch_plan(rt, plan, so, si)


def _run(rt, kind, out, inp, nred, acc_cls, nchunks=1, divisor=None, index_from=None,
         pairs_in=False, pairs_out=False):
    """Reduce inp's last nred dims into out (contiguous, numel = product of the other dims).
    nchunks > 1 splits each reduction into chunks, one workgroup each, writing nchunks partial
    results per output (out then holds n_out * nchunks values); mean divides by `divisor`.
    index_from (argmax/argmin over chunks' partial maxima): a contiguous int tensor shaped like
    inp, whose element at the winner is written instead of the winner's position.
    Integer sums and products into int64 accumulate 64 bits (vec2<u32>) and refuse results past
    the 32 bits held (errors.py); pairs_out writes each partial as two int32 words (lo, hi),
    pairs_in reads inp's elements as such pairs (the second pass of a split reduction).
    Returns the plan that run() may reuse (pipeline, grid, params), False for an empty output,
    or None where the dispatch must be planned each time (error-checked, column kernel)."""
    n_out = out.numel() // nchunks // (2 if pairs_out else 1)
    if n_out == 0:
        return False
    oshape, ostrides = coalesce(inp.shape[:len(inp.shape) - nred] or (1,),
                                [list(inp._stride[:len(inp.shape) - nred]) or [0]])
    rshape_in = inp.shape[len(inp.shape) - nred:] or (1,)
    rstride_in = list(inp._stride[len(inp.shape) - nred:]) or [0]
    rshape, rstrides = coalesce(rshape_in, [rstride_in])
    ostrides, rstrides = ostrides[0], rstrides[0]
    R = 1
    for s in rshape_in:
        R *= s
    # a thread per output for short reductions: a workgroup's barriers cost milliseconds each on
    # a CPU adapter (SwiftShader, the browser's fallback), and buy nothing over FAST["short"]
    cpu = few_barriers(rt)
    if cpu:
        per_workgroup = nchunks > 1 or R > SOFTWARE_SHORT
    else:
        per_workgroup = nchunks > 1 or R >= 256 or (n_out < 1024 and R > FAST["short"])
    chunk = -(-R // nchunks)
    t = "u32" if kind in ("all", "any") else WGSL_TYPE[acc_cls]
    gather = index_from is not None
    wide = kind in ("sum", "prod") and t == "i32" and (out.dtype.name == "int64" or pairs_out)
    check = wide and not pairs_out
    contig = bool(FAST["vec"]) and len(rshape) == 1 and rstrides == [1]
    vec = 4 if (contig and FAST["vec"] == 4 and per_workgroup and kind in ("sum", "mean", "prod", "max", "min")
                and not (wide or gather or pairs_in or pairs_out) and inp._storage is not out._storage
                and inp.dtype.gpu_storage == t and t in ("f32", "i32", "u32")
                and R % 4 == 0 and chunk % 4 == 0 and inp._offset % 4 == 0
                and (n_out == 1 or all(st % 4 == 0 for st in ostrides))) else 1
    wgs = FAST["wg"] if per_workgroup and contig else WORKGROUP
    if per_workgroup and contig and FAST["fit"]:   # a short row: no more threads than (vec4) elements
        while wgs > 32 and (wgs // 2) * vec * FAST["fit"] >= chunk:
            wgs //= 2
    if (FAST["vec"] and FAST["col_rows"] and len(rshape) == 1 and rstrides[0] != 1 and len(oshape) == 1
            and ostrides[0] == 1 and nchunks == 1 and kind in _IDENTITY and not arg_kind(kind)
            and not (wide or gather or pairs_in or pairs_out) and inp._storage is not out._storage
            and n_out >= 32 and not cpu):   # (its tree's barriers: see few_barriers)
        return _run_columns(rt, kind, out, inp, t, n_out, R, rstrides[0], divisor)
    # the workgroup's tree as subgroup operations, for the plain sums, means, maxima and minima
    sg = (per_workgroup and kind in ("sum", "mean", "max", "min")
          and not (wide or gather or pairs_in or pairs_out) and SG.use(rt))
    key = ("red", kind, inp.dtype.name, out.dtype.name, t, len(oshape), len(rshape), per_workgroup, gather,
           wide, pairs_in, pairs_out, contig, vec, wgs, sg)
    params = [n_out, R] + list(oshape) + list(rshape) + [inp._offset] + list(ostrides) + list(rstrides) + [out._offset, nchunks, chunk, R if divisor is None else divisor]
    buffers = [(out._storage.buffer_for_write(), out._storage.size)]
    same = inp._storage is out._storage
    if not same:
        buffers.append((inp._storage.buffer_for_read(), inp._storage.size))

    if gather:
        buffers.append((index_from._storage.buffer_for_read(), index_from._storage.size))

    kinds = ["uniform", "write"] + ([] if same else ["read"]) + (["read"] if gather else [])
    if check:
        params.append(rt.errors.tag(kind))
        buffers.append(rt.errors.binding)
        kinds.append("write")

    def make_code():
        return _source(kind, inp.dtype, out.dtype, t, len(oshape), len(rshape), per_workgroup,
                       len(params), same, gather, (wide, pairs_in, pairs_out, check), contig, vec, wgs, sg)
    pid = rt.pipeline(key, make_code, kinds)
    wg = n_out * nchunks if per_workgroup else -(-n_out // WORKGROUP)
    grid, packed = rt.grid(wg), struct.pack(f"<{len(params)}I", *params)
    rt.dispatch(pid, grid, buffers, packed)
    return None if check else (pid, grid, packed)


def _source(kind, in_dtype, out_dtype, t, no, nr, per_workgroup, nparams, same, gather=False,
            wide_mode=(False, False, False, False), contig=False, vec=1, wgs=WORKGROUP, sg=False):
    WORKGROUP = wgs   # noqa: N806 (the launch's size: the module's, or FAST's for a fast path)
    src = "B0" if same else "B1"
    gsrc = "B1" if same else "B2"
    arg = kind.startswith("arg")
    wide, pairs_in, pairs_out, check = wide_mode
    ident = _IDENTITY[kind][t] if not wide else ("vec2<u32>(0u, 0u)" if kind == "sum" else "vec2<u32>(1u, 0u)")
    at = "vec2<u32>" if wide else t     # the accumulator's type
    lines = [f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;",
             f"@group(0) @binding(1) var<storage, read_write> B0: array<{out_dtype.gpu_storage}>;"]
    if not same:
        el = f"vec4<{in_dtype.gpu_storage}>" if vec == 4 else in_dtype.gpu_storage
        lines.append(f"@group(0) @binding(2) var<storage, read> B1: array<{el}>;")
    if gather:
        lines.append(f"@group(0) @binding({2 if same else 3}) var<storage, read> {gsrc}: array<i32>;")
    if check:
        lines.append(f"@group(0) @binding({2 + (not same) + gather}) " + ERR.WGSL_DECL)
    if per_workgroup:
        lines.append(f"var<workgroup> SV: array<{at}, {WORKGROUP}>;")
        if arg:
            lines.append(f"var<workgroup> SI: array<u32, {WORKGROUP}>;")
    shape_o = [param(2 + d) for d in range(no)]
    shape_r = [param(2 + no + d) for d in range(nr)]
    in_off = param(2 + no + nr)
    str_o = [param(3 + no + nr + d) for d in range(no)]
    str_r = [param(3 + 2 * no + nr + d) for d in range(nr)]
    out_off = param(3 + 2 * no + 2 * nr)
    nchunks, chunk, divisor = (param(4 + 2 * no + 2 * nr + k) for k in range(3))

    def offset(var, idx, shapes, strides):
        code = [f"  var {var} = 0u;", f"  {{ var q = {idx};"]
        for d in reversed(range(len(shapes))):
            code.append(f"    {{ let c = q % {shapes[d]}; q = q / {shapes[d]}; {var} = {var} + c * {strides[d]}; }}")
        code.append("  }")
        return code

    combine = _combine(kind, t) if not arg else None
    if wide:
        combine = "tw_wadd({a}, {b})" if kind == "sum" else "tw_wmul({a}, {b})"
    better = _better(kind, t) if arg else None
    body = []
    if per_workgroup:
        body.append("  let w = wid.y * nwg.x + wid.x;")
        body.append(f"  let o = w / {nchunks}; let r0 = (w % {nchunks}) * {chunk};")
        body.append(f"  if (o >= {param(0)}) {{ return; }}")
        start, step = "r0 + lid", f"{WORKGROUP}u"
    else:
        body.append(f"  let w = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;")
        body.append("  let o = w; let r0 = 0u;")
        body.append(f"  if (o >= {param(0)}) {{ return; }}")
        start, step = "0u", "1u"
    body.append(f"  let r1 = min({param(1)}, r0 + {chunk});")
    body += offset("ob", "o", shape_o, str_o)
    body.append(f"  var acc: {at} = {ident};")
    if arg:
        body.append("  var acci = 0u;")
    if vec == 4:
        # vec4 units: four accumulators, one per lane, folded at the end ((x, y), (z, w))
        body.append(f"  let base4 = ({in_off} + ob) / 4u;")
        body.append(f"  var acc4 = vec4<{t}>({ident}, {ident}, {ident}, {ident});")
        body.append(f"  for (var r = r0 / 4u + lid; r < r1 / 4u; r = r + {WORKGROUP}u) {{")
        body.append(f"    let v = B1[base4 + r];")
        if kind in ("max", "min") and t == "f32":
            lanes = ", ".join(combine.format(a=f"acc4.{c}", b=f"v.{c}") for c in "xyzw")
            body.append(f"    acc4 = vec4<f32>({lanes});")
        else:
            body.append("    acc4 = " + combine.format(a="acc4", b="v") + ";")
        body.append("  }")
        pair = combine.format(a=combine.format(a="acc4.x", b="acc4.y"), b=combine.format(a="acc4.z", b="acc4.w"))
        body.append(f"  acc = {pair};")
    body += [] if vec == 4 else _scalar_loop(kind, in_dtype, t, src, in_off, start, step, contig, offset, shape_r,
                                             str_r, arg, better, combine, pairs_in, wide)
    if sg:
        body += SG.reduce_lines("red", "acc", "add" if kind in ("sum", "mean") else kind, t, "SV", WORKGROUP,
                                combine, reuse=False)
        body.append("  if (lid != 0u) { return; }")
        body.append("  acc = red;")
    elif per_workgroup:
        body.append("  SV[lid] = acc;")
        if arg:
            body.append("  SI[lid] = acci;")
        body.append("  workgroupBarrier();")
        body.append(f"  for (var s = {WORKGROUP // 2}u; s > 0u; s = s >> 1u) {{")
        body.append("    if (lid < s) {")
        if arg:
            body.append("      let bv = SV[lid + s]; let bi = SI[lid + s];")
            body.append("      if (" + better.format(av="SV[lid]", ai="SI[lid]", bv="bv", bi="bi") + ") { SV[lid] = bv; SI[lid] = bi; }")
        else:
            body.append("      SV[lid] = " + combine.format(a="SV[lid]", b="SV[lid + s]") + ";")
        body.append("    }")
        body.append("    workgroupBarrier();")
        body.append("  }")
        body.append("  if (lid != 0u) { return; }")
        body.append("  acc = SV[0];")
        if arg:
            body.append("  acci = SI[0];")
    if pairs_out:
        body.append(f"  B0[{out_off} + 2u * w] = bitcast<i32>(acc.x);")
        body.append(f"  B0[{out_off} + 2u * w + 1u] = bitcast<i32>(acc.y);")
    else:
        if check:
            body.append(f"  if (!tw_wfits(acc)) {{ {ERR.wgsl_raise(ERR.INT64_RANGE, param(nparams - 1))} }}")
            result, rtype = "bitcast<i32>(acc.x)", "i32"
        elif arg and gather:  # the winning chunk's own argmax, read from the index source
            result, rtype = f"{gsrc}[o * {param(1)} + acci]", "i32"
        elif arg:
            result, rtype = "i32(acci)", "i32"
        elif kind == "mean":
            result, rtype = f"acc / f32({divisor})", t
        else:
            result, rtype = "acc", t
        body.append(f"  B0[{out_off} + w] = {store(result, rtype, out_dtype)};")
    code = "\n".join(lines) + "\n" + "\n".join(body)
    need = ({"inf"} if "tw_inf" in code else set()) | (SG.HELPERS if sg else set())
    if "tw_isnan" in code:
        need.add("isnan")
    for k in ("maxf", "minf", "w", "wadd", "wmul", "wfits"):
        if f"tw_{k}" in code:
            need.add(k)
    enable = "enable f16;\n" if "f16" in (in_dtype.gpu_storage, out_dtype.gpu_storage) else ""
    if sg:
        enable += SG.enable_line()
    return (enable + "\n".join(lines) + "\n" + helpers_source(need) + "\n"
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            f"        @builtin(local_invocation_index) lid: u32{', ' + SG.BUILTINS if sg else ''}) {{\n"
            + "\n".join(body) + "\n}\n")


def _scalar_loop(kind, in_dtype, t, src, in_off, start, step, contig, offset, shape_r, str_r, arg, better,
                 combine, pairs_in, wide):
    """The loop over a thread's reduced elements, one at a time (contig: their index is r)."""
    body = [f"  for (var r = {start}; r < r1; r = r + {step}) {{"]
    body += ["  " + line for line in (["  let rb = r;"] if contig else offset("rb", "r", shape_r, str_r))]
    val = load(f"{src}[{in_off} + ob + rb]", in_dtype.gpu_storage if in_dtype.gpu_storage != "u32" else "u32", "bool" if kind in ("all", "any") else t)
    if kind in ("all", "any"):
        val = convert(val, "bool", "u32")
    if pairs_in:
        val = f"vec2<u32>(bitcast<u32>({src}[2u * ({in_off} + ob + rb)]), bitcast<u32>({src}[2u * ({in_off} + ob + rb) + 1u]))"
    elif wide:
        val = f"tw_w({val})"
    body.append(f"    let v = {val};")
    if arg:
        body.append("    if (" + better.format(av="acc", ai="acci", bv="v", bi="r") + ") { acc = v; acci = r; }")
    else:
        body.append("    acc = " + combine.format(a="acc", b="v") + ";")
    body.append("  }")
    return body


def arg_kind(kind):
    return kind.startswith("arg")


def _run_columns(rt, kind, out, inp, t, n_out, R, rstride, divisor):
    rows = FAST["col_rows"]
    while rows < 64 and n_out * rows < FAST["col_fill"] * WORKGROUP and R >= 8 * rows:
        rows *= 2
    cols = WORKGROUP // rows
    params = [n_out, R, inp._offset, rstride, out._offset, R if divisor is None else divisor]
    key = ("red_cols", kind, inp.dtype.name, out.dtype.name, t, rows)

    def make_code():
        return _col_source(kind, inp.dtype, out.dtype, t, len(params), rows, cols)

    buffers = [(out._storage.buffer_for_write(), out._storage.size), (inp._storage.buffer_for_read(), inp._storage.size)]
    pid = rt.pipeline(key, make_code, ["uniform", "write", "read"])
    grid, packed = rt.grid(-(-n_out // cols)), struct.pack(f"<{len(params)}I", *params)
    rt.dispatch(pid, grid, buffers, packed)
    return pid, grid, packed


def _col_source(kind, in_dtype, out_dtype, t, nparams, rows, cols):
    """Outputs col (neighbours in memory) of a workgroup, each summed by `rows` threads that
    take every rows-th element of it (4 loads in flight a trip), then folded in SV."""
    ident = _IDENTITY[kind][t]
    combine = _combine(kind, t)
    logical = kind in ("all", "any")

    def val(r):
        v = load(f"B1[{param(2)} + col + ({r}) * {param(3)}]", in_dtype.gpu_storage, "bool" if logical else t)
        return convert(v, "bool", "u32") if logical else v

    body = ["  let w = wid.y * nwg.x + wid.x;",
            f"  let col = w * {cols}u + lid % {cols}u;",
            f"  let g = lid / {cols}u;",
            f"  let R = {param(1)};",
            f"  var acc: {t} = {ident};",
            f"  if (col < {param(0)}) {{",
            "    var r = g;",
            f"    for (; r + {3 * rows}u < R; r = r + {4 * rows}u) {{",
            f"      let v0 = {val('r')}; let v1 = {val(f'r + {rows}u')};",
            f"      let v2 = {val(f'r + {2 * rows}u')}; let v3 = {val(f'r + {3 * rows}u')};",
            "      acc = " + combine.format(a=combine.format(a="acc", b=combine.format(a="v0", b="v1")),
                                         b=combine.format(a="v2", b="v3")) + ";",
            "    }",
            f"    for (; r < R; r = r + {rows}u) {{ let v = {val('r')}; acc = {combine.format(a='acc', b='v')}; }}",
            "  }",
            "  SV[lid] = acc;",
            "  workgroupBarrier();",
            f"  for (var s = {rows // 2}u; s > 0u; s = s >> 1u) {{",
            f"    if (g < s) {{ SV[lid] = {combine.format(a='SV[lid]', b=f'SV[lid + s * {cols}u]')}; }}",
            "    workgroupBarrier();",
            "  }",
            f"  if (g != 0u || col >= {param(0)}) {{ return; }}"]
    result = f"SV[lid] / f32({param(5)})" if kind == "mean" else "SV[lid]"
    body.append(f"  B0[{param(4)} + col] = {store(result, t, out_dtype)};")
    code = "\n".join(body)
    need = {k for k in ("inf", "isnan", "maxf", "minf") if f"tw_{k}" in code}
    enable = "enable f16;\n" if "f16" in (in_dtype.gpu_storage, out_dtype.gpu_storage) else ""
    return (enable + f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;\n"
            f"@group(0) @binding(1) var<storage, read_write> B0: array<{out_dtype.gpu_storage}>;\n"
            f"@group(0) @binding(2) var<storage, read> B1: array<{in_dtype.gpu_storage}>;\n"
            f"var<workgroup> SV: array<{t}, {WORKGROUP}>;\n" + helpers_source(need) + "\n"
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n" + code + "\n}\n")
