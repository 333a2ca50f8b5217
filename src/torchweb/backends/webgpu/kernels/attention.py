"""Fused scaled dot-product attention (FlashAttention-2 style): the L x S score matrix is never
materialized, only tiles of it in workgroup memory.

Forward: a workgroup per (batch entry, block of BQ queries). Q's block sits in workgroup memory;
K and V stream through it in tiles of BK keys. Each tile's scores go to a small BQ x BK array;
the threads of a query row then update its running max m, sum l and output accumulator (each
thread owns some output columns, in registers): acc = acc * exp(m_old - m) + exp(s - m) @ V.
At the end out = acc / l and the row's logsumexp m + log(l) is saved for the backward. A row
whose keys are all masked has l = 0: its output is 0 and its logsumexp -inf (PyTorch's CPU
result).

Backward (D = rowsum(dout * out) is computed by the caller):
    P = exp(S - lse), dP = dout V^T, dS = P * (dP - D)
    dV = P^T dout, dK = scale * dS^T Q      a workgroup per block of keys, query tiles streamed
    dQ = scale * dS K                       a workgroup per block of queries, key tiles streamed
so every output has one owner and no atomics are needed.

Tile sizes depend on the head dim bound DM (32, 64 or 128) so that the tiles stay within 16 KiB
of workgroup memory; BIG is the resident block, SMALL the streamed one.

Operands are read through their strides: batch dims (coalesced, any broadcast: stride 0), then
the row stride and the element stride. Outputs are contiguous over the flat batch index.
The mask is optional: bool (u32, 0 = masked out) or additive (the query's dtype).
"""

import struct

from .bindings import bind, declarations, kinds
from .elementwise import coalesce, param
from .skeleton import entry_point
from .wgsl import helpers_source, load, store

THREADS = 128
# DM -> (BIG, SMALL): workgroup floats stay under 4096 (16 KiB) in all three kernels
TILES = {32: (32, 8), 64: (16, 8), 128: (8, 4)}
MAX_HEAD = 128
MAX_LOOP = 65535    # lavapipe ends any loop after 65535 trips


def head_bound(E, Ev):
    d = max(E, Ev, 1)
    for dm in sorted(TILES):
        if d <= dm:
            return dm
    return None


