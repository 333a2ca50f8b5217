"""The frame shared by the kernels that run one thread per element (pad, interpolate, pool,
im2col, ...): the entry point, the thread's flat index, its unravelling into coordinates, and
the launch. Written once here so that the generators hold only what their kernel computes."""

import struct

from .bindings import kinds
from .elementwise import WORKGROUP


def entry_point(body, workgroup=WORKGROUP):
    """WGSL `fn main` with the lines of body, over the 2-D grid of workgroups rt.grid makes."""
    return (f"@compute @workgroup_size({workgroup})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")


def thread_index(count, var="t"):
    """WGSL lines: `var`, this thread's flat index; threads at or past `count` return."""
    return [f"  let {var} = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            f"  if ({var} >= {count}) {{ return; }}"]


def unravel(name, sizes, var="q"):
    """WGSL lines: name0, name1, ... the row-major coordinates over sizes (WGSL expressions)
    taken off the innermost end of `var`, which keeps what is left (the outer dims)."""
    return [f"  let {name}{i} = {var} % {sizes[i]}; {var} = {var} / {sizes[i]};" for i in reversed(range(len(sizes)))]


def ravel(coords, sizes, zero="0u"):
    """The WGSL expression of the row-major flat index of coords (expressions) over sizes."""
    flat = zero
    for c, size in zip(coords, sizes):
        flat = f"({flat}) * {size} + {c}"
    return flat


def loop(var, start, end):
    """A WGSL for loop's header: u32 `var` from start up to end (excluded)."""
    return f"for (var {var} = {start}; {var} < {end}; {var} = {var} + 1u) {{"


def nested_loops(r, per_dim):
    """WGSL lines opening r nested loops, one per spatial dim: per_dim(i, indent) gives dim i's
    lines, its loop's header at indent, then those that start its body (one indent deeper).
    Returns the lines and the innermost body's indent; close_loops(r) closes them."""
    lines, indent = [], "  "
    for i in range(r):
        lines += per_dim(i, indent)
        indent += "  "
    return lines, indent


def close_loops(depth):
    """WGSL lines closing `depth` nested loops opened at an indent of two spaces."""
    return ["  " * (i + 1) + "}" for i in reversed(range(depth))]


def batch_offset(var, base, sizes, strides, q="q"):
    """WGSL lines: `var`, base plus the offset of the coordinates over sizes (with strides)
    taken off the innermost end of q."""
    return [f"  var {var} = {base};"] + [
        f"  {{ let c = {q} % {sizes[i]}; {q} = {q} / {sizes[i]}; {var} = {var} + c * {strides[i]}; }}"
        for i in reversed(range(len(sizes)))]


def uint_params(*groups):
    """The u32 words of the uniform from groups of ints (sizes, strides, ...), in order."""
    return [int(v) for group in groups for v in group]


def launch(rt, key, make_code, buffers, params, threads, binding_kinds=None):
    """Dispatches the pipeline `key` (make_code(nparams) its WGSL) over `threads` threads with
    params packed as the u32 uniform; binding_kinds: kinds(buffers) unless given."""
    nparams = len(params)
    pid = rt.pipeline(key, lambda: make_code(nparams), binding_kinds or kinds(buffers))
    rt.dispatch(pid, rt.grid(-(-threads // WORKGROUP)), buffers, struct.pack(f"<{nparams}I", *params))
