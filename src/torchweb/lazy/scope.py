"""A fusing scope: while one is open, the elementwise ops on whole contiguous float32 tensors of
one shape, in place ones included, are not run but noted in a trace, and at the scope's end
every storage written in it that is still alive is written by one multi-output kernel. An
optimizer's step per parameter, written as PyTorch's single-tensor functions
(`exp_avg.lerp_(grad, 1 - beta1)`, `param.addcdiv_(exp_avg, denom, value=-step_size)`), is one
kernel this way; its temporaries (`denom`) die before the end and are never written.

The trace: slots (one per storage the scope reads or writes, in order of first use), entries
(op key, written slot, read slots or None for a scalar) and the scalars in order. Its end turns
the trace into lazy Nodes, one per live written slot, by a symbolic walk cached by the trace's
structure (a training step traces the same structure every time: a dictionary hit), and runs
them with the backend's run_fused. Nothing else of the lazy layer sees the trace: a storage the
scope wrote is pending with SCOPED, and realizing one (a read that cannot be traced, a sync)
writes the scope's work so far first (realize.py calls flush). The scope is opened under
no_grad (the optimizer's step): its ops record no autograd history.

A captured call (torch.compile) replays the step's kernels with new scalars (step counts, bias
corrections, a scheduled learning rate): `fusing(patched=True)` has each kernel's scalars noted
by the backend, and a replay runs the step's Python again under `collecting_scalars()`, whose
scopes collect each kernel's scalars instead of running it. An op of a patched scope that runs
on its own would replay its old scalars: the capture is refused (the call then runs eagerly)."""

from math import prod
from weakref import ref

from .. import _dtype
from .._size import _CONTIGUOUS
from ..backends import backend_for
from .graph import OPEN, SCOPED, Node, pending_readers
from .realize import realize_many
from .record import EAGER_IN_STEP

_F32 = _dtype.float32
_SCALAR = ("s", "f")
_LEAF = ("t", "f", "f32")
_ADD, _SUB, _MUL, _COPY = ("add", "f"), ("sub", "f"), ("mul", "f"), ("copy", "f")
_NUMBERS = (float, int)
_NONES = [(None,) * n for n in range(3)]
_MAX_INPUTS = 6      # buffers the scope's kernel reads at most (a dispatch binds 8: room for 2 more outputs)
_COLLECTING = []     # while a replay recomputes scalars: the list each scope's kernels append to
_COMPILED = {}       # trace structure -> the outputs' Node parts (_compile)


