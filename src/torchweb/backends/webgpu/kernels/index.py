"""Index kernels: gather and scatter through index tensors, and mask compaction.

One generator serves every gather/scatter op (gather, index_select, take, tensor indexing,
scatter*, index_put_, index_add_, index_copy_, index_fill_, put_): the op runs over an iteration
space S (the shape of its index or output), and each position p of S reaches one element of the
indexed tensor T at

    T._offset + sum_j p[j] * T._stride[walk[j]]   (the dims of T that S walks)
              + sum_k idx_k[p] * T._stride[dim_k]  (the dims of T chosen by index tensors)

where idx_k is an index tensor already broadcast (expanded, stride 0) to S. An index outside
[0, T.shape[dim_k]) (after adding the size to negatives, for the ops that allow them) raises
errors.INDEX with the op's own exception type at the next readback, and the thread writes nothing.

Scatter reductions: WGSL has atomics only for 32-bit integers. A thread per *source* element
combines into the destination word with an atomic compare-exchange loop on the bit pattern
(array<atomic<u32>>): read the word, combine in the value's type (f32 add/multiply/max/min,
i32, u32 wrapped to 8 bits for uint8, logical for bool), swap it in only if the word is
unchanged, else retry with what another thread wrote. Work is O(n) with no sort; duplicates
contend only on their own word. The order of combining duplicates is not fixed, so float sums
and products may differ from PyTorch's sequential CPU loop in the last bits (rounding only).
Plain 32-bit integer sums use atomicAdd. int64 sums (held as i32) accumulate exactly in 64 bits
as (lo, hi) word pairs in a scratch buffer (the carry of each atomicAdd on lo goes into hi),
then are checked to fit the 32 bits held (errors.INT64_RANGE). float16 destinations have no
16-bit atomics: the lowering step (ops/lowering.py) widens them to float32 first.
"""

import struct

from .. import errors as ERR
from .bindings import bind, declarations, kinds
from .elementwise import WORKGROUP, coalesce, param, strided_offsets
from .wgsl import cas_key, cas_loop, convert, helpers_source, load, scalar_bits, scalar_read, store
from .... import _dtype as D
from ..storage import GPUStorage

# what a float sum that ran out of compare-exchange retries suggests instead
_CAS_HINT = ("A deterministic alternative without atomics: a one-hot matmul, e.g. "
             "torch.nn.functional.one_hot(index, n).to(src.dtype).T @ src for rows added along dim 0; "
             "or run the op on the cpu device.")

MAX_INDEX_BUFFERS = 4  # distinct index storages one dispatch binds (8 storage buffers per stage)

_HEAD = ("@compute @workgroup_size({wg})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32) {{\n"
         "  let i = (wid.y * nwg.x + wid.x) * {wg}u + lid;\n").format(wg=WORKGROUP)


class _Buf:
    """A scratch storage seen as a bindable operand (bind() reads ._storage)."""

    def __init__(self, storage):
        self._storage = storage


def gather(rt, out, src, walk, indices, check, win=None):
    """out (contiguous, shape S) = src at each position of S (see the module's docstring).
    walk[j]: src's dim walked by S's dim j, or None; indices: [(idx, dim, wrap)], idx expanded
    to S; check: (op name, exception class) for out-of-range indices. win: (lo, hi), src seen
    through a window of its buffer (windows.py): only the positions whose element of src lies
    in [lo, hi) of it are done (another window does the rest)."""
    _run(rt, "gather", src, out, walk, indices, check, None, None, win)


def scatter(rt, dst, src, walk, indices, reduce, check, win=None):
    """dst at each position p of S (op)= src[p] (src: a tensor expanded to S, or a number).
    reduce: None (assign: with duplicate indices one of the values wins), "sum", "prod",
    "amax", "amin". dst must not be float16 when reducing (no 16-bit atomics). win: as
    gather's, for dst."""
    if reduce == "sum" and dst.dtype.name == "int64":   # (not split: index.py refuses it windowed)
        _scatter_int64_sum(rt, dst, src, walk, indices, check)
        return
    _run(rt, "scatter", dst, src, walk, indices, check, reduce, None, win)