def fits(L, S, E, Ev):
    dm = head_bound(E, Ev)
    if dm is None:
        return False
    big, small = TILES[dm]
    return -(-S // small) <= MAX_LOOP and -(-L // small) <= MAX_LOOP


def _layout(batch, tensors):
    """Coalesced batch shape and the params of each tensor: offset, batch strides, row stride,
    element stride (tensors: [*batch, rows, cols] views)."""
    nb = len(batch)
    shape, strides = coalesce(batch or (1,), [list(t._stride[:nb]) or [0] for t in tensors])
    words = []
    for t, st in zip(tensors, strides):
        words += [t._offset] + st + [t._stride[-2], t._stride[-1]]
    return shape, words


def _mask_kind(mask):
    if mask is None:
        return None
    return "bool" if mask.dtype.name == "bool" else "float"


def _head_params(NB, L, S, E, Ev, scale, nblocks):
    return [NB, L, S, E, Ev, struct.unpack("<I", struct.pack("<f", float(scale)))[0], nblocks, 0]


def _sizes(q, k, v):
    """(batch dims, their product NB, L, S, E, Ev, the head-size bound, its two tile sizes)."""
    batch = tuple(q.shape[:-2])
    L, E = q.shape[-2], q.shape[-1]
    S, Ev = k.shape[-2], v.shape[-1]
    NB = 1
    for s in batch:
        NB *= s
    dm = head_bound(E, Ev)
    big, small = TILES[dm]
    return batch, NB, L, S, E, Ev, dm, big, small


def forward(rt, out, lse, q, k, v, mask, causal, scale):
    """out [*B, L, Ev] (contiguous, q's dtype), lse [*B, L] (contiguous float32) from q [*B, L, E],
    k [*B, S, E], v [*B, S, Ev], mask None or [*B, L, S] (views, broadcast already)."""
    batch, NB, L, S, E, Ev, dm, big, small = _sizes(q, k, v)
    nblk = -(-L // big)
    tensors = [q, k, v] + ([mask] if mask is not None else [])
    bshape, words = _layout(batch, tensors)
    params = _head_params(NB, L, S, E, Ev, scale, nblk) + list(bshape) + words
    bufs, slots = bind(out, *tensors)
    bkinds = kinds(bufs)
    lse_slot = len(bufs)
    bufs.append((lse._storage.buffer_for_write(), lse._storage.size))
    bkinds.append("write")
    mk = _mask_kind(mask)
    storages = _storages(out.dtype.gpu_storage, tensors, slots)
    key = ("attn_fwd", dm, q.dtype.name, mk, mask.dtype.name if mask is not None else None,
           bool(causal), len(bshape), tuple(slots))
    nparams = len(params)

    def make_code():
        return _forward_source(dm, big, small, q.dtype, out.dtype, mk, mask.dtype if mask is not None else None,
                               causal, len(bshape), slots, storages, lse_slot, nparams)

    pid = rt.pipeline(key, make_code, bkinds)
    rt.dispatch(pid, rt.grid(NB * nblk), bufs, struct.pack(f"<{nparams}I", *params))


def backward(rt, dq, dkv, q, k, v, mask, dout, ld, causal, scale):
    """dq [*B, L, E] and dkv (dk [*B, S, E] then dv [*B, S, Ev], one contiguous buffer of q's
    dtype) from dout [*B, L, Ev] (contiguous) and ld (float32 [2, NB * L]: lse, then D)."""
    batch, NB, L, S, E, Ev, dm, big, small = _sizes(q, k, v)
    tensors = [q, k, v] + ([mask] if mask is not None else [])
    bshape, words = _layout(batch, tensors)
    mk = _mask_kind(mask)
    mdt = mask.dtype if mask is not None else None
    for kind, out, nblk in (("dkv", dkv, -(-S // big)), ("dq", dq, -(-L // big))):
        params = _head_params(NB, L, S, E, Ev, scale, nblk) + list(bshape) + words
        bufs, slots = bind(out, *(tensors + [dout, ld]))
        storages = _storages(out.dtype.gpu_storage, tensors + [dout, ld], slots)
        key = ("attn_bwd", kind, dm, q.dtype.name, mk, mdt.name if mdt is not None else None,
               bool(causal), len(bshape), tuple(slots))
        nparams = len(params)

        def make_code(kind=kind, slots=slots, storages=storages, nparams=nparams):
            return _backward_source(kind, dm, big, small, q.dtype, mk, mdt, causal, len(bshape),
                                    slots, storages, nparams)

        pid = rt.pipeline(key, make_code, kinds(bufs))
        rt.dispatch(pid, rt.grid(NB * nblk), bufs, struct.pack(f"<{nparams}I", *params))


def _storages(out_storage, tensors, slots):
    st = {0: out_storage}
    for t, s in zip(tensors, slots):
        st.setdefault(s, t.dtype.gpu_storage)
    return [st[i] for i in range(len(st))]


# -- WGSL -------------------------------------------------------------------------------------
def _common(nb, slots, has_mask):
    """Names of the params and WGSL lines computing each operand's batch offset (qo, ko, vo, mo)
    for the flat batch entry b."""
    L, S, E, Ev = param(1), param(2), param(3), param(4)
    shape = [param(8 + d) for d in range(nb)]
    base = 8 + nb
    names = ["q", "k", "v"] + (["m"] if has_mask else [])
    p = {}
    for t, n in enumerate(names):
        off = base + t * (nb + 3)
        p[n] = {"off": param(off), "bs": [param(off + 1 + d) for d in range(nb)],
                "rs": param(off + 1 + nb), "cs": param(off + 2 + nb), "buf": f"B{slots[t]}"}
    lines = [f"  var {n}o = {p[n]['off']};" for n in names]
    lines.append("  { var r = b;")
    for d in reversed(range(nb)):
        upd = " ".join(f"{n}o = {n}o + c * {p[n]['bs'][d]};" for n in names)
        lines.append(f"    {{ let c = r % {shape[d]}; r = r / {shape[d]}; {upd} }}")
    lines.append("  }")
    lines += [f"  let L = {L}; let S = {S}; let E = {E}; let Ev = {Ev};",
              f"  let scale = bitcast<f32>({param(5)});"]
    return p, lines


def _score(p, in_dtype, mk, mask_dtype, causal, qs, ks, DM):
    """WGSL computing `s` for query ii (row i of tile qs) and key jj (row j of tile ks): -inf
    where masked out or out of range."""
    cond = "ii < L && jj < S" + (" && jj <= ii" if causal else "")
    lines = ["      var s = -tw_inf();",
             f"      if ({cond}) {{",
             "        var d = 0.0;",
             f"        for (var e = 0u; e < E; e = e + 1u) {{ d = d + {qs}[i * {DM}u + e] * {ks}[j * {DM}u + e]; }}",
             "        s = d * scale;"]
    if mk is not None:
        m = p["m"]
        addr = f"{m['buf']}[mo + ii * {m['rs']} + jj * {m['cs']}]"
        if mk == "bool":
            lines.append(f"        if ({addr} == 0u) {{ s = -tw_inf(); }}")
        else:
            lines.append(f"        s = s + {load(addr, mask_dtype.gpu_storage, 'f32')};")
    lines.append("      }")
    return lines


def _load_tile(dst, t, start, count, width, in_dtype, DM, rows):
    """Rows start.. of operand t (p entry) into workgroup array dst (zeros past `count`)."""
    val = load(f"{t['buf']}[{t['o']} + (({start}) + r) * {t['rs']} + c * {t['cs']}]", in_dtype.gpu_storage, "f32")
    return [f"  for (var x = lid; x < {rows}u * {width}; x = x + {THREADS}u) {{",
            f"    let r = x / {width}; let c = x % {width};",
            f"    var val = 0.0; if (({start}) + r < {count}) {{ val = {val}; }}",
            f"    {dst}[r * {DM}u + c] = val;",
            "  }"]


def _header(slots, storages, nparams, extra_decl, shared):
    decl = declarations(nparams, storages)
    decl += extra_decl
    for name, size in shared:
        decl += f"\nvar<workgroup> {name}: array<f32, {size}>;"
    return decl


def _main(body, helpers):
    return helpers_source(helpers) + "\n" + entry_point(body, THREADS)


def _key_tiles(p, in_dtype, DM, first, rows, tile, causal):
    """WGSL lines opening the loop over the tiles of `tile` keys (into KS, VS) that the `rows`
    resident query rows from `first` attend to: all S keys, or with causal masking those up to
    the last resident row. The caller writes the loop's body and closes it."""
    lines = ["  var kend = S;"]
    if causal:
        lines.append(f"  kend = min(S, {first} + {rows}u);")
    lines += [f"  let nt = (kend + {tile - 1}u) / {tile}u;",
              "  for (var t = 0u; t < nt; t = t + 1u) {",
              f"  let j0 = t * {tile}u;",
              "  workgroupBarrier();"]
    lines += _load_tile("KS", p["k"], "j0", "S", "E", in_dtype, DM, tile)
    lines += _load_tile("VS", p["v"], "j0", "S", "Ev", in_dtype, DM, tile)
    return lines


def _isneginf(x):
    return f"(tw_isinf({x}) && {x} < 0.0)"


def _forward_source(DM, BQ, BK, in_dtype, out_dtype, mk, mask_dtype, causal, nb, slots, storages,
                    lse_slot, nparams):
    G = THREADS // BQ        # threads per query row
    NC = DM // G             # output columns per thread
    extra = f"\n@group(0) @binding({lse_slot + 1}) var<storage, read_write> B{lse_slot}: array<f32>;"
    head = _header(slots, storages, nparams, extra,
                   [("QS", BQ * DM), ("KS", BK * DM), ("VS", BK * DM), ("SS", BQ * BK)])
    p, common = _common(nb, slots, mk is not None)
    for n in p:
        p[n]["o"] = f"{n}o"
    body = ["  let w = wid.y * nwg.x + wid.x;",
            f"  if (w >= {param(0)} * {param(6)}) {{ return; }}",
            f"  let b = w / {param(6)}; let i0 = (w % {param(6)}) * {BQ}u;"] + common
    body += _load_tile("QS", p["q"], "i0", "L", "E", in_dtype, DM, BQ)
    body += [f"  let row = lid / {G}u; let grp = lid % {G}u; let ig = i0 + row;",
             f"  var m = -tw_inf(); var l = 0.0; var acc: array<f32, {NC}>;"]
    body += _key_tiles(p, in_dtype, DM, "i0", BQ, BK, causal)
    body += ["  workgroupBarrier();",
             f"    for (var x = lid; x < {BQ * BK}u; x = x + {THREADS}u) {{",
             f"      let i = x / {BK}u; let j = x % {BK}u; let ii = i0 + i; let jj = j0 + j;"]
    body += _score(p, in_dtype, mk, mask_dtype, causal, "QS", "KS", DM)
    body += ["      SS[x] = s;",
             "    }",
             "  workgroupBarrier();",
             "    var mt = -tw_inf();",
             f"    for (var j = 0u; j < {BK}u; j = j + 1u) {{ mt = tw_maxf(mt, SS[row * {BK}u + j]); }}",
             "    let mn = tw_maxf(m, mt);",
             f"    if (!{_isneginf('mn')}) {{",
             "      let alpha = tw_exp(m - mn);",
             f"      for (var c = 0u; c < {NC}u; c = c + 1u) {{ acc[c] = acc[c] * alpha; }}",
             "      var ps = 0.0;",
             f"      for (var j = 0u; j < {BK}u; j = j + 1u) {{",
             f"        let pj = tw_exp(SS[row * {BK}u + j] - mn);",
             "        ps = ps + pj;",
             f"        for (var c = 0u; c < {NC}u; c = c + 1u) {{ acc[c] = acc[c] + pj * VS[j * {DM}u + grp + c * {G}u]; }}",
             "      }",
             "      l = l * alpha + ps; m = mn;",
             "    }",
             "  }",
             "  if (ig < L) {",
             "    let ob = (b * L + ig) * Ev;",
             f"    for (var c = 0u; c < {NC}u; c = c + 1u) {{",
             f"      let col = grp + c * {G}u;",
             f"      if (col < Ev) {{ B0[ob + col] = {store('select(acc[c] / l, 0.0, l == 0.0)', 'f32', out_dtype)}; }}",
             "    }",
             f"    if (grp == 0u) {{ B{lse_slot}[b * L + ig] = select(m + tw_log(l), -tw_inf(), l == 0.0); }}",
             "  }"]
    return head + "\n" + _main(body, {"inf", "isinf", "maxf", "exp", "log"})


def _backward_source(kind, DM, BIG, SMALL, in_dtype, mk, mask_dtype, causal, nb, slots, storages, nparams):
    G = THREADS // BIG       # threads per resident row
    NC = DM // G
    nt = 4 if mk is not None else 3
    dslot, ldslot = f"B{slots[nt]}", f"B{slots[nt + 1]}"
    head = _header(slots, storages, nparams, "",
                   [("QS", (SMALL if kind == "dkv" else BIG) * DM), ("OS", (SMALL if kind == "dkv" else BIG) * DM),
                    ("KS", (BIG if kind == "dkv" else SMALL) * DM), ("VS", (BIG if kind == "dkv" else SMALL) * DM),
                    ("PS", BIG * SMALL), ("DS", BIG * SMALL),
                    ("LS", SMALL if kind == "dkv" else BIG), ("DD", SMALL if kind == "dkv" else BIG)])
    p, common = _common(nb, slots, mk is not None)
    for n in p:
        p[n]["o"] = f"{n}o"
    dout = {"buf": dslot, "o": "(b * L * Ev)", "rs": "Ev", "cs": "1u"}
    body = ["  let w = wid.y * nwg.x + wid.x;",
            f"  if (w >= {param(0)} * {param(6)}) {{ return; }}",
            f"  let b = w / {param(6)}; let r0 = (w % {param(6)}) * {BIG}u;"] + common
    body.append(f"  let NBL = {param(0)} * L;")
    body.append(f"  let row = lid / {G}u; let grp = lid % {G}u;")

    def load_ld(start, rows):
        return [f"  for (var x = lid; x < {rows}u; x = x + {THREADS}u) {{",
                f"    var a = 0.0; var d = 0.0; if (({start}) + x < L) {{ a = {ldslot}[b * L + ({start}) + x]; "
                f"d = {ldslot}[NBL + b * L + ({start}) + x]; }}",
                "    LS[x] = a; DD[x] = d;",
                "  }"]

    def query_rows(start, rows):
        """The query side of `rows` rows from start: Q, dout, lse and D into QS, OS, LS, DD."""
        return (_load_tile("QS", p["q"], start, "L", "E", in_dtype, DM, rows)
                + _load_tile("OS", dout, start, "L", "Ev", in_dtype, DM, rows) + load_ld(start, rows))

    def pairs(iq, jk, i0, j0):
        """P and dS for the tile's (query, key) pairs into PS, DS (index query * nk + key), between
        barriers (the tiles loaded before, PS and DS read after)."""
        nq, nk = (SMALL, BIG) if kind == "dkv" else (BIG, SMALL)
        lines = ["  workgroupBarrier();",
                 f"    for (var x = lid; x < {nq * nk}u; x = x + {THREADS}u) {{",
                 f"      let i = x / {nk}u; let j = x % {nk}u; let ii = {i0} + i; let jj = {j0} + j;"]
        lines += _score(p, in_dtype, mk, mask_dtype, causal, "QS", "KS", DM)
        lines += ["      var pr = 0.0; var dsv = 0.0;",
                  f"      if (!{_isneginf('s')}) {{",
                  "        pr = tw_exp(s - LS[i]);",
                  "        var dp = 0.0;",
                  f"        for (var e = 0u; e < Ev; e = e + 1u) {{ dp = dp + OS[i * {DM}u + e] * VS[j * {DM}u + e]; }}",
                  "        dsv = pr * (dp - DD[i]);",
                  "      }",
                  "      PS[x] = pr; DS[x] = dsv;",
                  "    }",
                  "  workgroupBarrier();"]
        return lines

    if kind == "dkv":
        # resident: keys r0.. (K, V); streamed: query tiles (Q, dout, lse, D)
        body += _load_tile("KS", p["k"], "r0", "S", "E", in_dtype, DM, BIG)
        body += _load_tile("VS", p["v"], "r0", "S", "Ev", in_dtype, DM, BIG)
        body += [f"  var dk: array<f32, {NC}>; var dv: array<f32, {NC}>;",
                 f"  let nt = (L + {SMALL - 1}u) / {SMALL}u;",
                 "  var t0 = 0u;"]
        if causal:
            body.append(f"  t0 = r0 / {SMALL}u;")   # queries before the first key see none of them
        body += ["  for (var t = t0; t < nt; t = t + 1u) {",
                 f"  let i0 = t * {SMALL}u;",
                 "  workgroupBarrier();"]
        body += query_rows("i0", SMALL)
        body += pairs("i", "j", "i0", "r0")
        body += [f"    for (var i = 0u; i < {SMALL}u; i = i + 1u) {{",
                 f"      let pr = PS[i * {BIG}u + row]; let dsv = DS[i * {BIG}u + row];",
                 f"      for (var c = 0u; c < {NC}u; c = c + 1u) {{",
                 f"        let col = grp + c * {G}u;",
                 f"        dv[c] = dv[c] + pr * OS[i * {DM}u + col];",
                 f"        dk[c] = dk[c] + dsv * QS[i * {DM}u + col];",
                 "      }",
                 "    }",
                 "  }",
                 "  let jg = r0 + row;",
                 "  if (jg < S) {",
                 f"    for (var c = 0u; c < {NC}u; c = c + 1u) {{",
                 f"      let col = grp + c * {G}u;",
                 f"      if (col < E) {{ B0[(b * S + jg) * E + col] = {store('dk[c] * scale', 'f32', in_dtype)}; }}",
                 f"      if (col < Ev) {{ B0[NB_SE + (b * S + jg) * Ev + col] = {store('dv[c]', 'f32', in_dtype)}; }}",
                 "    }",
                 "  }"]
        body.insert(body.index(f"  let NBL = {param(0)} * L;") + 1, f"  let NB_SE = {param(0)} * S * E;")
    else:
        # resident: queries r0.. (Q, dout, lse, D); streamed: key tiles (K, V)
        body += query_rows("r0", BIG)
        body += [f"  var dq: array<f32, {NC}>;"]
        body += _key_tiles(p, in_dtype, DM, "r0", BIG, SMALL, causal)
        body += pairs("i", "j", "r0", "j0")
        body += [f"    for (var j = 0u; j < {SMALL}u; j = j + 1u) {{",
                 f"      let dsv = DS[row * {SMALL}u + j];",
                 f"      for (var c = 0u; c < {NC}u; c = c + 1u) {{ dq[c] = dq[c] + dsv * KS[j * {DM}u + grp + c * {G}u]; }}",
                 "    }",
                 "  }",
                 "  let ig = r0 + row;",
                 "  if (ig < L) {",
                 f"    for (var c = 0u; c < {NC}u; c = c + 1u) {{",
                 f"      let col = grp + c * {G}u;",
                 f"      if (col < E) {{ B0[(b * L + ig) * E + col] = {store('dq[c] * scale', 'f32', in_dtype)}; }}",
                 "    }",
                 "  }"]
    return head + "\n" + _main(body, {"inf", "isinf", "exp"})