class fusing:
    """with fusing(): elementwise ops traced and fused, written at the end (see the module).
    patched: the kernels' scalars are recomputed by a captured call's replay. A scope opened
    inside an open one joins it."""

    __slots__ = ("patched", "shape", "layout", "numel", "tensors", "held", "slots", "stores", "kinds", "leaves",
                 "nodes", "inputs", "written", "trace", "scalars", "sink", "joined")

    def __init__(self, patched=False):
        self.patched = patched
        self._clear()

    def _clear(self):
        self.shape = None    # the shape of every traced tensor (one kernel); layout: (float32, shape, strides, 0)
        self.tensors = {}    # id(tensor) -> slot, for the tensors of the slots read as they are
        self.held = []       # those tensors (their ids stay theirs while the scope lasts)
        self.slots = {}      # id(storage) -> slot
        self.stores = []     # per slot: its storage, a weakref of it if made here (None: part of a composite)
        self.kinds = []      # per slot: 0 read as it is, None made here, or its outside pending Node's key
        self.leaves = []     # per slot read as it is: its leaf (storage, stride, offset, dtype)
        self.nodes = {}      # slot -> the outside pending Node it starts from (a new state's zeros)
        self.inputs = {}     # every buffer the kernel reads (id -> storage)
        self.written = {}    # the slots written, in order
        self.trace = []      # (op key, written slot, (read slot or None for the next scalar, ...))
        self.scalars = []

    def __enter__(self):
        self.joined = bool(OPEN)
        if not self.joined:
            self.sink = _COLLECTING[-1] if _COLLECTING else None
            OPEN.append(self)
        return self

    def __exit__(self, *exc):
        if not self.joined:
            OPEN.pop()
            if self.trace:
                self.flush()
        return False

    # -- tracing: each True when traced; False where a tensor is not a whole contiguous float32
    # tensor of the scope's shape (the caller runs the op as usual; an in-place one after the
    # scope's work so far is written)

    def fresh(self, tpl, out, operands):
        """out = op(operands) for out a tensor just made (lazy.record.elementwise_fresh)."""
        if not tpl.plain:
            return self._not_traced()
        shape = out._shape
        if self.shape != shape:
            if self.shape is not None or out._stride != _CONTIGUOUS.get(shape):
                return self._not_traced()
            self._fix(out)
        args = []
        numbers = []
        tensors = self.tensors
        for o in operands:
            if type(o) in _NUMBERS:
                args.append(None)
                numbers.append(o)
            else:
                i = tensors.get(id(o))
                if i is None:
                    i = self._slot(o)
                    if i is None:
                        return self._not_traced()
                args.append(i)
        self.scalars += numbers
        s = out._storage
        self.slots[id(s)] = slot = len(self.stores)
        self.stores.append(ref(s))   # (weakly: a temporary dead at the end is not written)
        self.kinds.append(None)
        self.leaves.append(None)
        self.written[slot] = None
        self.trace.append((tpl.opkey, slot, tuple(args)))
        s.pending = SCOPED
        return True

    def unary(self, name, target):
        """target = name(target)."""
        a = self.tensors.get(id(target))
        if a is None and (a := self._target(target)) is None:
            return self._eager()
        return self._write(target, (name, "f"), a, (a,))

    def binary(self, name, target, other):
        """target = name(target, other) (other a tensor or a number)."""
        a = self.tensors.get(id(target))
        if a is None and (a := self._target(target)) is None:
            return self._eager()
        if type(other) in _NUMBERS:
            self.scalars.append(other)
            return self._write(target, (name, "f"), a, (a, None))
        b = self.tensors.get(id(other))
        if b is None and (b := self._slot(other)) is None:
            return self._eager()
        return self._write(target, (name, "f"), a, (a, b))

    def add_alpha(self, name, target, other, alpha):
        """target = target + alpha * other (name: add_alpha or sub_alpha)."""
        a = self.tensors.get(id(target))
        if a is None and (a := self._target(target)) is None:
            return self._eager()
        b = self.tensors.get(id(other))
        if b is None and (b := self._slot(other)) is None:
            return self._eager()
        self.scalars.append(alpha)
        return self._write(target, (name, "f"), a, (a, b, None))

    def copy(self, target, src):
        """target = src (a tensor or a number)."""
        a = self.tensors.get(id(target))
        if a is None and (a := self._target(target)) is None:
            return self._eager()
        if type(src) in _NUMBERS:
            self.scalars.append(src)
            return self._write(target, _COPY, a, (None,))
        b = self.tensors.get(id(src))
        if b is None and (b := self._slot(src)) is None:
            return self._eager()
        return self._write(target, _COPY, a, (b,))

    def lerp(self, target, end, weight):
        """target = target + weight * (end - target), from end where |weight| >= 0.5 (PyTorch's):
        three entries, their results in slots of no storage."""
        tensors = self.tensors
        a = tensors.get(id(target))
        if a is None and (a := self._target(target)) is None:
            return self._eager()
        b = tensors.get(id(end))
        if b is None and (b := self._slot(end)) is None:
            return self._eager()
        n = self._temporaries(2)
        trace = self.trace
        trace.append((_SUB, n, (b, a)))
        trace.append((_MUL, n + 1, (n, None)))
        if abs(weight) < 0.5:
            self.scalars.append(weight)
            return self._write(target, _ADD, a, (a, n + 1))
        self.scalars.append(1 - weight)
        return self._write(target, _SUB, a, (b, n + 1))

    def addc(self, op, target, t1, t2, value):
        """target = target + value * t1 <op> t2 (addcmul: op "mul", addcdiv: "div"), PyTorch's order."""
        tensors = self.tensors
        a = tensors.get(id(target))
        if a is None and (a := self._target(target)) is None:
            return self._eager()
        b = tensors.get(id(t1))
        if b is None and (b := self._slot(t1)) is None:
            return self._eager()
        c = tensors.get(id(t2))
        if c is None and (c := self._slot(t2)) is None:
            return self._eager()
        trace = self.trace
        if value != 1:
            n = self._temporaries(2)
            self.scalars.append(value)
            trace.append((_MUL, n, (b, None)))
            trace.append(((op, "f"), n + 1, (n, c)))
        else:
            n = self._temporaries(1) - 1
            trace.append(((op, "f"), n + 1, (b, c)))
        return self._write(target, _ADD, a, (a, n + 1))

    def assign(self, dst, src):
        """Storage dst := the values of storage src, which the scope made (out= of a traced op,
        dst contiguous and whole: lazy.write_into)."""
        i = self.slots.get(id(src))
        if i is None or self.kinds[i] is not None or self.stores[i]() is not src or dst.dtype is not _F32 \
                or dst.numel != self.numel:
            return False
        a = self._storage_slot(dst)
        if a is None:
            return False
        self.written[a] = None
        self.trace.append((_COPY, a, (i,)))
        dst.pending = SCOPED
        return True

    # -- the trace's parts

    def _target(self, t):
        """The slot of tensor t about to be written in place (it fixes the scope's shape)."""
        shape = t._shape
        if self.shape != shape:
            if self.shape is not None:
                self.flush()
            s = t._storage
            if t.dtype is not _F32 or t._offset or not s.numel or s.numel != prod(shape) or (
                    t._stride != _CONTIGUOUS.get(shape) and not t.is_contiguous()):
                return None
            self._fix(t)
        return self._slot(t)

    def _fix(self, t):
        """The scope's shape and layout: t's."""
        self.shape, self.numel = t._shape, t._storage.numel
        self.layout = (_F32, t._shape, t._stride, 0)

    def _slot(self, t):
        """The slot of tensor t read whole in the scope's shape and layout, else None."""
        try:
            if (t.dtype, t._shape, t._stride, t._offset) != self.layout:
                return None
        except AttributeError:   # (not a tensor)
            return None
        i = self._storage_slot(t._storage)
        if i is not None and self.kinds[i] == 0:
            self.tensors[id(t)] = i
            self.held.append(t)
        return i

    def _storage_slot(self, s):
        """The slot of storage s (a new one reads it as it is, or takes in its pending
        expression: a new state's zeros cost no kernel of their own), or None."""
        i = self.slots.get(id(s))
        if i is not None and (self.kinds[i] is not None or self.stores[i]() is s):
            return i
        if s.numel != self.numel:
            return None
        node = s.pending
        if node is SCOPED:   # (made in the scope, seen through another tensor)
            return None
        inputs = self.inputs
        if len(inputs) + (len(node.storages) if node is not None else 1) > _MAX_INPUTS:
            return None
        self.slots[id(s)] = i = len(self.stores)
        self.stores.append(s)
        if node is None:
            inputs[id(s)] = s
            self.kinds.append(0)
            self.leaves.append((s, self.layout[2], 0, _F32))
        else:
            inputs.update(node.storages)
            self.kinds.append(node.key)
            self.leaves.append(None)
            self.nodes[i] = node
        return i

    def _temporaries(self, n):
        """The first of n new slots of values with no storage (parts of a composite op)."""
        i = len(self.stores)
        self.stores += _NONES[n]
        self.kinds += _NONES[n]
        self.leaves += _NONES[n]
        return i

    def _write(self, target, key, slot, args):
        self.trace.append((key, slot, args))
        self.written[slot] = None
        s = target._storage
        s.pending = SCOPED
        s.version += 1   # (Tensor._bump_version)
        return True

    def _not_traced(self):
        if self.patched:
            backend_for("webgpu").refuse_capture(EAGER_IN_STEP)
        return False

    def _eager(self):
        """The in-place op runs now, after the scope's writes so far."""
        self.flush()
        return self._not_traced()

    # -- the end

    def flush(self):
        """Write every live storage written in the scope so far: one kernel."""
        trace, stores, kinds, written = self.trace, self.stores, self.kinds, self.written
        leaves, nodes, inputs, scalars, shape = self.leaves, self.nodes, self.inputs, self.scalars, self.shape
        self._clear()
        if not trace:
            return
        # the live storages written: those read as they were, and those made here still alive
        outs, live = [], []
        for i in written:
            s = stores[i] if kinds[i] is not None else stores[i]()
            if s is not None:
                outs.append(i)
                live.append(s)
        sig = (tuple(trace), tuple(kinds), tuple(outs))
        compiled = _COMPILED.get(sig)
        if compiled is None:
            if len(_COMPILED) > 256:
                _COMPILED.clear()
            compiled = _COMPILED[sig] = _compile(trace, kinds, outs)
        made = []
        for key, reads, values, size in compiled:
            if nodes:   # (outside pending nodes taken in)
                reads, values = _splice(reads, values, leaves, nodes, scalars)
            else:
                reads, values = list(map(leaves.__getitem__, reads)), tuple(map(scalars.__getitem__, values))
            made.append(Node(key, reads, values, shape, size, inputs))
        outs = live
        for s in outs:
            s.pending = None
        for s in outs:
            if s.readers:   # (what read their old values, pending from before the scope, runs first)
                realize_many(pending_readers(s))
        if not outs:
            return
        if self.sink is not None:   # (a replay's scalars: nothing runs)
            self.sink.append([v for node in made for v in node.scalars])
            return
        backend_for(outs[0].device_type).run_fused(tuple(outs), tuple(made), one_kernel=True,
                                                   patched=self.patched)


