"""The backward engine: runs the graph from the roots, each node once however many paths reach
it and after every node that consumes it (the latest made first), and accumulates into leaves
(or captures, for autograd.grad)."""

import sys
from heapq import heappop, heappush

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


def _check_grad(node, results, g, m):
    """g, node's gradient for the input whose metadata is m, summed to that input's shape
    (a broadcast operand) and cast to its dtype."""
    shape, dtype = m
    if g.shape != shape:
        try:
            g = _sum_to(g, shape)
        except RuntimeError:
            i = next(i for i, r in enumerate(results) if r is g)
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
_NONE = frozenset([None])
BACKWARD_RUNS = [0]   # how many backward passes ran (torchweb.compile: did a call train?)


def run_backward(roots, grad_roots, retain_graph, capture=None, accumulate=True, create_graph=False):
    """roots: tensors; grad_roots: their gradients. capture: {(node id, nr): None} slots of
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
    # to an input get gradients, and only those with an input further on run (through); the
    # others keep their saved tensors for a later backward. skip: the nodes no gradient goes
    # to (None: an input that needs none). The sets and dicts of this pass are keyed by the
    # nodes themselves (they hash by identity).
    skip = _NONE
    through = None
    if capture is not None:
        skip, through = _not_needed([e[0] for e in edges], {k[0] for k in capture})
        edges = [e for e in edges if e[0] not in skip]
    # The order: every node after all the nodes that consume it. A node's inputs were made
    # before it, so the nodes' creation order reversed is one (Node._seq, the creation number
    # negated, as PyTorch's sequence_nr): the nodes that got a gradient (or None) wait in a
    # heap, the latest made first, and no dependencies need counting. A node is queued once, however many edges
    # reach it. buffers: the gradients waiting for each node, output 0's under the node,
    # output i's under (node, i) (most nodes have one output).
    buffers = {}
    queued = set()
    ready = []
    for node, nr, g in edges:
        _add(buffers, node if not nr else (node, nr), g)
        if node not in queued:
            queued.add(node)
            heappush(ready, (node._seq, node))
    # Gradients this pass made that nothing else holds (id -> the tensor): a leaf whose .grad
    # is unset takes one as it is instead of a copy (_accumulate), as PyTorch's AccumulateGrad
    # steals a gradient no one else references. (the loop below runs once per node of the
    # graph: names bound once, the common cases without helper calls)
    owned = {}
    slow = create_graph or anomaly_mode._state["enabled"]   # (decided once: the loop tests one local)
    with grad_mode.set_grad_enabled(create_graph), (recording() if create_graph else _NO_SWITCH):
        while ready:
            node = heappop(ready)[1]
            if type(node) is AccumulateGrad:
                outs = results = g = None   # (the last node's gradients: a view of one would hold its base)
                _accumulate(node, buffers.pop(node, None), capture, accumulate, None if create_graph else owned)
                continue
            n_out = node.noutputs
            g = buffers.pop(node, None)
            outs = [g] if n_out == 1 else [g] + [buffers.pop((node, i), None) for i in range(1, n_out)]
            if node._pre_hooks or node._retained or capture is not None:
                _before(node, outs, capture)
                g = outs[0]
                if through is not None and node not in through:
                    continue
            nexts = node.next_functions
            ctx = node.ctx
            if (g is None) if n_out == 1 else _all_none(outs):
                results = (None,) * len(nexts)
            elif slow:
                results = _apply_slow(node, outs, create_graph)
            elif n_out == 1:   # (node.apply, its one gradient given: nothing to materialize)
                results = node.fn.backward(ctx, g)
                if not isinstance(results, tuple):
                    results = (results,)
            else:
                results = node.apply(outs)
            # (freed once it ran, as PyTorch releases a node's saved variables)
            if not retain_graph:
                ctx._free()
            hooks = node._hooks
            if hooks:
                _check_count(node, results)
                for hook in hooks:
                    hook(results, outs)
            # (a node's _inputs: (shape, dtype) per forward input that is a tensor, as
            # many as its next functions; a backward that returns another number of
            # gradients than the node has inputs makes the strict zip raise)
            try:
                for (nxt, nr), g, m in zip(nexts, results, node._inputs, strict=True):
                    if nxt in skip:
                        continue
                    if g is not None:
                        if (g._shape, g.dtype) != m:
                            g = _check_grad(node, results, g, m)
                        if type(nxt) is AccumulateGrad:
                            # (only gradients bound for a leaf are tracked: `owned` must not keep
                            # intermediate gradients alive past the nodes that consume them)
                            prev = buffers.get(nxt)
                            if prev is not None:
                                owned.pop(id(prev), None)
                                g = owned[id(g)] = prev + g
                            # (the library's own backward formulas make fresh results; a user's
                            # Function or node hook may keep theirs. node.fn: a Function,
                            # FunctionMeta sets _library)
                            elif _mine(g, outs, results, node.fn._library and not hooks):
                                owned[id(g)] = g
                            buffers[nxt] = g
                        else:
                            key = (nxt, nr) if nr else nxt
                            prev = buffers.get(key)
                            buffers[key] = g if prev is None else prev + g
                    if nxt not in queued:
                        queued.add(nxt)
                        heappush(ready, (nxt._seq, nxt))
            except ValueError:
                _check_count(node, results)   # (PyTorch's error where the zip's lengths differ)
                raise


def _check_count(node, results):
    if len(results) != len(node.next_functions):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(node.next_functions)}, got {len(results)})")


def _before(node, outs, capture):
    """A node's pre-hooks (which may replace its incoming gradients), its retained outputs'
    .grad, and autograd.grad's capture of them."""
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
        for i in range(len(outs)):
            if (id(node), i) in capture:
                capture[(id(node), i)] = outs[i]


def _apply_slow(node, outs, create_graph):
    """node.apply with create_graph (double_backward.py) and/or anomaly detection's NaN check."""
    results = apply_with_graph(node, outs) if create_graph else node.apply(outs)
    if anomaly_mode._state["enabled"] and anomaly_mode._state["check_nan"]:
        anomaly_mode.check_nan(node, results)
    return results


def _mine(g, outs, results, ours):
    """g, a gradient bound for a leaf, was made by this pass for that input alone: a sum or a
    cast the engine made (not among the node's results), or a library rule's fresh result
    given to one input (not an incoming gradient passed on, nor a view of one)."""
    n = 0
    for r in results:
        if r is g:
            n += 1
    if n == 0:
        return True
    if not ours or n > 1:
        return False
    base = g._base
    for o in outs:
        if o is g or base is not None and o is base:
            return False
    return True


def _all_none(outs):
    for o in outs:
        if o is not None:
            return False
    return True


def _not_needed(roots, targets):
    """The nodes reachable from roots that neither are nor lead to a target node (targets:
    node ids), None among them, and the nodes with a target further on."""
    leads, through = {}, set()
    stack = [(r, False) for r in roots]
    while stack:
        node, done = stack.pop()
        if done:
            if any(leads.get(n, False) for n, _ in node.next_functions if n is not None):
                through.add(node)
            leads[node] = id(node) in targets or node in through
        elif node not in leads:
            leads[node] = False  # in progress (the graph has no cycles)
            stack.append((node, True))
            stack.extend((n, False) for n, _ in node.next_functions if n is not None and n not in leads)
    return {None, *[k for k, v in leads.items() if not v]}, through


def _add(buffers, key, g):
    prev = buffers.get(key)
    # (a dense gradient joining a sparse one: dense + sparse, as sparse + dense is refused)
    buffers[key] = g if prev is None else prev + g if not prev.is_sparse or g.is_sparse else g + prev


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
