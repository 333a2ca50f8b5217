"""The kernel of a fused elementwise expression (lazy.py): one thread per output element, each
input buffer view loaded once, each op a `let`, the result stored once.

The output is a fresh contiguous float32 buffer; inputs are any strided views over the output's
shape (broadcasts included), indexed like kernels/elementwise.py does for a single op.
"""

import struct

from ...._size import contiguous_strides, numel

from .bindings import declarations
from .elementwise import FAST, WGSL_TYPE, WORKGROUP, _HELPER_RE, coalesce, fast_decl, fast_main, fast_unit, param
from .wgsl import convert, helpers_source, load, scalar_bits, scalar_read


class _Plan:
    """The walk of an expression: distinct leaves, scalars in order, a structural key."""

    def __init__(self, root):
        self.leaves = {}      # leaf key -> index
        self.leaf_list = []
        self.order = []       # nodes in evaluation order (children first), each once
        self.index = {}       # id(node) -> position in order
        self.scalars = []     # parameters in the order the kernel evaluates the nodes
        self.key = self._walk(root)

    def _walk(self, node):
        index = self.index   # (names bound once: this runs for every recorded op)
        nid = id(node)
        if nid in index:
            return ("m", index[nid])
        parts = []
        scalars = []
        for kind, v, c in node.args:
            if kind == "n":
                parts.append(("n", self._walk(v), c))
            elif kind == "s":
                parts.append(("s", c))
                scalars.append((v, WGSL_TYPE[c]))
            else:
                k = v.key()
                i = self.leaves.get(k)
                if i is None:
                    i = self.leaves[k] = len(self.leaf_list)
                    self.leaf_list.append(v)
                parts.append(("t", i, c, v.dtype.gpu_storage))
        order = self.order
        index[nid] = len(order)
        order.append(node)
        if scalars:   # after the children's: they are evaluated first
            self.scalars.extend(scalars)
        return (node.op.name, node.cls, tuple(parts))   # (value classes: all "f", lazy.Node)


