"""The backward engine: walks the graph from the roots in dependency order, each node once
however many paths reach it, and accumulates into leaves (or captures, for autograd.grad)."""

import sys

from .._size import contiguous_strides
from ..backends import backend_for
from .._sparse_math import dense_plus
from ..lazy import materialize
from . import anomaly_mode, grad_mode
from .double_backward import apply_with_graph, recording
from .function import AccumulateGrad


def _sum_to(g, shape):
    if g.shape == tuple(shape):
        return g
    return g.sum_to_size(shape)


def _check_grad(node, i, g):
    meta = node._inputs
    if not meta or meta[i] is None or g is None:
        return g
    shape, dtype = meta[i]
    if g.shape != shape:
        try:
            g = _sum_to(g, shape)
        except RuntimeError:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}") from None
    if g.dtype is not dtype:
        g = g.to(dtype)
    return g


class _NoSwitch:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        return False


_NO_SWITCH = _NoSwitch()
BACKWARD_RUNS = [0]   # how many backward passes ran (torchweb.compile: did a call train?)


def run_backward(roots, grad_roots, retain_graph, capture=None, accumulate=True, create_graph=False):
    """roots: tensors; grad_roots: their gradients. capture: {(node, nr): None} slots of
    autograd.grad's inputs, filled in place. Returns nothing; leaves' .grad accumulate.
    create_graph: the backward rules run with grad mode on, so that the gradients they make
    carry a graph of their own (higher-order gradients; double_backward.py)."""
    BACKWARD_RUNS[0] += 1
    edges = []
    for t, g in zip(roots, grad_roots):
        if t.grad_fn is not None:
            edges.append((t.grad_fn, t._output_nr, g))
        elif t.requires_grad:
            edges.append((t._accumulator(), 0, g))
        else:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")

    # with capture (autograd.grad, backward(inputs=...)), as PyTorch, only the nodes on a path
    # to an input get gradients (needed), and only those with an input further on run
    # (through); the others keep their saved tensors for a later backward
    # (None: every node; a set's `in` beats a Python __contains__ on each edge of the walk)
    needed = through = None
    if capture is not None:
        needed, through = _needed([e[0] for e in edges], {k[0] for k in capture})
        edges = [e for e in edges if id(e[0]) in needed]
    # dependencies: how many edges lead into each node from the part of the graph we run
    # (each node is walked once: pushed when first seen, that is, when it enters deps; the
    # roots are in it from the start)
    roots = {id(e[0]): e[0] for e in edges}
    deps = dict.fromkeys(roots, 0)
    stack = list(roots.values())
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None and (needed is None or id(nxt) in needed):
                key = id(nxt)
                if key in deps:
                    deps[key] += 1
                else:
                    deps[key] = 1
                    stack.append(nxt)

    buffers = {}
    for node, nr, g in edges:
        _add(buffers, node, nr, g)
    ready = [node for key, node in roots.items() if not deps[key]]
    ran = []
    # Gradients this pass made that nothing else holds (id -> the tensor): a leaf whose .grad
    # is unset takes one as it is instead of a copy (_accumulate), as PyTorch's AccumulateGrad
    # steals a gradient no one else references. (the loop below runs once per node of the
    # graph: names bound once, the common cases without helper calls)
    owned = {}
    empty = {}
    slow = create_graph or anomaly_mode._state["enabled"]   # (decided once: the loop tests one local)
    try:
        with grad_mode.set_grad_enabled(create_graph), (recording() if create_graph else _NO_SWITCH):
            while ready:
                node = ready.pop()
                grads = buffers.pop(id(node), empty)
                if type(node) is AccumulateGrad:
                    outs = results = None   # (the last node's gradients: a view of one would hold its base)
                    _accumulate(node, grads.get(0), capture, accumulate, None if create_graph else owned)
                    continue
                n_out = node.noutputs
                outs = [grads.get(0)] if n_out == 1 else [grads.get(i) for i in range(n_out)]
                if node._pre_hooks:
                    for i, hooks in node._pre_hooks.items():
                        for h in hooks:
                            r = h(outs[i])
                            if r is not None:
                                outs[i] = r
                if node._retained:
                    for i, ref in node._retained.items():
                        t = ref()
                        if t is not None and outs[i] is not None:
                            accumulate_grad(t, outs[i])
                if capture is not None:
                    for i in range(n_out):
                        if (id(node), i) in capture:
                            capture[(id(node), i)] = outs[i]
                if through is not None and id(node) not in through:
                    continue
                ran.append(node)
                nexts = node.next_functions
                if (outs[0] is None) if n_out == 1 else _all_none(outs):
                    results = (None,) * len(nexts)
                elif slow:
                    results = _apply_slow(node, outs, create_graph)
                elif n_out == 1:   # (node.apply, its one gradient given: nothing to materialize)
                    results = node.fn.backward(node.ctx, outs[0])
                    if not isinstance(results, tuple):
                        results = (results,)
                else:
                    results = node.apply(outs)
                if len(results) != len(nexts):
                    raise RuntimeError(
                        f"function {node.name()} returned an incorrect number of gradients "
                        f"(expected {len(nexts)}, got {len(results)})")
                hooks = node._hooks
                if hooks:
                    for hook in hooks:
                        hook(results, outs)
                # the library's own backward formulas make fresh results (a user's Function or
                # node hook may keep theirs); an incoming gradient passed on, or one result
                # given to two inputs, is shared (node.fn: a Function, FunctionMeta sets _library)
                ours = node.fn._library and not hooks
                # (a node's _inputs: (shape, dtype) per forward input that is a tensor, as
                # many as its next functions)
                for i, ((nxt, nr), g, m) in enumerate(zip(nexts, results, node._inputs)):
                    if nxt is None or (needed is not None and id(nxt) not in needed):
                        continue
                    key = id(nxt)
                    if g is not None:
                        # (only gradients bound for a leaf are tracked: `owned` must not keep
                        # intermediate gradients alive past the nodes that consume them)
                        # (a view of a fresh base too: t()'s backward of a linear layer's weight
                        # gradient; _accumulate checks that nothing else holds it by then)
                        mine = ours and type(nxt) is AccumulateGrad and _fresh(g, outs, results) \
                            and (g._base is None or not _among(g._base, outs))
                        if m is not None and (g._shape != m[0] or g.dtype is not m[1]):
                            g2 = _check_grad(node, i, g)
                            mine, g = mine or (g2 is not g and type(nxt) is AccumulateGrad), g2
                        slot = buffers.get(key)
                        prev = None if slot is None else slot.get(nr)
                        if prev is not None:
                            owned.pop(id(prev), None)
                            g, mine = prev + g, type(nxt) is AccumulateGrad
                        if mine:
                            owned[id(g)] = g
                        if slot is None:
                            buffers[key] = {nr: g}
                        else:
                            slot[nr] = g
                    left = deps[key] - 1
                    deps[key] = left
                    if left == 0:
                        ready.append(nxt)
    finally:
        if not retain_graph:
            for node in ran:
                node.ctx._free()


