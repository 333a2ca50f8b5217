"""The kernel of fused elementwise expressions (the lazy layer's nodes, torchweb/lazy): one
thread per output element, each input buffer view loaded once, each op a `let`, each result
stored once. Several expressions over the same shape (a multi-output node) share one kernel,
and the loads of the inputs they share.

Outputs are contiguous float32 buffers of that shape; inputs are any strided views over it
(broadcasts included), indexed like kernels/elementwise.py does for a single op.
"""

import struct
from itertools import chain
from operator import attrgetter, itemgetter

from ...._size import contiguous_strides, numel
from ...pending import holds_matmul

from .bindings import declarations
from .plans import PlanCache
from ..runtime import dispatch_head
from .elementwise import FAST, WGSL_TYPE, WORKGROUP, _HELPER_RE, coalesce, fast_decl, fast_main, fast_unit, param
from .wgsl import convert, helpers_source, load, scalar_bits, scalar_read


class _Plan:
    """The walk of the expressions' keys (lazy Nodes), for generating their kernel's code (a
    cache miss only): distinct leaves (the order of the roots' leaves' first occurrences), the
    nodes in evaluation order (children first), each (op, class, args), an arg being ("t",
    distinct leaf index, class), ("s", None, class) or ("n", position in order, class), and
    the position of each root in that order."""

    def __init__(self, roots, leaf_list, occurrences):
        self.leaf_list = leaf_list
        self.rows = roots[0].ROWS   # op name -> its elementwise table row
        self.order = []
        self._occurrences = iter(occurrences)
        self.results = [self._walk(root.key) for root in roots]

    def _walk(self, key):
        name, cls = key[0]
        args = []
        for part in key[1:]:
            if type(part[0]) is not str:      # an inlined child's key
                args.append(("n", self._walk(part), part[0][1]))
            elif part[0] == "t":
                args.append(("t", next(self._occurrences), part[1]))
            else:
                args.append(("s", None, part[1]))
        self.order.append((self.rows[name], cls, args))
        return len(self.order) - 1


def _steps(rt, plan, nbuffers, nscalars):
    """A plan's dispatches as run() records them: (row head, the parameter words before the
    scalars as bytes, the scalars' packer, the words after as bytes, how many words come before)."""
    return [(dispatch_head(pid, grid, nbuffers), struct.pack(f"<{len(ints)}I", *ints),
             struct.Struct(f"<{nscalars}f").pack, struct.pack(f"<{len(tail)}I", *tail), len(ints))
            for pid, grid, ints, tail in plan]


def _scalar_bits(scalars):
    """The scalars' words where one is past float32's range (scalar_bits gives inf, as a C cast)."""
    bits = [scalar_bits(v, "f32") for v in scalars]
    return struct.pack(f"<{len(bits)}I", *bits)


_PLANS = PlanCache(FAST)
_HOLDS = {}   # run()'s keys -> whether an expression holds a deferred matmul (kernels/matmul_epilogue.py)


_EPILOGUE_RUN = [None]   # kernels/matmul_epilogue.py's run, set by its install() (it imports this module)


def _holds(keys, nroots):
    """_HOLDS[keys], made."""
    if len(_HOLDS) > 4096:
        _HOLDS.clear()
    held = _HOLDS[keys] = any(map(holds_matmul, (keys,) if nroots == 1 else keys))
    return held
_LEAVES, _SCALARS, _KEY = attrgetter("leaves"), attrgetter("scalars"), attrgetter("key")
_LAYOUT = itemgetter(slice(1, None))   # (a leaf's stride, offset and dtype)
_STORAGE = itemgetter(0)   # (a leaf's storage)


