"""A lookup in a packed weight (a tied embedding whose lm_head quantize_ packed): the rows of the
packed int32 words at the indices, unpacked to floats (ops/packed_embedding.py).

One thread per packed word of the output's rows: it reads the word at (idx[i], w) once and writes
its `per` values to out[i, w * per ...], each times its row's scale where the format has one. An
index outside [0, num_embeddings) raises errors.INDEX (IndexError at the next readback) and
writes zeros, as embedding.py's gather.

The formats are rows of FORMATS, keyed by the packing's name: the weights a word holds and
the WGSL of value j of a word (an i32) as an f32, little-endian (value 0 in the low bits, so
the words' bytes are the packed matrix's bytes, as PyTorch lays them out)."""

import struct

from .. import errors as ERR
from .elementwise import WORKGROUP, param
from .skeleton import entry_point, thread_index
from .wgsl import load, store

# format: (values a word, WGSL of value j of word w as f32)
FORMATS = {
    # extractBits on an i32 sign-extends: byte j as its int8 value
    "int8": (4, lambda w, j: f"f32(extractBits({w}, {8 * j}u, 8u))"),
    # a half shifted to the top of a word is its float32 value
    "bfloat16": (2, lambda w, j: f"bitcast<f32>(u32({w}) << 16u)" if j == 0
                 else f"bitcast<f32>(u32({w}) & 0xffff0000u)"),
    # WGSL's core unpack2x16float: no shader-f16 needed
    "float16": (2, lambda w, j: f"unpack2x16float(u32({w}))[{j}]"),
}


def forward(rt, out, packed, scale, idx, fmt, rows=None, tag=None):
    """out (n, dim) contiguous = the rows of packed (num, KW) int32 at idx (n,) contiguous int,
    unpacked by FORMATS[fmt], times scale (num,) where given. rows (lo, hi, num): packed holds
    only the table's rows [lo, hi) of num (a window past the binding limit, windows.split_rows):
    only the outputs of those rows are written; scale stays whole."""
    n, dim = out.shape
    num, kw = packed.shape
    if n == 0 or dim == 0:
        return
    per, value = FORMATS[fmt]
    lo, hi, num = rows or (0, num, num)
    tag = rt.errors.tag("packed_embedding") if tag is None else tag
    params = [n * kw, kw, dim, num, packed._offset, idx._offset, 0 if scale is None else scale._offset,
              out._offset, tag, lo, hi]
    s_st = None if scale is None else scale.dtype.gpu_storage
    key = ("packed_embedding", fmt, out.dtype.name, out.dtype.gpu_storage, s_st)

    def make_code():
        enable = "enable f16;\n" if "f16" in (out.dtype.gpu_storage, s_st) else ""
        decls = (enable + "@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 3>;\n"
                 f"@group(0) @binding(1) var<storage, read_write> OUT: array<{out.dtype.gpu_storage}>;\n"
                 "@group(0) @binding(2) var<storage, read> W: array<i32>;\n"
                 "@group(0) @binding(3) var<storage, read> IDX: array<i32>;\n"
                 f"@group(0) @binding(4) {ERR.WGSL_DECL}\n")
        if scale is not None:
            decls += f"@group(0) @binding(5) var<storage, read> S: array<{s_st}>;\n"
        zero = store("0.0", "f32", out.dtype)
        body = thread_index(param(0)) + [
            f"  let row = t / {param(1)};", f"  let w = t - row * {param(1)};",
            f"  let first = {param(7)} + row * {param(2)} + w * {per}u;",
            f"  let v = IDX[{param(5)} + row];",
            f"  if (v < 0i || u32(v) >= {param(3)}) {{",
            f"    {ERR.wgsl_raise(ERR.INDEX, param(8))}"]
        body += [f"    if (w * {per}u + {j}u < {param(2)}) {{ OUT[first + {j}u] = {zero}; }}" for j in range(per)]
        body += ["    return;", "  }",
                 f"  if (u32(v) < {param(9)} || u32(v) >= {param(10)}) {{ return; }}",
                 f"  let word = W[{param(4)} + (u32(v) - {param(9)}) * {param(1)} + w];"]
        body.append("  let s = 1.0;" if scale is None else f"  let s = {load(f'S[{param(6)} + u32(v)]', s_st, 'f32')};")
        # (the pad values past dim in the row's last word are not written)
        body += [f"  if (w * {per}u + {j}u < {param(2)}) {{ OUT[first + {j}u] = "
                 f"{store(value('word', j) + ' * s', 'f32', out.dtype)}; }}" for j in range(per)]
        return decls + entry_point(body)

    kinds = ["uniform", "write", "read", "read", "write"] + (["read"] if scale is not None else [])
    pid = rt.pipeline(key, make_code, kinds)
    buffers = [(out._storage.buffer_for_write(), out._storage.size), (packed._storage.buffer_for_read(), packed._storage.size),
               (idx._storage.buffer_for_read(), idx._storage.size), rt.errors.binding]
    if scale is not None:
        buffers.append((scale._storage.buffer_for_read(), scale._storage.size))
    rt.dispatch(pid, rt.grid(-(-(n * kw) // WORKGROUP)), buffers, struct.pack(f"<{len(params)}I", *params))


__all__ = ["FORMATS", "forward"]
