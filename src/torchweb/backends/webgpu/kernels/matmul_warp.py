"""Warp-tiled matmul kernels (the SGEMM layout of CUTLASS's SIMT kernels and Simon Boehm's
"warptiling" kernel), generated from a matmul_tiles.Variant with `ly` set.

A workgroup of warps[0] x warps[1] warps (32 invocations each) computes a BM x BN tile; each
warp a WM x WN part of it, its lanes laid out ly x (32 / ly); each lane rm x rn outputs made of
(rm/4) x (rn/4) 4x4 blocks spread over the warp's part, so a K step reads rm/4 + rn/4 vec4s
from workgroup memory that the warp shares (ly or 32/ly distinct vec4s per read: one
transaction) for rm * rn multiply-adds.

What differs from matmul_tiles' kernels besides the layout:
- no bounds test in the main loop: the rows of A and columns of B a thread reads are clamped
  into the matrix once (what they feed is never stored), and only a last, partial K step tests k;
- two workgroup buffers in separate arrays with the loop unrolled twice, and 2-D arrays indexed
  [k][i]: the k index is a constant and i the same per thread every step, so the index clamps
  the WGSL compiler adds stay out of the inner loop;
- a tile stored transposed (A read along K, or B along K, as in x @ W^T) gets `pad` vec4s more
  per row, which spreads its scalar stores over the memory banks.
The next K step is read into registers while the current one is multiplied (one barrier a step).
Parameters, batches, split-K and grids are matmul_tiles._plan's, shared with every variant.
"""

from .matmul_wgsl import cv, header, lit, store_acc