def _run(rt, mode, target, other, walk, indices, check, reduce, pairs, win=None):
    """mode "gather": target is src, other is out; "scatter": target is dst, other is src.
    pairs: (scratch, lo) for the int64 sum's (lo, hi) accumulation. win: (lo, hi) elements of
    target's buffer this dispatch does (gather's docstring); target's offset may then be
    negative (its view starts before the window): it is taken modulo 2**32, as is the element
    index the kernel computes, whose range check skips what lies outside."""
    S = tuple(other.shape) if mode == "gather" or hasattr(other, "_storage") else tuple(indices[0][0].shape)
    n = 1
    for s in S:
        n *= s
    if n == 0:
        return
    scalar = mode == "scatter" and not hasattr(other, "_storage")
    walkers = [(target._offset, [target._stride[w] if w is not None else 0 for w in walk])]
    if not scalar:
        walkers.append((other._offset, list(other._stride)))
    for idx, _, _ in indices:
        walkers.append((idx._offset, list(idx._stride)))
    shape, strides = coalesce(S, [w[1] for w in walkers])
    nd = len(shape)
    # bindings: the written tensor first
    written = other if mode == "gather" else (_Buf(pairs[0]) if pairs else target)
    read = ([target] if mode == "gather" else ([] if scalar else [other])) + [idx for idx, _, _ in indices]
    buffers, slots = bind(written, *read)
    binding_kinds = kinds(buffers)
    atomic = mode == "scatter" and (reduce is not None or pairs is not None)
    if mode == "gather":
        storages = [other.dtype.gpu_storage] + [None] * (len(buffers) - 1)
        storages[slots[0]] = target.dtype.gpu_storage
        idx_slots = slots[1:]
        val_slot = None
    else:
        storages = ["atomic<u32>" if atomic else target.dtype.gpu_storage] + [None] * (len(buffers) - 1)
        val_slot = None if scalar else slots[0]
        if val_slot is not None:
            storages[val_slot] = other.dtype.gpu_storage
        idx_slots = slots[0 if scalar else 1:]
    for s in idx_slots:
        storages[s] = "i32"
    ntensors = len(walkers)
    params = [n] + list(shape)
    for (off, _), st in zip(walkers, strides):
        params.append(off)
        params.extend(st)
    for idx, dim, wrap in indices:
        params += [target.shape[dim], target._stride[dim]]
    if win is not None:
        params += [win[0], win[1]]
    compute = target.dtype.gpu_compute if target.dtype.name != "bool" else "u32"
    if scalar:
        params.append(scalar_bits(other, "i32" if compute == "i32" else compute))
    if pairs:
        params.append(pairs[1])
    wide_check = reduce == "prod" and target.dtype.name == "int64"
    cas = atomic and pairs is None and not (reduce == "sum" and target.dtype.name in ("int32", "int64"))
    if cas:   # a compare-exchange loop may run out of retries (errors.CONTENTION)
        tag = rt.errors.tag(check[0] if check else "scatter", check[1] if check else None, None,
                            _CAS_HINT if reduce == "sum" and target.dtype.is_floating_point else None)
    else:
        tag = rt.errors.tag(check[0], check[1]) if check else 0
    params.append(tag)
    buffers = buffers + [rt.errors.binding]
    binding_kinds = binding_kinds + ["write"]
    desc = (mode, target.dtype.name, None if scalar else (other.dtype.name if hasattr(other, "dtype") else None),
            nd, ntensors, tuple(w for _, _, w in indices), tuple(slots), reduce, bool(pairs), wide_check,
            win is not None)
    nparams = len(params)

    def make_code():
        return _source(desc, storages, nparams, scalar, target, other)

    pid = rt.pipeline(("index",) + desc + (cas_key() if cas else ()), make_code, binding_kinds)
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers,
                struct.pack(f"<{nparams}I", *[p & 0xFFFFFFFF for p in params]) if win else
                struct.pack(f"<{nparams}I", *params))


