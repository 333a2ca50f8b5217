"""Rounding a bfloat16 tensor's f32 words to bfloat16 values where they are (the words its view
spans): for kernels whose stores skip wgsl.store's rounding (the tiled matmuls' vec4 stores).
Rounding is idempotent, so words of the storage between the view's elements (bfloat16 too:
one storage, one dtype) are left as they were."""

import struct

from .wgsl import round_bf16


def round_span(rt, t):
    """t's storage words [first, last] of t's view rounded to bfloat16 in place."""
    lo = hi = t._offset
    for s, st in zip(t._shape, t._stride):
        if s == 0:
            return
        hi += (s - 1) * st   # (matmul outputs: non-negative strides)
    count = hi + 1 - lo

    def make_code():
        return ("@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 1>;\n"
                "@group(0) @binding(1) var<storage, read_write> B: array<f32>;\n"
                "@compute @workgroup_size(256)\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                "        @builtin(local_invocation_index) lid: u32) {\n"
                "  let i = (wid.y * nwg.x + wid.x) * 256u + lid;\n"
                "  if (i >= P[0][0]) { return; }\n"
                "  let x = B[P[0][1] + i];\n"
                f"  B[P[0][1] + i] = {round_bf16('x')};\n}}\n")

    pid = rt.pipeline(("bfloat16_round_span",), make_code, ["uniform", "write"])
    rt.dispatch(pid, rt.grid(-(-count // 256)), [(t._storage.buffer_for_write(), t._storage.size)],
                struct.pack("<2I", count, lo))
