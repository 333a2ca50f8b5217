"""Lazy elementwise fusion: an elementwise op whose output is a fresh float32 tensor is not
dispatched; its storage becomes *pending*, holding the op as an expression over its operands.
A later elementwise op that reads a pending storage whole (same shape, no broadcast) takes the
expression into its own, so a chain of ops becomes one kernel, written when something needs
the bytes.

What keeps PyTorch's eager semantics:
- Anything that touches a storage's buffer (every kernel binds buffers through
  `GPUStorage.buffer_id`, readback and uploads too) first realizes the storage if it is
  pending, and realizes every pending storage that reads it (so a write after a deferred read
  sees the old values, as eager order would).
- Only ops without device-side checks are deferred (integer division by zero and int64 range
  checks stay eager, so their errors point at the op), and only float32 results (no rounding
  of an intermediate is skipped).
- Expressions are bounded (MAX_NODES ops, MAX_LEAF_BUFFERS distinct input buffers: WebGPU's
  8 storage buffers per dispatch), and a node used twice is computed once per thread.

Recording is the hot path of every float32 elementwise op, so what depends only on the op's
dtype plan (whether it may be deferred, its operands' parts of the kernel's cache key) is
decided once per plan (`template`), and each node carries what realizing its expression needs
(its structural key, leaves and scalars in kernel order), built from its children's as ops are
recorded: the realize does not walk the expression unless it compiles a kernel.

TORCHWEB_LAZY=0 in the environment turns deferral off (every op dispatched as it comes).
"""

import os
import weakref

from math import prod

from ... import _dtype
from ..._size import _CONTIGUOUS
from .kernels.elementwise import WGSL_TYPE, _checks, _narrowing, run as _run_eager
from .kernels import fused
from .pool import rounded_size

ENABLED = os.environ.get("TORCHWEB_LAZY", "1") != "0"
MAX_NODES = 48
MAX_LEAF_BUFFERS = 6
_pending = {}   # id -> weakref of every pending storage alive, for synchronize()
_F32, _U8 = _dtype.float32, _dtype.uint8
_F32_TENSOR, _TENSOR, _FLOAT, _BITS = range(4)   # operand kinds (template)


class Node:
    """One deferred op, and what the kernel of the expression rooted here needs, built from its
    children's as ops are recorded. key: its structure, (op name, class) then per argument a
    token, ("t", class, storage type) for a tensor read, ("s", class) for a scalar, or an
    inlined child's key (class: the compute class the op reads that argument in); leaves:
    every tensor read (storage, stride, offset, dtype), in the order of a depth-first walk
    of the key's arguments (a tensor read twice appears twice); scalars: the scalar values
    in evaluation order (children's first; a tuple), packed with struct format sfmt. Its value is
    float32: only those are deferred."""

    __slots__ = ("key", "leaves", "scalars", "sfmt", "shape", "size", "storages", "inlined")

    def __init__(self, key, leaves, scalars, sfmt, shape, size, storages):
        self.key, self.leaves, self.scalars, self.sfmt = key, leaves, scalars, sfmt
        self.shape, self.size = shape, size
        self.storages = storages   # every buffer the expression reads, inlined nodes included
        self.inlined = False       # taken into a consumer's expression already


class Template:
    """What recording an op needs that its dtype plan decides (template()): opkey, (op name,
    class); entries, per operand (kind, class, key token), kind _F32_TENSOR (may be an inlined
    child), _TENSOR, _FLOAT (a scalar packed as a float) or _BITS (a scalar packed as its
    bits). For the common ops with one tensor operand and _FLOAT scalars (unary ops, a tensor
    and a number), single: that operand's position (else -1), whether it may be an inlined
    child (f32), the key's parts around its token (pre, post), the key when it is a leaf
    (leaf_key), and the scalars' positions (spos) and struct format (sfmt)."""

    __slots__ = ("opkey", "entries", "single", "f32", "pre", "post", "leaf_key", "spos", "sfmt")

    def __init__(self, opkey, entries):
        self.opkey, self.entries = opkey, entries
        tensors = [i for i, e in enumerate(entries) if e[0] <= _TENSOR]
        self.single = tensors[0] if len(tensors) == 1 and all(e[0] != _BITS for e in entries) else -1
        if self.single >= 0:
            i = self.single
            self.f32 = entries[i][0] == _F32_TENSOR
            self.pre = (opkey,) + tuple(e[2] for e in entries[:i])
            self.post = tuple(e[2] for e in entries[i + 1:])
            self.leaf_key = self.pre + (entries[i][2],) + self.post
            self.spos = tuple(j for j in range(len(entries)) if j != i)
            self.sfmt = "f" * len(self.spos)


