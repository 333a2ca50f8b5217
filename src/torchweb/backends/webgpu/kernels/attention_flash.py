"""Register-tiled FlashAttention-2 for float32, head dims up to 64, no mask (causal or not): the
kernels that beat the composite softmax(q @ k^T) @ v at nanoGPT's sizes (kernels/attention.py
keeps masks, other dtypes and wider heads).

Every kernel runs 128 threads over a block of 64 rows (queries, or keys for dK/dV): thread
(row r = lid % 64, half h = lid / 64) owns half of its row's head dim in registers, as vec4s.
The streamed tiles sit in workgroup memory as vec4 rows; the 32 threads of a subgroup-sized
group share h and read the same tile row (a broadcast). A dot product over the head dim is two
halves: each thread writes its partial sums for the tile to workgroup memory and, after a
barrier, adds its partner's (no subgroup operations needed, valid for Tint and naga alike).

    forward  (a row per query): s = q.k, online softmax, acc += p v; out = acc / l, lse = m + log l
    dK, dV   (a row per key, query tiles streamed): p = exp(s - lse), ds = p (dP - D),
             dv += p dout, dk += ds q
    dQ       (a row per query, key tiles streamed): dq += ds k
With causal masking the tiles past a block's last row (forward, dQ) or before its first
(dK, dV) are skipped. Scores use `scale` once, on q (forward, dQ) or the sum (dK, dV).
"""

import struct

from .attention import MAX_LOOP, _common, _head_params, _layout
from .bindings import bind, declarations, kinds
from .skeleton import entry_point
from .wgsl import helpers_source

THREADS = 128
ROWS = 64           # rows of a block: two threads each
# Tile rows, timed on an H200 at B16 x 6 heads, T 256-512 (bench/attention_flash.py --kernels):
# forward key tiles (K, V and the partial scores), backward tiles by causal (two tiles and two
# partial arrays: 12 KiB at 8 rows, DM 64)
FWD_TILE = 8
BWD_TILE = {True: 8, False: 4}


def head_bound(E, Ev):
    d = max(E, Ev, 1)
    return 32 if d <= 32 else 64 if d <= 64 else None


