"""Scans (cumsum, cumprod, cummax, cummin, logcumsumexp) along the last dim of strided views.

A workgroup per (row, chunk): it walks its chunk in blocks of 1024 elements (4 consecutive ones
per thread: a serial scan in registers, then a Hillis-Steele scan of the 256 thread totals in
workgroup memory), carrying the block total into the next block. One chunk per row is the whole
scan; ops/scan.py splits few long rows into chunks in three passes:

1. `totals_only`: each (row, chunk) writes its chunk's total (nothing else);
2. the totals of each row are scanned (the same kernel, on a [rows, nchunks] tensor);
3. `carry`: each (row, chunk) scans its chunk again, starting from the scanned total of the
   chunk before it.

cummax/cummin carry (value, index) pairs with PyTorch's rule: a NaN always wins, then a value
>= (cummax) or <= (cummin) the running one, so ties and NaNs go to the latest position.
Integer cumsum/cumprod into int64 compute 64 bits exactly (vec2<u32>, wrapping like int64) and
refuse outputs past the 32 bits held (errors.py); totals of split scans travel as (lo, hi) pairs.
"""

import struct

from .. import errors as ERR
from .elementwise import WORKGROUP, coalesce, param
from .wgsl import helpers_source, load, store

PER_THREAD = 4
BLOCK = WORKGROUP * PER_THREAD

_IDENT = {
    ("sum", "f32"): "0.0", ("sum", "i32"): "0i", ("sum", "u32"): "0u",
    ("prod", "f32"): "1.0", ("prod", "i32"): "1i", ("prod", "u32"): "1u",
    ("max", "f32"): "-tw_inf()", ("max", "i32"): "-2147483647i - 1i", ("max", "u32"): "0u",
    ("min", "f32"): "tw_inf()", ("min", "i32"): "2147483647i", ("min", "u32"): "4294967295u",
    ("logsumexp", "f32"): "-tw_inf()",
    ("sum", "w"): "vec2<u32>(0u, 0u)", ("prod", "w"): "vec2<u32>(1u, 0u)",
}

_LOGADDEXP = """fn tw_logaddexp(a: f32, b: f32) -> f32 {
  if (tw_isnan(a) || tw_isnan(b)) { return a + b; }
  let mx = max(a, b); let mn = min(a, b);
  if (mn == mx && tw_isinf(mn)) { return mn; }
  return mx + tw_log1p(tw_exp(mn - mx));
}"""


def _wins(kind, t):
    """WGSL: does the later (bv) replace the running (av) in cummax/cummin?"""
    cmp = ">=" if kind == "max" else "<="
    if t == "f32":
        return f"(tw_isnan(bv) || (!tw_isnan(av) && bv {cmp} av))"
    return f"(bv {cmp} av)"


