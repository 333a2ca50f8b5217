"""Running a node's backward so that its gradients get a graph of their own (create_graph=True).

The engine calls apply_with_graph instead of node.apply when create_graph is on; the fast path
(create_graph off) never comes here. Two things make the backward rules record:

- grad mode is on (the engine's), so the rules, written with Tensor ops, record nodes;
- saved outputs (kept as detached aliases, function._alias_saved_outputs, so that an output
  does not hold its own node) are handed to the rule as fresh aliases carrying the output's
  history again, as PyTorch's SavedVariable does on unpack: d(exp(x))/dx = g * y then
  depends on x through y.

The library's own Functions say whether their backward is built from differentiable ops
(`_double_backward = True` on the class, or a rule that checks grad mode and switches to a
differentiable formula; "unchecked" where some gradients are constant zeros or a user hook's
own result). One that does not say so raises a RuntimeError naming the op when its gradient
would need a graph, rather than give a silently detached second gradient.
"""

from .._is_tensor import is_tensor

# Switches the ops layer registers (ops/elementwise/rule_kernels.K): on while a create_graph backward
# runs, so that helpers the rules share run recorded ops then and raw kernels otherwise.
_SWITCHES = []
_DEPTH = [0]


def on_recording(switch):
    _SWITCHES.append(switch)


class recording:
    """Context manager around a create_graph backward pass (nested passes count)."""

    def __enter__(self):
        _DEPTH[0] += 1
        if _DEPTH[0] == 1:
            for s in _SWITCHES:
                s(True)

    def __exit__(self, *exc):
        _DEPTH[0] -= 1
        if _DEPTH[0] == 0:
            for s in _SWITCHES:
                s(False)
        return False


def _needs_graph(outs, saved):
    for o in outs:
        if o is not None and o.requires_grad:
            return True
    for s in saved:
        if s is not None and is_tensor(s) and s.requires_grad:
            return True
    return False


def _reattached(ctx, node):
    """ctx._saved with each saved output replaced by an alias that has the output's history,
    and each copy an op saved of a value it then overwrote (ctx.saved_edges: position ->
    the value's graph edge then, as an in-place op's original self) given that history."""
    saved = list(ctx._saved)
    for j, (s, origin) in enumerate(zip(saved, ctx._saved_origins)):
        if s is not None and origin is not None and s.dtype.is_floating_point:
            alias = s.detach()
            alias._set_history(node, origin[0])
            saved[j] = alias
    for j, (edge_node, nr) in getattr(ctx, "saved_edges", {}).items():
        if saved[j] is not None and edge_node is not None:
            alias = saved[j].detach()
            alias._set_history(edge_node, nr)
            saved[j] = alias
    return tuple(saved)


def _op_name(node):
    name = node.name()
    return name[:-len("Backward0")] if name.endswith("Backward0") else name


def apply_with_graph(node, outs):
    ctx = node.ctx
    fn = node.fn
    saved = ctx._saved
    ours = fn.__module__.startswith("torchweb.")
    if ours and not getattr(fn, "_double_backward", False) and _needs_graph(outs, saved):
        raise RuntimeError(
            f"double backward through {_op_name(node)} ({node.name()}) is not supported by torchweb: "
            "its backward is a dedicated kernel without a derivative of its own. Compute this "
            "part of the model with ops that have one, or leave create_graph off.")
    if any(o is not None for o in ctx._saved_origins) or "saved_edges" in ctx.__dict__:
        ctx._saved = _reattached(ctx, node)
    try:
        results = node.apply(outs)
    finally:
        ctx._saved = saved
    # ("unchecked": gradients that are constant zeros, or come from a user's hook as they are)
    if ours and fn._double_backward is True:
        _check_results(node, outs, results)
    return results


def _check_results(node, outs, results):
    """A gradient that the incoming gradient's graph does not reach was made by a raw kernel:
    refuse it (the rule's gradients are linear in the incoming one)."""
    for o in outs:
        if o is not None and o.requires_grad:
            break
    else:
        return
    for r in results:
        if is_tensor(r) and r.dtype.is_floating_point and not r.requires_grad and r.numel():
            raise RuntimeError(
                f"double backward through {_op_name(node)} ({node.name()}) is not supported by "
                "torchweb: its backward gave a gradient without a graph")
