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
  8 storage buffers per dispatch), and a pending storage is taken into one consumer's
  expression only (a second consumer reads it written: fan-out never repeats work).

Recording is the hot path of every float32 elementwise op, so what depends only on the op's
dtype plan (whether it may be deferred, its operands' parts of the kernel's cache key) is
decided once per plan (`template`), and each node carries what realizing its expression needs
(its structural key, leaves and scalars in kernel order), built from its children's as ops are
recorded: the realize does not walk the expression unless it compiles a kernel. The pending
readers of a buffer are registered by group (Node.group): a chain of ops over the same inputs
registers once, and nothing is unregistered when a pending storage dies or is realized
(entries with nothing pending left are dropped in bulk).

TORCHWEB_LAZY=0 in the environment turns deferral off (every op dispatched as it comes).
"""

import os
import weakref

from operator import call

from math import prod

from ... import _dtype
from ..._size import _CONTIGUOUS
from .kernels.elementwise import _checks, _narrowing, run as _run_eager
from .kernels import fused
from .pool import rounded_size

ENABLED = os.environ.get("TORCHWEB_LAZY", "1") != "0"
MAX_NODES = 48
MAX_LEAF_BUFFERS = 6
# id -> group (Node.group) of every group with a storage pending, for synchronize() and
# memory_allocated(): a pending storage is in exactly one group (groups whose storages all died
# or were realized are pruned in bulk when the dict outgrows _groups_limit[0]: _prune)
_groups = {}
_groups_limit = [64]
_F32, _U8 = _dtype.float32, _dtype.uint8


class Node:
    """One deferred op, and what the kernel of the expression rooted here needs, built from its
    children's as ops are recorded. key: its structure, (op name, class) then per argument a
    token, ("t", class, storage type) for a tensor read, ("s", "f") for a scalar (always read
    as f32), or an inlined child's key (class: the compute class the op reads that argument
    in); leaves: every tensor read (storage, stride, offset, dtype), in the order of a
    depth-first walk of the key's arguments (a tensor read twice appears twice); scalars:
    the scalar values in evaluation order (children's first; a tuple). Its value is float32:
    only those are deferred. Nodes never change their leaves, scalars or storages once made
    (consumers share them).
    storages: every buffer the expression reads, inlined nodes included (id -> storage); a
    node that reads no buffer its inlined child does not shares the child's dict, and its
    group: the weakrefs of the pending storages whose nodes share that dict, registered as
    one entry in each of those buffers' readers (so a chain of ops registers once)."""

    __slots__ = ("key", "leaves", "scalars", "shape", "size", "storages", "group", "inlined")

    def __init__(self, key, leaves, scalars, shape, size, storages, group=None):
        self.key, self.leaves, self.scalars, self.shape, self.size = key, leaves, scalars, shape, size
        self.storages, self.group = storages, group
        self.inlined = False       # taken into a consumer's expression already


class Template:
    """What recording an op needs that its dtype plan decides (template()): opkey, (op name,
    class); tokens, each operand's key token; f32, per operand whether it is a float32 tensor
    (which may be an inlined child); tensors, the positions of the tensor operands; scalars,
    the positions of the scalar ones, and their slice of the operands if they are contiguous
    (spans); pre and post: the key's parts around the token of the first tensor operand,
    leaf_key: the key where that operand is a leaf and the only tensor.
    Ops with one tensor operand (unary ops, a tensor and numbers) are recorded by _single, two
    and no numbers by _pair, others by _general."""

    __slots__ = ("opkey", "tokens", "f32", "tensors", "scalars", "spans", "pre", "post", "leaf_key",
                 "record")

    def __init__(self, opkey, tokens, f32):
        self.opkey, self.tokens, self.f32 = opkey, tokens, f32
        self.tensors = tuple(i for i, t in enumerate(tokens) if t[0] == "t")
        self.scalars = sc = tuple(i for i, t in enumerate(tokens) if t[0] == "s")
        self.spans = slice(0, 0) if not sc else slice(sc[0], sc[-1] + 1) if sc[-1] - sc[0] == len(sc) - 1 else None
        i = self.tensors[0] if self.tensors else 0
        self.pre, self.post = (opkey,) + tokens[:i], tokens[i + 1:]
        self.leaf_key = self.pre + tokens[i:i + 1] + self.post
        self.record = (_single if len(self.tensors) == 1 else
                       _pair if len(self.tensors) == 2 and not self.scalars else _general)


def template(op, operands, classes, cls, value_cls, compute_dtypes, out_dtype, checks):
    """op's Template, from its dtype plan and the operands of one call; False where the op
    must run now."""
    if checks or value_cls != "f" or out_dtype is not _F32 or not ENABLED:
        return False
    tokens, f32 = [], []
    for o, c, dt in zip(operands, classes, compute_dtypes):
        if getattr(o, "_storage", None) is None:
            if dt is _U8 or c != "f":
                return False   # (scalars are passed as float32: deferred ops compute in f32)
            tokens.append(("s", c))
        elif dt is not o.dtype and dt is not None and _narrowing(o, dt.name):
            return False   # operands rounded to float16 / wrapped to uint8 first: eager
        else:
            tokens.append(("t", c, o.dtype.gpu_storage))
        f32.append(getattr(o, "dtype", None) is _F32)
    fused.OPS[op.name] = op
    return Template((op.name, cls), tuple(tokens), tuple(f32))


def elementwise_fresh(op, out, operands, plan):
    """backend.elementwise for an output the op just made (contiguous, fresh, read by no one),
    with its cached dtype plan (ops/elementwise.py; operands: a tuple): recorded as pending
    where the plan allows, else run now."""
    tpl = plan.lazy
    if tpl is None:
        tpl = plan.lazy = template(op, operands, plan.classes, plan.cls, plan.value_cls, plan.compute,
                                   plan.result, _checks(op, out, operands, plan.cls, plan.value_cls))
    if tpl and _record(out, operands, tpl):
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
    return bool(tpl) and _record(out, tuple(operands), tpl)


def _record(out, operands, tpl):
    """out's storage (fresh, contiguous) becomes pending with the op's node; False if it is
    empty or the inputs are too many buffers. operands: a tuple, broadcast to out's shape."""
    s = out._storage
    n = s.numel
    if not n:
        return False
    if n > s.rt.max_workgroups << 8:
        s.rt.grid(-(-n // 256))   # past what a folded grid holds: refused now, at the call
    node = tpl.record(out, operands, tpl)
    if node is None:
        return False
    s.pending = node
    ref = weakref.ref(s)
    group = node.group
    if group is not None:   # registered already, by the child whose inputs it shares
        group.append(ref)
        return True
    node.group = group = [ref]
    gid = id(group)
    _groups[gid] = group
    if len(_groups) > _groups_limit[0]:
        _prune_groups()
    for leaf_storage in node.storages.values():
        readers = leaf_storage.readers
        if readers is None:
            leaf_storage.readers = {gid: group}
            leaf_storage.readers_limit = 64
        else:
            readers[gid] = group
            if len(readers) > leaf_storage.readers_limit:
                _prune(leaf_storage)
    return True


# The recorders: the node of out = op(operands), or None where its inputs are too many buffers.
# An operand that is a pending float32 storage read whole in out's shape is inlined (its
# expression taken into the node: its leaves' strides index that shape), into one consumer
# only: a second consumer reads it written, so fan-out never multiplies the work or the memory
# traffic. (A pending storage holds exactly its node's shape; operands have out's shape,
# broadcast already.) A pending operand not inlined is written now: a pending leaf would keep
# its own inputs alive, and chains of them would grow memory without bound in loops that
# never read back.

def _single(out, operands, tpl):
    """One tensor operand (unary ops, a tensor and numbers)."""
    i = tpl.tensors[0]
    o = operands[i]
    os_ = o._storage
    child = os_.pending
    shape = out._shape
    span = tpl.spans
    scalars = operands[span] if span is not None else tuple([operands[j] for j in tpl.scalars])
    if child is not None and tpl.f32[i] and not child.inlined and child.shape == shape \
            and o._offset == 0 and o._stride == out._stride and child.size < MAX_NODES:
        child.inlined = True
        return Node(tpl.pre + (child.key,) + tpl.post, child.leaves, child.scalars + scalars, shape,
                    child.size + 1, child.storages, child.group)
    if child is not None:
        os_.buffer_for_read()
    return Node(tpl.leaf_key, [(os_, o._stride, o._offset, o.dtype)], scalars, shape, 1, {id(os_): os_}, None)


def _pair(out, operands, tpl):
    """Two tensor operands, no numbers (binary ops of tensors): _general unrolled."""
    a, b = operands
    shape = out._shape
    stride = out._stride
    sa, sb = a._storage, b._storage
    ca = sa.pending
    if ca is not None and tpl.f32[0] and not ca.inlined and ca.shape == shape \
            and a._offset == 0 and a._stride == stride and ca.size < MAX_NODES:
        ca.inlined = True
        pa, la, sca, size, storages, group = ca.key, ca.leaves, ca.scalars, ca.size + 1, ca.storages, ca.group
    else:
        if ca is not None:
            sa.buffer_for_read()
        pa, la, sca, size, storages, group = tpl.tokens[0], [(sa, a._stride, a._offset, a.dtype)], (), 1, {id(sa): sa}, None
    cb = sb.pending   # (after a's: b may be a, inlined or written just now)
    if cb is not None and tpl.f32[1] and not cb.inlined and cb.shape == shape \
            and b._offset == 0 and b._stride == stride and size + cb.size <= MAX_NODES:
        cb.inlined = True
        pb, lb, scb, size = cb.key, cb.leaves, cb.scalars, size + cb.size
        if group is None and id(sa) in cb.storages:   # (a a leaf that b's expression reads too)
            storages, group = cb.storages, cb.group
        else:
            storages, group = storages | cb.storages, None
    else:
        if cb is not None:
            sb.buffer_for_read()
        pb, lb, scb = tpl.tokens[1], [(sb, b._stride, b._offset, b.dtype)], ()
        if id(sb) not in storages:   # (else, y + w in a loop: w is among y's inputs, shared)
            storages, group = storages | {id(sb): sb}, None
    if len(storages) > MAX_LEAF_BUFFERS:
        return None
    return Node((tpl.opkey, pa, pb), la + lb, sca + scb, shape, size, storages, group)


def _general(out, operands, tpl):
    """Any operands."""
    shape = out._shape
    stride = out._stride
    key = [tpl.opkey]
    leaves = []
    scalars = []
    own = []        # this node's scalars (after its children's)
    size = 1
    storages = {}   # every buffer the expression reads (Node.storages), built as we go
    for o, token, f32 in zip(operands, tpl.tokens, tpl.f32):
        if token[0] == "s":
            key.append(token)
            own.append(o)
            continue
        os_ = o._storage
        child = os_.pending
        if child is not None and f32 and not child.inlined and child.shape == shape \
                and o._offset == 0 and o._stride == stride and size + child.size <= MAX_NODES:
            child.inlined = True
            key.append(child.key)
            leaves += child.leaves
            scalars += child.scalars
            size += child.size
            storages.update(child.storages)
        else:
            if child is not None:
                os_.buffer_for_read()
            key.append(token)
            leaves.append((os_, o._stride, o._offset, o.dtype))
            storages[id(os_)] = os_
    if len(storages) > MAX_LEAF_BUFFERS:
        return None
    return Node(tuple(key), leaves, tuple(scalars + own), shape, size, storages)


def _prune(storage):
    """Drop the groups of storage.readers with no storage pending any more. A pending storage
    that dies or is realized leaves its group's entry in the readers of what it read (dropping
    them each time costs each op more than this): long-lived inputs never written (weights in
    inference, say) would otherwise collect them without bound. Run when the dict outgrows
    storage.readers_limit, then twice what is left (at least 64): each entry is tested a
    bounded number of times however many stay pending. (The test inline: most groups are
    one op, whose storage is checked without a call.)"""
    storage.readers = readers = _with_pending(storage.readers)
    storage.readers_limit = max(64, 2 * len(readers))


def _prune_groups():
    """Drop the groups with no storage pending any more from _groups (as _prune)."""
    global _groups
    _groups = _with_pending(_groups)
    _groups_limit[0] = max(64, 2 * len(_groups))


def _with_pending(groups):
    """The entries of groups (id -> group) with a storage still pending."""
    return {gid: group for gid, group in groups.items()
            if (s := group[-1]()) is not None and s.pending is not None or
            len(group) > 1 and any(map(_pending_in, group))}


def _pending_in(ref):
    s = ref()
    return s is not None and s.pending is not None


def pending_storages():
    """Every pending storage alive."""
    found = []
    for group in _groups.values():
        for s in filter(None, map(call, group)):   # (its live storages, the dead skipped in C)
            if s.pending is not None:
                found.append(s)
    return found


def unallocated_bytes(pool):
    """Bytes the pending storages of this pool's runtime would hold had they their buffers
    (memory_allocated() counts a tensor whether or not its buffer was taken yet)."""
    total = 0
    for s in pending_storages():
        if not s.touched and s.rt.pool is pool:
            total += rounded_size(max(4, (s.numel * (2 if s.dtype.gpu_storage == "f16" else 4) + 3) & ~3))
    return total


def materialize(storage):
    """Run a storage's pending expression now (its inputs can then be freed)."""
    if storage.pending is not None:
        realize(storage)


def realize(storage):
    """Write a pending storage's values: one fused kernel for its whole expression."""
    node = storage.pending
    storage.pending = None   # (the entries of its group now skip it)
    fused.run(storage.rt, storage, node)


def write_into(src, dst, stride, whole):
    """Run pending src's expression with dst's buffer as its output (an op's out=): one kernel
    instead of the op's then a copy's. dst: a float32 storage whose first numel elements, in
    contiguous `stride`, are the output (whole: that is all of dst). False (nothing done) when
    the expression reads dst in another layout: an element would be read after another thread
    wrote it."""
    node = src.pending
    if id(dst) in node.storages and not _reads_in_place(node, dst, stride):
        return False
    src.pending = None   # (not a pending reader of dst: it reads dst's old values itself, element by element)
    if whole:
        # overwritten whole: a pending expression of dst is never needed (consumers that took
        # it into theirs compute it from its inputs)
        dst.pending = None
    dst.buffer_id   # its other pending readers run now, on the old values (a partial pending dst too)
    fused.run(dst.rt, dst, node)
    return True


def _reads_in_place(node, dst, stride):
    """Every read of dst in node's expression is element i for output element i."""
    for storage, st, offset, dtype in node.leaves:
        if storage is dst and (offset or st != stride or dtype is not _F32):
            return False
    return True


def realize_all():
    """Write every pending storage (torchweb.webgpu.synchronize(): all work done, as eager)."""
    global _groups
    for storage in pending_storages():
        if storage.pending is not None:
            realize(storage)
    _groups = {}
    _groups_limit[0] = 64


def realize_readers(storage):
    """Realize every pending expression that reads storage (before it is written or read)."""
    readers = storage.readers
    storage.readers = None
    for group in readers.values():
        for reader in filter(None, map(call, group)):
            if reader.pending is not None:
                realize(reader)
