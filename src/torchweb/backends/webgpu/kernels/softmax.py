"""Fused softmax / log_softmax over the last dim of a strided view: one workgroup per row, three
passes over the row (max, sum of exp(x - max), write), each thread striding by the workgroup.

Mirrors ops/activation.py's composite exactly on special values: the max propagates NaN and
is not guarded, so a row holding +inf or only -inf comes out NaN, as in PyTorch's kernel.
Computed in f32 (float16 is read and written as f16, like PyTorch's float accumulation).
"""

import struct

from . import subgroups as SG
from .plans import PlanCache, dispatch_plan
from .bindings import declarations, kinds
from .elementwise import WORKGROUP, coalesce, param
from .reduction import SOFTWARE_SHORT, few_barriers
from .wgsl import helpers_source, load, store

# lavapipe silently ends a loop after 65535 trips: a thread visits at most this many elements
MAX_ROW = WORKGROUP * 65535

# The fast path, for float32 rows contiguous in both tensors (in and out in different buffers,
# every row start a multiple of 4, the row a multiple of 4 long): vec4 loads and stores, `wg`
# threads a row; with `cache`, a row of at most CACHE_UNITS vec4s a thread is read once into
# registers (else read three times). `vec` 0 turns it off. bench/bandwidth.py sets these;
# pipelines are keyed on them.
FAST = {"vec": 4, "cache": 1, "wg": 256, "short": 64, "fit": 1, "keep_exp": 1}
# fit: the fast path's workgroup shrinks (halving, down to 32) while it still has a thread for
# every vec4 of the row: attention rows of 256 floats are 64 vec4s, and 256 threads would
# leave 192 idle through every barrier.
# short: rows at most this long take a thread each (no workgroup barriers: on a CPU adapter,
# SwiftShader, each workgroup with barriers costs milliseconds); 0 turns it off.
CACHE_UNITS = 8


_PLANS = PlanCache(FAST, rows=True)


def run(rt, out, inp, log):
    """out = softmax(inp, -1) (log_softmax if log); out: same shape as inp, any strides. A call
    whose signature was seen before (shapes, strides, offsets, dtypes) reuses its plan."""
    so, si = out._storage, inp._storage
    sig = (log, si is so, inp._shape, inp._stride, inp._offset, inp.dtype, out._stride, out._offset, out.dtype,
           SG.ENABLED, SG.MIN_SIZE, few_barriers(rt))
    plan = _PLANS.get(rt, sig)
    if plan is None:
        plan = _plan(rt, out, inp, log)
        plan = _PLANS.put(sig, plan)
    if plan is not False:   # (bindings.bind's buffers: as dispatch_plan binds them)
        dispatch_plan(rt, plan, so, si)


