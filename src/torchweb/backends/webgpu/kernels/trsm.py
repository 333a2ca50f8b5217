"""A triangular solve against many right-hand sides in one dispatch: out = T^-1 (b - p) for a
batch of n x n triangular blocks T (n <= 32; the upper or lower triangle of a, unit: ones on
its diagonal) and n x k panels b (p, optional: a product the blocked solve has already formed,
subtracted first). Every operand is read or written through its offset and strides, so a
block of a larger matrix, its transpose, or rows of a result are used where they lie. A
workgroup per (matrix, 64 columns): the block goes to workgroup memory, then each thread
substitutes its own column, row by row, in registers. ops/linalg_triangular.py runs it once
per diagonal block of a blocked solve."""

import struct

from .elementwise import param

MAX_N = 32
THREADS = 64


def _layout(t):
    """offset, batch stride, row stride, column stride of a 3-D view."""
    return (t._offset,) + tuple(t._stride)


def run(rt, plan, out, a, b, p=None):
    """out [count, n, k] = T^-1 (b - p), T from a [count, n, n] (plan: plans.TrsmPlan; float32
    3-D views, any strides)."""
    n, k, count = plan.n, plan.k, plan.count
    if count == 0 or n == 0 or k == 0:
        return
    N, T = MAX_N, THREADS
    has_p = p is not None
    inplace = b._storage is out._storage   # (b read from the bound output: one binding may not be both)
    ncb = -(-k // T)

    def make_code():
        order = "n - 1u - ii" if plan.upper else "ii"
        inner = ("for (var j = i + 1u; j < n; j = j + 1u)" if plan.upper else "for (var j = 0u; j < i; j = j + 1u)")
        diag = "s" if plan.unit else f"s / M[i * {N}u + i]"
        return (
            "@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 5>;\n"
            "@group(0) @binding(1) var<storage, read_write> O: array<f32>;\n"
            "@group(0) @binding(2) var<storage, read> A: array<f32>;\n"
            + ("" if inplace else "@group(0) @binding(3) var<storage, read> B: array<f32>;\n")
            + (f"@group(0) @binding({4 - inplace}) var<storage, read> Q: array<f32>;\n" if has_p else "") +
            f"var<workgroup> M: array<f32, {N * N}>;\n"
            f"@compute @workgroup_size({T})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) t: u32) {\n"
            "  let lin = wid.y * nwg.x + wid.x;\n"
            f"  let n = {param(0)}; let k = {param(1)}; let ncb = {param(3)};\n"
            "  let mat = lin / ncb;\n"
            f"  let live = mat < {param(2)};\n"
            f"  let c = (lin % ncb) * {T}u + t;\n"
            f"  let ao = {param(4)} + mat * {param(5)};\n"
            f"  for (var e = t; e < n * n; e = e + {T}u) {{\n"
            "    if (live) {\n"
            "      let r = e / n; let q = e % n;\n"
            f"      M[r * {N}u + q] = A[ao + r * {param(6)} + q * {param(7)}];\n"
            "    }\n"
            "  }\n"
            "  workgroupBarrier();\n"
            "  if (!live || c >= k) { return; }\n"
            f"  let bo = {param(8)} + mat * {param(9)} + c * {param(11)};\n"
            f"  let qo = {param(12)} + mat * {param(13)} + c * {param(15)};\n"
            f"  let oo = {param(16)} + mat * {param(17)} + c * {param(19)};\n"
            f"  var x: array<f32, {N}>;\n"
            "  for (var ii = 0u; ii < n; ii = ii + 1u) {\n"
            f"    let i = {order};\n"
            f"    var s = {'O' if inplace else 'B'}[bo + i * {param(10)}];\n"
            + (f"    s = s - Q[qo + i * {param(14)}];\n" if has_p else "") +
            f"    {inner} {{ s = s - M[i * {N}u + j] * x[j]; }}\n"
            f"    let v = {diag};\n"
            "    x[i] = v;\n"
            f"    O[oo + i * {param(18)}] = v;\n"
            "  }\n"
            "}\n")

    layouts = _layout(a) + _layout(b) + (_layout(p) if has_p else (0, 0, 0, 0)) + _layout(out)
    buffers = [(out._storage.buffer_for_write(), out._storage.size),
               (a._storage.buffer_for_read(), a._storage.size)]
    if not inplace:
        buffers.append((b._storage.buffer_for_read(), b._storage.size))
    if has_p:
        buffers.append((p._storage.buffer_for_read(), p._storage.size))
    pid = rt.pipeline(("trsm", plan.upper, plan.unit, has_p, inplace), make_code,
                      ["uniform", "write", "read"] + ["read"] * (len(buffers) - 2))
    rt.dispatch(pid, rt.grid(count * ncb), buffers, struct.pack("<20I", n, k, count, ncb, *layouts),
                work=4 * count * (n * n + 3 * n * k))
