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
from .record import EAGER_IN_STEP, MAX_LEAF_BUFFERS, MAX_NODES

_F32 = _dtype.float32
_SCALAR = ("s", "f")
_LEAF = ("t", "f", "f32")
_ADD, _SUB, _MUL, _COPY = ("add", "f"), ("sub", "f"), ("mul", "f"), ("copy", "f")
_NUMBERS = (float, int)
_COLLECTING = []   # while a replay recomputes scalars: the list each scope's kernels append to


class fusing:
    """with fusing(): in-place ops deferred and fused, written at the end (see the module).
    patched: the kernels' scalars are recomputed by a captured call's replay. A scope opened
    inside an open one joins it."""

    __slots__ = ("patched", "written", "shape", "stride", "numel", "leaves", "sink", "joined")

    def __init__(self, patched=False):
        self.patched = patched
        self.written = {}   # id -> weakref of each storage written (a dead temporary is not written)
        self.shape = None   # the shape (and contiguous stride) every write of the scope has: one kernel
        self.leaves = {}    # id -> the leaf Node of each storage read as it is

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
        self.leaves = {}
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

    # -- the deferred forms (ops/inplace.py and ops/math_api.py call them): each True when
    # recorded, False (nothing done, the scope's writes so far written) where target or an
    # operand is not a whole contiguous float32 tensor of one shape: the caller runs it eagerly.
    # Each builds the new Node of target from its operands' (their pending ones, or leaves),
    # by hand: depth-first leaves, children's scalars before an op's own.

    def unary(self, name, target):
        """target = name(target)."""
        a = self._target(target)
        if a is None:
            return self._eager()
        return self._write(target, ((name, "f"), a.key), a.leaves, a.scalars, a.size + 1, a.storages)

    def binary(self, name, target, other):
        """target = name(target, other) (other a tensor or a number)."""
        a = self._target(target)
        if a is None:
            return self._eager()
        if type(other) in _NUMBERS:
            return self._write(target, ((name, "f"), a.key, _SCALAR), a.leaves, a.scalars + (other,), a.size + 1,
                               a.storages)
        b = self._read(other)
        if b is None:
            return self._eager()
        return self._write(target, ((name, "f"), a.key, b.key), a.leaves + b.leaves, a.scalars + b.scalars,
                           a.size + b.size + 1, a.storages | b.storages)

    def add_alpha(self, name, target, other, alpha):
        """target = target + alpha * other (name: add_alpha or sub_alpha)."""
        a = self._target(target)
        b = a and self._read(other)
        if b is None:
            return self._eager()
        return self._write(target, ((name, "f"), a.key, b.key, _SCALAR), a.leaves + b.leaves,
                           a.scalars + b.scalars + (alpha,), a.size + b.size + 1, a.storages | b.storages)

    def copy(self, target, src):
        """target = src (a tensor or a number)."""
        if self._target(target) is None:
            return self._eager()
        if type(src) in _NUMBERS:
            return self._write(target, (_COPY, _SCALAR), [], (src,), 1, {})
        b = self._read(src)
        if b is None:
            return self._eager()
        return self._write(target, (_COPY, b.key), b.leaves, b.scalars, b.size + 1, b.storages)

    def lerp(self, target, end, weight):
        """target = target + weight * (end - target), from end where |weight| >= 0.5 (PyTorch's)."""
        a = self._target(target)
        b = a and self._read(end)
        if b is None:
            return self._eager()
        if abs(weight) < 0.5:
            key = (_ADD, a.key, (_MUL, (_SUB, b.key, a.key), _SCALAR))
            leaves, scalars = a.leaves + b.leaves + a.leaves, a.scalars + b.scalars + a.scalars + (weight,)
        else:
            key = (_SUB, b.key, (_MUL, (_SUB, b.key, a.key), _SCALAR))
            leaves, scalars = b.leaves + b.leaves + a.leaves, b.scalars + b.scalars + a.scalars + (1 - weight,)
        return self._write(target, key, leaves, scalars, 2 * a.size + 2 * b.size + 3, a.storages | b.storages)

    def addc(self, name, target, t1, t2, value):
        """target = target + value * t1 <name> t2 (addcmul: mul, addcdiv: div), PyTorch's order."""
        a = self._target(target)
        b = a and self._read(t1)
        c = b and self._read(t2)
        if c is None:
            return self._eager()
        if value == 1:
            key = (_ADD, a.key, ((name, "f"), b.key, c.key))
            scalars, size = a.scalars + b.scalars + c.scalars, a.size + b.size + c.size + 2
        else:
            key = (_ADD, a.key, ((name, "f"), (_MUL, b.key, _SCALAR), c.key))
            scalars, size = a.scalars + b.scalars + (value,) + c.scalars, a.size + b.size + c.size + 3
        return self._write(target, key, a.leaves + b.leaves + c.leaves, scalars, size,
                           a.storages | b.storages | c.storages)

    def _target(self, t):
        """_read(t) for a target: its shape becomes the scope's (one kernel per shape)."""
        shape = t._shape
        if self.shape != shape:
            if self.shape is not None:
                self.flush()
            s = t._storage
            if t.dtype is not _F32 or t._offset or not s.numel or s.numel != prod(shape) or (
                    t._stride != _CONTIGUOUS.get(shape) and not t.is_contiguous()):
                return None
            self.shape, self.stride, self.numel = shape, t._stride, s.numel
        elif t._storage.numel != self.numel:
            return None
        return self._read(t)

    def _read(self, t):
        """The node of tensor t's values (its pending one, or a leaf) where t is read whole in
        the scope's shape and layout, else None."""
        try:
            if t.dtype is not _F32 or t._shape != self.shape or t._stride != self.stride or t._offset:
                return None
        except AttributeError:   # (not a tensor)
            return None
        s = t._storage
        node = s.pending
        if node is None:
            node = self.leaves.get(id(s))
            if node is None:
                node = self.leaves[id(s)] = Node(_LEAF, [(s, self.stride, 0, _F32)], (), self.shape, 0, {id(s): s})
        return node

    def _write(self, target, key, leaves, scalars, size, storages):
        if size > MAX_NODES or len(storages) > MAX_LEAF_BUFFERS:
            return self._eager()
        s = target._storage
        s.pending = Node(key, leaves, scalars, self.shape, size, storages)
        self.written[id(s)] = weakref.ref(s)
        s.version += 1   # (Tensor._bump_version)
        return True

    def assign(self, dst, node):
        """dst's values := node (out= of a pending result, lazy.write_into), in the scope."""
        if dst.dtype is not _F32 or node.shape != self.shape:
            return False
        self.written[id(dst)] = weakref.ref(dst)
        dst.pending = node
        return True

    def _eager(self):
        """The op runs now, after the scope's writes so far (a patched scope's capture refused)."""
        self.flush()
        if self.patched:
            backend_for("webgpu").refuse_capture(EAGER_IN_STEP)
        return False


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