def _plan(rt, out, inp, log):
    """(pipeline id, grid, params) of the call, False where there is nothing to compute."""
    R = inp.shape[-1]
    n_rows = inp.numel() // R if R else 0
    if n_rows == 0:
        return False
    oshape, (istr, ostr) = coalesce(inp.shape[:-1] or (1,),
                                    [list(inp._stride[:-1]) or [0], list(out._stride[:-1]) or [0]])
    no = len(oshape)
    params = ([n_rows, R] + list(oshape) + [inp._offset] + istr + [inp._stride[-1], out._offset]
              + ostr + [out._stride[-1]])
    slot = int(inp._storage is not out._storage)
    bkinds = kinds([None] * (1 + slot))
    # (SwiftShader: rows up to reduction.SOFTWARE_SHORT long, a thread each, no barriers)
    short = R <= (SOFTWARE_SHORT if FAST["short"] and few_barriers(rt) else FAST["short"])
    if (FAST["vec"] == 4 and not short and slot and inp.dtype.name == "float32" and out.dtype.name == "float32"
            and inp._stride[-1] == 1 and out._stride[-1] == 1 and R % 4 == 0
            and all(v % 4 == 0 for v in [inp._offset, out._offset] + istr + ostr)):
        return _plan_vec(rt, log, n_rows, R, oshape, inp._offset, istr, out._offset, ostr, bkinds)
    sg = not short and SG.use(rt)
    key = ("softmax", log, inp.dtype.name, out.dtype.name, no, slot, short, sg)

    def make_code():
        return _source(log, inp.dtype, out.dtype, no, slot, len(params), short, sg)

    pid = rt.pipeline(key, make_code, bkinds)
    return (pid, rt.grid(-(-n_rows // WORKGROUP) if short else n_rows), struct.pack(f"<{len(params)}I", *params))


def _source(log, in_dtype, out_dtype, no, slot, nparams, short=False, sg=False):
    storages = [out_dtype.gpu_storage] + ([in_dtype.gpu_storage] if slot else [])
    shape = [param(2 + d) for d in range(no)]
    in_off, out_off = param(2 + no), param(3 + 2 * no + 1)
    istr = [param(3 + no + d) for d in range(no)]
    in_rs = param(3 + 2 * no)
    ostr = [param(5 + 2 * no + d) for d in range(no)]
    out_rs = param(5 + 3 * no)
    R = param(1)

    body = ["  let w = wid.y * nwg.x + wid.x;" if not short else f"  let w = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            # w is uniform in the workgroup: the whole excess workgroup of a folded grid leaves
            f"  if (w >= {param(0)}) {{ return; }}",
            f"  var ib = {in_off}; var ob = {out_off};",
            "  { var q = w;"]
    for d in reversed(range(no)):
        body.append(f"    {{ let c = q % {shape[d]}; q = q / {shape[d]}; "
                    f"ib = ib + c * {istr[d]}; ob = ob + c * {ostr[d]}; }}")
    body.append("  }")
    x = load(f"B{slot}[ib + r * {in_rs}]", in_dtype.gpu_storage, "f32")
    if short:   # a thread per row: the same three passes, no workgroup memory
        body += [f"  var m = -tw_inf();",
                 f"  for (var r = 0u; r < {R}; r = r + 1u) {{ let v = {x}; m = tw_maxf(m, v); }}",
                 "  var sm = 0.0;",
                 f"  for (var r = 0u; r < {R}; r = r + 1u) {{ let v = {x}; sm = sm + tw_exp(v - m); }}"]
        result = "(v - m) - ls" if log else "tw_exp(v - m) / sm"
        if log:
            body.append("  let ls = tw_log(sm);")
        body.append(f"  for (var r = 0u; r < {R}; r = r + 1u) {{ let v = {x}; "
                    f"B0[ob + r * {out_rs}] = {store(result, 'f32', out_dtype)}; }}")
        helpers = helpers_source({"inf", "maxf", "exp"} | ({"log"} if log else set()))
        return (declarations(nparams, storages) + "\n" + helpers + "\n"
                f"@compute @workgroup_size({WORKGROUP})\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")

    def row_reduce(name, ident, step, combine, op, part):
        """acc over the row (step: acc's update from v, a format of {acc}), then a tree in SV or
        subgroup operations (op: add, max); every thread gets it."""
        acc = f"{name}_t" if sg else name
        loop = [f"  var {acc} = {ident};",
                f"  for (var r = lid; r < {R}; r = r + {WORKGROUP}u) {{ let v = {x}; {step.format(acc=acc)} }}"]
        if sg:
            return loop + SG.reduce_lines(name, acc, op, "f32", "SV", WORKGROUP, combine, part)
        return loop + [f"  SV[lid] = {name};",
                       "  workgroupBarrier();",
                       f"  for (var s = {WORKGROUP // 2}u; s > 0u; s = s >> 1u) {{",
                       f"    if (lid < s) {{ SV[lid] = {combine.format(a='SV[lid]', b='SV[lid + s]')}; }}",
                       "    workgroupBarrier();",
                       "  }",
                       f"  {name} = SV[0];",
                       "  workgroupBarrier();"]  # before SV is written again

    body += row_reduce("m", "-tw_inf()", "{acc} = tw_maxf({acc}, v);", "tw_maxf({a}, {b})", "max", 0)
    body += row_reduce("sm", "0.0", "{acc} = {acc} + tw_exp(v - m);", "{a} + {b}", "add", 1)
    result = "(v - m) - ls" if log else "tw_exp(v - m) / sm"
    if log:
        body.append("  let ls = tw_log(sm);")
    body.append(f"  for (var r = lid; r < {R}; r = r + {WORKGROUP}u) {{ let v = {x}; "
                f"B0[ob + r * {out_rs}] = {store(result, 'f32', out_dtype)}; }}")
    helpers = helpers_source({"inf", "maxf", "exp"} | ({"log"} if log else set()) | (SG.HELPERS if sg else set()))
    return ((SG.enable_line() if sg else "") + declarations(nparams, storages) + "\n"
            f"var<workgroup> SV: array<f32, {WORKGROUP}>;\n" + helpers + "\n"
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            f"        @builtin(local_invocation_index) lid: u32{', ' + SG.BUILTINS if sg else ''}) {{\n"
            + "\n".join(body) + "\n}\n")


def row_launch(units, wg, fit, cache_on, cache_units=CACHE_UNITS):
    """(threads, units a thread, registers a thread caches (0: none)) for a workgroup per row of
    `units` units: the workgroup halved while it would leave threads idle (fit), and a thread's
    share (rounded up to a power of two) held in registers when small enough (cache_on)."""
    while fit and wg > 32 and wg // 2 >= units:
        wg //= 2
    per = -(-units // wg)
    k = 1
    while k < per:
        k *= 2
    return wg, per, (k if cache_on and k <= cache_units else 0)


def _plan_vec(rt, log, n_rows, R, oshape, in_off, istr, out_off, ostr, bkinds):
    """The fast path's plan: offsets and strides in vec4 units."""
    no = len(oshape)
    units = R // 4
    wg, per, cache = row_launch(units, FAST["wg"], FAST["fit"], FAST["cache"])
    params = ([n_rows, units] + list(oshape) + [in_off // 4] + [v // 4 for v in istr] + [1, out_off // 4]
              + [v // 4 for v in ostr] + [1])
    sg = SG.use(rt)
    key = ("softmax_vec", log, no, wg, cache, FAST["keep_exp"], sg)   # (sg last: test_subgroup_kernels)

    def make_code():
        return _vec_source(log, no, len(params), wg, cache, sg)

    pid = rt.pipeline(key, make_code, bkinds)
    return pid, rt.grid(n_rows), struct.pack(f"<{len(params)}I", *params)


def _vec_source(log, no, nparams, wg, cache, sg=False):
    """The generic kernel's three passes on vec4s (lanes reduced apart, then folded); with
    cache > 0 a thread's vec4s (at most cache of them) are kept in registers from the first."""
    shape = [param(2 + d) for d in range(no)]
    istr = [param(3 + no + d) for d in range(no)]
    ostr = [param(5 + 2 * no + d) for d in range(no)]
    U = param(1)
    body = ["  let w = wid.y * nwg.x + wid.x;",
            f"  if (w >= {param(0)}) {{ return; }}",
            f"  var ib = {param(2 + no)}; var ob = {param(3 + 2 * no + 1)};",
            "  { var q = w;"]
    for d in reversed(range(no)):
        body.append(f"    {{ let c = q % {shape[d]}; q = q / {shape[d]}; "
                    f"ib = ib + c * {istr[d]}; ob = ob + c * {ostr[d]}; }}")
    body.append("  }")
    if cache:
        body.append(f"  var xs: array<vec4<f32>, {cache}>;")

    def each(first, stmt):
        """stmt (on v, the vec4 at unit r) over the thread's units; `first` loads the cache."""
        if not cache:
            return [f"  for (var r = lid; r < {U}; r = r + {wg}u) {{ let v = B1[ib + r]; {stmt} }}"]
        load = "let v = B1[ib + r]; xs[k] = v;" if first else "let v = xs[k];"
        return [f"  for (var k = 0u; k < {cache}u; k = k + 1u) {{",
                f"    let r = lid + k * {wg}u;",
                f"    if (r < {U}) {{ {load} {stmt} }}",
                "  }"]

    def tree(name, local, combine, op, part):
        if sg:
            return SG.reduce_lines(name, local, op, "f32", "SV", wg, combine, part)
        return [f"  SV[lid] = {local};",
                "  workgroupBarrier();",
                f"  for (var s = {wg // 2}u; s > 0u; s = s >> 1u) {{",
                f"    if (lid < s) {{ SV[lid] = {combine.format(a='SV[lid]', b='SV[lid + s]')}; }}",
                "    workgroupBarrier();",
                "  }",
                f"  let {name} = SV[0];",
                "  workgroupBarrier();"]

    mx = "tw_maxf({a}, {b})"
    lanes = ", ".join(mx.format(a=f"mv.{c}", b=f"v.{c}") for c in "xyzw")
    body.append("  var mv = vec4<f32>(-tw_inf(), -tw_inf(), -tw_inf(), -tw_inf());")
    body += each(True, f"mv = vec4<f32>({lanes});")
    body += tree("m", mx.format(a=mx.format(a="mv.x", b="mv.y"), b=mx.format(a="mv.z", b="mv.w")), mx, "max", 0)
    ex = ", ".join(f"tw_exp(v.{c} - m)" for c in "xyzw")
    body.append("  var sv = vec4<f32>(0.0, 0.0, 0.0, 0.0);")
    # softmax with the row in registers keeps exp(x - max) there for the write: one exp an
    # element instead of two (the same values, so the same result)
    keep_exp = bool(cache) and not log and FAST["keep_exp"]
    body += each(False, f"let e = vec4<f32>({ex}); sv = sv + e;" + (" xs[k] = e;" if keep_exp else ""))
    body += tree("sm", "(sv.x + sv.y) + (sv.z + sv.w)", "{a} + {b}", "add", 1)
    if log:
        body.append("  let ls = tw_log(sm);")
        res = ", ".join(f"(v.{c} - m) - ls" for c in "xyzw")
    elif keep_exp:
        res = ", ".join(f"v.{c} / sm" for c in "xyzw")
    else:
        res = ", ".join(f"tw_exp(v.{c} - m) / sm" for c in "xyzw")
    body += each(False, f"B0[ob + r] = vec4<f32>({res});")
    helpers = helpers_source({"inf", "maxf", "exp"} | ({"log"} if log else set()) | (SG.HELPERS if sg else set()))
    decl = ((SG.enable_line() if sg else "") + f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;\n"
            "@group(0) @binding(1) var<storage, read_write> B0: array<vec4<f32>>;\n"
            "@group(0) @binding(2) var<storage, read> B1: array<vec4<f32>>;")
    return (decl + "\n" f"var<workgroup> SV: array<f32, {wg}>;\n" + helpers + "\n"
            f"@compute @workgroup_size({wg})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            f"        @builtin(local_invocation_index) lid: u32{', ' + SG.BUILTINS if sg else ''}) {{\n"
            + "\n".join(body) + "\n}\n")