def _apply_slow(node, outs, create_graph):
    """node.apply with create_graph (double_backward.py) and/or anomaly detection's NaN check."""
    results = apply_with_graph(node, outs) if create_graph else node.apply(outs)
    if anomaly_mode._state["enabled"] and anomaly_mode._state["check_nan"]:
        anomaly_mode.check_nan(node, results)
    return results


def _fresh(g, outs, results):
    """g is not one of the node's incoming gradients and is given to one input only."""
    for o in outs:
        if o is g:
            return False
    n = 0
    for r in results:
        if r is g:
            n += 1
    return n == 1


def _among(t, ts):
    for o in ts:
        if o is t:
            return True
    return False


def _all_none(outs):
    for o in outs:
        if o is not None:
            return False
    return True


def _needed(roots, targets):
    """ids of the nodes reachable from roots that are or lead to a target node, and ids of
    those with a target further on."""
    leads, through = {}, set()
    stack = [(r, False) for r in roots]
    while stack:
        node, done = stack.pop()
        if done:
            if any(leads.get(id(n), False) for n, _ in node.next_functions if n is not None):
                through.add(id(node))
            leads[id(node)] = id(node) in targets or id(node) in through
        elif id(node) not in leads:
            leads[id(node)] = False  # in progress (the graph has no cycles)
            stack.append((node, True))
            stack.extend((n, False) for n, _ in node.next_functions if n is not None and id(n) not in leads)
    return {k for k, v in leads.items() if v}, through


def _add(buffers, node, nr, g):
    slot = buffers.setdefault(id(node), {})
    prev = slot.get(nr)
    # (a dense gradient joining a sparse one: dense + sparse, as sparse + dense is refused)
    slot[nr] = g if prev is None else prev + g if not prev.is_sparse or g.is_sparse else g + prev