def _source(desc, storages, nparams, scalar, target, other):
    mode, tdt, odt, nd, ntensors, wraps, slots, reduce, pairs, wide_check, windowed = desc
    decl = declarations(nparams, storages)
    decl += f"\n@group(0) @binding({len(storages) + 1}) " + ERR.WGSL_DECL
    tag = param(nparams - 1)
    body = [f"  if (i >= {param(0)}) {{ return; }}", "  var r = i;"]
    base = 1 + nd
    body += strided_offsets(nd, ntensors)
    pk = base + ntensors * (nd + 1)   # index (size, stride) pairs start here
    first_idx = 1 if (mode == "scatter" and scalar) else 2
    idx_slot_list = list(slots[1:]) if mode == "gather" else list(slots[0 if scalar else 1:])
    body.append("  var a = o0;")
    for k, wrap in enumerate(wraps):
        size, stride = param(pk + 2 * k), param(pk + 2 * k + 1)
        body.append(f"  {{ var v = B{idx_slot_list[k]}[o{first_idx + k}];")
        if wrap:
            body.append(f"    if (v < 0i) {{ v = v + bitcast<i32>({size}); }}")
        body.append(f"    if (v < 0i || u32(v) >= {size}) {{ {ERR.wgsl_raise(ERR.INDEX, tag)} return; }}")
        body.append(f"    a = a + u32(v) * {stride}; }}")
    sk = pk + 2 * len(wraps)
    if windowed:   # (a u32: an element before the window wrapped past its end)
        body.append(f"  if (a < {param(sk)} || a >= {param(sk + 1)}) {{ return; }}")
        sk += 2
    tst = storages[0] if mode == "gather" else target.dtype.gpu_storage
    if mode == "gather":
        body.append(f"  B0[o1] = B{slots[0]}[a];")
    else:
        compute = {"float16": "f32", "bfloat16": "f32", "float32": "f32", "int32": "i32", "int64": "i32"}.get(tdt, "u32")
        if scalar:
            val = scalar_read(param(sk), compute)
            sk += 1
        else:
            ost = storages[slots[0]]
            val = load(f"B{slots[0]}[o1]", ost, "bool" if tdt == "bool" else compute)
            if tdt == "bool":
                val = convert(val, "bool", "u32")
            elif tdt == "uint8" and odt != "uint8":
                val = f"({val} & 255u)"
        body.append(f"  let val = {val};")
        if pairs:
            lo = param(sk)
            body += ["  let e = a - " + lo + ";",
                     "  let w = tw_w(val);",
                     "  let old = atomicAdd(&B0[2u * e], w.x);",
                     "  let carry = select(0u, 1u, old + w.x < old);",
                     "  atomicAdd(&B0[2u * e + 1u], w.y + carry);"]
        elif reduce is None:
            body.append(f"  B0[a] = {store('val', compute, target.dtype)};")
        elif reduce == "sum" and tdt in ("int32", "int64"):
            body.append("  atomicAdd(&B0[a], bitcast<u32>(val));")
        else:
            body += _cas(reduce, tdt, tag, wide_check)
    helpers = set()
    code = "\n".join(body)
    for h in ("isnan", "maxf", "minf", "w", "wmul", "wfits"):
        if f"tw_{h}(" in code:
            helpers.add(h)
    return decl + "\n" + helpers_source(helpers) + "\n" + _HEAD + code + "\n}\n"


def _cas(reduce, tdt, tag, wide_check):
    """The compare-exchange loop combining val into the word B0[a] (tag: the dispatch's, for
    INT64_RANGE when wide_check and for CONTENTION)."""
    if tdt in ("float32", "float16"):
        read, write = "bitcast<f32>(old)", "bitcast<u32>({})"
        comb = {"sum": "{a} + {b}", "prod": "{a} * {b}", "amax": "tw_maxf({a}, {b})",
                "amin": "tw_minf({a}, {b})"}[reduce]
    elif tdt in ("int32", "int64"):
        read, write = "bitcast<i32>(old)", "bitcast<u32>({})"
        comb = {"sum": "{a} + {b}", "prod": "{a} * {b}", "amax": "max({a}, {b})", "amin": "min({a}, {b})"}[reduce]
    elif tdt == "uint8":
        read, write = "old", "{}"
        comb = {"sum": "(({a} + {b}) & 255u)", "prod": "(({a} * {b}) & 255u)", "amax": "max({a}, {b})",
                "amin": "min({a}, {b})"}[reduce]
    else:  # bool as 0/1: sum is or, prod is and
        read, write = "old", "{}"
        comb = {"sum": "({a} | {b})", "prod": "({a} & {b})", "amax": "max({a}, {b})", "amin": "min({a}, {b})"}[reduce]
    if wide_check:   # int64 product: exact in 64 bits, refused past the 32 held
        prelude = ["let w = tw_wmul(tw_w(bitcast<i32>(old)), tw_w(val));",
                   f"if (!tw_wfits(w)) {{ {ERR.wgsl_raise(ERR.INT64_RANGE, tag)} break; }}",
                   "let nv = w.x;"]
    else:
        prelude = ["let nv = " + write.format(comb.format(a=read, b="val")) + ";"]
    return cas_loop("B0[a]", "nv", tag, prelude=prelude)


