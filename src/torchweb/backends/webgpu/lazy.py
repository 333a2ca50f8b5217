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

TORCHWEB_LAZY=0 in the environment turns deferral off (every op dispatched as it comes).
"""

import os
import weakref

from math import prod

from ... import _dtype
from ..._size import _CONTIGUOUS
from .kernels.elementwise import _narrowing
from .kernels import fused
from .pool import rounded_size

ENABLED = os.environ.get("TORCHWEB_LAZY", "1") != "0"
MAX_NODES = 48
MAX_LEAF_BUFFERS = 6
_pending = {}   # id -> weakref of every pending storage alive, for synchronize()
_F32, _U8 = _dtype.float32, _dtype.uint8


class Leaf:
    """A tensor operand read by an expression: its storage and view (as of when recorded)."""

    __slots__ = ("storage", "stride", "offset", "dtype")

    def __init__(self, t):
        self.storage, self.stride, self.offset, self.dtype = t._storage, t._stride, t._offset, t.dtype

    def key(self):
        return (id(self.storage), self.stride, self.offset, self.dtype.name)


class Node:
    """One deferred op: args are ("t", Leaf, cls) | ("s", value, cls) | ("n", Node, cls), cls
    being the compute class the op reads that argument in. Its value is float32 ("f"): only
    those are deferred."""

    __slots__ = ("op", "cls", "args", "size", "storages", "shape", "inlined")
    value_cls = "f"

    def __init__(self, op, cls, args, shape, size, storages):
        self.op, self.cls, self.args, self.shape, self.size = op, cls, args, shape, size
        self.storages = storages   # every buffer the expression reads, inlined nodes included
        self.inlined = False       # taken into a consumer's expression already


def _reads_whole(t, out):
    """t reads its storage exactly as out (a fresh contiguous tensor) lays out its own."""
    return (t._offset == 0 and t._stride == out._stride and t._shape == out._shape
            and t._storage.numel == out._storage.numel)


def defer(op, out, operands, classes, cls, value_cls, compute_dtypes, checks):
    """Record out = op(operands) as pending instead of dispatching it; False when it must run now.
    The hot path of every float32 elementwise op: keep it lean."""
    if checks or value_cls != "f" or out.dtype is not _F32 or not ENABLED:
        return False
    s = out._storage
    if s.touched or s.pending is not None or s.readers or out._offset:
        return False
    n = s.numel
    shape = out._shape
    stride = out._stride
    # (contiguous strides are the common case: out is fresh; else the general test)
    if n == 0 or (stride != _CONTIGUOUS.get(shape) and not out.is_contiguous()) or prod(shape) != n:
        return False
    if n > s.rt.max_workgroups << 8:
        s.rt.grid(-(-n // 256))   # past what a folded grid holds: refused now, at the call
    args = []
    size = 1
    storages = {}   # every buffer the expression reads (Node.storages), built as we go
    for o, c, dt in zip(operands, classes, compute_dtypes):
        os_ = getattr(o, "_storage", None)
        if os_ is None:
            if dt is _U8:
                return False
            args.append(("s", o, c))
            continue
        odt = o.dtype
        if dt is not odt and dt is not None and _narrowing(o, dt.name):
            return False   # operands rounded to float16 / wrapped to uint8 first: eager
        child = os_.pending
        # inlined only when read whole in the same shape (its leaves' strides index that
        # shape), and into one consumer only: a second consumer reads it written, so fan-out
        # never multiplies the work or the memory traffic. (_reads_whole, inlined: a pending
        # storage holds exactly its node's shape, so equal shapes mean equal numels.)
        if child is not None and not child.inlined and child.shape == shape and odt is _F32 \
                and o._offset == 0 and o._stride == stride and o._shape == shape \
                and size + child.size <= MAX_NODES:
            child.inlined = True
            args.append(("n", child, c))
            size += child.size
            storages.update(child.storages)
        else:
            if child is not None:
                # written now: a pending leaf would keep its own inputs alive, and chains of
                # them would grow memory without bound in loops that never read back
                os_.buffer_for_read()
            args.append(("t", Leaf(o), c))
            storages[id(os_)] = os_
    if len(storages) > MAX_LEAF_BUFFERS:
        return False
    s.pending = Node(op, cls, args, shape, size, storages)
    ref = weakref.ref(s)
    key = id(s)
    _pending[key] = ref
    for leaf_storage in storages.values():
        readers = leaf_storage.readers
        if readers is None:
            leaf_storage.readers = {key: ref}
        else:
            readers[key] = ref
    return True


def forget(storage):
    """A pending storage died unrealized: nothing will read it, drop it from the registries
    (long-lived inputs, weights say, would otherwise collect dead entries without bound)."""
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
    _pending.pop(id(storage), None)
    fused.run(storage.rt, storage, node)
    for leaf_storage in node.storages.values():
        if leaf_storage.readers:
            leaf_storage.readers.pop(id(storage), None)


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
    for kind, v, _ in node.args:
        if kind == "t":
            if v.storage is dst and (v.offset or v.stride != stride or v.dtype.name != "float32"):
                return False
        elif kind == "n" and not _reads_in_place(v, dst, stride):
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