def run(outs, roots, one_kernel=False, patched=False):
    """Write outs[k] (pending storages) with the values of roots[k] (Nodes of one shape): the
    webgpu backend's run_fused. one_kernel: one dispatch (an optimizer step's kernel); patched:
    a captured call's replay recomputes its scalars (the capture notes where they are)."""
    if len(roots) == 1:
        root = roots[0]
        all_leaves, scalars, keys = root.leaves, root.scalars, root.key
    else:
        all_leaves = list(chain.from_iterable(map(_LEAVES, roots)))   # (no Python loops: C's)
        scalars = tuple(chain.from_iterable(map(_SCALARS, roots)))
        keys = tuple(map(_KEY, roots))
    held = _HOLDS.get(keys)
    if held is None:
        held = _holds(keys, len(roots))
    if held:   # (a deferred matmul in an expression: its kernel stores them)
        return _EPILOGUE_RUN[0](outs, roots)
    # distinct leaves, and which one each leaf read of the expressions is (part of the key)
    leaves = list(dict.fromkeys(all_leaves))
    if len(leaves) == len(all_leaves):
        occurrences = tuple(range(len(leaves)))
    else:   # (no Python loop over the reads: a chain of y + w reads w once per op)
        occurrences = tuple(map(dict(zip(leaves, range(len(leaves)))).__getitem__, all_leaves))
    # bind inputs first: reading their buffers writes what they depend on (recorded before us).
    # A leaf over an output's storage (lazy write_into: out=, read in the same layout; a fusing
    # scope's writes in place) reads the output's binding: one buffer bound both read-only and
    # writable is invalid. (Every thread loads its element's inputs before it stores.)
    nout = len(outs)
    stores = list(dict.fromkeys(map(_STORAGE, leaves)))
    if len(stores) == len(leaves) and set(outs).isdisjoint(stores):
        # (the common case: each leaf a buffer of its own, none an output's, in slot order)
        leaf_slots = tuple(range(nout, nout + len(stores)))
        rows = [(ls.buffer_for_read(), 0, ls.size) for ls in stores]
    else:
        slot_of = dict(zip(map(id, outs), range(nout)))
        rows = []
        leaf_slots = []
        for leaf in leaves:
            ls = leaf[0]
            sid = id(ls)
            if sid not in slot_of:
                slot_of[sid] = len(rows) + nout
                rows.append((ls.buffer_for_read(), 0, ls.size))
            leaf_slots.append(slot_of[sid])
        leaf_slots = tuple(leaf_slots)
    for k, s in enumerate(outs):
        # (a buffer with values, written in place: what else reads them runs first)
        rows.insert(k, (s.buffer_for_write() if s.touched else s._buffer_id, 0, s.size))
        s.touched = True
    rows = tuple(chain.from_iterable(rows))
    rt = outs[0].rt
    if rt.capture is not None:    # (a captured program's outputs that outlive it are held by it)
        for s in outs:
            rt.capture.storages[s._buffer_id] = s
    # a training step realizes the same expressions over the same layouts every time: their
    # dispatches (row heads, parameter words but the scalars) are planned once
    sig = (keys, occurrences, roots[0].shape, leaf_slots, tuple(map(_LAYOUT, leaves)), one_kernel)
    steps = _PLANS.get(rt, sig)
    if steps is None:
        steps = _steps(rt, _plan(rt, roots, keys, leaves, occurrences, leaf_slots, one_kernel),
                       len(rows) // 3, len(scalars))
        _PLANS.put(sig, steps)
    for head, before, pack, after, nints in steps:
        try:
            packed = pack(*scalars)
        except (OverflowError, struct.error):
            packed = _scalar_bits(scalars)
        rt.record(head, before + packed + after, rows)
    if patched and scalars and rt.capture is not None:
        rt.capture.note_scalars(nints, len(scalars))


def _plan(rt, roots, keys, leaves, occurrences, leaf_slots, one_kernel):
    """The call's dispatches: [(pipeline id, grid, parameter words before the scalars, after)]."""
    nout = len(roots)
    nscalars = sum([len(root.scalars) for root in roots])
    shape = roots[0].shape
    n = numel(shape)
    nbuf = max(nout, 1 + max(leaf_slots, default=0))
    contiguous = list(contiguous_strides(shape))
    cshape, strides = coalesce(list(shape) or [1], [contiguous or [1]] +
                               [list(leaf[1]) or [0] for leaf in leaves])
    ndim = len(cshape)
    params = [n] + list(cshape)
    offsets = [0] + [leaf[2] for leaf in leaves]
    for off, st in zip(offsets, strides):
        params.append(off)
        params.extend(st)
    storages = ["f32"] * nout + [leaves[leaf_slots.index(s)][3].gpu_storage for s in range(nout, nbuf)]
    kinds = ["uniform"] + ["write"] * nout + ["read"] * (nbuf - nout)
    plan = []
    done = 0
    structure = (keys, nout, occurrences)
    if FAST["vec"] and ndim == 1 and n >= max(FAST["min"], 4) and all(st[0] == 1 for st in strides):
        done = _plan_fast(rt, roots, structure, leaves, leaf_slots, storages, kinds, offsets, n, nscalars, plan,
                          one_kernel)
        if done == n:
            return plan
    # the generic kernel starts at element `done` (the fast path's tail): its last parameter
    key = ("fused", structure, ndim, tuple(leaf_slots), tuple(storages))
    nparams = len(params) + nscalars + 1

    def make_code():
        return _source(_Plan(roots, leaves, occurrences), nout, leaf_slots, storages, ndim, nparams)

    pid = rt.pipeline(key, make_code, kinds)
    plan.append((pid, rt.grid(-(-(n - done) // WORKGROUP)), params, (done,)))
    return plan


def _plan_fast(rt, roots, structure, leaves, leaf_slots, storages, kinds, offsets, n, nscalars, plan, one_kernel):
    """The contiguous fast path (elementwise.FAST) over the first n - n % unit elements: its
    dispatch appended to plan; returns how many elements it covers (one_kernel: all of them)."""
    unit = fast_unit(offsets, storages)
    if one_kernel and n % unit:
        unit = 1
    wg, per = FAST["wg"], FAST["per"]
    units = n // unit
    params = [units] + [o // unit for o in offsets]
    nparams = len(params) + nscalars
    key = ("fused_fast", structure, tuple(leaf_slots), tuple(storages), unit, wg, per)

    def make_code():
        return _fast_source(_Plan(roots, leaves, structure[2]), len(roots), leaf_slots, storages, nparams,
                            unit, wg, per)

    pid = rt.pipeline(key, make_code, kinds)
    plan.append((pid, rt.grid(-(-units // (wg * per))), params, ()))
    return units * unit


def _fast_source(plan, nout, leaf_slots, storages, nparams, unit, wg, per):
    leaves = plan.leaf_list
    body = []
    for idx in range(len(leaves)):
        body.append(f"  let t{idx} = B{leaf_slots[idx]}[{param(2 + idx)} + u];")
    comps = ("x", "y", "z", "w") if unit == 4 else ("",)
    values = []
    for c in comps:
        read = (lambda idx: f"t{idx}.{c}") if c else (lambda idx: f"t{idx}")
        values.append(_element_lines(plan, body, read, 2 + len(leaves), "_" + (c or "s")))
    for k in range(nout):
        parts = [v[k] for v in values]
        body.append(f"  B{k}[u] = " + (f"vec4<f32>({', '.join(parts)})" if unit == 4 else parts[0]) + ";")
    helpers = helpers_source(set(_HELPER_RE.findall("\n".join(body))))
    return _writable(fast_decl(nparams, storages, unit), nout) + "\n" + helpers + "\n" + fast_main(body, wg, per)


def _writable(decl, nout):
    """Declarations whose first nout buffers (the outputs) are read_write."""
    for k in range(1, nout):
        decl = decl.replace(f"var<storage, read> B{k}:", f"var<storage, read_write> B{k}:")
    return decl


def _element_lines(plan, body, read, first_scalar, sfx):
    """Append to body the lines computing one element of every output; returns their f32
    values (the names of the roots' lets).
    read(leaf index): the storage expression of that leaf's element."""
    leaves = plan.leaf_list
    loaded = {}

    def leaf_expr(idx, wt):
        name = loaded.get((idx, wt))
        if name is None:
            name = loaded[(idx, wt)] = f"a{idx}_{wt}{sfx}"
            body.append(f"  let {name} = {load(read(idx), leaves[idx][3].gpu_storage, wt)};")
        return name

    sk = first_scalar
    for j, (op, cls, args) in enumerate(plan.order):
        values = []
        for kind, v, c in args:
            wt = WGSL_TYPE[c]
            if kind == "t":
                values.append(leaf_expr(v, wt))
            elif kind == "s":
                values.append(scalar_read(param(sk), wt))
                sk += 1
            else:
                values.append(convert(f"v{v}{sfx}", "f32", wt))
        body.append(f"  let v{j}{sfx} = {op.wgsl[cls].format(*values)};")
    # the roots: float32 values (the lazy layer defers only those) into float32 buffers
    return [f"v{j}{sfx}" for j in plan.results]


def _source(plan, nout, leaf_slots, storages, ndim, nparams):
    leaves = plan.leaf_list
    body = [f"  let i = {param(nparams - 1)} + (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;",
            f"  if (i >= {param(0)}) {{ return; }}",
            "  var r = i;"]
    ntensors = 1 + len(leaves)
    base = 1 + ndim
    _offset_lines(body, range(1, ntensors), ndim, 1, base)
    read = lambda idx: f"B{leaf_slots[idx]}[o{idx + 1}]"   # noqa: E731
    values = _element_lines(plan, body, read, base + ntensors * (ndim + 1), '')
    body.extend([f"  B{k}[i] = {v};" for k, v in enumerate(values)])
    decl = _writable(declarations(nparams, storages), nout)
    helpers = helpers_source(set(_HELPER_RE.findall("\n".join(body))))
    return (decl + "\n" + helpers + "\n"
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")


def _offset_lines(body, tensors, ndim, dims_at, base):
    """Append to body the lines giving o{k}, tensor k's element for the output element r
    (consumed): the coalesced dims are parameters dims_at.., tensor k's offset and strides
    base + k * (ndim + 1)..."""
    for k in tensors:
        body.append(f"  var o{k} = {param(base + k * (ndim + 1))};")
    for d in reversed(range(ndim)):
        step = "let c = r;" if d == 0 else f"let c = r % {param(dims_at + d)}; r = r / {param(dims_at + d)};"
        body.append(f"  {{ {step}")
        for k in tensors:
            body.append(f"    o{k} = o{k} + c * {param(base + k * (ndim + 1) + 1 + d)};")
        body.append("  }")


# The epilogue of another kernel (a matmul's, kernels/matmul_epilogue.py): the expression of
# a node one of whose leaves is that kernel's value, evaluated per output element as it stores.

def epilogue_layout(shape, leaves, value):
    """(ndim, parameter words) of an epilogue over contiguous `shape` reading `leaves`
    (distinct; leaves[value] is the kernel's value, not read): the coalesced dims, then each
    leaf's offset and strides (the scalars follow, as float32: epilogue_words)."""
    contiguous = list(contiguous_strides(shape)) or [1]
    cshape, strides = coalesce(list(shape) or [1], [contiguous] + [
        contiguous if k == value else list(leaf[1]) or [0] for k, leaf in enumerate(leaves)])
    ints = list(cshape)
    for k, (leaf, st) in enumerate(zip(leaves, strides[1:])):
        ints.append(0 if k == value else leaf[2])
        ints.extend(st)
    return len(cshape), ints


def epilogue_words(ints, scalars):
    """The parameter bytes of an epilogue: epilogue_layout's words, then the scalars."""
    try:
        packed = struct.pack(f"<{len(scalars)}f", *scalars)
    except (OverflowError, struct.error):
        packed = _scalar_bits(scalars)
    return struct.pack(f"<{len(ints)}I", *ints) + packed


def epilogue_source(roots, leaves, occurrences, value, slots, ndim, first_param, stores=()):
    """WGSL `fn tw_epilogue(i: u32, x: f32) -> f32`: the value of roots[0] (a Node) at output
    element i where its leaf `value` (an index into the distinct `leaves`) is x; the other
    leaves read from buffers B{slots[k]} (declared by the caller), the parameters from
    first_param on (epilogue_layout's words), then its helpers. stores: (slot, bare) of
    contiguous float32 buffers the function also writes at element i, x itself where bare,
    else the next of roots[1:] in order."""
    plan = _Plan(roots, leaves, occurrences)
    tensors = [k + 1 for k in range(len(leaves)) if k != value]
    body = ["  var r = i;"]
    _offset_lines(body, tensors, ndim, first_param, first_param + ndim - (ndim + 1))
    read = lambda idx: "x" if idx == value else f"B{slots[idx]}[o{idx + 1}]"   # noqa: E731
    result, *others = _element_lines(plan, body, read, first_param + ndim + len(leaves) * (ndim + 1), "")
    others = iter(others)
    body.extend(f"  B{slot}[i] = {'x' if bare else next(others)};" for slot, bare in stores)
    body.append(f"  return {result};")
    helpers = helpers_source(set(_HELPER_RE.findall("\n".join(body))))
    return helpers + "\nfn tw_epilogue(i: u32, x: f32) -> f32 {\n" + "\n".join(body) + "\n}\n"
