"""torch.compile of a call whose outputs require grad: a compiled module in an ordinary training
loop (`loss = F.cross_entropy(model(x), y); loss.backward(); opt.step()`).

The call's forward is captured as one program and its backward as another, both from eager
calls (the second and third of a signature, as for any compiled call; the backward when
`.backward()` first runs through each of them). The outputs hang from one autograd node
(_Boundary) whose inputs are the call's leaves: the parameters it used and its inputs that
require grad. Its backward returns their gradients, and the engine accumulates them into .grad
as for any node (set on the first backward, added after). In a recorded call the node's backward
runs the call's own eager graph (autograd.grad); in a replayed one it replays the backward
program, which reads what the forward replay left in the buffers the pair shares (the saved
activations, the copied inputs and outputs).

Those shared buffers hold one call's values at a time, so a pair (a slot) takes a call only when
no earlier call it took may still run its backward (its node is alive and was not freed by a
backward without retain_graph). A call that finds every slot taken (SLOTS of them: `f(a)`, `f(b)`,
then one backward uses two) runs eagerly, with its own graph. Parameters are
read in place, so an optimizer step between calls is seen; a parameter replaced (new tensor or
storage) invalidates the pair (the module's world, _compile_guards.world)."""

import weakref

from . import _compile_guards as guards
from ._creation import zeros
from ._size import contiguous_strides
from ._tensor import Tensor
from .autograd import grad_mode
from .autograd.differentiate import grad as autograd_grad
from .autograd.function import AccumulateGrad, Function
from .autograd.graph import _reachable
from .backends.webgpu import capture
from .backends.webgpu.runtime import get_runtime

_SECOND_TIME = ("Trying to backward through the graph a second time (or directly access saved tensors "
                "after they have already been freed). Saved intermediate values of the graph are freed "
                "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
                "backward through the graph a second time or if you need to access saved tensors after "
                "calling backward.")


class _Boundary(Function):
    """The node a compiled call's outputs hang from; `call` is an _EagerCall or a _ReplayedCall."""

    _backward_name = "CompiledFunctionBackward"
    _double_backward = True   # (create_graph: a recorded call's eager graph differentiates; a replay refuses)

    @staticmethod
    def forward(ctx, call, *leaves):
        ctx.call = call
        ctx.set_materialize_grads(False)     # (an output without a gradient costs no zeros)
        if call.nondiff:
            ctx.mark_non_differentiable(*call.nondiff)
        return call.outs

    @staticmethod
    def backward(ctx, *grads):
        if ctx._freed:
            raise RuntimeError(_SECOND_TIME)
        return (None,) + tuple(ctx.call.backward(ctx, grads))


def _hang(call, outs, diff, leaves, spec):
    """The call's result (spec's structure) with `outs` replaced by tensors hanging from one
    _Boundary node over `leaves`."""
    call.outs = tuple(outs)
    call.nondiff = tuple(o for i, o in enumerate(outs) if i not in diff)
    res = _Boundary.apply(call, *leaves)
    call.outs = call.nondiff = None      # (the node must not hold its own outputs)
    it = iter(res)
    return guards.rebuild(spec, lambda *_: next(it)), res


SLOTS = 2   # calls of one signature whose backward may be pending at once (f(a), f(b), then a backward)


class Tape:
    """The autograd capture of one compiled signature (a _compile._Entry's `tape`): up to SLOTS
    pairs of programs, each with buffers of its own, so that as many calls may await their
    backward at once."""

    def __init__(self, owner, entry):
        self.owner, self.entry = owner, entry
        self.slots = []
        self.mismatches = 0

    def call(self, args, kwargs, tensors, reached, state):
        for slot in self.slots:
            if not slot.busy():
                break
        else:
            if len(self.slots) == SLOTS:
                self.owner._note(f"{SLOTS} earlier calls' backward has not run yet (or their graphs are "
                                 "kept with retain_graph=True): the captured buffers hold those calls' "
                                 "values, so this call runs eagerly")
                return self.owner._eager(args, kwargs)
            slot = _Slot(self)
            self.slots.append(slot)
        if slot.fwd is not None:
            if state == slot.world:
                return slot.replay(tensors)
            slot.reset()                 # a parameter or buffer was replaced: capture again
        return slot.record(args, kwargs, tensors, reached, state)

    def give_up(self, reason):
        for slot in self.slots:
            slot.reset()
        self.owner._give_up(self.entry, reason)

    def mismatch(self, what):
        self.mismatches += 1
        if self.mismatches > 3:
            self.give_up(f"its {what} differs from call to call (a Python value or uploaded data that "
                         "changes: pass it as an argument), or no backward ran through it")