def run(rt, kind, out, inp, t, indices=None, reverse=False, nchunks=1, totals_only=False,
        carry=None, carry_indices=None, wide=False, pairs_in=False, pairs_out=False, index_in=None):
    """Scan inp ([*outer, R], any strides) along its last dim into out (same shape).
    t: the compute type (f32, i32, u32); wide: 64-bit integer sum/prod. indices: cummax/cummin's
    int64 output. totals_only: out (and indices) are [rows * nchunks] totals, one per chunk.
    carry (and carry_indices): [rows * nchunks] scanned totals; chunk c starts from entry c - 1.
    pairs_in / pairs_out: inp / out (and carry) hold 64-bit (lo, hi) int32 pairs.
    index_in (cummax/cummin over chunk totals): each element's index is read from it, not its
    position (a contiguous int64 tensor shaped like inp)."""
    R = inp.shape[-1]
    rows = inp.numel() // R if R else 0
    if rows == 0 or R == 0:
        return
    chunk = -(-R // nchunks)
    arg = kind in ("max", "min")
    lists = [list(inp._stride[:-1]) or [0]]
    if not totals_only:
        lists.append(list(out._stride[:-1]) or [0])
        if arg:
            lists.append(list(indices._stride[:-1]) or [0])
    shape, merged = coalesce(inp.shape[:-1] or (1,), lists)
    zero = [0] * len(shape)
    istr = merged[0]
    ostr = merged[1] if not totals_only else zero
    xstr = merged[2] if arg and not totals_only else zero
    ors = 0 if totals_only else out._stride[-1]
    xrs = indices._stride[-1] if arg and not totals_only else 0
    no = len(shape)
    tensors = [out, inp] + ([indices] if arg else []) + ([carry] if carry is not None else []) \
        + ([carry_indices] if carry_indices is not None else []) + ([index_in] if index_in is not None else [])
    # every tensor is a distinct, freshly made storage (ops/scan.py): one binding each
    assert len({id(tt._storage) for tt in tensors}) == len(tensors)
    buffers = [(tt._storage.buffer_for_write(), tt._storage.size) for tt in tensors]
    slots = list(range(len(tensors)))
    if not arg:
        slots = [0, 1, None] + slots[2:]
    check = wide and not pairs_out and not totals_only
    params = ([rows, R, nchunks, chunk] + list(shape) + istr + ostr + xstr
              + [inp._offset, inp._stride[-1], out._offset, ors,
                 indices._offset if arg else 0, xrs,
                 carry._offset if carry is not None else 0,
                 carry_indices._offset if carry_indices is not None else 0,
                 index_in._offset if index_in is not None else 0])
    kinds = ["uniform"] + ["write" if s == 0 or (arg and s == 2) else "read" for s in range(len(buffers))]
    if check:
        params.append(rt.errors.tag({"sum": "cumsum", "prod": "cumprod"}[kind]))
        buffers.append(rt.errors.binding)
        kinds.append("write")
    params = [p & 0xFFFFFFFF for p in params]
    storages = [tt.dtype.gpu_storage for tt in tensors]
    key = ("scan", kind, t, inp.dtype.name, out.dtype.name, no, tuple(slots), reverse, totals_only,
           carry is not None, wide, pairs_in, pairs_out, check, index_in is not None)

    def make_code():
        return _source(kind, t, inp.dtype, out.dtype, no, slots, storages, reverse, totals_only,
                       carry is not None, wide, pairs_in, pairs_out, check, len(params), index_in is not None)

    pid = rt.pipeline(key, make_code, kinds)
    rt.dispatch(pid, rt.grid(rows * nchunks), buffers, struct.pack(f"<{len(params)}I", *params))


def _source(kind, t, in_dtype, out_dtype, no, slots, storages, reverse, totals_only, has_carry,
            wide, pairs_in, pairs_out, check, nparams, has_index_in=False):
    arg = kind in ("max", "min")
    st = "vec2<u32>" if wide else t
    ident = _IDENT[(kind, "w" if wide else t)]
    lines = ["enable f16;"] if "f16" in storages else []
    lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
    for s, sto in enumerate(storages):
        access = "read_write" if s == 0 or (arg and s == slots[2]) else "read"
        lines.append(f"@group(0) @binding({s + 1}) var<storage, {access}> B{s}: array<{sto}>;")
    if check:
        lines.append(f"@group(0) @binding({len(storages) + 1}) " + ERR.WGSL_DECL)
    lines.append(f"var<workgroup> SV: array<{st}, {WORKGROUP}>;")
    if arg:
        lines.append(f"var<workgroup> SI: array<u32, {WORKGROUP}>;")
    rows, R, nchunks, chunk = (param(k) for k in range(4))
    shp = [param(4 + d) for d in range(no)]
    istr = [param(4 + no + d) for d in range(no)]
    ostr = [param(4 + 2 * no + d) for d in range(no)]
    xstr = [param(4 + 3 * no + d) for d in range(no)]
    b = 4 + 4 * no
    in_off, in_rs, out_off, out_rs, x_off, x_rs, c_off, ci_off, ii_off = (param(b + k) for k in range(9))
    src, dst = f"B{slots[1]}", "B0"
    xdst = f"B{slots[2]}" if arg else None
    csrc = f"B{slots[3]}" if has_carry else None
    cisrc = f"B{slots[4]}" if has_carry and arg else None

    if kind in ("sum", "prod") and wide:
        comb = "tw_wadd({a}, {b})" if kind == "sum" else "tw_wmul({a}, {b})"
    elif kind == "sum":
        comb = "({a} + {b})"
    elif kind == "prod":
        comb = "({a} * {b})"
    elif kind == "logsumexp":
        comb = "tw_logaddexp({a}, {b})"
    else:
        comb = None
    win = _wins(kind, t) if arg else None

    def write(ind, v, vi, pos, xpos, check_wide):
        """WGSL lines storing value v (and index vi, for max/min) at pos of the output (and xpos
        of the indices): two i32 words for int64 pairs; checked to fit int32 when check_wide."""
        if pairs_out:
            lines = [f"{ind}{dst}[2u * ({pos})] = bitcast<i32>({v}.x);",
                     f"{ind}{dst}[2u * ({pos}) + 1u] = bitcast<i32>({v}.y);"]
        elif check_wide:
            lines = [f"{ind}if (!tw_wfits({v})) {{ {ERR.wgsl_raise(ERR.INT64_RANGE, param(nparams - 1))} }}",
                     f"{ind}{dst}[{pos}] = {store(f'bitcast<i32>({v}.x)', 'i32', out_dtype)};"]
        else:
            lines = [f"{ind}{dst}[{pos}] = {store(v, t, out_dtype)};"]
        if arg:
            lines.append(f"{ind}{xdst}[{xpos}] = i32({vi});")
        return lines

    def combine(dv, di, av, ai, bv, bi):
        """dv (, di) = combine((av, ai), (bv, bi)): a earlier, b later."""
        if arg:
            return (f"{{ let av = {av}; let bv = {bv}; let ai = {ai}; let bi = {bi}; "
                    f"if ({win}) {{ {dv} = bv; {di} = bi; }} else {{ {dv} = av; {di} = ai; }} }}")
        return f"{dv} = {comb.format(a=av, b=bv)};"

    body = ["  let w = wid.y * nwg.x + wid.x;",
            f"  if (w >= {rows} * {nchunks}) {{ return; }}",
            f"  let row = w / {nchunks}; let c = w % {nchunks};",
            f"  let r0 = c * {chunk}; let r1 = min({R}, r0 + {chunk});",
            f"  var ib = {in_off}; var ob = {out_off}; var xb = {x_off};",
            "  { var q = row;"]
    for d in reversed(range(no)):
        body.append(f"    {{ let cc = q % {shp[d]}; q = q / {shp[d]}; ib = ib + cc * {istr[d]}; "
                    f"ob = ob + cc * {ostr[d]}; xb = xb + cc * {xstr[d]}; }}")
    body.append("  }")
    body.append(f"  var carry: {st} = {ident};")
    body.append("  var carryi = 0u;")
    if has_carry:
        body.append("  if (c > 0u) {")
        ce = f"{c_off} + row * {nchunks} + c - 1u"
        if pairs_in or (wide and has_carry):
            body.append(f"    carry = vec2<u32>(bitcast<u32>({csrc}[2u * ({ce})]), bitcast<u32>({csrc}[2u * ({ce}) + 1u]));")
        else:
            cst = storages[slots[3]]
            body.append(f"    carry = {load(f'{csrc}[{ce}]', cst, t)};")
        if arg:
            body.append(f"    carryi = u32({cisrc}[{ci_off} + row * {nchunks} + c - 1u]);")
        body.append("  }")
    body.append(f"  var lv: array<{st}, {PER_THREAD}>;")
    if arg:
        body.append(f"  var li: array<u32, {PER_THREAD}>;")
    pos = f"({R} - 1u - k)" if reverse else "k"
    if pairs_in:
        val = (f"vec2<u32>(bitcast<u32>({src}[2u * (ib + {pos} * {in_rs})]), "
               f"bitcast<u32>({src}[2u * (ib + {pos} * {in_rs}) + 1u]))")
    else:
        val = load(f"{src}[ib + {pos} * {in_rs}]", in_dtype.gpu_storage, t)
        if wide:
            val = f"tw_w({val})" if t == "i32" else f"vec2<u32>({val}, 0u)"
    body += [f"  for (var b0 = r0; b0 < r1; b0 = b0 + {BLOCK}u) {{",
             f"    var tv: {st} = {ident};",
             "    var ti = 0u;",
             f"    for (var e = 0u; e < {PER_THREAD}u; e = e + 1u) {{",
             f"      let k = b0 + lid * {PER_THREAD}u + e;",
             "      if (k < r1) {",
             f"        let v = {val};",
             (f"        let vi = u32(B{slots[-1]}[{ii_off} + row * {R} + k]);" if has_index_in else "        let vi = k;"),
             "        " + combine("tv", "ti", "tv", "ti", "v", "vi"),
             "      }",
             "      lv[e] = tv;" + (" li[e] = ti;" if arg else ""),
             "    }",
             "    SV[lid] = tv;" + (" SI[lid] = ti;" if arg else ""),
             "    workgroupBarrier();",
             f"    for (var off = 1u; off < {WORKGROUP}u; off = off << 1u) {{",
             "      var o = SV[lid];" + (" var oi = SI[lid];" if arg else ""),
             "      if (lid >= off) { " + combine("o", "oi", "SV[lid - off]", "SI[lid - off]", "o", "oi") + " }",
             "      workgroupBarrier();",
             "      SV[lid] = o;" + (" SI[lid] = oi;" if arg else ""),
             "      workgroupBarrier();",
             "    }"]
    if not totals_only:
        body += [f"    var pv: {st} = carry;",
                 "    var pi = carryi;",
                 "    if (lid > 0u) { " + combine("pv", "pi", "carry", "carryi", "SV[lid - 1u]", "SI[lid - 1u]" if arg else "0u") + " }",
                 f"    for (var e = 0u; e < {PER_THREAD}u; e = e + 1u) {{",
                 f"      let k = b0 + lid * {PER_THREAD}u + e;",
                 "      if (k < r1) {",
                 f"        var rv: {st} = pv;",
                 "        var ri = pi;",
                 "        " + combine("rv", "ri", "pv", "pi", "lv[e]", "li[e]" if arg else "0u")]
        opos = f"({R} - 1u - k)" if reverse else "k"
        body += write("        ", "rv", "ri", f"ob + {opos} * {out_rs}", f"xb + {opos} * {x_rs}", wide)
        body += ["      }", "    }"]
    body += ["    " + combine("carry", "carryi", "carry", "carryi", f"SV[{WORKGROUP - 1}]", f"SI[{WORKGROUP - 1}]" if arg else "0u"),
             "    workgroupBarrier();",
             "  }"]
    if totals_only:
        body.append("  if (lid == 0u) {")
        body += write("    ", "carry", "carryi", f"{out_off} + w", f"{x_off} + w", False)
        body.append("  }")
    code = "\n".join(body)
    need = set()
    for h in ("inf", "isnan", "w", "wadd", "wmul", "wfits"):
        if f"tw_{h}(" in code:
            need.add(h)
    extra = ""
    if "tw_logaddexp" in code:
        need |= {"isnan", "isinf", "log1p", "exp"}
        extra = _LOGADDEXP + "\n"
    return ("\n".join(lines) + "\n" + helpers_source(need) + "\n" + extra +
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n" + code + "\n}\n")
