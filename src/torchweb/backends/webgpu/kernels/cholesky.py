"""The Cholesky factor of small matrices in one dispatch: a workgroup per matrix of a batch, the
matrix in workgroup memory, a thread per row. Step k takes the square root of the diagonal
entry, divides column k below it, and subtracts column k's outer product from the rows below
(each thread its own row), with a barrier between the three: n steps, no host round trip. The
lower triangle is read (as LAPACK's potrf); info is the first step whose diagonal entry is not
positive (1-based; 0 where the matrix is positive definite), and the factor holds NaN or inf from
there, as the composed algorithm's. With an `inverse` output the kernel also writes L^-1 (each
thread one column, by forward substitution: no barrier), which ops/linalg_cholesky.py uses to
factor larger matrices by panels of this size."""

import struct

from .elementwise import param

MAX_N = 32   # rows of a block: 32 x 32 floats of workgroup memory, a thread a row


def run(rt, out, info, inp, n, count, inverse=None):
    """out [count, n, n] (float32, contiguous) = the lower factors of inp's [count, n, n] lower
    triangles; info [count] (int32) the first failing order or 0; inverse (optional, as out)
    their inverses."""
    if count == 0 or n == 0:
        return
    N = MAX_N
    inv = inverse is not None

    def make_code():
        return ("@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 1>;\n"
                "@group(0) @binding(1) var<storage, read_write> B0: array<f32>;\n"
                "@group(0) @binding(2) var<storage, read_write> B1: array<i32>;\n"
                "@group(0) @binding(3) var<storage, read> B2: array<f32>;\n"
                + ("@group(0) @binding(4) var<storage, read_write> B3: array<f32>;\n" if inv else "") +
                f"var<workgroup> M: array<f32, {N * N}>;\n"
                "var<workgroup> failed: u32;\n"
                f"@compute @workgroup_size({N})\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                "        @builtin(local_invocation_index) i: u32) {\n"
                "  let b = wid.y * nwg.x + wid.x;\n"
                f"  let n = {param(0)};\n"
                f"  let live = b < {param(1)};\n"   # (the folded grid's excess workgroups: no work, same barriers)
                "  let base = b * n * n;\n"
                "  if (i == 0u) { failed = 0u; }\n"
                "  if (live && i < n) {\n"
                f"    for (var j = 0u; j < n; j = j + 1u) {{ M[i * {N}u + j] = B2[base + i * n + j]; }}\n"
                "  }\n"
                "  workgroupBarrier();\n"
                "  for (var k = 0u; k < n; k = k + 1u) {\n"
                "    if (i == k) {\n"
                f"      let d = M[k * {N}u + k];\n"
                "      if (!(d > 0.0) && failed == 0u) { failed = k + 1u; }\n"
                f"      M[k * {N}u + k] = sqrt(d);\n"
                "    }\n"
                "    workgroupBarrier();\n"
                f"    if (i > k && i < n) {{ M[i * {N}u + k] = M[i * {N}u + k] / M[k * {N}u + k]; }}\n"
                "    workgroupBarrier();\n"
                "    if (i > k && i < n) {\n"
                f"      let lik = M[i * {N}u + k];\n"
                f"      for (var j = k + 1u; j <= i; j = j + 1u) {{ M[i * {N}u + j] = M[i * {N}u + j] - lik * M[j * {N}u + k]; }}\n"
                "    }\n"
                "    workgroupBarrier();\n"
                "  }\n"
                "  if (live && i < n) {\n"
                "    for (var j = 0u; j < n; j = j + 1u) {\n"
                f"      B0[base + i * n + j] = select(0.0, M[i * {N}u + j], j <= i);\n"
                "    }\n"
                "  }\n"
                "  if (live && i == 0u) { B1[b] = i32(failed); }\n"
                + (_INVERSE.replace("{N}", str(N)) if inv else "") +
                "}\n")

    buffers = [(out._storage.buffer_for_write(), out._storage.size),
               (info._storage.buffer_for_write(), info._storage.size),
               (inp._storage.buffer_for_read(), inp._storage.size)]
    if inv:
        buffers.append((inverse._storage.buffer_for_write(), inverse._storage.size))
    pid = rt.pipeline(("cholesky_block", N, inv), make_code, ["uniform", "write", "write", "read"] + ["write"] * inv)
    rt.dispatch(pid, rt.grid(count), buffers, struct.pack("<4I", n, count, 0, 0), work=16 * count * n * n)


# column i of L^-1 by forward substitution (L is read only by now: no barrier), written whole
_INVERSE = """  if (live && i < n) {
    let c = i;
    for (var r = 0u; r < n; r = r + 1u) {
      var x = 0.0;
      if (r == c) {
        x = 1.0 / M[c * {N}u + c];
      } else if (r > c) {
        var acc = 0.0;
        for (var k = c; k < r; k = k + 1u) { acc = acc + M[r * {N}u + k] * B3[base + k * n + c]; }
        x = -acc / M[r * {N}u + r];
      }
      B3[base + r * n + c] = x;
    }
  }
"""