def tile(v):
    """(rows, columns) of the output one workgroup of warp variant v computes."""
    return v.warps[0] * v.ly * v.rm, v.warps[1] * (32 // v.ly) * v.rn


def storage_bytes(v):
    """Workgroup memory of warp variant v at most (f32: 16 bytes a vec4, both tiles padded)."""
    BM, BN = tile(v)
    return 2 * v.kt * (BM // 4 + BN // 4 + 2 * v.pad) * 16


def source(v, ast, bst, odt, T, nb, nparams, sa, sb, nbuf, amode, bmode, ovec=False, epi=False):
    BM, BN = tile(v)
    KT, LY = v.kt, v.ly
    LX = 32 // LY
    WGM, WGN = v.warps
    NT = 32 * WGM * WGN
    WM, WN = LY * v.rm, LX * v.rn
    MI, NI = v.rm // 4, v.rn // 4
    assert v.rm % 4 == 0 and v.rn % 4 == 0 and 32 % LY == 0
    decl, P, pre = header(ast, bst, odt, T, nb, nparams, sa, sb, nbuf, amode, bmode, ovec)
    M, N, K = P.M, P.N, P.K
    zero = lit(T, 0)
    V = f"vec4<{T}>"

    def plan(name, mode, W, st, sdim, skk, base, lim, slot):
        """Loads of one K step of A (name 'a': W = BM rows x KT) or B ('b': KT x W = BN):
        (row length of its workgroup array in vec4s, setup lines, register declarations,
        loads (unguarded, guarded against K), stores into workgroup array `X`)."""
        vec = mode.endswith("4")
        along_k = mode.startswith("k")
        count = W * KT // (4 if vec else 1)
        per = -(-count // NT)
        S = W // 4 + (v.pad if along_k else 0)
        setup, regs, fast, slow, put = [], [], [], [], []
        d0 = "row0" if name == "a" else "col0"
        kx = "ka" if name == "a" else "kb"
        for j in range(per):
            e = f"(lid + {j * NT}u)"
            partial = (j + 1) * NT > count   # threads past `count` load and store nothing
            if along_k:     # consecutive threads: consecutive k (coalesced along K)
                kw = KT // 4 if vec else KT
                d, k = f"{e} / {kw}u", f"({e} % {kw}u)" + (" * 4u" if vec else "")
            else:           # consecutive threads: consecutive rows of A / columns of B
                dw = W // 4 if vec else W
                k, d = f"{e} / {dw}u", f"({e} % {dw}u)" + (" * 4u" if vec else "")
            last = "4u" if vec and not along_k else "1u"
            n = f"{name}{j}"
            setup.append(f"  let {n}d = {d}; let {n}k = {k};")
            setup.append(f"  let {n}p = {base} + min({d0} + {n}d, {lim} - {last}) * {sdim} + {n}k * {skk};")
            ok = f"{n}ok"
            if partial:
                setup.append(f"  let {ok} = {e} < {count}u;")
            regs.append(f"  var r{n} = {V if vec else T}({zero});")
            src = cv(f"B{slot}[({n}p + {kx}) / 4u]", st, T, True) if vec else cv(f"B{slot}[{n}p + {kx}]", st, T)
            g = f"{ok} && " if partial else ""
            fast.append(f"      if ({ok}) {{ r{n} = {src}; }}" if partial else f"      r{n} = {src};")
            slow.append(f"      r{n} = {V if vec else T}({zero}); if ({g}k1 + {n}k < {K}) {{ r{n} = {src}; }}")
            if vec and along_k:
                st_ = " ".join(f"X[{n}k + {q}u][{n}d / 4u][{n}d % 4u] = r{n}[{q}];" for q in range(4))
            elif vec:
                st_ = f"X[{n}k][{n}d / 4u] = r{n};"
            else:
                st_ = f"X[{n}k][{n}d / 4u][{n}d % 4u] = r{n};"
            put.append(f"      if ({ok}) {{ {st_} }}" if partial else f"      {st_}")
        return S, setup, regs, fast, slow, put

    SA, asu, areg, afast, aslow, aput = plan("a", amode, BM, ast, P.sam, P.sak, "ab", M, sa)
    SB, bsu, breg, bfast, bslow, bput = plan("b", bmode, BN, bst, P.sbn, P.sbk, "bb", N, sb)
    nl = "\n"

    def load(k1):
        """Read the K step at k1 into the registers: unguarded where the whole step is in K."""
        return f"""    {{ let k1 = {k1}; let ka = k1 * {P.sak}; let kb = k1 * {P.sbk};
     if (k1 + {KT}u <= {K}) {{
{nl.join(afast + bfast)}
     }} else {{
{nl.join(aslow + bslow)}
     }}
    }}"""

    def put(xa, xb):
        return nl.join(p.replace("X[", xa + "[") for p in aput) + nl + nl.join(p.replace("X[", xb + "[") for p in bput)

    def compute(xa, xb):
        out = []
        for kk in range(KT):
            s = ["    {"]
            s += [f"      let a{i} = {xa}[{kk}][am + {i * LY}u];" for i in range(MI)]
            s += [f"      let b{j} = {xb}[{kk}][bn + {j * LX}u];" for j in range(NI)]
            s += [f"      acc{4 * i + r}_{j} = acc{4 * i + r}_{j} + a{i}[{r}] * b{j};"
                  for i in range(MI) for r in range(4) for j in range(NI)]
            s.append("    }")
            out.append(nl.join(s))
        return nl.join(out)

    def step(cur, nxt):
        return f"""    if (k0 >= kend) {{ break; }}
    let kn{cur} = k0 + {KT}u;
    let more{cur} = kn{cur} < kend;
    if (more{cur}) {{
{load(f"kn{cur}")}
    }}
{compute(f"AS{cur}", f"BS{cur}")}
    if (more{cur}) {{
{put(f"AS{nxt}", f"BS{nxt}")}
    }}
    workgroupBarrier();
    k0 = kn{cur};"""

    accs = [f"  var acc{i}_{j} = {V}({zero});" for i in range(4 * MI) for j in range(NI)]
    rows = []
    for i in range(MI):
        for r in range(4):
            for j in range(NI):
                st_ = store_acc(f"acc{4 * i + r}_{j}", ovec, odt, T, N, epi)
                rows.append(f"""  {{ let gr = row0 + wr + {i * LY * 4 + r}u; let gc = col0 + wc + {j * LX * 4}u;
    if (gr < {M}) {{
      let o = {P.o_off} + s * {P.sstride} + (bi * {M} + gr) * {N} + gc;
{st_}
    }}
  }}""")
    arrays = "\n".join(f"var<workgroup> {x}{c}: array<array<{V}, {S}>, {KT}>;"
                       for c in "01" for x, S in (("AS", SA), ("BS", SB)))
    return decl + f"""
{arrays}   // [k][m / 4] and [k][n / 4]: A's tile transposed, B's
@compute @workgroup_size({NT})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
  let row0 = (wid.y + {P.ybase}) * {BM}u; let col0 = (wid.x + {P.xbase}) * {BN}u;
  let warp = lid / 32u; let lane = lid % 32u;
  let wr = (warp / {WGN}u) * {WM}u + (lane / {LX}u) * 4u;   // this lane's first row and column
  let wc = (warp % {WGN}u) * {WN}u + (lane % {LX}u) * 4u;   // in the tile
  let am = wr / 4u; let bn = wc / 4u;
{nl.join(pre)}
{nl.join(asu)}
{nl.join(bsu)}
{nl.join(areg)}
{nl.join(breg)}
{nl.join(accs)}
  var k0 = kbeg;
  if (k0 < kend) {{
{load("k0")}
{put("AS0", "BS0")}
  }}
  workgroupBarrier();
  loop {{
{step(0, 1)}
{step(1, 0)}
  }}
{nl.join(rows)}
}}
"""
