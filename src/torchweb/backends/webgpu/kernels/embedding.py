"""Embedding kernels: a row gather (forward) and its gradient, a sum of rows per index.

Forward: one thread per output element (index i, column j) reads weight[idx[i], j] through the
weight's strides; an index outside [0, num_embeddings) raises errors.INDEX (IndexError at the
next readback) and writes 0.

Backward: one thread per element (i, j) of the output gradient adds it into
grad_weight[idx[i], j], held as float32 words in an array<atomic<u32>>. WGSL has no float
atomics, so the add is a compare-exchange loop: read the word, add in f32, swap it in only if
the word is unchanged, else retry with what another thread wrote. The work is O(n * dim) with no
sort; duplicate indices contend only on their own row. The order of the adds between duplicates
is not fixed, so those sums may differ from PyTorch's in the last bits (float32 rounding only).
Indices equal to padding_idx, or out of range (already reported by the forward), add nothing.
"""

import struct

from .. import errors as ERR
from .elementwise import WORKGROUP, param
from ..runtime import dispatch_head
from .skeleton import entry_point, thread_index
from .wgsl import cas_add_f32, cas_key, load


def _row_col():
    """WGSL lines: thread i's (row, col) in the (n, dim) grid both kernels run over."""
    return thread_index(param(0), "i") + [f"  let row = i / {param(1)};", f"  let col = i - row * {param(1)};"]


def forward(rt, out, weight, idx, rows=None, tag=None):
    """out (n, dim), contiguous; weight (num, dim) with any strides; idx (n,) contiguous int.
    rows (lo, hi, num): weight holds only the table's rows [lo, hi) of num (a window of a table
    past the binding limit, windows.py): only the outputs of those rows are written."""
    total = out.numel()
    if total == 0:
        return
    n_emb, dim = weight.shape
    lo, hi, n_emb = rows or (0, n_emb, n_emb)
    tag = rt.errors.tag("embedding") if tag is None else tag
    params = [total, dim, n_emb, weight._offset, weight._stride[0], weight._stride[1], idx._offset, tag, lo, hi]
    st = weight.dtype.gpu_storage
    key = ("embedding", st)

    def make_code():
        enable = "enable f16;\n" if st == "f16" else ""
        return (enable + "@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 3>;\n"
                f"@group(0) @binding(1) var<storage, read_write> B0: array<{st}>;\n"
                f"@group(0) @binding(2) var<storage, read> B1: array<{st}>;\n"
                "@group(0) @binding(3) var<storage, read> B2: array<i32>;\n"
                f"@group(0) @binding(4) {ERR.WGSL_DECL}\n" + entry_point(_row_col() + [
                    f"  let v = B2[{param(6)} + row];",
                    f"  if (v < 0i || u32(v) >= {param(2)}) {{",
                    f"    {ERR.wgsl_raise(ERR.INDEX, param(7))}",
                    f"    B0[i] = {st}(0);",
                    "    return;\n  }",
                    f"  if (u32(v) < {param(8)} || u32(v) >= {param(9)}) {{ return; }}",
                    f"  B0[i] = B1[{param(3)} + (u32(v) - {param(8)}) * {param(4)} + col * {param(5)}];"]))

    pid = rt.pipeline(key, make_code, ["uniform", "write", "read", "read", "write"])
    so, sw, si = out._storage, weight._storage, idx._storage
    rt.record(dispatch_head(pid, rt.grid(-(-total // WORKGROUP)), 4), struct.pack("<10I", *params),
              (so.buffer_for_write(), 0, so.size, sw.buffer_for_read(), 0, sw.size,
               si.buffer_for_read(), 0, si.size, *rt.errors.binding_range))


def backward(rt, grad_weight, grad, idx, padding_idx, rows=None):
    """grad_weight (num, dim) float32, contiguous, zeroed: += the rows of grad (n, dim),
    contiguous, at idx (n,) contiguous int; rows whose index is padding_idx (-1: none) skipped.
    rows (lo, hi, num): grad_weight holds only rows [lo, hi) of num (as forward's)."""
    total = grad.numel()
    if total == 0:
        return
    n_emb, dim = grad_weight.shape
    lo, hi, n_emb = rows or (0, n_emb, n_emb)
    pad = padding_idx & 0xFFFFFFFF
    tag = rt.errors.tag("embedding_backward", hint=(
        "A deterministic alternative without atomics: the one-hot matmul "
        "torch.nn.functional.one_hot(indices, num_embeddings).to(weight.dtype) @ weight (its gradient "
        "is a matmul); or run it on the cpu device."))
    params = [total, dim, n_emb, grad_weight._offset, grad._offset, idx._offset, pad, tag, lo, hi]
    st = grad.dtype.gpu_storage
    key = ("embedding_backward", st) + cas_key()

    def make_code():
        enable = "enable f16;\n" if st == "f16" else ""
        g = load(f"B2[{param(4)} + i]", st, "f32")
        return (enable + "@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 3>;\n"
                "@group(0) @binding(1) var<storage, read_write> B0: array<atomic<u32>>;\n"
                "@group(0) @binding(2) var<storage, read> B1: array<i32>;\n"
                f"@group(0) @binding(3) var<storage, read> B2: array<{st}>;\n"
                f"@group(0) @binding(4) {ERR.WGSL_DECL}\n" + entry_point(_row_col() + [
                    f"  let v = B1[{param(5)} + row];",
                    f"  if (v < 0i || u32(v) >= {param(2)} || v == bitcast<i32>({param(6)})) {{ return; }}",
                    f"  if (u32(v) < {param(8)} || u32(v) >= {param(9)}) {{ return; }}",
                    f"  let g = {g};",
                    f"  let k = {param(3)} + (u32(v) - {param(8)}) * {param(1)} + col;"] + cas_add_f32("B0[k]", "g", param(7))))

    pid = rt.pipeline(key, make_code, ["uniform", "write", "read", "read", "write"])
    sw, si, sg = grad_weight._storage, idx._storage, grad._storage
    rt.record(dispatch_head(pid, rt.grid(-(-total // WORKGROUP)), 4), struct.pack("<10I", *params),
              (sw.buffer_for_write(), 0, sw.size, si.buffer_for_read(), 0, si.size,
               sg.buffer_for_read(), 0, sg.size, *rt.errors.binding_range))


__all__ = ["forward", "backward"]