def _scatter_int64_sum(rt, dst, src, walk, indices, check):
    """int64 scatter-add, exact: (lo, hi) pairs over the span of dst's storage that the scatter
    can reach, filled from dst, added into with carries, then checked and written back."""
    lo = dst._offset
    hi = lo + sum((dst.shape[w] - 1) * dst._stride[w] for w in walk if w is not None and dst.shape[w]) \
        + sum((dst.shape[d] - 1) * dst._stride[d] for _, d, _ in indices if dst.shape[d])
    span = hi - lo + 1
    scratch = GPUStorage(rt, 2 * span, D.int32)
    _pairs_pass(rt, "load", dst, scratch, lo, span, 0)
    _run(rt, "scatter", dst, src, walk, indices, check, "sum", (scratch, lo))
    _pairs_pass(rt, "store", dst, scratch, lo, span, rt.errors.tag(check[0], check[1]))


def _pairs_pass(rt, which, dst, scratch, lo, span, tag):
    """which "load": scratch pairs from dst[lo:lo+span]; "store": back, checked to fit."""
    params = [span, lo, tag, 0]
    key = ("index_pairs", which)
    if which == "load":
        buffers = [(scratch.buffer_for_write(), scratch.size), (dst._storage.buffer_for_write(), dst._storage.size)]
        body = ("  let v = B1[P[0][1] + i];\n"
                "  B0[2u * i] = bitcast<u32>(v);\n"
                "  B0[2u * i + 1u] = select(0u, 0xffffffffu, v < 0i);\n")
        decl = ("@group(0) @binding(1) var<storage, read_write> B0: array<u32>;\n"
                "@group(0) @binding(2) var<storage, read> B1: array<i32>;\n")
        bk = ["uniform", "write", "read"]
    else:
        buffers = [(dst._storage.buffer_for_write(), dst._storage.size), (scratch.buffer_for_write(), scratch.size), rt.errors.binding]
        body = ("  let w = vec2<u32>(B1[2u * i], B1[2u * i + 1u]);\n"
                f"  if (!tw_wfits(w)) {{ {ERR.wgsl_raise(ERR.INT64_RANGE, 'P[0][2]')} }}\n"
                "  B0[P[0][1] + i] = bitcast<i32>(w.x);\n")
        decl = ("@group(0) @binding(1) var<storage, read_write> B0: array<i32>;\n"
                "@group(0) @binding(2) var<storage, read> B1: array<u32>;\n"
                f"@group(0) @binding(3) {ERR.WGSL_DECL}\n")
        bk = ["uniform", "write", "read", "write"]

    def make_code():
        return ("@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 1>;\n" + decl
                + helpers_source({"wfits"} if which == "store" else set()) + "\n" + _HEAD
                + "  if (i >= P[0][0]) { return; }\n" + body + "}\n")

    pid = rt.pipeline(key, make_code, bk)
    rt.dispatch(pid, rt.grid(-(-span // WORKGROUP)), buffers, struct.pack("<4I", *params))


def _mask_walk(shape, tensors):
    """WGSL that walks the mask's original dims for element i: offsets o{k} of each tensor
    (shape, strides) and the coordinates c{d}. Params: shape at 1.., then per tensor offset and
    strides."""
    nd = len(shape)
    lines = ["  var r = i;"]
    for k in range(len(tensors)):
        lines.append(f"  var o{k} = {param(1 + nd + k * (nd + 1))};")
    for d in reversed(range(nd)):
        lines.append(f"  let c{d} = r % {param(1 + d)}; r = r / {param(1 + d)};")
        for k in range(len(tensors)):
            lines.append(f"  o{k} = o{k} + c{d} * {param(1 + nd + k * (nd + 1) + 1 + d)};")
    params = list(shape)
    for t in tensors:
        params.append(t._offset)
        params.extend(t._stride if t.dim() else [0])
    return lines, params


def compact(rt, out, mask, pos, src):
    """The nonzero elements of mask in row-major order: element i (nonzero) goes to slot
    pos[i] - 1, pos being the inclusive running count of nonzeros (contiguous, mask's numel).
    src None: out (ndim, count) gets the coordinates; else out (count,) gets src[i] (src
    expanded to mask's shape)."""
    n = mask.numel()
    if n == 0 or out.numel() == 0:
        return
    shape = list(mask.shape) or [1]
    nd = len(shape)
    tensors = [mask, pos._view(tuple(mask.shape), _contig(mask.shape), pos._offset)] + ([src] if src is not None else [])
    walk, wparams = _mask_walk(shape, tensors)
    buffers, slots = bind(out, *tensors)
    storages = [out.dtype.gpu_storage] + [None] * (len(buffers) - 1)
    for t, s in zip(tensors, slots):
        storages[s] = t.dtype.gpu_storage
    count = out.shape[0] if src is not None else (out.numel() // nd if nd else 0)
    params = [n] + wparams + [out._offset, count]
    nparams = len(params)
    key = ("compact", nd, mask.dtype.name, out.dtype.name, None if src is None else src.dtype.name, tuple(slots))

    def make_code():
        nz = convert(f"B{slots[0]}[o0]", mask.dtype.gpu_storage, "bool")
        body = [f"  if (i >= {param(0)}) {{ return; }}"] + walk
        body.append(f"  if (!{nz}) {{ return; }}")
        body.append(f"  let p = u32(B{slots[1]}[o1]) - 1u;")
        out_off, cnt = param(nparams - 2), param(nparams - 1)
        if src is None:
            body += [f"  B0[{out_off} + {d}u * {cnt} + p] = i32(c{d});" for d in range(len(mask.shape))]
        else:
            body.append(f"  B0[{out_off} + p] = B{slots[2]}[o2];")
        return declarations(nparams, storages) + "\n" + _HEAD + "\n".join(body) + "\n}\n"

    pid = rt.pipeline(key, make_code, kinds(buffers))
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers, struct.pack(f"<{nparams}I", *params))


def masked_scatter(rt, out, mask, pos, source, check):
    """out (contiguous, mask's shape): out[i] = source[pos[i] - 1] where mask[i] is nonzero
    (source: contiguous, flat); a source too short raises check's exception at the next readback."""
    n = out.numel()
    if n == 0:
        return
    shape = list(out.shape) or [1]
    nd = len(shape)
    tensors = [mask, pos._view(tuple(out.shape), _contig(out.shape), pos._offset)]
    walk, wparams = _mask_walk(shape, tensors)
    buffers, slots = bind(out, *tensors, source)
    storages = [out.dtype.gpu_storage] + [None] * (len(buffers) - 1)
    for t, s in zip(tensors + [source], slots):
        storages[s] = t.dtype.gpu_storage
    tag = rt.errors.tag(check[0], check[1], check[2])
    params = [n] + wparams + [out._offset, source._offset, source.numel(), tag]
    nparams = len(params)
    key = ("masked_scatter", nd, mask.dtype.name, out.dtype.name, tuple(slots))

    def make_code():
        nz = convert(f"B{slots[0]}[o0]", mask.dtype.gpu_storage, "bool")
        o_out, o_src, m, t = (param(nparams - 4 + k) for k in range(4))
        body = [f"  if (i >= {param(0)}) {{ return; }}"] + walk + [
            f"  if (!{nz}) {{ return; }}",
            f"  let p = u32(B{slots[1]}[o1]) - 1u;",
            f"  if (p >= {m}) {{ {ERR.wgsl_raise(ERR.INDEX, t)} return; }}",
            f"  B0[{o_out} + i] = B{slots[2]}[{o_src} + p];"]
        return (declarations(nparams, storages) + f"\n@group(0) @binding({len(buffers) + 1}) "
                + ERR.WGSL_DECL + "\n" + _HEAD + "\n".join(body) + "\n}\n")

    pid = rt.pipeline(key, make_code, kinds(buffers) + ["write"])
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers + [rt.errors.binding],
                struct.pack(f"<{nparams}I", *params))


def _contig(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))
