"""A device-side assert: raise error INDEX (the exception and message given) at the next
readback if any element of a bool tensor is true. Used where an eager call would read the GPU
back just to check its input, but a readback is not allowed (a call being captured by
torchweb.compile): the check runs on the GPU and the exception surfaces later, as a CUDA
device-side assert does."""

import struct

from .. import errors as ERR
from .elementwise import WORKGROUP, param


def _source(element, condition, nvec4=1):
    """A thread per element i of B0 (array of `element`, from offset P[0][1]): raise at the next
    readback where `condition` (WGSL over v = the element) holds."""
    return (f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {nvec4}>;\n"
            f"@group(0) @binding(1) var<storage, read> B0: array<{element}>;\n"
            f"@group(0) @binding(2) {ERR.WGSL_DECL}\n"
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n"
            f"  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;\n"
            f"  if (i >= {param(0)}) {{ return; }}\n"
            f"  let v = B0[{param(1)} + i];\n"
            f"  if ({condition}) {{ {ERR.wgsl_raise(ERR.INDEX, param(2))} }}\n}}\n")


def _dispatch(rt, key, make_code, t, words):
    pid = rt.pipeline(key, make_code, ["uniform", "read", "write"])
    rt.dispatch(pid, rt.grid(-(-t.numel() // WORKGROUP)),
                [(t._storage.buffer_for_read(), t._storage.size), rt.errors.binding],
                struct.pack(f"<{len(words)}I", *words))


def run(rt, bad, what, exc, message):
    """bad: contiguous bool tensor (u32 words)."""
    if bad.numel() == 0:
        return
    tag = rt.errors.tag(what, exc, message)
    _dispatch(rt, ("device_assert",), lambda: _source("u32", "v != 0u"), bad, [bad.numel(), bad._offset, tag, 0])


def run_range(rt, t, lo, hi, skip, what, exc, message):
    """As run, for the elements of contiguous int32-stored t outside [lo, hi) (skip: a value
    that is never bad, or None): the comparisons made in this kernel, not as tensors of their own."""
    if t.numel() == 0:
        return
    tag = rt.errors.tag(what, exc, message)
    has_skip = skip is not None
    keep = f" && v != bitcast<i32>({param(5)})" if has_skip else ""
    condition = f"(v < bitcast<i32>({param(3)}) || v >= bitcast<i32>({param(4)})){keep}"
    words = [t.numel(), t._offset, tag] + [v & 0xFFFFFFFF for v in (lo, hi, skip if has_skip else 0)] + [0, 0]
    _dispatch(rt, ("device_assert_range", has_skip), lambda: _source("i32", condition, 2), t, words)
