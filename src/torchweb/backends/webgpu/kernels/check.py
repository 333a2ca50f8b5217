"""A device-side assert: raise error INDEX (the exception and message given) at the next
readback if any element of a bool tensor is true. Used where an eager call would read the GPU
back just to check its input, but a readback is not allowed (a call being captured by
torchweb.compile): the check runs on the GPU and the exception surfaces later, as a CUDA
device-side assert does."""

import struct

from .. import errors as ERR
from .elementwise import WORKGROUP, param


def run(rt, bad, what, exc, message):
    """bad: contiguous bool tensor (u32 words)."""
    n = bad.numel()
    if n == 0:
        return
    tag = rt.errors.tag(what, exc, message)

    def make_code():
        return ("@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 1>;\n"
                "@group(0) @binding(1) var<storage, read> B0: array<u32>;\n"
                f"@group(0) @binding(2) {ERR.WGSL_DECL}\n"
                f"@compute @workgroup_size({WORKGROUP})\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                "        @builtin(local_invocation_index) lid: u32) {\n"
                f"  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;\n"
                f"  if (i >= {param(0)}) {{ return; }}\n"
                f"  if (B0[{param(1)} + i] != 0u) {{ {ERR.wgsl_raise(ERR.INDEX, param(2))} }}\n}}\n")

    pid = rt.pipeline(("device_assert",), make_code, ["uniform", "read", "write"])
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), [(bad._storage.buffer_for_read(), bad._storage.size), rt.errors.binding],
                struct.pack("<4I", n, bad._offset, tag, 0))


def run_range(rt, t, lo, hi, skip, what, exc, message):
    """As run, for the elements of contiguous int32-stored t outside [lo, hi) (skip: a value
    that is never bad, or None): the comparisons made in this kernel, not as tensors of their own."""
    n = t.numel()
    if n == 0:
        return
    tag = rt.errors.tag(what, exc, message)
    has_skip = skip is not None

    def make_code():
        keep = f" && v != bitcast<i32>({param(5)})" if has_skip else ""
        return ("@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 2>;\n"
                "@group(0) @binding(1) var<storage, read> B0: array<i32>;\n"
                f"@group(0) @binding(2) {ERR.WGSL_DECL}\n"
                f"@compute @workgroup_size({WORKGROUP})\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                "        @builtin(local_invocation_index) lid: u32) {\n"
                f"  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;\n"
                f"  if (i >= {param(0)}) {{ return; }}\n"
                f"  let v = B0[{param(1)} + i];\n"
                f"  if ((v < bitcast<i32>({param(3)}) || v >= bitcast<i32>({param(4)})){keep}) "
                f"{{ {ERR.wgsl_raise(ERR.INDEX, param(2))} }}\n}}\n")

    pid = rt.pipeline(("device_assert_range", has_skip), make_code, ["uniform", "read", "write"])
    words = [n, t._offset, tag] + [v & 0xFFFFFFFF for v in (lo, hi, skip if has_skip else 0)] + [0, 0]
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), [(t._storage.buffer_for_read(), t._storage.size), rt.errors.binding],
                struct.pack("<8I", *words))
