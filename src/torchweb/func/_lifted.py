"""grad, vjp, jvp and the Jacobians called inside vmap: the autograd engine runs on the batched
values. The differentiable inputs are lifted to plain tensors with one leading dim per running
vmap level (batch dims first, expanded where an input is not batched at a level: each entry then
has its own copy, so its gradient is its own), the function runs on them lowered back to
batched tensors, and its outputs are lifted the same way. Entries never mix, so one backward
pass of the summed outputs gives every entry's gradient at once."""

from .._is_tensor import is_tensor
from .._creation import ones_like
from ..utils._pytree import tree_map, tree_flatten
from ._batched import active_levels, canonical, from_canonical, BatchedTensor, level_by_id
from . import _transform_args as A
from ._dispatch import stack_entries, entry_of


def lift(tree, levels):
    return tree_map(lambda x: canonical(x, levels) if is_tensor(x) else x, tree)


def lower(tree, levels):
    return tree_map(lambda x: from_canonical(x, levels) if is_tensor(x) else x, tree)


def grad_and_value(core, func, argnums, has_aux, args, kwargs):
    levels = active_levels()
    argnums = A.check_argnums(args, argnums)
    picked = tree_map(A._checked_tensor, A._pick(args, argnums))
    args = A._replace(args, argnums, lift(picked, levels))

    def lifted(*a, **kw):
        a = A._replace(a, argnums, lower(A._pick(a, argnums), levels))
        output, aux = A.split_aux(func(*a, **kw), has_aux, A.GRAD_API)
        A.check_scalar(output)
        p = canonical(output, levels)
        return p.sum(), ((p, lift(aux, levels)) if has_aux else (p,))
    grads, (_, (value, *aux)) = core(lifted, argnums, True, args, kwargs)
    aux = aux[0] if has_aux else None
    grads, value = lower(grads, levels), from_canonical(value, levels)
    return grads, ((value, lower(aux, levels)) if has_aux else value)


def _lifted_function(func, levels, has_aux, api):
    def lifted(*primals):
        out, aux = A.split_aux(func(*lower(primals, levels)), has_aux, api)
        A.flat_outputs(out, api)
        return (lift(out, levels), lift(aux, levels)) if has_aux else lift(out, levels)
    return lifted


def vjp(core, func, primals, has_aux):
    levels = active_levels()
    primals = lift(tree_map(A._checked_tensor, primals), levels)
    res = core(_lifted_function(func, levels, has_aux, A.VJP_API), *primals, has_aux=has_aux,
               levels=tuple(lvl.id for lvl in levels))
    fn = res[1]

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        outer = unhandled_level(cotangents, [lvl.id for lvl in levels])
        if outer is not None:
            return per_entry(lambda c: vjp_fn(c, retain_graph, create_graph), cotangents, outer)
        return lower(fn(lift(cotangents, levels), retain_graph, create_graph), levels)
    out = lower(res[0], levels)
    return (out, vjp_fn, lower(res[2], levels)) if has_aux else (out, vjp_fn)


def jvp(core, func, primals, tangents, strict, has_aux):
    levels = active_levels()
    res = core(_lifted_function(func, levels, has_aux, "jvp(f, primals, tangents)"), lift(primals, levels),
               lift(tangents, levels), strict=strict, has_aux=has_aux)
    return tuple(lower(r, levels) for r in res)


def jacobian(core, func, argnums, has_aux, args, kwargs, api):
    levels = active_levels()
    argnums = A.check_argnums(args, argnums)
    args = A._replace(args, argnums, lift(tree_map(A._checked_tensor, A._pick(args, argnums)), levels))

    def lifted(*a, **kw):
        a = A._replace(a, argnums, lower(A._pick(a, argnums), levels))
        out, aux = A.split_aux(func(*a, **kw), has_aux, api)
        return (lift(out, levels), lift(aux, levels)) if has_aux else lift(out, levels)
    return lower(core(lifted, argnums, has_aux, args, kwargs, api, batch_ndim=len(levels)), levels)


def batch_cotangent(o, batch_ndim):
    """The cotangent that makes one backward pass give every entry's gradient: ones over the
    batch dims of a lifted output whose entries are scalars."""
    return None if batch_ndim == 0 else ones_like(o)


# -- vjp_fn under a vmap its graph was not recorded in ---------------------------------------------

def unhandled_level(tree, handled):
    """The outermost-wrapped level of a batched leaf of tree that is not in `handled`, or None."""
    best = None
    for x in tree_flatten(tree)[0]:
        if type(x) is BatchedTensor and x._level not in handled and (best is None or x._level > best):
            best = x._level
    return best


def per_entry(fn, tree, level_id):
    """fn(tree's entry b) for each entry of the level, stacked (one backward pass per entry)."""
    level = level_by_id(level_id)
    return stack_entries("vjp_fn", [fn(entry_of(tree, level_id, b)) for b in range(level.size)], level_id, level.size)
