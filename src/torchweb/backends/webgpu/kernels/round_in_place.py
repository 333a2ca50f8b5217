"""Rounding the f32 words of a tensor held in them (bfloat16; float16 without 'shader-f16') to
its dtype's values where they are (the words its view spans): for kernels whose stores skip
wgsl.store's rounding (the tiled matmuls' vec4 stores). Rounding is idempotent, so words of the
storage between the view's elements (of the same dtype: one storage, one dtype) stay as they
were."""

import struct

from .wgsl import round_bf16, round_f16


def held_in_f32_words(dtype):
    """Whether dtype's values are held rounded in f32 words (what round_span is for)."""
    return dtype.name in ("bfloat16", "float16") and dtype.gpu_storage == "f32"


def round_span(rt, t):
    """t's storage words [first, last] of t's view rounded to t's dtype in place."""
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
                f"  B[P[0][1] + i] = {rounding('x')};\n}}\n")

    rounding = round_bf16 if t.dtype.name == "bfloat16" else round_f16
    pid = rt.pipeline(("round_span", t.dtype.name), make_code, ["uniform", "write"])
    rt.dispatch(pid, rt.grid(-(-count // 256)), [(t._storage.buffer_for_write(), t._storage.size)],
                struct.pack("<2I", count, lo))
