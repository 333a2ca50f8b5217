"""Matmuls whose elementwise epilogue is evaluated in their own store (issue #21: fewer, larger
dispatches). The lazy layer defers a float32 matmul as a node ("matmul", "f") over its two
operands (lazy/kernel_edges.py), and the elementwise ops after it inline that node as they do
any pending one; fused.run hands an expression that holds one to run() here. The matmul
kernel then stores tw_epilogue(i, value) (the expression's code from fused.epilogue_source)
instead of its value: linear + bias + GELU, or a projection + residual, is one dispatch.

A node's key is (MATMUL, A's token, B's token, ("K", K)) and its leaves A's and B's (storage,
stride, offset, dtype); its shape is the output's [*batch, M, N] (A [*batch, M, K], B
[*batch, K, N], batch dims broadcast already). Outputs are fresh: contiguous, offset 0."""

from math import prod
from operator import itemgetter

from ...._size import contiguous_strides
from ..storage import GPUStorage
from . import fused
from ... import pending as _hooks

MATMUL = _hooks.MATMUL_ROOT
_VALUE_TOKEN = ("t", "f", "f32")   # the matmul's value, a leaf of the rest of the expression
MAX_BUFFERS = 8   # storage buffers a dispatch binds at most (WebGPU's default per stage)
_BACKEND_MATMUL = [None]   # backend.matmul, set by install() (backend.py imports this module)
_ANALYSES = {}   # root key -> (key with each matmul a leaf, [(its A leaf's position, K)])


has_matmul = _hooks.holds_matmul

class _View(tuple):
    """The tensor-shaped view the matmul kernels read (._storage, ._shape, ._stride, ._offset,
    .dtype, .shape, numel()): a tuple made in C, _View((storage, shape, stride, offset, dtype)),
    its fields read by C getters (one a matmul operand, each call)."""

    __slots__ = ()
    _storage, _shape, _stride, _offset, dtype = (property(itemgetter(k)) for k in range(5))
    shape = _shape

    def numel(self):
        return prod(self._shape)


class Epilogue:
    """One call's epilogue, for a matmul kernel: key (its code's, for pipelines and plans),
    buffers (bound after the kernel's own, in order), words (parameter bytes after the
    kernel's), nwords; code(first_slot, first_param): the WGSL to append to the kernel.
    static: what depends only on the expression and its layouts (static(), made once a
    signature); buffers and words: this call's."""

    __slots__ = ("key", "buffers", "words", "nwords", "_parts")

    def __init__(self, static, buffers, words):
        self.key, self.nwords, self._parts = static
        self.buffers, self.words = buffers, words

    def code(self, first_slot, first_param):
        roots, leaves, occurrences, value, slots, storages, nread, bare, ndim = self._parts
        decl = [f"@group(0) @binding({first_slot + j + 1}) var<storage, read> B{first_slot + j}: array<{st}>;"
                for j, st in enumerate(storages)]
        decl += [f"@group(0) @binding({first_slot + j + 1}) var<storage, read_write> B{first_slot + j}: array<f32>;"
                 for j in range(nread, nread + len(bare))]
        at = [None if j is None else first_slot + j for j in slots]
        stores = [(first_slot + nread + k, is_bare) for k, is_bare in enumerate(bare)]
        return "\n".join(decl) + "\n" + fused.epilogue_source(roots, leaves, occurrences, value, at, ndim,
                                                             first_param, stores)

    def kinds(self):
        return ["read"] * self._parts[6] + ["write"] * len(self._parts[7])


def static(roots, leaves, occurrences, value, shape, bare=()):
    """(key, nwords, parts) of an epilogue storing roots[0] (roots[1:]: partners stored too,
    bare: per partner whether it is the product itself, no root) over the distinct leaves
    (leaves[value]: the product's value), and the read buffers: [(storage, slot)] per
    distinct storage, in binding order, and the parameter words but the scalars."""
    slots, storages, seen, reads = [], [], {}, []
    for k, leaf in enumerate(leaves):
        if k == value:
            slots.append(None)
            continue
        st = leaf[0]
        j = seen.get(st)
        if j is None:
            j = seen[st] = len(storages)
            storages.append(leaf[3].gpu_storage)
            reads.append(st)
        slots.append(j)
    ndim, ints = fused.epilogue_layout(shape, leaves, value)
    nscalars = sum([len(root.scalars) for root in roots])
    parts = (roots, leaves, occurrences, value, slots, storages, len(storages), tuple(bare), ndim)
    key = ("epi", tuple(root.key for root in roots), occurrences, value, ndim, tuple(slots), tuple(storages),
           tuple(bare))
    return (key, len(ints) + nscalars, parts), reads, ints