class _Slot:
    """One pair of captured programs (forward, backward) and the buffers they share."""

    def __init__(self, tape):
        self.tape, self.owner = tape, tape.owner
        self.fwd = None          # the forward Graph, once its backward is captured too
        self.bwds = {}           # which outputs have gradients -> (backward Graph, result specs)
        self.spec = self.diff = self.leaf_map = self.world = None
        self.fprobe = self.bprobe = None     # the last recordings' signatures
        self.fblock = self.bblock = None     # their device-errors blocks
        self.live = None         # weakref to the node of the last call taken (recorded or replayed)
        self.generation = 0      # forward replays so far (a replayed call's backward checks it)
        self.last = None         # the recorded call whose backward may complete the pair

    def busy(self):
        """Whether the last call taken may still run its backward (its node is alive and was
        not freed by a backward without retain_graph)."""
        node = self.live() if self.live is not None else None
        return node is not None and not node.ctx._freed

    def reset(self):
        self.fwd, self.bwds, self.fprobe, self.bprobe, self.last = None, {}, None, None, None

    def give_up(self, reason):
        self.tape.give_up(reason)

    # -- recording ----------------------------------------------------------------------------
    def record(self, args, kwargs, tensors, reached, state):
        rt = get_runtime()
        detached, outer = {}, {}   # the inputs that require grad: as leaves of the call's own graph
        for t in tensors:
            if t.requires_grad and id(t) not in detached:
                d = detached[id(t)] = t.detach().requires_grad_()
                outer[id(d)] = t
        in_storages = guards.unique_storages(tensors)
        for s in in_storages:
            s.buffer_for_write()     # buffers taken and pending work run before recording
        out, rec = guards.record_call(rt, self.fblock, self.owner.fn, _swap(args, detached),
                                      _swap(kwargs, detached), reached)
        self.fblock = rec.error_block
        outs, spec = guards.flatten_out(out)
        inner_leaves, reason = _leaves(outs)
        leaves = [outer.get(id(v), v) for v in inner_leaves]
        reason = reason or guards.off_device(outs, reached)
        if reason is None and guards.reads_grads(reached, rec):
            reason = "it reads the .grad of a parameter (a replay would read a stale one)"
        if reason is not None:
            rec.refuse(reason)
        diff = tuple(i for i, t in enumerate(outs) if t.requires_grad)
        call = _EagerCall(self, outs, diff, inner_leaves)
        try:
            sig = rec.signature(in_storages)
            if not sig[0]:
                raise capture.Refused("nothing ran on the GPU")
            # (the backward's signature names what this forward made as this recording does)
            call.known = {s._buffer_id: ("input", k) for k, s in enumerate(in_storages)}
            call.known.update((bid, ("made", n)) for bid, n in rec.made_names.items())
            leaf_map = _leaf_map(leaves, tensors)
            sig = (sig, diff, tuple(k if k is not None else id(t) for k, t in leaf_map))
            same, first, self.fprobe = sig == self.fprobe, self.fprobe is None, sig
            if same:
                out_storages = guards.unique_storages(outs)
                graph = capture.build(rt, rec, in_storages, out_storages)
                links = _links(in_storages, graph.in_slots) + _links(out_storages, graph.out_slots)
                call.candidate = (graph, links, spec, diff, leaf_map, state)
                self.last = call
            else:
                if not first:
                    self.tape.mismatch("forward")
                rt.pool.trim(rt.pool.limit)
        except capture.Refused as e:
            rt.pool.trim(rt.pool.limit)
            self.give_up(str(e))
        res, hung = _hang(call, [o.detach() for o in outs], diff, leaves, spec)
        self._taken(hung, diff)
        return res

    def _taken(self, outs, diff):
        self.live = weakref.ref(outs[diff[0]].grad_fn) if diff else None

    def record_backward(self, call, grads, pattern, inner):
        """Run a recorded call's backward eagerly, recording it; where it repeats the previous
        one, it and the call's forward become the replayed pair."""
        rt = get_runtime()
        in_storages = guards.unique_storages(grads)
        for s in in_storages:
            s.buffer_for_write()
        rng = guards.rng_state()
        rec = capture.start(rt, self.bblock)
        self.bblock = rec.error_block
        try:
            res = autograd_grad(inner, call.leaves, grads, retain_graph=True, allow_unused=True)
        finally:
            capture.stop(rt, rec)
        if guards.rng_state() != rng:
            rec.refuse("its backward draws random numbers")
        try:
            sig = (pattern, rec.signature(in_storages, call.known))
            same, first, self.bprobe = sig == self.bprobe, self.bprobe is None, sig
            if not same:
                if not first:
                    self.tape.mismatch("backward")
            elif call.candidate is not None and call is self.last:
                fwd, links, spec, diff, leaf_map, state = call.candidate
                out_storages, specs = _result_specs(res, in_storages)
                rename = {}
                for ref, gid in links:
                    st = ref()
                    if st is not None and rec.storages.get(st._buffer_id) is st \
                            and st._buffer_id not in rec.acquisitions:
                        rename[st._buffer_id] = gid
                bwd = capture.build(rt, rec, in_storages, out_storages, rename)
                bwd.forward = fwd      # (the forward graph owns the renamed buffers)
                self.fwd, self.bwds = fwd, {pattern: (bwd, specs)}
                self.spec, self.diff, self.leaf_map, self.world = spec, diff, leaf_map, state
                self.owner.compile_stats["captures"] += 1
                self.owner.compile_stats["backward_captures"] += 1
        except capture.Refused as e:
            rt.pool.trim(rt.pool.limit)
            self.give_up(str(e))
        call.candidate = None
        return res

    # -- replaying ----------------------------------------------------------------------------
    def replay(self, tensors):
        stats = self.owner.compile_stats
        stats["replays"] += 1
        self.generation += 1
        storages = self.fwd.replay(guards.unique_storages(tensors))
        outs = []
        guards.rebuild(self.spec, lambda i, shape, stride, offset, dtype, device: outs.append(
            Tensor._make(storages[i], shape, stride, offset, dtype, device)))
        leaves = [tensors[k] if k is not None else t for k, t in self.leaf_map]
        call = _ReplayedCall(self, self.generation, self.diff, self.bwds,
                             [(outs[i].shape, outs[i].dtype, outs[i].device) for i in self.diff])
        res, hung = _hang(call, outs, self.diff, leaves, self.spec)
        self._taken(hung, self.diff)
        return res


