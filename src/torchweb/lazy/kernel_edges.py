"""Where a reduction or a matmul meets pending elementwise work: the decisions of this layer
that the speed issue (#21) extends. ops/lowering.py asks them before it runs the kernel.

- reduction_prologue: today "realize first" (the pending input written by its own fused
  kernel, then reduced). #21 plugs in here: hand the pending node to the backend's reduction
  (a run_fused-like reduce_fused(out, node, ...) whose per-element load is the node's
  expression), so that `(x * y).sum()` or a softmax over `x * scale` is one kernel.
- matmul_epilogue: a float32 matmul into a fresh output is recorded as pending, a node whose
  root is the matmul ("matmul", "f") over its two operands; the elementwise ops after it
  (bias, activation, scaling, residual) inline it as any pending node, and the backend's
  run_fused runs the whole expression as the matmul kernel's store (webgpu:
  backends/webgpu/kernels/matmul_epilogue.py; other backends never defer). matmul_reshaped
  keeps such a node in the shape its readers see (a linear layer's [B*T, N] as [B, T, N]);
  matmul_partners hands that kernel the parts of the expression still pending elsewhere
  (gelu(h)'s h, saved for backward), stored by it too rather than recomputed with the
  matmul; a fusing scope writes such a node first (backends/pending.py's holds_matmul)."""

from math import prod
from operator import attrgetter

from .. import _dtype
from .._size import _CONTIGUOUS, contiguous_strides
from ..backends import backend_for
from ..backends.pending import MATMUL_ROOT as _MATMUL
from .graph import Node, register
from .realize import BARE_PRODUCTS, realize
from .record import ENABLED

_SUM_OF_TWO = (("add", "f"), ("t", "f", "f32"), ("t", "f", "f32"))
_F32_LEAF, _F32 = ("t", "f", "f32"), _dtype.float32
_LAYOUT = attrgetter("_stride", "_offset", "dtype")   # (a leaf's, but its storage)


def reduction_prologue(inp):
    """inp is about to be reduced: None (no prologue taken) after realizing a pending inp."""
    s = inp._storage
    if s.pending is not None:
        realize(s)
    return None


def matmul_epilogue(out, a, b, defer=True):
    """out = a @ b is about to run (batch dims broadcast already): True where it is deferred
    instead, out pending as a node ("matmul", "f") over a and b whose kernel will store the
    elementwise ops recorded after it (they inline it as any pending node; the backend's
    run_fused runs it: kernels/matmul_epilogue.py on webgpu). Asked by ops/lowering.py only
    where the backend stores epilogues (MATMUL_EPILOGUE). Deferred where out is fresh,
    contiguous and float32 (what the fused kernels write), a and b float32 within one binding and K one kernel's loop; else False, after
    realizing pending operands (the matmul runs now). defer False: never."""
    sa, sb = a._storage, b._storage
    if sa.pending is not None:
        realize(sa)
    if sb.pending is not None:
        realize(sb)
    s = out._storage
    if not defer or s.touched or s.readers or out._offset:   # (fresh: never pending)
        return False
    shape = out._shape
    # what depends on the signature alone, decided once a signature (every call of a
    # training step's products repeats one)
    sig = (shape, out._stride, a._shape[-1], a._stride, b._stride, out.dtype, a.dtype, b.dtype, s.device_type)
    found = _SIGNATURES.get(sig)
    if found is None:
        found = _signature(sig)
    key, n, counts = found
    # A signature whose every product so far was realized alone, nothing fused into it (its
    # readers views, a reduction, another matmul: attention's qkv projection, most input
    # gradients), runs now from its BARE_AFTER-th on: deferring it costs Python and saves no
    # dispatch. (Then: its whole storage; operands of this device, not a lost one's, whose
    # error is the op's; one binding each.)
    if key is None or counts[1] == counts[0] >= BARE_AFTER or s.numel != n \
            or (rt := s.rt) is not sa.rt or rt is not sb.rt or max(n, sa.numel, sb.numel) > rt.max_binding >> 2:
        return False
    counts[0] += 1
    storages = {id(sa): sa, id(sb): sb}
    s.pending = Node((key, [(sa,) + _LAYOUT(a), (sb,) + _LAYOUT(b)], (), shape, 1, storages, register(s, storages)))
    return True