def _write(partners):
    """The partners' buffers, bound writable (fresh, or with values nothing pending reads)."""
    buffers = []
    for r, _, _ in partners:
        buffers.append((r.buffer_for_write() if r.touched else r._buffer_id, r.size))
        r.touched = True
        if r.rt.capture is not None:
            r.rt.capture.storages[r._buffer_id] = r
    return buffers


def _analysis(key):
    """(key with every matmul a leaf, [(position of its A leaf among the leaves, the product's
    shape, K)])."""
    found = _ANALYSES.get(key)
    if found is None:
        mms = []
        count = [0]

        def walk(k):
            if k[0] == MATMUL:
                mms.append((count[0], k[3][2], k[3][1]))
                count[0] += 2
                return _VALUE_TOKEN
            parts = [k[0]]
            for part in k[1:]:
                if type(part[0]) is not str:
                    parts.append(walk(part))
                else:
                    count[0] += part[0] == "t"
                    parts.append(part)
            return tuple(parts)

        if len(_ANALYSES) > 1024:
            _ANALYSES.clear()
        found = _ANALYSES[key] = (walk(key), mms)
    return found


def _operands(la, lb, shape, K):
    """A's and B's views from their leaves and the product's shape."""
    a_shape = tuple(shape[:-1]) + (K,)
    b_shape = tuple(shape[:-2]) + (K, shape[-1])
    return _View((la[0], a_shape, la[1], la[2], la[3])), _View((lb[0], b_shape, lb[1], lb[2], lb[3]))


def run(outs, roots):
    """Write outs[k] with roots[k] (fused.run's contract) where roots hold deferred matmuls:
    each such root one matmul kernel with its expression as the epilogue, the others fused."""
    if len(outs) == 1:
        root = roots[0]
        if root.key[0] == MATMUL:   # (the product alone)
            return _run_alone(outs[0], root)
        return _run_one(outs[0], root)
    rest = [(s, r) for s, r in zip(outs, roots) if not has_matmul(r.key)]
    # largest first, the others pending again meanwhile: one that is part of a larger one's
    # expression (h of gelu(h), realized together) is stored by that one's kernel
    mine = sorted([(r.size, k) for k, r in enumerate(roots) if has_matmul(r.key)], reverse=True)
    for _, k in mine:
        outs[k].pending = roots[k]
    for _, k in mine:
        if outs[k].pending is roots[k]:
            outs[k].pending = None
            _run_one(outs[k], roots[k])
    if rest:
        fused.run(*map(tuple, zip(*rest)))


def _product(s, shape):
    """The matmul kernel's output: all of storage s, contiguous in the product's shape (the
    expression's may differ: a [B*T, N] product read as [B, T, N]; both index its elements
    in order)."""
    return _View((s, shape, contiguous_strides(shape), 0, s.dtype))


_CALLS = {}   # (root key, its leaves' layouts, shape) -> _Call: the common case's planning, once
_LAYOUT = fused._LAYOUT


class _Call:
    """What running one expression needs that its key and layouts decide (the common case:
    one matmul, every leaf a buffer of its own, no partners)."""

    __slots__ = ("key", "mshape", "a_shape", "b_shape", "pos", "static", "ints", "mstride")

    def __init__(self, root):
        self.key, ((pos, mshape, K),) = _analysis(root.key)
        self.pos, self.mshape, self.mstride = pos, mshape, contiguous_strides(mshape)
        self.a_shape = tuple(mshape[:-1]) + (K,)
        self.b_shape = tuple(mshape[:-2]) + (K, mshape[-1])
        shape = root.shape
        # (kept: the expression without its buffers, k standing for the k-th: all distinct)
        leaves = [(k,) + leaf[1:] for k, leaf in enumerate(root.leaves)]
        leaves[pos:pos + 2] = [(-1, contiguous_strides(shape), 0, leaves[pos][3])]
        bare = type(root)((self.key, (), root.scalars, shape, root.size, {}, None))
        self.static, _, self.ints = static([bare], leaves, tuple(range(len(leaves))), pos, shape)