def template(op, operands, classes, cls, value_cls, compute_dtypes, out_dtype, checks):
    """op's Template, from its dtype plan and the operands of one call; False where the op
    must run now."""
    if checks or value_cls != "f" or out_dtype is not _F32 or not ENABLED:
        return False
    entries = []
    for o, c, dt in zip(operands, classes, compute_dtypes):
        if getattr(o, "_storage", None) is None:
            if dt is _U8:
                return False
            entries.append((_FLOAT if c == "f" else _BITS, c, ("s", c)))
        elif dt is not o.dtype and dt is not None and _narrowing(o, dt.name):
            return False   # operands rounded to float16 / wrapped to uint8 first: eager
        else:
            entries.append((_F32_TENSOR if o.dtype is _F32 else _TENSOR, c, ("t", c, o.dtype.gpu_storage)))
    fused.OPS[op.name] = op
    return Template((op.name, cls), tuple(entries))


def elementwise_fresh(op, out, operands, plan):
    """backend.elementwise for an output the op just made (contiguous, fresh, read by no one),
    with its cached dtype plan (ops/elementwise.py): recorded as pending where the plan allows,
    else run now."""
    tpl = plan.lazy
    if tpl is None:
        tpl = plan.lazy = template(op, operands, plan.classes, plan.cls, plan.value_cls, plan.compute,
                                   plan.result, _checks(op, out, operands, plan.cls, plan.value_cls))
    if tpl and out._storage.numel and _record(out, operands, tpl):
        return
    _run_eager(out._storage.rt, op, out, operands, plan.classes, plan.cls, plan.value_cls, plan.compute)


def defer(op, out, operands, classes, cls, value_cls, compute_dtypes, checks):
    """Record out = op(operands) as pending instead of dispatching it; False when it must run
    now (the general case: out may be any tensor; elementwise_fresh is the common one)."""
    if checks or value_cls != "f" or out.dtype is not _F32 or not ENABLED:
        return False
    s = out._storage
    if s.touched or s.pending is not None or s.readers or out._offset:
        return False
    n = s.numel
    shape = out._shape
    # (contiguous strides are the common case; else the general test)
    if n == 0 or (out._stride != _CONTIGUOUS.get(shape) and not out.is_contiguous()) or prod(shape) != n:
        return False
    tpl = template(op, operands, classes, cls, value_cls, compute_dtypes, out.dtype, checks)
    return bool(tpl) and _record(out, operands, tpl)