def fits(L, S, E, Ev, masked, dtype):
    """Whether these kernels take the problem: float32, no mask, head dims up to 64."""
    return (dtype == "float32" and not masked and head_bound(E, Ev) is not None
            and -(-max(L, S) // min(BWD_TILE.values())) <= MAX_LOOP)


def _sizes(q, k, v):
    batch = tuple(q.shape[:-2])
    NB = 1
    for s in batch:
        NB *= s
    L, E, S, Ev = q.shape[-2], q.shape[-1], k.shape[-2], v.shape[-1]
    return batch, NB, L, S, E, Ev, head_bound(E, Ev)


def forward(rt, out, lse, q, k, v, causal, scale):
    """out [*B, L, Ev] and lse [*B, L] (contiguous float32) from views q, k, v (broadcast)."""
    batch, NB, L, S, E, Ev, dm = _sizes(q, k, v)
    nblk = -(-L // ROWS)
    bshape, words = _layout(batch, [q, k, v])
    params = _head_params(NB, L, S, E, Ev, scale, nblk) + list(bshape) + words
    bufs, slots = bind(out, q, k, v)
    bkinds = kinds(bufs)
    lse_slot = len(bufs)
    bufs.append((lse._storage.buffer_for_write(), lse._storage.size))
    bkinds.append("write")
    n = len(params)
    key = ("flash_fwd", dm, bool(causal), len(bshape), tuple(slots), FWD_TILE)
    pid = rt.pipeline(key, lambda: _forward_source(dm, causal, len(bshape), slots, lse_slot, n), bkinds)
    rt.dispatch(pid, rt.grid(NB * nblk), bufs, struct.pack(f"<{n}I", *params))


def backward(rt, dq, dkv, q, k, v, dout, ld, causal, scale, which=("dkv", "dq")):
    """dq [*B, L, E] and dkv (dk [*B, S, E] then dv [*B, S, Ev]) from dout [*B, L, Ev]
    (contiguous) and ld (float32 [2, NB * L]: lse, then D = rowsum(dout * out)); `which`
    kernels only (bench/attention_flash.py times them apart)."""
    batch, NB, L, S, E, Ev, dm = _sizes(q, k, v)
    bshape, words = _layout(batch, [q, k, v])
    for kind, out, nblk in (("dkv", dkv, -(-S // ROWS)), ("dq", dq, -(-L // ROWS))):
        if kind not in which:
            continue
        params = _head_params(NB, L, S, E, Ev, scale, nblk) + list(bshape) + words
        bufs, slots = bind(out, q, k, v, dout, ld)
        n = len(params)
        key = ("flash_bwd", kind, dm, bool(causal), len(bshape), tuple(slots), BWD_TILE[bool(causal)])

        def make_code(kind=kind, slots=slots, n=n):
            return _backward_source(kind, dm, causal, len(bshape), slots, n)

        pid = rt.pipeline(key, make_code, kinds(bufs))
        rt.dispatch(pid, rt.grid(NB * nblk), bufs, struct.pack(f"<{n}I", *params))


# -- WGSL -------------------------------------------------------------------------------------
def _head(nparams, nslots, extra, shared):
    decl = declarations(nparams, ["f32"] * nslots) + extra
    for name, typ, size in shared:
        decl += f"\nvar<workgroup> {name}: array<{typ}, {size}>;"
    return decl


def _prologue(nb, slots, rows_of):
    """Block b / first row r0, the operands' offsets and this thread's row and half."""
    p, common = _common(nb, slots, False)
    return p, ["  let w = wid.y * nwg.x + wid.x;",
               "  if (w >= P[0][0] * P[1][2]) { return; }",
               "  let b = w / P[1][2]; let r0 = (w % P[1][2]) * 64u;"] + common + [
               "  let r = lid % 64u; let h = lid / 64u;",
               f"  let row = r0 + r; let live = row < {rows_of};"]


def _own(name, t, rows_of, cols, HV, scale=""):
    """This thread's half row of operand t (a dict with buf, o, rs, cs) into vec4 registers."""
    lines = [f"  var {name}: array<vec4<f32>, {HV}>;"]
    for c in range(HV):
        comps = []
        for e in range(4):
            col = f"(h * {HV * 4}u + {4 * c + e}u)"
            comps.append(f"select(0.0, {t['buf']}[{t['o']} + min(row, {rows_of} - 1u) * {t['rs']} "
                         f"+ min({col}, {cols} - 1u) * {t['cs']}], live && {col} < {cols})")
        lines.append(f"  {name}[{c}] = vec4<f32>({', '.join(comps)}){scale};")
    return lines


def _tile(dst, t, start, count, cols, rows, DM):
    """Rows start.. of operand t into the vec4 array dst (zeros past count rows, cols columns)."""
    D4 = DM // 4
    comps = []
    for e in range(4):
        col = f"(c4 * 4u + {e}u)"
        comps.append(f"select(0.0, {t['buf']}[{t['o']} + min(rr, {count} - 1u) * {t['rs']} + min({col}, {cols} - 1u) * {t['cs']}], "
                     f"ok && {col} < {cols})")
    return [f"  for (var x = lid; x < {rows * D4}u; x = x + {THREADS}u) {{",
            f"    let rr = ({start}) + x / {D4}u; let c4 = x % {D4}u; let ok = rr < {count};",
            f"    {dst}[x] = vec4<f32>({', '.join(comps)});",
            "  }"]


def _dot(reg, arr, j, HV, D4):
    """Partial dot product of register half-row reg with row j of tile arr (this thread's half)."""
    terms = [f"dot({reg}[{c}], {arr}[{j} * {D4}u + h * {HV}u + {c}u])" for c in range(HV)]
    return " + ".join(terms)


def _axpy(acc, a, arr, j, HV, D4):
    return [f"      {acc}[{c}] = {acc}[{c}] + {a} * {arr}[{j} * {D4}u + h * {HV}u + {c}u];" for c in range(HV)]


def _stream(var, end, T, loads, a, b, HV, D4):
    """WGSL lines opening the loop over tiles of T rows (u32 `var` declared before, up to end):
    the tile loads, then this thread's partial dot products with each row: of register half-row
    a with AS's into SP, of b with BS's into DP (b None: none), between barriers. The caller
    writes the rest of the loop's body and closes it."""
    lines = [f"  for (; {var} < {end}; {var} = {var} + {T}u) {{", "    workgroupBarrier();"]
    lines += loads + ["    workgroupBarrier();"]
    for j in range(T):
        lines.append(f"    SP[{j}u * {THREADS}u + lid] = {_dot(a, 'AS', f'{j}u', HV, D4)};")
        if b is not None:
            lines.append(f"    DP[{j}u * {THREADS}u + lid] = {_dot(b, 'BS', f'{j}u', HV, D4)};")
    return lines + ["    workgroupBarrier();"]


def _write(acc, buf, base, cols, HV, factor=""):
    lines = []
    for c in range(HV):
        for e in range(4):
            col = f"(h * {HV * 4}u + {4 * c + e}u)"
            lines.append(f"    if ({col} < {cols}) {{ {buf}[{base} + {col}] = {acc}[{c}][{e}]{factor}; }}")
    return lines


def _forward_source(DM, causal, nb, slots, lse_slot, nparams):
    HV, D4, T = DM // 8, DM // 4, FWD_TILE
    extra = f"\n@group(0) @binding({lse_slot + 1}) var<storage, read_write> B{lse_slot}: array<f32>;"
    head = _head(nparams, max(slots) + 1, extra,
                 [("AS", "vec4<f32>", T * D4), ("BS", "vec4<f32>", T * D4), ("SP", "f32", T * THREADS)])
    p, body = _prologue(nb, slots, "L")
    for n in p:
        p[n]["o"] = f"{n}o"
    body += _own("qr", p["q"], "L", "E", HV, " * scale")
    body += [f"  var acc: array<vec4<f32>, {HV}>;",
             f"  var m = -3.0e38; var l = 0.0; var s: array<f32, {T}>;",
             "  var kend = S;"]
    if causal:
        body.append("  kend = min(S, r0 + 64u);")
    loads = _tile("AS", p["k"], "j0", "S", "E", T, DM) + _tile("BS", p["v"], "j0", "S", "Ev", T, DM)
    body += ["  var j0 = 0u;"] + _stream("j0", "kend", T, ["  " + x for x in loads], "qr", None, HV, D4)
    body.append("    var mt = m;")
    keep = "j0 + {j}u < S" + (" && j0 + {j}u <= row" if causal else "")
    for j in range(T):
        body.append(f"    s[{j}] = select(-3.0e38, SP[{j}u * {THREADS}u + r] + SP[{j}u * {THREADS}u + r + 64u], "
                    f"{keep.format(j=j)}); mt = max(mt, s[{j}]);")
    body.append("    let alpha = exp(m - mt); m = mt; l = l * alpha;")
    body += [f"    acc[{c}] = acc[{c}] * alpha;" for c in range(HV)]
    for j in range(T):
        body.append(f"    {{ let pj = select(0.0, exp(s[{j}] - mt), s[{j}] > -1.0e38); l = l + pj;")
        body += _axpy("acc", "pj", "BS", f"{j}u", HV, D4)
        body.append("    }")
    body += ["  }",
             "  if (live) {",
             "    let inv = select(1.0 / l, 0.0, l == 0.0);"]
    body += _write("acc", "B0", "(b * L + row) * Ev", "Ev", HV, " * inv")
    body += [f"    if (h == 0u) {{ B{lse_slot}[b * L + row] = select(m + log(l), -tw_inf(), l == 0.0); }}",
             "  }"]
    return head + "\n" + helpers_source({"inf"}) + "\n" + entry_point(body, THREADS)


def _backward_source(kind, DM, causal, nb, slots, nparams):
    HV, D4, T = DM // 8, DM // 4, BWD_TILE[bool(causal)]
    dslot, ldslot = f"B{slots[3]}", f"B{slots[4]}"
    head = _head(nparams, max(slots) + 1, "",
                 [("AS", "vec4<f32>", T * D4), ("BS", "vec4<f32>", T * D4),
                  ("SP", "f32", T * THREADS), ("DP", "f32", T * THREADS), ("LS", "f32", T), ("DD", "f32", T)])
    p, body = _prologue(nb, slots, "S" if kind == "dkv" else "L")
    for n in p:
        p[n]["o"] = f"{n}o"
    dout = {"buf": dslot, "o": "(b * L * Ev)", "rs": "Ev", "cs": "1u"}
    body.append("  let NBL = P[0][0] * L;")
    if kind == "dkv":
        # own: a key's k, v; streamed: query tiles (AS = q, BS = dout, LS = lse, DD = D)
        body += _own("ka", p["k"], "S", "E", HV) + _own("va", p["v"], "S", "Ev", HV)
        body += [f"  var dk: array<vec4<f32>, {HV}>; var dv: array<vec4<f32>, {HV}>;",
                 "  var i0 = 0u;"]
        if causal:
            body.append(f"  i0 = (r0 / {T}u) * {T}u;")   # queries before the first key see none of them
        loads = _tile("AS", p["q"], "i0", "L", "E", T, DM) + _tile("BS", dout, "i0", "L", "Ev", T, DM)
        loads = ["  " + x for x in loads] + [
            f"    if (lid < {T}u) {{ let ii = min(i0 + lid, L - 1u); LS[lid] = {ldslot}[b * L + ii]; "
            f"DD[lid] = {ldslot}[NBL + b * L + ii]; }}"]
        body += _stream("i0", "L", T, loads, "ka", "va", HV, D4)
        keep = "i0 + {i}u < L" + (" && row <= i0 + {i}u" if causal else "")
        for i in range(T):
            o = f"{i}u * {THREADS}u + r"
            body += [f"    {{ let sc = (SP[{o}] + SP[{o} + 64u]) * scale;",
                     f"      let pr = select(0.0, exp(sc - LS[{i}]), {keep.format(i=i)});",
                     f"      let ds = pr * (DP[{o}] + DP[{o} + 64u] - DD[{i}]);"]
            body += _axpy("dv", "pr", "BS", f"{i}u", HV, D4) + _axpy("dk", "ds", "AS", f"{i}u", HV, D4)
            body.append("    }")
        body += ["  }",
                 "  if (live) {"]
        body += _write("dk", "B0", "(b * S + row) * E", "E", HV, " * scale")
        body += _write("dv", "B0", "P[0][0] * S * E + (b * S + row) * Ev", "Ev", HV)
        body.append("  }")
    else:
        # own: a query's q (scaled), dout, lse, D; streamed: key tiles (AS = k, BS = v)
        body += _own("qa", p["q"], "L", "E", HV, " * scale") + _own("oa", dout, "L", "Ev", HV)
        body += [f"  var dq: array<vec4<f32>, {HV}>;",
                 "  let ir = min(row, L - 1u);",
                 f"  let lse = {ldslot}[b * L + ir]; let dd = {ldslot}[NBL + b * L + ir];",
                 "  var kend = S;"]
        if causal:
            body.append("  kend = min(S, r0 + 64u);")
        loads = _tile("AS", p["k"], "j0", "S", "E", T, DM) + _tile("BS", p["v"], "j0", "S", "Ev", T, DM)
        body += ["  var j0 = 0u;"] + _stream("j0", "kend", T, ["  " + x for x in loads], "qa", "oa", HV, D4)
        keep = "j0 + {j}u < S" + (" && j0 + {j}u <= row" if causal else "")
        for j in range(T):
            o = f"{j}u * {THREADS}u + r"
            body += [f"    {{ let pr = select(0.0, exp(SP[{o}] + SP[{o} + 64u] - lse), {keep.format(j=j)});",
                     f"      let ds = pr * (DP[{o}] + DP[{o} + 64u] - dd);"]
            body += _axpy("dq", "ds", "AS", f"{j}u", HV, D4)
            body.append("    }")
        body += ["  }",
                 "  if (live) {"]
        body += _write("dq", "B0", "(b * L + row) * E", "E", HV, " * scale")
        body.append("  }")
    return head + "\n" + helpers_source({"inf"}) + "\n" + entry_point(body, THREADS)
