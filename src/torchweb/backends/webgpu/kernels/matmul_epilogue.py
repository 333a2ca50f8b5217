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
    kernel's), nwords; code(first_slot, first_param): the WGSL to append to the kernel."""

    __slots__ = ("key", "buffers", "words", "nwords", "_parts")

    def __init__(self, root, leaves, occurrences, value, shape):
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
        ndim, self.words = fused.epilogue_layout(shape, leaves, value, root.scalars)
        self.nwords = len(self.words) // 4
        self.buffers = buffers
        self.key = ("epi", root.key, occurrences, value, ndim, tuple(slots), tuple(storages))
        self._parts = (root, leaves, occurrences, value, slots, storages, ndim)

    def code(self, first_slot, first_param):
        root, leaves, occurrences, value, slots, storages, ndim = self._parts
        decl = "\n".join(f"@group(0) @binding({first_slot + j + 1}) var<storage, read> B{first_slot + j}: array<{st}>;"
                         for j, st in enumerate(storages))
        at = [None if j is None else first_slot + j for j in slots]
        return decl + "\n" + fused.epilogue_source([root], leaves, occurrences, value, at, ndim, first_param)

    def kinds(self):
        return ["read"] * len(self.buffers)


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
    for s, root in zip(outs, roots):
        if has_matmul(root.key):
            _run_one(s, root)
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
            last = (a, b)
    leaves += root.leaves[pos:]
    node = type(root)((key, leaves, root.scalars, shape, root.size, {}, None))
    a, b = last
    out = _product(s, mshape)
    distinct = list(dict.fromkeys(leaves))
    index = dict(zip(distinct, range(len(distinct))))
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
    if len(distinct) + 3 <= MAX_BUFFERS:   # (the kernel's output and operands, the leaves' buffers)
        occurrences = tuple(map(index.__getitem__, leaves))
        if backend.matmul(out, a, b, "f", Epilogue(node, distinct, occurrences, index[value], shape)):
            return
    else:
        backend.matmul(out, a, b, "f")
    fused.run((s,), (node,))   # (the product in s: the rest of the expression reads it in place)
