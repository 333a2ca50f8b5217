"""Linear layers with packed weights: out[m, n] = scale[n] * sum_k x[m, k] * q[n, k] (+ bias[n]),
the weight q unpacked inside the kernel (never written out as floats). Three formats (`fmt`):

- "int8": int8 weights with a scale per output channel, 4 per 32-bit word, little-endian (the word's
  byte j is q[n, 4w + j]); extractBits on an i32 sign-extends, so a byte becomes its int8 value
  in one call.
- "bfloat16": no scale, 2 per word (the low half is q[n, 2w]): a half shifted to the top of a
  word is its float32 value.
- "float16": no scale, 2 per word, laid out as bfloat16's: WGSL's core unpack2x16float gives
  the pair as f32, so no 'shader-f16' is needed (Chrome on NVIDIA has none without a flag).
Rows are padded to a whole number of words with zeros: the packed words' bytes are the
int8 (or half) matrix's bytes, as PyTorch lays them out.

Two kernels:
- gemv, for few rows of x (token-by-token decoding: M <= GEMV_MAX_M): memory-bound on the
  weight, so each workgroup reads ROWS weight rows once, its 64 threads taking consecutive
  words (coalesced) for all M rows of x at once, then a tree sum in workgroup memory. Where
  barriers are costly (SwiftShader), a thread per output channel with no barrier instead.
- tiled, for prompts and batches: 64x64 output tiles, 4x4 per thread, K in steps of 16; the
  step's 64 weight rows x 4 words are unpacked into workgroup memory as f32.
Both compute in f32 and apply the per-channel scale once at the end.
"""

import struct

from .matmul_gemv import ROWS, WG, rows_body   # weight rows per gemv workgroup, its threads
from .wgsl import load, store

GEMV_MAX_M = 4
PER_WORD = {"int8": 4, "bfloat16": 2, "float16": 2}   # weights a 32-bit word holds, by format
TILE = 64
TK = 16


def _decls(out_st, x_st, s_st, b_st, has_bias, nparams):
    lines = ["enable f16;"] if "f16" in (out_st, x_st, s_st, b_st) else []
    lines += [f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;",
              f"@group(0) @binding(1) var<storage, read_write> OUT: array<{out_st}>;",
              f"@group(0) @binding(2) var<storage, read> X: array<{x_st}>;",
              "@group(0) @binding(3) var<storage, read> W: array<i32>;"]
    slot = 4
    if s_st is not None:
        lines.append(f"@group(0) @binding({slot}) var<storage, read> S: array<{s_st}>;")
        slot += 1
    if has_bias:
        lines.append(f"@group(0) @binding({slot}) var<storage, read> BIAS: array<{b_st}>;")
    return "\n".join(lines) + "\n"


# uniform words: M, N, K, KW (words per weight row), x offset, weight offset (words), scale
# offset, bias offset, out offset, out's row stride (N, or more for a block of its columns)
_M, _N, _K, _KW, _XO, _WO, _SO, _BO, _OO, _LDO = (f"P[{i // 4}][{i % 4}]" for i in range(10))
_NPARAMS = 10


def _unpack(word, fmt):
    """The weights of a packed word (PER_WORD[fmt] of them) as a vec<per><f32>."""
    if fmt == "float16":
        return f"unpack2x16float(u32({word}))"
    if fmt == "bfloat16":
        return f"vec2<f32>(bitcast<f32>(u32({word}) << 16u), bitcast<f32>(u32({word}) & 0xffff0000u))"
    return (f"vec4<f32>(f32(extractBits({word}, 0u, 8u)), f32(extractBits({word}, 8u, 8u)), "
            f"f32(extractBits({word}, 16u, 8u)), f32(extractBits({word}, 24u, 8u)))")


def _xs(x_st, m, k, per):
    """x[m, k..k+per-1] as a vec<per><f32>, zero past K (the padded weights are zero, but x past
    its row may be inf or NaN)."""
    parts = [f"select(0.0, {load(f'X[{_XO} + {m} * {_K} + min({k} + {j}u, {_K} - 1u)]', x_st, 'f32')}, "
             f"{k} + {j}u < {_K})" for j in range(per)]
    return f"vec{per}<f32>(" + ", ".join(parts) + ")"


def _epilogue(acc, n, s_st, b_st, has_bias):
    v = acc if s_st is None else f"{acc} * {load(f'S[{_SO} + {n}]', s_st, 'f32')}"
    if has_bias:
        v += f" + {load(f'BIAS[{_BO} + {n}]', b_st, 'f32')}"
    return v