def _run_one(s, root):
    leaves = root.leaves
    if len(root.key) == 4 and root.key[0] == MATMUL:   # the matmul alone
        return _run_alone(s, root)
    group = root.group
    found = _hooks.matmul_partners(s, root) if group is not None and len(group) > 1 else ()
    if found or len(leaves) + 2 > MAX_BUFFERS:
        return _run_general(s, root, found)   # (partners; or many leaves)
    sig = (root.key, tuple(map(_LAYOUT, leaves)), root.shape)
    call = _CALLS.get(sig)
    if call is None:
        if len(_CALLS) > 1024:
            _CALLS.clear()
        call = _CALLS[sig] = _Call(root) if _single(root.key) else None
    p = call and call.pos
    # (the leaves but the operands each a buffer of its own, none s: else the general case)
    if call is None or len(set(map(_STORAGE, leaves[:p] + leaves[p + 2:])) | {s}) != len(leaves) - 1:
        return _run_general(s, root)
    la, lb = leaves[p], leaves[p + 1]
    if la[0] is s or lb[0] is s:   # (out= an operand)
        return _run_general(s, root)
    a = _View((la[0], call.a_shape) + la[1:])
    b = _View((lb[0], call.b_shape) + lb[1:])
    buffers = [(st.buffer_for_read(), st.size) for st in map(_STORAGE, leaves[:p] + leaves[p + 2:])]
    out = _View((s, call.mshape, call.mstride, 0, s.dtype))
    epi = Epilogue(call.static, buffers, fused.epilogue_words(call.ints, root.scalars))
    if _BACKEND_MATMUL[0](out, a, b, "f", epi):
        return
    leaves = list(leaves)
    leaves[p:p + 2] = [(s, contiguous_strides(root.shape), 0, la[3])]
    fused.run((s,), (type(root)((call.key, leaves, root.scalars, root.shape, root.size, {}, None)),))


_STORAGE = fused._STORAGE


def _single(key):
    """Whether key holds exactly one matmul."""
    return len(_analysis(key)[1]) == 1


_ALONE = {}   # a bare matmul's key -> (its output's shape and strides, A's shape, B's)


def _run_alone(s, root):
    """The product alone, into s."""
    shapes = _ALONE.get(root.key)
    if shapes is None:
        if len(_ALONE) > 1024:
            _ALONE.clear()
        _, _, _, (_, K, mshape) = root.key
        shapes = _ALONE[root.key] = (mshape, contiguous_strides(mshape), tuple(mshape[:-1]) + (K,),
                                     tuple(mshape[:-2]) + (K, mshape[-1]))
    mshape, mstride, a_shape, b_shape = shapes
    la, lb = root.leaves
    _BACKEND_MATMUL[0](_View((s, mshape, mstride, 0, s.dtype)), _View((la[0], a_shape) + la[1:]),
                       _View((lb[0], b_shape) + lb[1:]), "f")