_SIGNATURES = {}   # matmul_epilogue's signature -> (the node's key or None: never deferred, numel,
#                   [products deferred, of them realized alone])
BARE_AFTER = 1     # products of a signature realized alone before it is no longer deferred


def forget_signatures():
    """Drop what matmul_epilogue learned per signature (which products it stopped deferring):
    for benches comparing settings side by side, and the bound on the cache."""
    _SIGNATURES.clear()
    BARE_PRODUCTS.clear()


def _signature(sig):
    """(key, numel, counts) for matmul_epilogue's signature: key None where such a product is
    never deferred (not all float32, strided, K past one kernel's loop); counts [deferred, realized alone], the second counted by
    realize() through BARE_PRODUCTS (id of the key, one object a signature)."""
    shape, stride, K, _, _, *dtypes, device_type = sig
    be = backend_for(device_type)
    key = None
    limit = be.MAX_MATMUL_K
    if ENABLED and all(dt is _F32 for dt in dtypes) \
            and 0 < K and (limit is None or K <= limit) and stride == contiguous_strides(shape):
        key = (_MATMUL, _F32_LEAF, _F32_LEAF, ("K", K, shape))
    if len(_SIGNATURES) > 1024:
        forget_signatures()
    counts = [0, 0]
    if key is not None:
        BARE_PRODUCTS[id(key)] = counts
    found = _SIGNATURES[sig] = (key, prod(shape), counts)
    return found


def matmul_reshaped(t):
    """t (contiguous, offset 0) views the whole output of a deferred matmul in another shape
    (a linear layer's [B*T, N] product seen as [B, T, N]): the pending node takes t's shape,
    so that the ops recorded on t take it in (they inline nodes of their own shape only; the
    kernel stores its output element by element, in any shape of its numel)."""
    s = t._storage
    node = s.pending
    if node is not None and node.key[0] is _MATMUL and not node.inlined and not t._offset \
            and s.numel == prod(t._shape) and t._stride == (_CONTIGUOUS.get(t._shape) or contiguous_strides(t._shape)):
        s.pending = Node((node.key, node.leaves, node.scalars, t._shape, 1, node.storages, node.group))


def matmul_partners(storage, node):
    """The pending storages other than `storage` (being written with `node`, which holds one
    deferred matmul) whose expressions are parts of node's that hold that matmul: the
    pre-activation h of gelu(h) that autograd saved, still read later. Taken off pending and
    returned as [(storage, node)]: the matmul's kernel stores them too, one more store each,
    where realizing them later would run the matmul again (its flops and a dispatch; the
    store is what the unfused kernels wrote anyway). Looked for in node's group (the chain
    of ops that read no other buffer: gelu(h) joins h's), not in every reader of its inputs
    (a weight's are many): a part that read another buffer is computed again."""
    group = node.group
    if group is None or len(group) < 2:
        return ()
    found = []
    held = None
    for ref in group:
        r = ref()
        if r is None or r is storage or (p := r.pending) is None or r.numel != storage.numel:
            continue
        if held is None:
            held = {}
            _held_keys(node.key, held)
        if held.get(id(p.key)) is p.key:
            found.append((r, p))
    for r, _ in found:
        r.pending = None
    return found


def _held_keys(key, held):
    """Whether key holds a deferred matmul; held gets id -> key of its parts (and itself) that do."""
    holds = key[0] == _MATMUL
    for part in key[1:]:
        if type(part[0]) is not str and _held_keys(part, held):
            holds = True
    if holds:
        held[id(key)] = key
    return holds


def sum_prologue(t):
    """t (whole, contiguous) is pending as a + b, both whole contiguous float32 buffers of its
    shape (a residual connection: x + f(x), or two gradients summed): the two leaves
    (storage, offset) for a kernel that computes the sum as it reads it and writes t itself,
    t's node taken off (it is written by that kernel, not by run_fused). None otherwise (t
    untouched: the caller realizes it as usual)."""
    s = t._storage
    node = s.pending
    if node is None or node.key != _SUM_OF_TWO or node.scalars or t._offset or t._shape != node.shape:
        return None
    n = prod(node.shape)
    strides = contiguous_strides(node.shape)
    if s.numel != n or t._stride != strides:
        return None
    for leaf, stride, offset, _ in node.leaves:
        if stride != strides or leaf.numel < offset + n:
            return None
    s.pending = None   # (as realize() does: its group's entries now skip it)
    return [(leaf, offset) for leaf, _, offset, _ in node.leaves]