def _gemv_code(mt, fmt, out_dtype, x_st, s_st, b_st, has_bias, per_thread):
    out_st, per = out_dtype.gpu_storage, PER_WORD[fmt]
    head = _decls(out_st, x_st, s_st, b_st, has_bias, _NPARAMS)
    if per_thread:   # a thread per output channel, no barrier (SwiftShader)
        body = [f"  let n = (wid.y * nwg.x + wid.x) * {WG}u + lid;", f"  if (n >= {_N}) {{ return; }}"]
        body += [f"  var a{m} = 0.0;" for m in range(mt)]
        body += [f"  for (var kw = 0u; kw < {_KW}; kw = kw + 1u) {{",
                 f"    let w = {_unpack(f'W[{_WO} + n * {_KW} + kw]', fmt)};", f"    let k = kw * {per}u;"]
        body += [f"    a{m} = a{m} + dot(w, {_xs(x_st, f'{m}u', 'k', per)});" for m in range(mt)]
        body += ["  }"]
        body += [f"  OUT[{_OO} + {m}u * {_LDO} + n] = {store(_epilogue(f'a{m}', 'n', s_st, b_st, has_bias), 'f32', out_dtype)};"
                 for m in range(mt)]
    else:
        head += f"var<workgroup> RED: array<f32, {WG * ROWS * mt}>;\n"
        body = rows_body(mt, _N, [f"  for (var kw = lid; kw < {_KW}; kw = kw + {WG}u) {{", f"    let k = kw * {per}u;"],
                         lambda m: _xs(x_st, f"{m}u", "k", per),
                         lambda r: _unpack(f"W[{_WO} + min(n0 + {r}u, {_N} - 1u) * {_KW} + kw]", fmt),
                         lambda r, m: f"dot(w{r}, x{m})",
                         lambda v: f"OUT[{_OO} + m * {_LDO} + n] = "
                                   f"{store(_epilogue(v, 'n', s_st, b_st, has_bias), 'f32', out_dtype)};")
    wg = WG
    return head + (f"@compute @workgroup_size({wg})\n"
                   "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                   "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")


def _tiled_code(fmt, out_dtype, x_st, s_st, b_st, has_bias):
    out_st, per = out_dtype.gpu_storage, PER_WORD[fmt]
    head = _decls(out_st, x_st, s_st, b_st, has_bias, _NPARAMS)
    head += f"var<workgroup> AS: array<f32, {TK * TILE}>;\nvar<workgroup> BS: array<f32, {TK * TILE}>;\n"
    body = [f"  let tiles_n = ({_N} + {TILE - 1}u) / {TILE}u;",
            "  let g = wid.y * nwg.x + wid.x;",
            f"  let m0 = (g / tiles_n) * {TILE}u; let n0 = (g % tiles_n) * {TILE}u;",
            f"  if (m0 >= {_M}) {{ return; }}",
            "  let tx = lid % 16u; let ty = lid / 16u;"]
    body += [f"  var c{i} = vec4<f32>(0.0);" for i in range(4)]
    body += [f"  for (var k0 = 0u; k0 < {_K}; k0 = k0 + {TK}u) {{"]
    for p in range(TK * TILE // 256):   # x's tile: 1024 values, 4 a thread, zero outside
        body += [f"    {{ let e = lid + {p * 256}u; let kk = e % {TK}u; let mm = e / {TK}u;",
                 f"      let m = m0 + mm; let k = k0 + kk;",
                 f"      var v = 0.0; if (m < {_M} && k < {_K}) {{ v = {load(f'X[{_XO} + m * {_K} + k]', x_st, 'f32')}; }}",
                 f"      AS[kk * {TILE}u + mm] = v; }}"]
    # the weight's tile: 64 rows x TK / per words, a word a thread per pass, unpacked
    wpr = TK // per   # words per row in a step
    for p in range(TILE * wpr // 256):
        body += [f"    {{ let e = lid + {p * 256}u; let nn = e / {wpr}u; let wj = e % {wpr}u; let n = n0 + nn;",
                 f"      let kw = k0 / {per}u + wj;", f"      var w = vec{per}<f32>(0.0);",
                 f"      if (n < {_N} && kw < {_KW}) {{ w = {_unpack(f'W[{_WO} + n * {_KW} + kw]', fmt)}; }}"]
        body += [f"      BS[(wj * {per}u + {j}u) * {TILE}u + nn] = w[{j}];" for j in range(per)]
        body += ["    }"]
    body += ["    workgroupBarrier();"]
    for kk in range(TK):
        body += [f"    {{ let a = vec4<f32>(AS[{kk * TILE}u + ty * 4u], AS[{kk * TILE}u + ty * 4u + 1u], "
                 f"AS[{kk * TILE}u + ty * 4u + 2u], AS[{kk * TILE}u + ty * 4u + 3u]);",
                 f"      let b = vec4<f32>(BS[{kk * TILE}u + tx * 4u], BS[{kk * TILE}u + tx * 4u + 1u], "
                 f"BS[{kk * TILE}u + tx * 4u + 2u], BS[{kk * TILE}u + tx * 4u + 3u]);"]
        body += [f"      c{i} = c{i} + a[{i}] * b;" for i in range(4)]
        body += ["    }"]
    body += ["    workgroupBarrier();", "  }"]
    for i in range(4):
        for j in range(4):
            body += [f"  {{ let m = m0 + ty * 4u + {i}u; let n = n0 + tx * 4u + {j}u;",
                     f"    if (m < {_M} && n < {_N}) {{ OUT[{_OO} + m * {_LDO} + n] = "
                     f"{store(_epilogue(f'c{i}[{j}]', 'n', s_st, b_st, has_bias), 'f32', out_dtype)}; }} }}"]
    return head + ("@compute @workgroup_size(256)\n"
                   "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                   "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")


def forward(rt, out, x, packed, scale, bias, fmt="int8"):
    """out (M, N) rows (stride (ldo, 1)) = x (M, K) contiguous @ unpacked(packed)^T * scale (+ bias):
    packed (N, KW) int32 words of fmt ("int8", or "bfloat16" / "float16" with scale None),
    scale (N,), bias (N,) or None, all contiguous."""
    M, N = out.shape
    K = x.shape[1]
    if M == 0 or N == 0:
        return
    KW = packed.shape[1]
    has_bias = bias is not None
    sts = (x.dtype.gpu_storage, None if scale is None else scale.dtype.gpu_storage,
           bias.dtype.gpu_storage if has_bias else None)
    ins = [t for t in (x, packed, scale, bias) if t is not None]
    buffers = [(out._storage.buffer_for_write(), out._storage.size)]
    for t in ins:
        buffers.append((t._storage.buffer_for_read(), t._storage.size))
    params = struct.pack(f"<{_NPARAMS}I", M, N, K, KW, x._offset, packed._offset, 0 if scale is None else scale._offset,
                         bias._offset if has_bias else 0, out._offset, out._stride[0])
    weight_bytes = N * KW * 4
    if M <= GEMV_MAX_M:
        per_thread = rt.barriers_costly
        key = ("packed_gemv", fmt, M, out.dtype.name, out.dtype.gpu_storage) + sts + (per_thread,)
        pid = rt.pipeline(key, lambda: _gemv_code(M, fmt, out.dtype, *sts, has_bias, per_thread),
                          ["uniform", "write"] + ["read"] * len(ins))
        groups = -(-N // WG) if per_thread else -(-N // ROWS)
        rt.dispatch(pid, rt.grid(groups), buffers, params, work=weight_bytes)
    else:
        key = ("packed_tiled", fmt, out.dtype.name, out.dtype.gpu_storage) + sts
        pid = rt.pipeline(key, lambda: _tiled_code(fmt, out.dtype, *sts, has_bias), ["uniform", "write"] + ["read"] * len(ins))
        groups = -(-M // TILE) * -(-N // TILE)
        rt.dispatch(pid, rt.grid(groups), buffers, params, work=max(weight_bytes, 2 * M * N * K // 16))


# a float16 value's bits from its f32 (w holds float16 values): pack2x16float for finite ones,
# infinities and NaN on the bits (pack2x16float leaves them indeterminate)
_F16_BITS = """fn tw_f16bits(x: f32) -> u32 {
  let b = bitcast<u32>(x); let a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) { return ((b >> 16u) & 0x8000u) | 0x7c00u | select(0u, 0x200u, a > 0x7f800000u); }
  return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}
"""


def pack_half(rt, out, w, fmt):
    """out (N, ceil(K / 2)) int32, contiguous = w (N, K) of dtype fmt ("bfloat16": f32 words;
    "float16": f16 or f32 words), contiguous, two to a word (the low half the even column), the
    last word's high half zero for an odd K."""
    total = out.numel()
    if total == 0:
        return
    N, K = w.shape
    KW = out.shape[1]
    params = struct.pack("<5I", total, KW, K, w._offset, out._offset)
    st = w.dtype.gpu_storage

    def make_code():
        if fmt == "bfloat16":
            lo, hi = "bitcast<u32>(W[at]) >> 16u", "bitcast<u32>(W[at + 1u]) & 0xffff0000u"
        else:
            lo, hi = (f"tw_f16bits({load(f'W[{i}]', st, 'f32')})" for i in ("at", "at + 1u"))
            hi += " << 16u"
        return (("enable f16;\n" if st == "f16" else "") + ("" if fmt == "bfloat16" else _F16_BITS) +
                "@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 2>;\n"
                "@group(0) @binding(1) var<storage, read_write> OUT: array<i32>;\n"
                f"@group(0) @binding(2) var<storage, read> W: array<{st}>;\n"
                "@compute @workgroup_size(256)\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                "        @builtin(local_invocation_index) lid: u32) {\n"
                "  let i = (wid.y * nwg.x + wid.x) * 256u + lid;\n"
                "  if (i >= P[0][0]) { return; }\n"
                "  let n = i / P[0][1]; let k = (i - n * P[0][1]) * 2u;\n"
                "  let at = P[0][3] + n * P[0][2] + k;\n"
                f"  let lo = {lo};\n"
                f"  var hi = 0u; if (k + 1u < P[0][2]) {{ hi = {hi}; }}\n"
                "  OUT[P[1][0] + i] = bitcast<i32>(lo | hi);\n}\n")

    pid = rt.pipeline(("pack_half", fmt, st), make_code, ["uniform", "write", "read"])
    rt.dispatch(pid, rt.grid(-(-total // 256)), [(out._storage.buffer_for_write(), out._storage.size),
                                                  (w._storage.buffer_for_read(), w._storage.size)], params)