def _accumulate(node, g, capture, accumulate, owned=None):
    var = node.variable
    if g is None:
        return
    mine = owned is not None and owned.pop(id(g), None) is g
    for h in var._hooks:
        mine = False   # (a hook may keep the gradient it is given)
        r = h(g)
        if r is not None:
            g = r
    if capture is not None and (id(node), 0) in capture:
        capture[(id(node), 0)] = g
        mine = False
    if accumulate:
        if mine and var._grad is None and _can_take(var, g):
            var._grad = g
            materialize(g)
        elif mine and var._grad is None and _can_take_view(var, g):
            var._grad = g = type(g)._make(g._storage, g._shape, g._stride, 0, g.dtype, g.device)
            materialize(g)
        else:
            accumulate_grad(var, g)
        if var._post_accumulate_grad_hooks:
            for h in tuple(var._post_accumulate_grad_hooks):
                h(var)


def _one_holder():
    """What sys.getrefcount reports for a slot attribute's value (as Tensor._storage) held by
    that attribute alone; None (never take a gradient) where one holder and two read alike."""
    class Holder:
        __slots__ = ("value",)
    a, b = Holder(), Holder()
    a.value = object()
    one = sys.getrefcount(a.value)
    b.value = a.value
    return one if sys.getrefcount(a.value) == one + 1 else None


_ONE_HOLDER = _one_holder()


def _can_take(var, g):
    """g may become var.grad as it is: a gradient of var's shape, dtype and device, in the
    contiguous layout a copy would have, whose storage no other tensor (no view, no detached
    alias, no pending expression) holds."""
    if not (g._shape == var._shape and g.dtype is var.dtype and g.device == var.device
            and g._base is None and g._offset == 0 and g._stride == contiguous_strides(g._shape)
            and not g._requires_grad):
        return False
    holders = sys.getrefcount(g._storage)
    # (a call torchweb.compile records holds every storage its kernels touched: one more)
    return holders == _ONE_HOLDER or (holders == _ONE_HOLDER + 1 and _captured(g))


def _can_take_view(var, g):
    """As _can_take, for a gradient that is a contiguous view of all of a base tensor that
    nothing else holds (a linear layer's weight gradient made transposed, then transposed back
    by t()'s backward): .grad takes its storage under a tensor of its own, no copy made."""
    return (g._base is not None and g._shape == var._shape and g.dtype is var.dtype
            and g.device == var.device and g._offset == 0 and g._stride == contiguous_strides(g._shape)
            and not g._requires_grad and g._base._base is None and g._base._offset == 0
            and g._base.numel() == g.numel()
            and sys.getrefcount(g._base) == _ONE_HOLDER                # (held by g alone)
            and (sys.getrefcount(g._storage) == _ONE_HOLDER + 1        # (by g and its base)
                 or sys.getrefcount(g._storage) == _ONE_HOLDER + 2 and _captured(g)))


def _captured(g):
    """Whether a call being recorded by torchweb.compile holds g's storage."""
    return backend_for(g.device.type).capture_holds(g._storage)


def accumulate_grad(var, g):
    if g._requires_grad:
        # a gradient with a graph (create_graph): .grad keeps it, as PyTorch's AccumulateGrad
        # under grad mode (a clone first, the sum out of place after: an in-place add into
        # the existing .grad would cut the graph)
        var._grad = g.clone() if var._grad is None else var._grad + g
        return
    if g.is_sparse or var._grad is not None and var._grad.is_sparse:
        _accumulate_sparse(var, g.detach())
        return
    if var._grad is None:
        var._grad = g.detach().clone()  # the same gradient may flow to several leaves
        # computed now, so that the graph's saved tensors it reads are freed with the graph
        materialize(var._grad)
    else:
        var._grad.add_(g)  # in place, as PyTorch: references to .grad see the sum


def _accumulate_sparse(var, g):
    """As PyTorch's AccumulateGrad where a sparse gradient is involved: a first one kept (a
    copy), sparse into sparse merged in place (the entries concatenated when uncoalesced),
    sparse into dense added in place, dense into sparse a new dense .grad."""
    grad = var._grad
    if grad is None:
        var._grad = g.clone()
    elif grad.is_sparse:
        if g.is_sparse:
            grad.add_(g)
        else:
            var._grad = g + grad
    else:
        dense_plus(grad, g, inplace=True)
