"""Elementwise kernels: any op of the table over any rank, broadcast and strided operands,
an optionally strided output, one thread per output element.

Operands that live in the same buffer share one binding (WebGPU forbids binding a buffer
twice when one binding is writable): in-place ops read and write through binding 1.
"""

import re
import struct
from itertools import compress, repeat
from operator import attrgetter

from .. import errors as ERR
from .bindings import bind_rows, declarations
from .plans import PlanCache
from ..runtime import dispatch_head
from .wgsl import helpers_source, load, scalar_bits, scalar_read, store

WGSL_TYPE = {"f": "f32", "i": "i32", "u": "u32", "b": "bool"}
WORKGROUP = 256
# The contiguous fast path (every tensor operand laid out like out: same shape, stride 1, no
# broadcast): no index arithmetic, `per` units a thread, a unit being a vec4 (`vec` 4, where
# every offset is a multiple of 4 and no operand is float16) or one element (`vec` 1); `vec` 0
# turns the path off. Below `min` elements the generic kernel does (small ops: one pipeline
# fewer to compile, nothing to gain). bench/bandwidth.py sets these to compare variants;
# pipelines are keyed on them.
FAST = {"vec": 4, "per": 2, "wg": 256, "min": 16384}   # per 2: best mean of two H100 runs (1, 2, 4, 8)
_HELPER_RE = re.compile(r"tw_(\w+)\(")


def coalesce(shape, strides_list):
    """Drop size-1 dims and merge neighbours that are contiguous for every operand."""
    dims = [(s, [st[i] for st in strides_list]) for i, s in enumerate(shape) if s != 1]
    if not dims:
        return [1], [[0] for _ in strides_list]
    merged = [dims[0]]
    for size, strides in dims[1:]:
        psize, pstrides = merged[-1]
        if all(ps == s * size for ps, s in zip(pstrides, strides)):
            merged[-1] = (psize * size, strides)
        else:
            merged.append((size, strides))
    return [m[0] for m in merged], [[m[1][k] for m in merged] for k in range(len(strides_list))]


_PLANS = PlanCache(FAST)


_LAYOUT = attrgetter("_stride", "_offset", "dtype")
_STORAGE_ATTR = repeat("_storage")   # (never exhausted: shared by every call's map)
_CHECKED = "checked"   # a plan of _PLANS: the call's kernel reports errors (planned each time)


