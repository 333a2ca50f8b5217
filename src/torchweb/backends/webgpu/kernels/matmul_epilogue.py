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

from ...._size import contiguous_strides
from .. import backend
from ..storage import GPUStorage
from . import fused
from ... import pending as _hooks

MATMUL = ("matmul", "f")
_VALUE_TOKEN = ("t", "f", "f32")   # the matmul's value, a leaf of the rest of the expression
MAX_BUFFERS = 8   # storage buffers a dispatch binds at most (WebGPU's default per stage)
_ANALYSES = {}   # root key -> (key with each matmul a leaf, [(its A leaf's position, K)])


has_matmul = fused._holds_matmul

class _View:
    """The tensor-shaped view the matmul kernels read (._storage, ._shape, ._stride, ._offset,
    .dtype, .shape, numel())."""

    __slots__ = ("_storage", "_shape", "_stride", "_offset", "dtype")

    def __init__(self, storage, shape, stride, offset, dtype):
        self._storage, self._shape, self._stride, self._offset, self.dtype = storage, shape, stride, offset, dtype

    @property
    def shape(self):
        return self._shape

    def numel(self):
        return prod(self._shape)


class Epilogue:
    """One call's epilogue, for a matmul kernel: key (its code's, for pipelines and plans),
    buffers (bound after the kernel's own, in order), words (parameter bytes after the
    kernel's), nwords; code(first_slot, first_param): the WGSL to append to the kernel.
    roots: the expression stored in the product's place, then those of partners (other
    storages written by the same function: (storage, node, or None for the product itself)),
    over the distinct `leaves` (leaves[value]: the product's value)."""

    __slots__ = ("key", "buffers", "words", "nwords", "_parts")

    def __init__(self, roots, leaves, occurrences, value, shape, partners=()):
        slots, storages, buffers, seen = [], [], [], {}
        for k, leaf in enumerate(leaves):
            if k == value:
                slots.append(None)
                continue
            st = leaf[0]
            j = seen.get(id(st))
            if j is None:
                j = seen[id(st)] = len(buffers)
                buffers.append((st.buffer_for_read(), st.size))
                storages.append(st.dtype.gpu_storage)
            slots.append(j)
        ndim, self.words = fused.epilogue_layout(shape, leaves, value, roots[0].scalars)
        self._parts = (roots, leaves, occurrences, value, slots, storages, len(buffers),
                       [n is None for _, n in partners], ndim)
        for r, _ in partners:   # (written here: fresh, or with values nothing pending reads)
            buffers.append((r.buffer_for_write() if r.touched else r._buffer_id, r.size))
            r.touched = True
            if r.rt.capture is not None:
                r.rt.capture.storages[r._buffer_id] = r
        self.nwords = len(self.words) // 4
        self.buffers = buffers
        self.key = ("epi", tuple(root.key for root in roots), occurrences, value, ndim, tuple(slots),
                    tuple(storages), tuple(self._parts[7]))

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
    return _View(la[0], a_shape, la[1], la[2], la[3]), _View(lb[0], b_shape, lb[1], lb[2], lb[3])


def run(outs, roots):
    """Write outs[k] with roots[k] (fused.run's contract) where roots hold deferred matmuls:
    each such root one matmul kernel with its expression as the epilogue, the others fused."""
    rest = [(s, r) for s, r in zip(outs, roots) if not has_matmul(r.key)]
    if len(outs) == 1:
        _run_one(outs[0], roots[0])
        return
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
    return _View(s, shape, contiguous_strides(shape), 0, s.dtype)


def _run_one(s, root):
    key, mms = _analysis(root.key)
    shape = root.shape
    contiguous = contiguous_strides(shape)
    if key is _VALUE_TOKEN:   # the matmul alone
        _, mshape, K = mms[0]
        backend.matmul(_product(s, mshape), *_operands(*root.leaves, mshape, K), "f")
        return
    leaves, pos = [], 0
    f32 = root.leaves[mms[-1][0]][3]
    for j, (p, mshape, K) in enumerate(mms):
        leaves += root.leaves[pos:p]
        pos = p + 2
        a, b = _operands(root.leaves[p], root.leaves[p + 1], mshape, K)
        if j < len(mms) - 1:   # (more than one matmul: all but the last written first)
            tmp = GPUStorage(s.rt, s.numel, f32)
            backend.matmul(_product(tmp, mshape), a, b, "f")
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
    if id(s) in inputs:
        tmp = GPUStorage(s.rt, s.numel, f32)
        backend.matmul(_product(tmp, mshape), a, b, "f")
        leaves[leaves.index(value)] = (tmp, contiguous, 0, f32)
        fused.run((s,), (type(root)((key, leaves, root.scalars, shape, root.size, {}, None)),))
        return
    # the parts of the expression still pending elsewhere (gelu(h)'s h, saved for backward):
    # stored by the same kernel rather than computed again with the matmul later
    partners = _partners(s, root, value, shape) if len(mms) == 1 else []
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
        epi = Epilogue(roots, distinct, occurrences, index[value], shape, [(r, n) for r, n, _ in partners])
        if backend.matmul(out, a, b, "f", epi):
            return
        _restore(partners)   # (not taken: the product is in s)
    else:
        backend.matmul(out, a, b, "f")
    fused.run((s,), (node,))   # (the product in s: the rest of the expression reads it in place)


def _partners(s, root, value, shape):
    """[(storage, its node as an expression over `value` or None where it is the product
    itself, its own node)] of the pending storages the matmul's kernel stores too."""
    found = []
    for r, p in _hooks.matmul_partners(s, root):
        key, ((pos, _, _),) = _analysis(p.key)
        node = None if key is _VALUE_TOKEN else type(p)((key, p.leaves[:pos] + [value] + p.leaves[pos + 2:],
                                                           p.scalars, shape, p.size, {}, None))
        found.append((r, node, p))
    return found


def _restore(partners):
    """Partners left pending as they were (the kernel did not store them)."""
    for r, _, p in partners:
        r.pending = p
