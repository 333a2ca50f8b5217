"""Workgroup-wide sums and maxima through subgroup operations (subgroupAdd, subgroupMax), where
the adapter has the "subgroups" feature: a subgroup combines its values without workgroup
memory, so a 256-thread reduction takes one barrier where the tree takes 9.

The subgroup size is known only when the kernel runs (@builtin(subgroup_size)): kernels test
it and take the tree where it is under MIN_SIZE or does not divide the workgroup. Subgroup k is
taken to hold invocations k * size .. (k + 1) * size - 1 (local_invocation_index order), the
layout of 1-D workgroups on Vulkan, Metal and D3D drivers.

Native wgpu (Naga) refuses `enable subgroups;` but takes the builtins once the device has the
feature; browsers (Tint) require the directive: enable_line() gives it in the browser only.
"""

from ..runtime import in_browser

# the switch that benchmarks and tests flip: kernels use subgroups only while it is on (read
# at generation time; pipelines are keyed on use(rt))
ENABLED = True
# smaller subgroups take the tree (with 1 or 2, as some drivers report, each invocation would
# fold wg / size^2 partials, and at 1 they would not fit half the array); tests raise it past
# any size to run the tree branch
MIN_SIZE = 4

# the entry point's extra parameters
BUILTINS = "@builtin(subgroup_size) sgs: u32, @builtin(subgroup_invocation_id) sid: u32"

# WGSL helpers (wgsl.py's) that reduce_lines' code calls: a caller adds them to its own
HELPERS = {"isnan", "inf", "nan"}


def use(rt):
    """Whether kernels generated now may use subgroup operations on rt's device: 0 if not, else
    MIN_SIZE (what their code depends on, for pipeline keys)."""
    return MIN_SIZE if ENABLED and "subgroups" in rt.features else 0


def enable_line():
    """The module's first line for subgroup builtins: needed by browsers, refused by Naga."""
    return "enable subgroups;\n" if in_browser() else ""


def _subgroup_op(op, t, x):
    """op (add, max, min) of x over the subgroup, for x of WGSL type t."""
    if op == "add":
        return f"subgroupAdd({x})"
    fn = "subgroupMax" if op == "max" else "subgroupMin"
    if t != "f32":
        return f"{fn}({x})"
    # a NaN anywhere wins, as in tw_maxf / tw_minf (the float max of NaN is undefined in
    # SPIR-V's group operations): NaNs are set aside, then the result is NaN if there was one
    away = "-tw_inf()" if op == "max" else "tw_inf()"
    return (f"select({fn}(select({x}, {away}, tw_isnan({x}))), tw_nan(), "
            f"subgroupAny(tw_isnan({x})))")


def reduce_lines(name, local, op, t, array, wg, combine, part=0, reuse=True, indent="  "):
    """WGSL lines declaring `var name: t`, local (an expression of each invocation) combined
    over the workgroup of wg threads by op (add, max, min): every invocation gets it.

    Each subgroup combines its values, its first invocation writes the result to half `part`
    (0 or 1) of `array` (a workgroup array<t, wg>), and after one barrier every subgroup
    combines those partials (each invocation folding every sgs-th one first): one barrier in
    all. A later reduction on the same array takes the other half, which needs no barrier in
    between. Where the subgroup size does not fit, the tree over the whole array (combine: op
    as a format of {a}, {b}), closed by a barrier if reuse (the array is used again).
    Needs BUILTINS in the entry point, HELPERS, and workgroup-uniform control flow."""
    base = part * (wg // 2)
    ident = {"add": {"f32": "0.0", "u32": "0u", "i32": "0i"},
             "max": {"f32": "-tw_inf()", "u32": "0u", "i32": "-2147483647i - 1i"},
             "min": {"f32": "tw_inf()", "u32": "4294967295u", "i32": "2147483647i"}}[op][t]
    lines = [f"var {name}: {t};",
             f"if (sgs >= {MIN_SIZE}u && {wg}u % sgs == 0u) {{",
             f"  let sg_l = {local};",
             f"  let sg_p = {_subgroup_op(op, t, 'sg_l')};",
             f"  if (sgs == {wg}u) {{ {name} = sg_p; }} else {{",   # one subgroup: no partials
             f"    if (sid == 0u) {{ {array}[{base}u + lid / sgs] = sg_p; }}",
             "    workgroupBarrier();",
             f"    var sg_x = {ident};",
             f"    for (var sg_i = sid; sg_i < {wg}u / sgs; sg_i = sg_i + sgs) {{",
             f"      sg_x = {combine.format(a='sg_x', b=f'{array}[{base}u + sg_i]')};",
             "    }",
             f"    {name} = {_subgroup_op(op, t, 'sg_x')};",
             "  }",
             "} else {",
             f"  {array}[lid] = {local};",
             "  workgroupBarrier();",
             f"  for (var s = {wg // 2}u; s > 0u; s = s >> 1u) {{",
             f"    if (lid < s) {{ {array}[lid] = {combine.format(a=f'{array}[lid]', b=f'{array}[lid + s]')}; }}",
             "    workgroupBarrier();",
             "  }",
             f"  {name} = {array}[0];",
             "  workgroupBarrier();" if reuse else "",   # every read done before the array is written again
             "}"]
    return [indent + line for line in lines if line]