def _record(out, operands, tpl):
    """out's storage (fresh, contiguous, numel > 0) becomes pending with the op's node.
    operands: broadcast to out's shape already."""
    s = out._storage
    n = s.numel
    if n > s.rt.max_workgroups << 8:
        s.rt.grid(-(-n // 256))   # past what a folded grid holds: refused now, at the call
    shape = out._shape
    if tpl.single >= 0:
        node = _single(out, operands, tpl, shape)
    else:
        node = _general(out, operands, tpl, shape)
        if node is None:
            return False
    s.pending = node
    ref = weakref.ref(s)
    key = id(s)
    _pending[key] = ref
    for leaf_storage in node.storages.values():
        readers = leaf_storage.readers
        if readers is None:
            leaf_storage.readers = {key: ref}
        else:
            readers[key] = ref
            if not len(readers) & 63:
                _prune(readers)
    return True


def _single(out, operands, tpl, shape):
    """The node of an op with one tensor operand (Template.single)."""
    o = operands[tpl.single]
    os_ = o._storage
    child = os_.pending
    # inlined only when read whole in the same shape (its leaves' strides index that shape),
    # and into one consumer only: a second consumer reads it written, so fan-out never
    # multiplies the work or the memory traffic. (A pending storage holds exactly its node's
    # shape; o has out's shape, broadcast already.)
    if child is not None and tpl.f32 and not child.inlined and child.shape == shape \
            and o._offset == 0 and o._stride == out._stride and child.size < MAX_NODES:
        child.inlined = True
        # (its leaves and storages are shared, not copied: nodes never change them)
        leaves, storages, size = child.leaves, child.storages, child.size + 1
        key = tpl.pre + (child.key,) + tpl.post
        scalars, sfmt = child.scalars, child.sfmt
    else:
        if child is not None:
            # written now: a pending leaf would keep its own inputs alive, and chains of them
            # would grow memory without bound in loops that never read back
            os_.buffer_for_read()
        leaves, storages, size = [(os_, o._stride, o._offset, o.dtype)], {id(os_): os_}, 1
        key = tpl.leaf_key
        scalars, sfmt = (), ""
    spos = tpl.spos
    if spos:
        scalars = scalars + ((operands[spos[0]],) if len(spos) == 1 else tuple([operands[j] for j in spos]))
        sfmt += tpl.sfmt
    return Node(key, leaves, scalars, sfmt, shape, size, storages)


def _general(out, operands, tpl, shape):
    """The node of any other op; None where its inputs are too many buffers."""
    stride = out._stride
    key = [tpl.opkey]
    leaves = []
    scalars = []
    sfmt = ""
    own = None      # this node's scalars (after its children's) and their formats
    size = 1
    storages = {}   # every buffer the expression reads (Node.storages), built as we go
    for o, (kind, c, token) in zip(operands, tpl.entries):
        if kind >= _FLOAT:
            key.append(token)
            if own is None:
                own, ownfmt = [], ""
            if kind == _FLOAT:
                own.append(o)
                ownfmt += "f"
            else:
                own.append(fused.scalar_bits(o, WGSL_TYPE[c]))
                ownfmt += "I"
            continue
        os_ = o._storage
        child = os_.pending
        # (inlined as in _single)
        if child is not None and kind == _F32_TENSOR and not child.inlined and child.shape == shape \
                and o._offset == 0 and o._stride == stride and size + child.size <= MAX_NODES:
            child.inlined = True
            key.append(child.key)
            leaves += child.leaves
            if child.sfmt:
                scalars += child.scalars
                sfmt += child.sfmt
            size += child.size
            storages.update(child.storages)
        else:
            if child is not None:
                os_.buffer_for_read()   # (as in _single)
            key.append(token)
            leaves.append((os_, o._stride, o._offset, o.dtype))
            storages[id(os_)] = os_
    if len(storages) > MAX_LEAF_BUFFERS:
        return None
    if own is not None:
        scalars += own
        sfmt += ownfmt
    return Node(tuple(key), leaves, tuple(scalars), sfmt, shape, size, storages)


def _prune(readers):
    """Drop the entries of readers that died pending. A pending storage that dies leaves its
    entries in the readers of what it read (dropping them at every death costs each op more
    than this, every 64 entries added): long-lived inputs never written (weights in
    inference, say) would otherwise collect them without bound."""
    for key, ref in list(readers.items()):
        if ref() is None:
            del readers[key]


def forget(storage):
    """A pending storage's expression will never be needed (it is overwritten whole): drop it
    from the registries."""
    key = id(storage)
    _pending.pop(key, None)
    node = storage.pending
    storage.pending = None
    for leaf_storage in node.storages.values():
        readers = leaf_storage.readers
        if readers:
            readers.pop(key, None)


def unallocated_bytes(pool):
    """Bytes the pending storages of this pool's runtime would hold had they their buffers
    (memory_allocated() counts a tensor whether or not its buffer was taken yet)."""
    total = 0
    for ref in _pending.values():
        s = ref()
        if s is not None and not s.touched and s.rt.pool is pool:
            total += rounded_size(max(4, (s.numel * (2 if s.dtype.gpu_storage == "f16" else 4) + 3) & ~3))
    return total


def materialize(storage):
    """Run a storage's pending expression now (its inputs can then be freed)."""
    if storage.pending is not None:
        realize(storage)


def realize(storage):
    """Write a pending storage's values: one fused kernel for its whole expression."""
    node = storage.pending
    storage.pending = None
    key = id(storage)
    _pending.pop(key, None)
    fused.run(storage.rt, storage, node)
    for leaf_storage in node.storages.values():
        if leaf_storage.readers:
            leaf_storage.readers.pop(key, None)


def write_into(src, dst, stride, whole):
    """Run pending src's expression with dst's buffer as its output (an op's out=): one kernel
    instead of the op's then a copy's. dst: a float32 storage whose first numel elements, in
    contiguous `stride`, are the output (whole: that is all of dst). False (nothing done) when
    the expression reads dst in another layout: an element would be read after another thread
    wrote it."""
    node = src.pending
    if id(dst) in node.storages and not _reads_in_place(node, dst, stride):
        return False
    key = id(src)
    readers = dst.readers
    if readers:
        readers.pop(key, None)   # src reads dst's old values itself, element by element
    if dst.pending is not None and whole:
        # overwritten whole: its expression is never needed (consumers that took it into
        # theirs compute it from its inputs)
        forget(dst)
    dst.buffer_id   # its other pending readers run now, on the old values (a partial pending dst too)
    src.pending = None
    _pending.pop(key, None)
    fused.run(dst.rt, dst, node)
    for leaf_storage in node.storages.values():
        if leaf_storage.readers:
            leaf_storage.readers.pop(key, None)
    return True


def _reads_in_place(node, dst, stride):
    """Every read of dst in node's expression is element i for output element i."""
    for storage, st, offset, dtype in node.leaves:
        if storage is dst and (offset or st != stride or dtype is not _F32):
            return False
    return True


def realize_all():
    """Write every pending storage (torchweb.webgpu.synchronize(): all work done, as eager)."""
    for ref in list(_pending.values()):
        storage = ref()
        if storage is not None and storage.pending is not None:
            realize(storage)
    _pending.clear()


def realize_readers(storage):
    """Realize every pending expression that reads storage (before it is written or read)."""
    readers = storage.readers
    storage.readers = None
    for ref in readers.values():
        reader = ref()
        if reader is not None and reader.pending is not None:
            realize(reader)
