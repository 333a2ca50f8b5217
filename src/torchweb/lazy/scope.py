"""A fusing scope: one kernel per optimizer update. The update is written as PyTorch's
single-tensor functions are (`exp_avg.lerp_(grad, 1 - beta1)`, `param.addcdiv_(exp_avg, denom,
value=-step_size)`) and runs over traced values (traced.py) standing for the tensors that
bind() takes: each op appends an entry to the trace instead of running. run() turns the trace
into one lazy Node per tensor written, by a symbolic walk cached by the trace's structure (a
training step traces the same structure every time: a dictionary hit), and writes them with
the backend's run_fused in one dispatch. Temporaries (`denom`) are values inside the kernel,
never buffers.

The trace: slots (the bound storages first, then the temporaries), entries (op key, written
slot, read slots or None for the next number) and the numbers in order. A bound storage that
is pending (a new state's lazy zeros, a gradient made by an elementwise op) is taken into the
kernel's expression: it costs no kernel of its own.

bind() hands the tensors back, unbound, where they are not whole contiguous float32 tensors of
one shape on one device (float16 or float64 parameters, say): the same update then runs op by
op on them.

A captured call (torch.compile) replays the step's kernels with new scalars (step counts, bias
corrections, a scheduled learning rate): `fusing(patched=True)` has each kernel's scalars noted
by the backend, and a replay runs the step's Python again under `collecting_scalars()`, whose
scopes collect each kernel's scalars instead of running it. An update that runs op by op would
replay its old scalars: the capture is refused (the call then runs eagerly)."""

from math import prod

from .. import _dtype
from .._size import _CONTIGUOUS
from ..backends import backend_for
from .graph import Node, pending_readers
from ..backends.pending import holds_matmul
from .realize import realize, realize_many
from .traced import Value

_F32 = _dtype.float32
_SCALAR = ("s", "f")
_LEAF = ("t", "f", "f32")
_MAX_INPUTS = 6      # buffers the scope's kernel reads at most (a dispatch binds 8: room for 2 more outputs)
_MAX_BUFFERS = 8     # storage buffers of a dispatch (WebGPU's default per stage): two updates paired
_COLLECTING = []     # while a replay recomputes scalars: the list each scope's kernels append to
_COMPILED = {}       # trace structure -> the outputs' Node parts (_compile)
EAGER_IN_STEP = ("an optimizer step has an update that does not fuse into one kernel (float16 state, "
                 "say): a replay could not recompute its scalars")