def _run_general(s, root, found=()):
    """_run_one's general case: several matmuls, partners (found: matmul_partners'), leaves
    sharing buffers or over s."""
    key, mms = _analysis(root.key)
    shape = root.shape
    contiguous = contiguous_strides(shape)
    leaves, pos = [], 0
    f32 = root.leaves[mms[-1][0]][3]
    for j, (p, mshape, K) in enumerate(mms):
        leaves += root.leaves[pos:p]
        pos = p + 2
        a, b = _operands(root.leaves[p], root.leaves[p + 1], mshape, K)
        if j < len(mms) - 1:   # (more than one matmul: all but the last written first)
            tmp = GPUStorage(s.rt, s.numel, f32)
            _BACKEND_MATMUL[0](_product(tmp, mshape), a, b, "f")
            leaves.append((tmp, contiguous, 0, f32))
        else:
            value = (s, contiguous, 0, f32)
            leaves.append(value)
    leaves += root.leaves[pos:]
    node = type(root)((key, leaves, root.scalars, shape, root.size, {}, None))
    out = _product(s, mshape)
    # the output read by the expression other than as the value (out= of an expression over
    # it), or one of the operands: the epilogue would read elements after they are written,
    # so the product goes to a buffer of its own first
    inputs = {id(leaf[0]) for leaf in leaves if leaf is not value} | {id(a._storage), id(b._storage)}
    if id(s) in inputs or len(mms) > 1:
        _restore([(r, None, p) for r, p in found])
        found = ()
    if id(s) in inputs:
        tmp = GPUStorage(s.rt, s.numel, f32)
        _BACKEND_MATMUL[0](_product(tmp, mshape), a, b, "f")
        leaves[leaves.index(value)] = (tmp, contiguous, 0, f32)
        fused.run((s,), (type(root)((key, leaves, root.scalars, shape, root.size, {}, None)),))
        return
    # the parts of the expression still pending elsewhere (gelu(h)'s h, saved for backward):
    # stored by the same kernel rather than computed again with the matmul later
    partners = _partners(found, value, shape)
    roots = [node] + [n for _, n, _ in partners if n is not None]
    all_leaves = [leaf for r in roots for leaf in r.leaves]
    distinct = list(dict.fromkeys(all_leaves))
    if len(distinct) + 3 + len(partners) > MAX_BUFFERS:   # (the kernel's own three at most)
        _restore(partners)
        partners, roots, distinct = [], [node], list(dict.fromkeys(leaves))
        all_leaves = leaves
    if len(distinct) + 3 <= MAX_BUFFERS:
        index = dict(zip(distinct, range(len(distinct))))
        occurrences = tuple(map(index.__getitem__, all_leaves))
        vi = index[value]
        info, ints = _static_of(roots, distinct, occurrences, vi, shape, tuple([n is None for _, n, _ in partners]))
        reads = dict.fromkeys([leaf[0] for k, leaf in enumerate(distinct) if k != vi])
        buffers = [(st.buffer_for_read(), st.size) for st in reads] + _write(partners)
        words = fused.epilogue_words(ints, [x for r in roots for x in r.scalars])
        if _BACKEND_MATMUL[0](out, a, b, "f", Epilogue(info, buffers, words)):
            return
        _restore(partners)   # (not taken: the product is in s)
    else:
        _BACKEND_MATMUL[0](out, a, b, "f")
    fused.run((s,), (node,))   # (the product in s: the rest of the expression reads it in place)


_STATICS = {}   # the general case's static() by expression, layouts and buffer sharing


def _static_of(roots, distinct, occurrences, value, shape, bare):
    """static()'s (info, words but the scalars), made once a signature (the cached parts
    hold no storage: each leaf's stands for the k-th distinct buffer)."""
    pattern = {}
    stripped = tuple([(pattern.setdefault(leaf[0], len(pattern)),) + leaf[1:] for leaf in distinct])
    sig = (tuple([r.key for r in roots]), occurrences, value, shape, stripped, bare)
    got = _STATICS.get(sig)
    if got is None:
        if len(_STATICS) > 1024:
            _STATICS.clear()
        bare_roots = [type(r)((r.key, (), r.scalars, shape, r.size, {}, None)) for r in roots]
        info, _, ints = static(bare_roots, list(stripped), occurrences, value, shape, bare)
        got = _STATICS[sig] = (info, ints)
    return got


def _partners(found, value, shape):
    """[(storage, its node as an expression over `value` or None where it is the product
    itself, its own node)] of the pending storages matmul_partners found."""
    partners = []
    for r, p in found:
        key, ((pos, _, _),) = _analysis(p.key)
        node = None if key is _VALUE_TOKEN else type(p)((key, p.leaves[:pos] + [value] + p.leaves[pos + 2:],
                                                           p.scalars, shape, p.size, {}, None))
        partners.append((r, node, p))
    return partners


def _restore(partners):
    """Partners left pending as they were (the kernel did not store them)."""
    for r, _, p in partners:
        r.pending = p


def install(matmul):
    """Called by backend.py: its matmul, which stores an epilogue, and fused.run's way here."""
    _BACKEND_MATMUL[0] = matmul
    fused._EPILOGUE_RUN[0] = run