def _compile(trace, kinds, outs):
    """Per output slot, (key, leaves, scalars, size) of its Node, its leaves and scalars given as
    the slot of each leaf and the index of each scalar in the trace's, or, where outside pending
    nodes are taken in, as ("l", slot) / ("n", slot) and ("s", index) / ("n", slot) parts."""
    exprs = {}
    spliced = any(type(k) is tuple for k in kinds)
    for i, k in enumerate(kinds):
        if k == 0:
            exprs[i] = (_LEAF, (("l", i),), (), 0)
        elif k is not None:
            exprs[i] = (k, (("n", i),), (("n", i),), _key_size(k))
    j = 0
    for key, out, args in trace:
        parts, leaves, scalars, own, size = [key], [], [], [], 1
        for a in args:
            if a is None:
                parts.append(_SCALAR)
                own.append(("s", j))
                j += 1
            else:
                ck, cl, cs, cn = exprs[a]
                parts.append(ck)
                leaves += cl
                scalars += cs
                size += cn
        exprs[out] = (tuple(parts), tuple(leaves), tuple(scalars + own), size)
    result = []
    for i in outs:
        key, leaves, scalars, size = exprs[i]
        if not spliced:
            leaves, scalars = tuple([s for _, s in leaves]), tuple([v for _, v in scalars])
        result.append((key, leaves, scalars, size))
    return result


def _key_size(key):
    """The ops in a Node's key."""
    return 1 + sum([_key_size(part) for part in key[1:] if type(part[0]) is not str])


def _splice(reads, values, leaves, nodes, scalars):
    """A Node's leaves and scalars from _compile's parts, outside pending nodes spliced in."""
    out_leaves, out_values = [], []
    for kind, i in reads:
        if kind == "l":
            out_leaves.append(leaves[i])
        else:
            out_leaves += nodes[i].leaves
    for kind, i in values:
        if kind == "s":
            out_values.append(scalars[i])
        else:
            out_values += nodes[i].scalars
    return out_leaves, tuple(out_values)


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