class _EagerCall:
    """A recorded call: its outputs' eager graph runs its backward."""

    def __init__(self, slot, outs, diff, leaves):
        self.slot, self.diff, self.leaves = slot, diff, leaves
        self.inner = tuple(outs[i] for i in diff)   # (their graph lives as long as the node)
        self.candidate = None    # (forward Graph, links, spec, diff, leaf map, world) if it repeated the last
        self.known = None        # its forward's buffers, named for its backward's signature

    def backward(self, ctx, grads):
        pairs = [(o, g) for o, g in zip(self.inner, grads_of(grads, self.diff)) if g is not None]
        if not pairs:
            return (None,) * len(self.leaves)
        inner = [o for o, _ in pairs]
        slot = self.slot
        if grad_mode.is_grad_enabled():     # create_graph: the gradients need graphs of their own
            slot.give_up("a backward with create_graph=True ran through it (a replay gives no "
                         "graph to the gradients)")
            res = autograd_grad(inner, self.leaves, [g for _, g in pairs], retain_graph=True,
                                create_graph=True, allow_unused=True)
        elif slot.tape.entry.eager_reason is None and (self.candidate is not None or slot.fwd is None):
            pattern = tuple(g is not None for g in grads_of(grads, self.diff))
            res = slot.record_backward(self, _canonical([g for _, g in pairs]), pattern, inner)
        else:
            res = autograd_grad(inner, self.leaves, [g for _, g in pairs], retain_graph=True,
                                allow_unused=True)
        return res