class fusing:
    """bind() an update's tensors, run the update on the values it gives, run() its kernel (see
    the module). patched: the kernels' scalars are recomputed by a captured call's replay."""

    __slots__ = ("patched", "forms", "sink", "values", "last", "shape", "stores", "slots", "kinds", "leaves",
                 "nodes", "inputs", "written", "trace", "scalars", "held", "groups", "count")

    def __init__(self, patched=False, forms=None, pairing=False, groups=None):
        self.patched = patched
        self.forms = forms   # (a list: each kernel's form, its trace's structure, is appended)
        # pairing (eager steps; the caller flush()es at the step's end): an update's kernel is
        # held until another of the same shape comes whose buffers fit one dispatch with its
        # own, and the two run as one (a transformer's layers have parameters of a few shapes:
        # a 6-layer nanoGPT's AdamW step 39 -> 21 kernels); shape -> (outs, nodes, buffer ids,
        # the kernel's index). groups (a list, while a step is captured): the indices of the
        # kernels each dispatch ran, in order, for the replay to pack their scalars alike
        self.held = {} if pairing else None
        self.groups = groups
        self.count = 0
        self.sink = _COLLECTING[-1] if _COLLECTING else None
        self.values = []     # the Value of each slot, made once: an update's values die with it, the next reuses them
        # the last traced update: fn, the bound kinds, args, kwargs, its kernel's parts (run()'s),
        # and where no pending expression was taken in, its kernel's scalars and the positions of
        # the tensors it writes
        self.last = None
        self._clear()

    def _clear(self):
        self.shape = None
        self.stores = []     # per bound slot: its storage
        self.slots = {}      # id(storage) -> its slot
        self.kinds = []      # per slot: 0 a buffer read as it is, a pending Node's key (taken in), None a temporary
        self.leaves = []     # per bound slot: its leaf (storage, stride, offset, dtype) where read as it is
        self.nodes = {}      # slot -> the pending Node it starts from
        self.inputs = {}     # every buffer the kernel reads (id -> storage)
        self.written = {}    # the slots written, in order
        self.trace = []      # (op key, written slot, (read slot or None for the next number, ...))
        self.scalars = []

    def update(self, fn, tensors, *args, **kwargs):
        """fn(*tensors, *args, **kwargs), an update written with tensor methods: run on the
        values bind() gives, as one kernel, or op by op on the tensors where they cannot be
        traced together. Where fn, its other arguments and the bound tensors' kinds are those
        of the last update traced (the parameters of a group, step after step), that trace is
        written again over these tensors: fn's Python does not run a second time."""
        last = self.last
        if self.sink is not None and last is not None and last[0] is fn and last[2] == args and last[3] == kwargs \
                and last[5] is not None:
            # a replay's scalars: those of the same update over other tensors (a captured step's
            # tensors were all traced; the replay checks its kernels' forms at its end)
            if self.forms is not None:
                self.forms.append(last[4][0])
            self.sink.append(last[5])
            for k in last[6]:
                tensors[k]._storage.version += 1
            return
        slots = self._bind(tensors)
        if slots is None:
            fn(*tensors, *args, **kwargs)
            return
        if last is not None and last[0] is fn and last[4] is not None and last[1] == self.kinds and last[2] == args \
                and last[3] == kwargs:
            self._write(*last[4])
            return
        bound = self.kinds[:]
        fn(*self._values(slots), *args, **kwargs)
        parts = self.run()
        scalars = written = None
        if parts is not None and parts[1][2] is not None:   # (its kernel's scalars, and which tensors it writes)
            scalars = list(map(parts[2].__getitem__, parts[1][2]))
            written = tuple([slots.index(i) for i in parts[1][0]])
        self.last = (fn, bound, args, kwargs, parts, scalars, written)

    def bind(self, tensors):
        """Values standing for tensors (None stays None), or None where they cannot be traced
        together."""
        slots = self._bind(tensors)
        return None if slots is None else self._values(slots)

    def _values(self, slots):
        values = self.values
        if len(values) < len(self.kinds):
            self.value(len(self.kinds) - 1)
        return [None if i is None else values[i] for i in slots]

    def value(self, slot):
        """The Value of slot."""
        values = self.values
        while len(values) <= slot:
            values.append(Value(self, len(values)))
        return values[slot]

    def _bind(self, tensors):
        """The slot of each tensor (None for None), or None where they cannot be traced together:
        whole contiguous float32 tensors of one shape on one device."""
        first = tensors[0]
        shape, stride, n = first._shape, first._stride, first._storage.numel
        if first.dtype is not _F32 or first._offset or n != prod(shape) or not n or (
                stride != _CONTIGUOUS.get(shape) and not first.is_contiguous()):
            return self._not_traced(n)
        self.shape = shape
        # (each tensor's layout compared in one tuple comparison: this runs for every tensor of
        # every update, each step)
        layout = (_F32, shape, stride, 0, n, first._storage.device_type)
        kinds, slot_of, stores, leaves, inputs = self.kinds, self.slots, self.stores, self.leaves, self.inputs
        bound = []
        for t in tensors:
            if t is None:
                bound.append(None)
                continue
            s = t._storage
            if (t.dtype, t._shape, t._stride, t._offset, s.numel, s.device_type) != layout:
                self._clear()
                return self._not_traced(n)
            key = id(s)
            i = slot_of.get(key)
            if i is None:
                if s.pending is None:   # (a buffer read as it is: the common case, inline)
                    slot_of[key] = i = len(kinds)
                    stores.append(s)
                    inputs[key] = s
                    kinds.append(0)
                    leaves.append((s, stride, 0, _F32))
                else:   # (left: the tensors after this one)
                    i = self._bind_pending(s, stride, len(tensors) - len(bound) - 1)
            bound.append(i)
        return bound

    def _bind_pending(self, s, stride, left):
        """A new slot for pending storage s: its expression taken in where the kernel can read
        what it reads (left: tensors still to bind, a buffer each at most), else written first
        and read as a buffer."""
        self.slots[id(s)] = i = len(self.kinds)
        self.stores.append(s)
        inputs = self.inputs
        node = s.pending
        if len(inputs) + left + sum([k not in inputs for k in node.storages]) <= _MAX_INPUTS \
                and not holds_matmul(node.key):   # (a deferred matmul runs as its own kernel)
            inputs.update(node.storages)
            self.kinds.append(node.key)
            self.leaves.append(None)
            self.nodes[i] = node
            return i
        realize(s)
        inputs[id(s)] = s
        self.kinds.append(0)
        self.leaves.append((s, stride, 0, _F32))
        return i

    def _not_traced(self, n):
        if self.patched and n:
            backend_for("webgpu").refuse_capture(EAGER_IN_STEP)
        return None

    def run(self):
        """Write every bound storage the update wrote: one kernel. Returns what writing the same
        trace over other tensors takes (_write's arguments), None where nothing was traced."""
        trace, kinds, written = self.trace, self.kinds, self.written
        if not trace:
            if kinds:
                self._clear()
            return None
        sig = (tuple(trace), tuple(kinds), tuple(written))
        found = _COMPILED.get(sig)
        if found is None:
            if len(_COMPILED) > 256:
                _COMPILED.clear()
            outs = tuple([i for i in written if kinds[i] is not None])   # (written temporaries are no output)
            compiled = _compile(trace, kinds, outs)
            # the kernel's scalars in its order, as indices into the trace's (no pending node taken in)
            order = None if any(type(k) is tuple for k in kinds) else tuple([j for c in compiled for j in c[2]])
            found = _COMPILED[sig] = outs, compiled, order
        parts = (sig, found, self.scalars)
        self._write(*parts)
        return parts

    def _write(self, sig, found, scalars):
        """The kernel of a compiled trace (found: _COMPILED's entry for sig) over the bound
        storages, with the trace's numbers."""
        stores, leaves, nodes, inputs, shape = self.stores, self.leaves, self.nodes, self.inputs, self.shape
        self._clear()
        outs, compiled, order = found
        if not outs:
            return
        if self.forms is not None:
            self.forms.append(sig)
        sink = self.sink
        if sink is not None and order is not None:   # (a replay's scalars: nothing runs, no node is needed)
            sink.append(list(map(scalars.__getitem__, order)))
            for i in outs:
                stores[i].version += 1
            return
        made = []
        for key, reads, values, size in compiled:
            if nodes:   # (pending expressions taken in)
                reads, values = _splice(reads, values, leaves, nodes, scalars)
            else:
                reads, values = list(map(leaves.__getitem__, reads)), tuple(map(scalars.__getitem__, values))
            made.append(Node((key, reads, values, shape, size, inputs, None)))
        live = list(map(stores.__getitem__, outs))
        for s in live:
            s.pending = None
            s.version += 1   # (Tensor._bump_version: autograd's check on saved tensors)
        for s in live:
            if s.readers:   # (what read their old values, pending, runs first)
                realize_many(pending_readers(s))
        if sink is not None:   # (a replay's scalars: nothing runs)
            sink.append([v for node in made for v in node.scalars])
            return
        if self.held is not None and self.sink is None:
            self.count += 1
            self._pair(shape, live, made, inputs, self.count - 1)
            return
        backend_for(live[0].device_type).run_fused(tuple(live), tuple(made), one_kernel=True, patched=self.patched)

    def _pair(self, shape, live, made, inputs, index):
        """Run this kernel together with a held one of its shape where their buffers fit one
        dispatch, else hold it (and run the one held before, if any)."""
        buffers = set(inputs)
        buffers.update([id(s) for s in live])
        key = (shape, live[0].device_type)
        other = self.held.pop(key, None)
        if other is not None:
            o_live, o_made, o_buffers, o_index = other
            if len(o_buffers | buffers) <= _MAX_BUFFERS:
                self._run(key[1], o_live + live, o_made + made, (o_index, index))
                return
            self._run(key[1], o_live, o_made, (o_index,))
        self.held[key] = (live, made, buffers, index)

    def _run(self, device_type, live, made, indices):
        if self.groups is not None:
            self.groups.append(indices)
        backend_for(device_type).run_fused(tuple(live), tuple(made), one_kernel=True, patched=self.patched)

    def flush(self):
        """Run the kernels held for pairing (the end of the step: nothing may read the
        parameters and states they write before)."""
        held, self.held = self.held, ({} if self.held is not None else None)
        for (_, device_type), (live, made, _, index) in (held or {}).items():
            self._run(device_type, live, made, (index,))


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