def run(rt, storage, root):
    plan = _Plan(root)
    leaves = plan.leaf_list
    shape = root.shape
    n = numel(shape)
    # bind inputs first: touching their buffers realizes what they depend on (recorded before us).
    # A leaf over the output's own storage (lazy.write_into: out=, read in the same layout)
    # reads the output binding B0: one buffer bound both read-only and writable is invalid.
    slot_of, buffers = {id(storage): 0}, []
    leaf_slots = []
    for leaf in leaves:
        sid = id(leaf.storage)
        if sid not in slot_of:
            slot_of[sid] = len(buffers) + 1
            buffers.append((leaf.storage.buffer_for_read(), leaf.storage.size))
        leaf_slots.append(slot_of[sid])
    buffers.insert(0, (storage._buffer_id, storage.size))
    storage.touched = True

    contiguous = list(contiguous_strides(shape))
    cshape, strides = coalesce(list(shape) or [1], [contiguous or [1]] +
                               [list(leaf.stride) or [0] for leaf in leaves])
    ndim = len(cshape)
    params = [n] + list(cshape)
    offsets = [0] + [leaf.offset for leaf in leaves]
    for off, st in zip(offsets, strides):
        params.append(off)
        params.extend(st)
    for value, wt in plan.scalars:
        params.append(scalar_bits(value, wt))
    storages = ["f32"] + [leaves[leaf_slots.index(s)].dtype.gpu_storage for s in range(1, len(buffers))]
    kinds = ["uniform", "write"] + ["read"] * (len(buffers) - 1)
    done = 0
    if FAST["vec"] and ndim == 1 and n >= max(FAST["min"], 4) and all(st[0] == 1 for st in strides):
        done = _run_fast(rt, plan, leaf_slots, storages, buffers, kinds, offsets, n)
        if done == n:
            return
    params.append(done)   # the generic kernel starts at element `done` (the fast path's tail)
    key = ("fused", plan.key, ndim, tuple(leaf_slots), tuple(storages))
    nparams = len(params)

    def make_code():
        return _source(plan, leaf_slots, storages, ndim, nparams)

    pid = rt.pipeline(key, make_code, kinds)
    rt.dispatch(pid, rt.grid(-(-(n - done) // WORKGROUP)), buffers, struct.pack(f"<{nparams}I", *params))


def _run_fast(rt, plan, leaf_slots, storages, buffers, kinds, offsets, n):
    """The contiguous fast path (elementwise.FAST) over the first n - n % unit elements."""
    unit = fast_unit(offsets, storages)
    wg, per = FAST["wg"], FAST["per"]
    units = n // unit
    params = [units] + [o // unit for o in offsets]
    for value, wt in plan.scalars:
        params.append(scalar_bits(value, wt))
    nparams = len(params)
    key = ("fused_fast", plan.key, tuple(leaf_slots), tuple(storages), unit, wg, per)

    def make_code():
        return _fast_source(plan, leaf_slots, storages, nparams, unit, wg, per)

    pid = rt.pipeline(key, make_code, kinds)
    rt.dispatch(pid, rt.grid(-(-units // (wg * per))), buffers, struct.pack(f"<{nparams}I", *params))
    return units * unit


def _fast_source(plan, leaf_slots, storages, nparams, unit, wg, per):
    leaves = plan.leaf_list
    body = []
    for idx in range(len(leaves)):
        body.append(f"  let t{idx} = B{leaf_slots[idx]}[{param(2 + idx)} + u];")
    comps = ("x", "y", "z", "w") if unit == 4 else ("",)
    values = []
    for c in comps:
        read = (lambda idx: f"t{idx}.{c}") if c else (lambda idx: f"t{idx}")
        values.append(_element_lines(plan, body, read, 2 + len(leaves), "_" + (c or "s")))
    body.append("  B0[u] = " + (f"vec4<f32>({', '.join(values)})" if unit == 4 else values[0]) + ";")
    helpers = helpers_source(set(_HELPER_RE.findall("\n".join(body))))
    return fast_decl(nparams, storages, unit) + "\n" + helpers + "\n" + fast_main(body, wg, per)


def _element_lines(plan, body, read, first_scalar, sfx):
    """Append to body the lines computing one output element; returns its f32 value.
    read(leaf index): the storage expression of that leaf's element."""
    leaves = plan.leaf_list
    loaded = {}

    def leaf_expr(idx, wt):
        name = loaded.get((idx, wt))
        if name is None:
            name = loaded[(idx, wt)] = f"a{idx}_{wt}{sfx}"
            body.append(f"  let {name} = {load(read(idx), leaves[idx].dtype.gpu_storage, wt)};")
        return name

    sk = first_scalar
    names = {}
    for j, node in enumerate(plan.order):
        args = []
        for kind, v, c in node.args:
            wt = WGSL_TYPE[c]
            if kind == "t":
                args.append(leaf_expr(plan.leaves[v.key()], wt))
            elif kind == "s":
                args.append(scalar_read(param(sk), wt))
                sk += 1
            else:
                args.append(convert(names[id(v)], WGSL_TYPE[v.value_cls], wt))
        names[id(node)] = f"v{j}{sfx}"
        body.append(f"  let v{j}{sfx} = {node.op.wgsl[node.cls].format(*args)};")
    root = plan.order[-1]   # a float32 value (lazy.py defers only those) into a float32 buffer
    return convert(names[id(root)], WGSL_TYPE[root.value_cls], "f32")


def _source(plan, leaf_slots, storages, ndim, nparams):
    leaves = plan.leaf_list
    body = [f"  let i = {param(nparams - 1)} + (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            f"  if (i >= {param(0)}) {{ return; }}",
            "  var r = i;"]
    ntensors = 1 + len(leaves)
    base = 1 + ndim
    for k in range(1, ntensors):
        body.append(f"  var o{k} = {param(base + k * (ndim + 1))};")
    for d in reversed(range(ndim)):
        step = "let c = r;" if d == 0 else f"let c = r % {param(1 + d)}; r = r / {param(1 + d)};"
        body.append(f"  {{ {step}")
        for k in range(1, ntensors):
            body.append(f"    o{k} = o{k} + c * {param(base + k * (ndim + 1) + 1 + d)};")
        body.append("  }")
    loaded = {}     # (leaf index, wgsl type) -> name

    def leaf_expr(idx, wt):
        name = loaded.get((idx, wt))
        if name is None:
            name = loaded[(idx, wt)] = f"a{idx}_{wt}"
            st = leaves[idx].dtype.gpu_storage
            body.append(f"  let {name} = {load(f'B{leaf_slots[idx]}[o{idx + 1}]', st, wt)};")
        return name

    sk = [base + ntensors * (ndim + 1)]
    names = {}
    for j, node in enumerate(plan.order):
        args = []
        for kind, v, c in node.args:
            wt = WGSL_TYPE[c]
            if kind == "t":
                args.append(leaf_expr(plan.leaves[v.key()], wt))
            elif kind == "s":
                args.append(scalar_read(param(sk[0]), wt))
                sk[0] += 1
            else:
                args.append(convert(names[id(v)], WGSL_TYPE[v.value_cls], wt))
        names[id(node)] = f"v{j}"
        body.append(f"  let v{j} = {node.op.wgsl[node.cls].format(*args)};")
    root = plan.order[-1]   # a float32 value (lazy.py defers only those) into a float32 buffer
    body.append(f"  B0[i] = {convert(names[id(root)], WGSL_TYPE[root.value_cls], 'f32')};")
    decl = declarations(nparams, storages)
    helpers = helpers_source(set(_HELPER_RE.findall("\n".join(body))))
    return (decl + "\n" + helpers + "\n"
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")