class _ReplayedCall:
    """A replayed call: the backward program runs its backward."""

    def __init__(self, slot, generation, diff, bwds, metas):
        self.slot, self.generation, self.diff, self.bwds = slot, generation, diff, bwds
        self.metas = metas       # the differentiable outputs' (shape, dtype, device)

    def backward(self, ctx, grads):
        slot = self.slot
        if self.generation != slot.generation:
            raise RuntimeError("torchweb.compile: this call's saved values were overwritten by a later "
                               "call of the compiled function (internal)")
        if grad_mode.is_grad_enabled():
            slot.give_up("a backward with create_graph=True ran through it (a replay gives no graph "
                         "to the gradients)")
            raise RuntimeError("torchweb.compile: create_graph=True through a replayed call: its "
                               "gradients would have no graph. The next calls of this signature run "
                               "eagerly (and support it).")
        present = grads_of(grads, self.diff)
        pattern = tuple(g is not None for g in present)
        found = self.bwds.get(pattern)
        if found is None:
            # fewer outputs with gradients than the captured backward took: zeros for the others
            for taken, found in self.bwds.items():
                if all(t or not p for t, p in zip(taken, pattern)):
                    present = [g if g is not None or not t else zeros(shape, dtype=dtype, device=device)
                               for g, t, (shape, dtype, device) in zip(present, taken, self.metas)]
                    break
            else:
                slot.give_up("a backward took gradients from other outputs than the captured backward did")
                raise RuntimeError("torchweb.compile: this backward starts from outputs of a replayed "
                                   "call that the captured backward took no gradient from; the next "
                                   "calls run eagerly")
        bwd, specs = found
        gs = _canonical([g for g in present if g is not None])
        storages = bwd.replay(guards.unique_storages(gs))
        slot.owner.compile_stats["backward_replays"] += 1
        out = []
        for s in specs:
            if s is None:
                out.append(None)
            else:
                where, k, shape, stride, offset, dtype, device = s
                st = gs[k]._storage if where == "in" else storages[k]
                out.append(Tensor._make(st, shape, stride, offset, dtype, device))
        return out


def grads_of(grads, diff):
    return [grads[i] for i in diff]


def _swap(x, detached):
    """args/kwargs with each tensor that requires grad replaced by its detached leaf."""
    if not detached:
        return x
    if isinstance(x, dict):
        return {k: _swap(v, detached) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_swap(v, detached) for v in x)
    return detached.get(id(x), x)


def _leaves(outs):
    """The leaves the outputs' graph reaches (in a fixed order), and why the call cannot be
    captured with its backward, or None."""
    leaves, why = [], None
    for t in outs:
        if t.requires_grad and t.grad_fn is None:
            why = "it returns a tensor that requires grad and has no graph (an input or a parameter)"
    for node in _reachable([t.grad_fn for t in outs if t.grad_fn is not None]):
        if type(node) is AccumulateGrad:
            if node.variable._hooks:
                why = "a tensor it differentiates has gradient hooks (they would run twice)"
            leaves.append(node.variable)
        elif node._hooks or node._pre_hooks:
            why = "its graph has backward hooks (a replay would not run them)"
    return leaves, why


def _leaf_map(leaves, tensors):
    """Where each leaf comes from in a replay: (index of the input, None) or (None, the tensor)."""
    index = {id(t): i for i, t in enumerate(tensors)}
    return [(index[id(v)], None) if id(v) in index else (None, v) for v in leaves]


def _links(storages, slots):
    """(weakref to a recorded storage, the graph buffer that holds its values on replay)."""
    return [(weakref.ref(s), slot[0]) for s, slot in zip(storages, slots)]


def _canonical(grads):
    """The gradients as contiguous tensors with storages of their own (a replayed backward's
    inputs then have one layout whatever the graph outside made)."""
    seen, out = set(), []
    for g in grads:
        st = g._storage
        if g._offset or g._stride != contiguous_strides(g._shape) or st.numel != g.numel() \
                or id(st) in seen:
            g = g.clone()
        seen.add(id(g._storage))
        out.append(g)
    return out


def _result_specs(res, in_storages):
    """(the gradients' own storages, per leaf: None or ("in"/"out", index, shape, stride,
    offset, dtype, device)): a gradient may be an incoming gradient passed on."""
    in_index = {id(s): k for k, s in enumerate(in_storages)}
    outs, index, specs = [], {}, []
    for r in res:
        if r is None:
            specs.append(None)
            continue
        st = r._storage
        if id(st) in in_index:
            where, k = "in", in_index[id(st)]
        else:
            where, k = "out", index.setdefault(id(st), len(index))
            if k == len(outs):
                outs.append(st)
        specs.append((where, k, r._shape, r._stride, r._offset, r.dtype, r.device))
    return outs, specs
