"""A fusing scope: while one is open, in-place elementwise ops on whole contiguous float32
tensors are deferred too (`defer`: the target's new values become its pending node, which reads
its old values, its old node inlined), a pending result may be inlined into several consumers,
and at the scope's end every storage written in it is written by one multi-output kernel. An
optimizer's step per parameter, written as PyTorch's single-tensor functions
(`exp_avg.lerp_(grad, 1 - beta1)`, `param.addcdiv_(exp_avg, denom, value=-step_size)`), is one
kernel this way.

The scope's nodes read the old values of what it writes, so those are written together or not
at all: realizing one of them (a read that cannot be fused, a sync) writes them all first
(realize.py asks `wrote` and calls `flush`). The scope is opened under no_grad (the optimizer's
step): its ops record no autograd history.

A captured call (torch.compile) replays the step's kernels with new scalars (step counts, bias
corrections, a scheduled learning rate): `fusing(patched=True)` has each kernel's scalars noted
by the backend, and a replay runs the step's Python again under `collecting_scalars()`, whose
scopes collect each kernel's scalars (the nodes' scalars, in kernel order) instead of running
it. An op of a patched scope that does not fuse would be replayed with its old scalars: the
capture is refused (the call then runs eagerly)."""

import weakref
from math import prod
from operator import call

from .. import _dtype
from .._size import _CONTIGUOUS
from ..backends import backend_for
from .graph import OPEN, Node
from .record import EAGER_IN_STEP, MAX_NODES

_F32 = _dtype.float32
_SCALAR = ("s", "f")
_LEAF = ("t", "f", "f32")
_NUMBERS = (float, int)
_ROWS = Node.ROWS
_COLLECTING = []   # while a replay recomputes scalars: the list each scope's kernels append to


class _NotFused(Exception):
    """An operand the scope cannot read element for element (another dtype, shape or layout)."""


class fusing:
    """with fusing(): in-place ops deferred and fused, written at the end (see the module).
    patched: the kernels' scalars are recomputed by a captured call's replay. A scope opened
    inside an open one joins it."""

    __slots__ = ("patched", "written", "shape", "sink", "joined")

    def __init__(self, patched=False):
        self.patched = patched
        self.written = {}   # id -> weakref of each storage written (a dead temporary is not written)
        self.shape = None   # the shape every write of the scope has (one kernel)

    def __enter__(self):
        self.joined = bool(OPEN)
        if not self.joined:
            self.sink = _COLLECTING[-1] if _COLLECTING else None
            OPEN.append(self)
        return self

    def __exit__(self, *exc):
        if not self.joined:
            OPEN.pop()
            if self.written:
                self.flush()
        return False

    def wrote(self, storage):
        ref = self.written.get(id(storage))
        return ref is not None and ref() is storage

    def flush(self):
        """Write every live storage written in the scope so far: one kernel."""
        written = self.written
        self.written = {}
        self.shape = None
        outs = tuple([s for s in map(call, written.values()) if s is not None and s.pending is not None])
        if not outs:
            return
        nodes = tuple([s.pending for s in outs])
        for s in outs:
            s.pending = None
        if self.sink is not None:   # (a replay's scalars: nothing runs)
            self.sink.append([v for node in nodes for v in node.scalars])
            return
        backend_for(outs[0].device_type).run_fused(outs, nodes, one_kernel=True, patched=self.patched)

    def defer(self, target, expr):
        """target's values := expr, a nested tuple (row, operand, ...) of elementwise table rows
        over tensors of target's shape and layout (target among them for its old values),
        numbers and other such tuples; recorded in the scope. False (nothing done, the
        scope's writes so far written) where target or an operand is not a whole contiguous
        float32 tensor of that shape: the caller runs the op eagerly."""
        s = target._storage
        shape = target._shape
        stride = target._stride
        if (target.dtype is not _F32 or target._offset or not s.numel or s.numel != prod(shape)
                or stride != _CONTIGUOUS.get(shape) and not target.is_contiguous()):
            return self._eager()
        if self.shape is not None and shape != self.shape:
            self.flush()
        leaves, scalars, storages = [], [], {}
        try:
            key, size = _build(expr, shape, stride, leaves, scalars, storages)
        except _NotFused:
            return self._eager()
        if size > MAX_NODES or len(storages) > 6:
            return self._eager()
        node = Node(key, leaves, tuple(scalars), shape, size, storages)
        self.shape = shape
        self.written[id(s)] = weakref.ref(s)
        s.pending = node
        target._bump_version()
        return True

    def assign(self, dst, node):
        """dst's values := node (out= of a pending result, lazy.write_into), in the scope."""
        if dst.dtype is not _F32 or dst.numel != prod(node.shape) or (
                self.shape is not None and node.shape != self.shape):
            return False
        self.shape = node.shape
        self.written[id(dst)] = weakref.ref(dst)
        dst.pending = node
        return True

    def _eager(self):
        """The op runs now, after the scope's writes so far (a patched scope's capture refused)."""
        self.flush()
        if self.patched:
            backend_for("webgpu").refuse_capture(EAGER_IN_STEP)
        return False


def _build(expr, shape, stride, leaves, scalars, storages):
    """The key of expr and its size (ops); leaves, scalars and storages extended as a Node's
    (depth first; children's scalars before the op's own). A pending operand is inlined (in a
    scope, one node may be read by several)."""
    row = expr[0]
    _ROWS[row.name] = row   # (what the backends' run_fused look rows up in)
    key = [(row.name, "f")]
    own = []
    size = 1
    for a in expr[1:]:
        t = type(a)
        if t is tuple:
            k, n = _build(a, shape, stride, leaves, scalars, storages)
            key.append(k)
            size += n
        elif t in _NUMBERS:
            key.append(_SCALAR)
            own.append(a)
        else:
            if a.dtype is not _F32 or a._shape != shape or a._stride != stride or a._offset:
                raise _NotFused
            s = a._storage
            child = s.pending
            if child is not None:
                key.append(child.key)
                leaves += child.leaves
                scalars += child.scalars
                storages.update(child.storages)
                size += child.size
            else:
                key.append(_LEAF)
                leaves.append((s, stride, 0, _F32))
                storages[id(s)] = s
    scalars += own
    return tuple(key), size


class collecting_scalars:
    """with collecting_scalars() as values: the scopes opened inside run nothing; values gets,
    per kernel they would run, its scalars (what a captured replay patches)."""

    def __enter__(self):
        values = []
        _COLLECTING.append(values)
        return values

    def __exit__(self, *exc):
        _COLLECTING.pop()
        return False