def run(rt, op, out, operands, dtypes):
    """out[...] = op(operands...), each operand computed in its dtype and class (dtypes, a
    backends/plans.py ElementwiseDtypes). A call seen before (the same op, dtype plan, layouts
    and shared buffers; other numbers) reuses its dispatches: only the numbers' words are new."""
    n = out.numel()
    if n == 0:
        return
    is_tensor = tuple(map(hasattr, operands, _STORAGE_ATTR))   # (C loops, no comprehension's)
    tensors = [out, *compress(operands, is_tensor)]
    rows, slots = bind_rows(*tensors)
    sig = (op.name, dtypes, out.dtype, out._shape, slots, tuple(map(_LAYOUT, tensors)), is_tensor)
    plan = _PLANS.get(rt, sig)
    if plan is None:   # (whether it checks errors follows from the signature too)
        checks = _checks(op, out, operands, dtypes.cls, dtypes.value_cls)
        plan = _CHECKED if checks else _steps(_plan(rt, op, out, operands, dtypes, tensors, slots, (), n),
                                              len(rows) // 3)
        _PLANS.put(sig, plan)
    if plan is _CHECKED:   # (each error-checked dispatch takes its own tag)
        checks = _checks(op, out, operands, dtypes.cls, dtypes.value_cls)
        dispatches, numbers = _plan(rt, op, out, operands, dtypes, tensors, slots, checks, n)
        words = [scalar_bits(operands[i], wgsl_type) & mask for i, wgsl_type, mask in numbers]
        buffers = list(zip(rows[0::3], rows[2::3])) + [rt.errors.binding]
        for pid, grid, ints, tail in dispatches:
            rt.dispatch(pid, grid, buffers, struct.pack(f"<{len(ints) + len(words) + len(tail)}I", *ints, *words,
                                                        *tail))
        return
    steps, numbers, pack = plan
    packed = pack(*[scalar_bits(operands[i], wgsl_type) & mask for i, wgsl_type, mask in numbers]) if numbers else b""
    for head, before, after in steps:
        rt.record(head, before + packed + after, rows)


def _steps(plan, nbuffers):
    """_plan's unchecked dispatches as run() records them: ([(row head, parameter words before
    the numbers' as bytes, after)], the numbers, their words' packer)."""
    dispatches, numbers = plan
    steps = [(dispatch_head(pid, grid, nbuffers), struct.pack(f"<{len(ints)}I", *ints),
              struct.pack(f"<{len(tail)}I", *tail)) for pid, grid, ints, tail in dispatches]
    return steps, numbers, struct.Struct(f"<{len(numbers)}I").pack


def _plan(rt, op, out, operands, dtypes, tensors, slots, checks, n):
    """The call's dispatches, [(pipeline id, grid, parameter words before the numbers', after)],
    and its numbers, [(operand index, WGSL type, mask)] (their words follow the ints)."""
    classes, cls, value_cls = dtypes.classes, dtypes.cls, dtypes.value_cls
    strides = [list(t._stride) for t in tensors]
    shape, strides = coalesce(out.shape, strides)
    ndim = len(shape)
    nbuffers = 1 + len(set(slots) - {0})
    slots = iter(slots)
    desc = []
    computed_in = [d.name for d in dtypes.compute]
    numbers = []
    for i, (o, c, name) in enumerate(zip(operands, classes, computed_in)):
        if hasattr(o, "_storage"):
            w = _narrowing(o, name)
            desc.append(("t", o.dtype.gpu_storage, c, next(slots), w))
        else:
            desc.append(("s", None, c, None, False))
            numbers.append((i, WGSL_TYPE[c], 0xFF if name == "uint8" else 0xFFFFFFFF))
    # (an error-checked kernel's tag, a new one for each dispatch, is its last parameter word)
    tail = (lambda: [rt.errors.tag(_USER_NAME.get(op.name, op.name))]) if checks else list
    binding_kinds = ["uniform", "write"] + ["read"] * (nbuffers - 1) + (["write"] if checks else [])
    key = ("ew", op.name, cls, value_cls, out.dtype.name, ndim, tuple(desc), checks)

    dispatches = []
    offsets = [t._offset for t in tensors]
    if FAST["vec"] and ndim == 1 and n >= max(FAST["min"], 4) and _contiguous_alike(tensors, strides, offsets):
        done = _plan_fast(rt, op, out, cls, value_cls, desc, nbuffers, checks, offsets, n, len(numbers), tail,
                          binding_kinds, dispatches)
        if done == n:
            return dispatches, numbers
        # the last n % 4 elements: the generic kernel below, from element `done` on
        n = n - done
        shape = [n]
        offsets = [o + done for o in offsets]
    params = [n] + list(shape)
    for off, st in zip(offsets, strides):
        params.append(off)
        params.extend(st)
    nparams = len(params) + len(numbers) + bool(checks)

    def make_code():
        return _source(op, cls, value_cls, out.dtype, ndim, desc, nbuffers, nparams, checks)

    pid = rt.pipeline(key, make_code, binding_kinds)
    dispatches.append((pid, rt.grid(-(-n // WORKGROUP)), params, tail()))
    return dispatches, numbers


# what the user called, for error messages, where the table's row name differs
_USER_NAME = {"div_floor": "floor_divide", "div_trunc": "div(rounding_mode='trunc')", "add_alpha": "add",
              "sub_alpha": "sub", "copy": "a conversion to int64"}


def _checks(op, out, operands, cls, value_cls):
    """What the kernel must report (errors.py): a zero integer divisor held in a tensor
    (scalars are checked on the host), and int64 results past the 32 bits held."""
    zero = op.divisor >= 0 and cls in ("i", "u") and hasattr(operands[op.divisor], "_storage")
    wide = out.dtype.name == "int64" and ((cls == "i" and value_cls == "i" and bool(op.wide))
                                          or value_cls == "f")   # a float converted to int64
    return (zero, wide) if zero or wide else ()


def _narrowing(t, computed_in):
    """How an operand tensor is narrowed to the dtype its op computes in, as PyTorch casts
    operands to the common dtype: wider ints wrap to uint8 ("u8"); ints and floats round to
    float16 ("f16": 70000 becomes inf) or bfloat16 ("bf16")."""
    if computed_in == "uint8" and t.dtype.name not in ("uint8", "bool"):
        return "u8"
    if computed_in == "float16" and t.dtype.name != "float16":
        return "f16"
    if computed_in == "bfloat16" and t.dtype.name != "bfloat16":
        return "bf16"
    return False


def param(i):
    return f"P[{i // 4}][{i % 4}]"


def strided_offsets(ndim, ntensors):
    """WGSL lines: o0, o1, ... the offsets in each of ntensors tensors of the element at flat
    index r (taken apart), from the params: 1..ndim the shape, then per tensor its offset and
    ndim strides."""
    base = 1 + ndim
    body = [f"  var o{k} = {param(base + k * (ndim + 1))};" for k in range(ntensors)]
    for d in reversed(range(ndim)):
        # the outermost coordinate is what is left of r: no division needed
        step = "let c = r;" if d == 0 else f"let c = r % {param(1 + d)}; r = r / {param(1 + d)};"
        body.append(f"  {{ {step}")
        for k in range(ntensors):
            body.append(f"    o{k} = o{k} + c * {param(base + k * (ndim + 1) + 1 + d)};")
        body.append("  }")
    return body


def _source(op, cls, value_cls, out_dtype, ndim, desc, nbuffers, nparams, checks=()):
    storage_of = {0: out_dtype.gpu_storage}
    for kind, st, _, slot, _w in desc:
        if kind == "t":
            storage_of.setdefault(slot, st)
    decl = declarations(nparams, [storage_of[slot] for slot in range(nbuffers)])
    if checks:
        decl += f"\n@group(0) @binding({nbuffers + 1}) " + ERR.WGSL_DECL

    body = []
    body.append(f"  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;")
    body.append(f"  if (i >= {param(0)}) {{ return; }}")
    body.append("  var r = i;")
    ntensors = 1 + sum(1 for d in desc if d[0] == "t")
    base = 1 + ndim
    body += strided_offsets(ndim, ntensors)
    lines, value = _element(op, cls, value_cls, out_dtype, desc, checks, param(nparams - 1),
                            lambda tk, slot: f"B{slot}[o{tk}]", base + ntensors * (ndim + 1), "")
    body += lines
    body.append(f"  B0[o0] = {value};")
    helpers = helpers_source(set(_HELPER_RE.findall("\n".join(body))))
    return (decl + "\n" + helpers + "\n"
            f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(body) + "\n}\n")


def _element(op, cls, value_cls, out_dtype, desc, checks, tag, read, first_scalar, sfx):
    """WGSL lines computing one output element, and the value to store (out's storage type).
    read(tk, slot): the storage expression of tensor operand tk (1-based); scalars are params
    from first_scalar on; sfx tells apart the names of several elements in one thread."""
    body, args = [], []
    tk, sk = 1, first_scalar
    for j, (kind, st, c, slot, w) in enumerate(desc):
        wt = WGSL_TYPE[c]
        if kind == "t":
            expr = load(read(tk, slot), st, wt)
            if w == "u8":
                expr = f"({expr} & 255u)"
            elif w == "f16":
                expr = f"tw_f16round({expr})"
            elif w == "bf16":
                expr = f"tw_bf16round({expr})"
            tk += 1
        else:
            expr = scalar_read(param(sk), wt)
            sk += 1
        body.append(f"  let a{j}{sfx} = {expr};")
        args.append(f"a{j}{sfx}")
    expr = op.wgsl[cls].format(*args)
    zero, wide = checks or (False, False)
    if zero:
        body.append(f"  if (a{op.divisor}{sfx} == {'0i' if cls == 'i' else '0u'}) {{ {ERR.wgsl_raise(ERR.ZERO_DIVISION, tag)} }}")
    if wide and value_cls == "f":
        # float -> int64: values past int32 (and NaN) can't be held; PyTorch's int64 has them
        body.append(f"  let v{sfx} = {expr};")
        body.append(f"  if (tw_isnan(v{sfx}) || v{sfx} < -2147483648.0 || v{sfx} >= 2147483648.0) {{ {ERR.wgsl_raise(ERR.INT64_RANGE, tag)} }}")
        expr = f"v{sfx}"
    elif wide:
        body.append(f"  let w{sfx} = {op.wide.format(*args)};")
        body.append(f"  if (!tw_wfits(w{sfx})) {{ {ERR.wgsl_raise(ERR.INT64_RANGE, tag)} }}")
        expr = f"bitcast<i32>(w{sfx}.x)"
    return body, store(expr, WGSL_TYPE[value_cls], out_dtype)


def _contiguous_alike(tensors, strides, offsets):
    """Every tensor is read and written as out is (coalesced to one dim of stride 1); an
    operand in out's buffer only exactly in place (a shifted overlap keeps the generic order)."""
    out_storage = tensors[0]._storage
    for t, st, off in zip(tensors, strides, offsets):
        if st[0] != 1 or (t._storage is out_storage and off != offsets[0]):
            return False
    return True


def fast_unit(offsets, storages):
    """The unit of the fast path: 4 (vec4 loads/stores) where FAST allows it, offsets are
    multiples of 4 and no storage is float16; else 1."""
    if FAST["vec"] == 4 and all(o % 4 == 0 for o in offsets) and "f16" not in storages:
        return 4
    return 1


def fast_decl(nparams, storages, unit):
    """declarations() with each buffer an array of vec4s when unit is 4."""
    lines = ["enable f16;"] if "f16" in storages else []
    lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
    for s, st in enumerate(storages):
        access = "read_write" if s == 0 else "read"
        el = f"vec4<{st}>" if unit == 4 else st
        lines.append(f"@group(0) @binding({s + 1}) var<storage, {access}> B{s}: array<{el}>;")
    return "\n".join(lines)


def fast_main(body, wg, per):
    """The entry point looping over a thread's `per` units (u: the unit index, coalesced:
    the workgroup's threads take neighbouring units at each step); body uses u."""
    return (f"@compute @workgroup_size({wg})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32) {\n"
            f"  let g = (wid.y * nwg.x + wid.x) * {wg * per}u + lid;\n"
            f"  for (var j = 0u; j < {per}u; j = j + 1u) {{\n"
            f"    let u = g + j * {wg}u;\n"
            f"    if (u >= {param(0)}) {{ return; }}\n" + "\n".join("  " + b for b in body) + "\n  }\n}\n")


def _plan_fast(rt, op, out, cls, value_cls, desc, nbuffers, checks, offsets, n, nnumbers, tail, binding_kinds,
               dispatches):
    """The contiguous fast path over the first n - n % unit elements: its dispatch appended to
    dispatches (as _plan's); returns how many elements it covers."""
    storage_of = {0: out.dtype.gpu_storage}
    for kind, st, _, slot, _w in desc:
        if kind == "t":
            storage_of.setdefault(slot, st)
    storages = [storage_of[s] for s in range(nbuffers)]
    unit = fast_unit(offsets, storages)
    wg, per = FAST["wg"], FAST["per"]
    units = n // unit
    params = [units] + [o // unit for o in offsets]
    nparams = len(params) + nnumbers + bool(checks)
    key = ("ew_fast", op.name, cls, value_cls, out.dtype.name, tuple(desc), checks, unit, wg, per)

    def make_code():
        body = []
        ntensors = len(offsets)
        for tk in range(1, ntensors):
            slot = [d[3] for d in desc if d[0] == "t"][tk - 1]
            body.append(f"  let t{tk} = B{slot}[{param(1 + tk)} + u];")
        comps = ("x", "y", "z", "w") if unit == 4 else ("",)
        values = []
        for c in comps:
            lines, value = _element(op, cls, value_cls, out.dtype, desc, checks, param(nparams - 1),
                                    lambda tk, slot: f"t{tk}{'.' + c if c else ''}", 1 + ntensors, "_" + (c or "s"))
            body += lines
            values.append(value)
        st = storages[0]
        body.append(f"  B0[{param(1)} + u] = " + (f"vec4<{st}>({', '.join(values)})" if unit == 4 else values[0]) + ";")
        decl = fast_decl(nparams, storages, unit)
        if checks:
            decl += f"\n@group(0) @binding({len(storages) + 1}) " + ERR.WGSL_DECL
        helpers = helpers_source(set(_HELPER_RE.findall("\n".join(body))))
        return decl + "\n" + helpers + "\n" + fast_main(body, wg, per)

    pid = rt.pipeline(key, make_code, binding_kinds)
    dispatches.append((pid, rt.grid(-(-units // (wg * per))), params, tail()))
    return units * unit
