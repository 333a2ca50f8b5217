"""torch.func's grad, grad_and_value, vjp, jvp and linearize over pytrees of tensors, with
PyTorch's argument checks and messages. Reverse mode is autograd.grad at one level
(_levels.py); forward mode (jvp) is the double-vjp trick: with u a zero cotangent that requires
grad, g(u) = J^T u is linear in u and the gradient of <g(u), t> with respect to u is J t."""

import functools

from .._is_tensor import is_tensor
from ..autograd.differentiate import grad as _autograd_grad
from .._creation import zeros_like
from ..utils._pytree import tree_flatten, tree_unflatten, tree_map
from ._levels import Level
from ._batched import active_levels
from ._transform_args import (GRAD_API, VJP_API, check_argnums, _pick, _replace, _checked_tensor, split_aux,  # noqa: F401
                              check_scalar, flat_outputs)
from . import _lifted

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize"]


def make_differentiable(level, args, argnums):
    """args with the pytrees at argnums replaced by the level's differentiable inputs:
    (new args, flat differentiable leaves, their spec)."""
    diff = tree_map(lambda x: level.differentiable(_checked_tensor(x)), _pick(args, argnums))
    flat, spec = tree_flatten(diff)
    return _replace(args, argnums, diff), flat, spec


def release(tree, keep_graph):
    """Results handed back out of a level: detached unless something outside tracks them."""
    if keep_graph:
        return tree
    return tree_map(lambda x: x.detach() if is_tensor(x) else x, tree)


def release_aux(level, aux):
    """has_aux's aux, which (as in PyTorch) holds tensors only, released on its own graph."""
    flat = tree_flatten(aux)[0]
    for x in flat:
        if not is_tensor(x):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return release(aux, level.tracked_outside(flat))


def gradients(outputs, inputs, cotangents, create_graph, retain_graph=None):
    """autograd.grad with zeros for inputs the outputs do not depend on (as PyTorch's
    _autograd_grad)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs or not inputs:
        return tuple(zeros_like(x) for x in inputs)
    got = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs], allow_unused=True,
                         create_graph=create_graph,
                         retain_graph=create_graph if retain_graph is None else retain_graph)
    return tuple(zeros_like(x) if g is None else g for g, x in zip(got, inputs))


# -- grad ---------------------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of func's scalar output with respect to the arguments at
    argnums, func's output); with has_aux, func returns (output, aux) and the value is too."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func's scalar output (and aux with has_aux)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _grad_and_value(func, argnums, has_aux, args, kwargs):
    if active_levels():
        return _lifted.grad_and_value(plain_grad_and_value, func, argnums, has_aux, args, kwargs)
    return plain_grad_and_value(func, argnums, has_aux, args, kwargs)


def plain_grad_and_value(func, argnums, has_aux, args, kwargs):
    with Level() as level:
        argnums = check_argnums(args, argnums)
        args, flat_diff, spec = make_differentiable(level, args, argnums)
        output, aux = split_aux(func(*args, **kwargs), has_aux, GRAD_API)
        check_scalar(output)
        keep = level.tracked_outside([output])
        grads = gradients([output], flat_diff, [None], create_graph=keep)
    grads = tree_unflatten(list(grads), spec)
    return grads, ((release(output, keep), release_aux(level, aux)) if has_aux else release(output, keep))


# -- vjp ----------------------------------------------------------------------------------------

def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives, for each primal, the
    vector-Jacobian product (a tuple with one entry per primal). vjp_fn can be called again."""
    if active_levels():
        return _lifted.vjp(plain_vjp, func, primals, has_aux)
    return plain_vjp(func, *primals, has_aux=has_aux)


def plain_vjp(func, *primals, has_aux=False, levels=()):
    api = VJP_API
    with Level() as level:
        primals = tree_map(lambda x: level.differentiable(_checked_tensor(x)), primals)
        flat_primals, primals_spec = tree_flatten(primals)
        out, aux = split_aux(func(*primals), has_aux, api)
        flat_out, out_spec = flat_outputs(out, api)
        for o in flat_out:
            if not o.is_floating_point():
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex "
                                   f"Tensors, got Tensor with dtype {o.dtype}")
        keep = level.tracked_outside(flat_out)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        outer = _lifted.unhandled_level(cotangents, levels)
        if outer is not None:      # called under a vmap the graph was not recorded in: once per entry
            return _lifted.per_entry(lambda c: vjp_fn(c, retain_graph, create_graph), cotangents, outer)
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure "
                               f"of outputs to the function. cotangents: {_pprint(cot_spec)}, "
                               f"primal output: {_pprint(out_spec)}")
        if create_graph is None:
            create_graph = keep or any(is_tensor(c) and c.requires_grad for c in flat_cot)
        res = gradients(flat_out, flat_primals, flat_cot, create_graph, retain_graph=retain_graph)
        return tree_unflatten(list(res), primals_spec)

    out = release(out, keep)
    return (out, vjp_fn, release_aux(level, aux)) if has_aux else (out, vjp_fn)


def _pprint(spec):
    """PyTorch's treespec_pprint: '*' for a leaf, the container drawn with '*'s."""
    if spec.is_leaf():
        return "*"
    inner = [_pprint(c) for c in spec.children_specs]
    t = spec.type
    if t is tuple:
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if t is list:
        return "[" + ", ".join(inner) + "]"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(spec.context, inner)) + "}"
    return repr(spec)


# -- jvp ----------------------------------------------------------------------------------------

_JVP = "jvp(f, primals, tangents)"


def _check_tensor_list(flat, argname):
    if not flat:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for x in flat:
        if not is_tensor(x):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got {type(x)}")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J @ tangents[, aux]): the Jacobian-vector product."""
    if active_levels():
        return _lifted.jvp(plain_jvp, func, primals, tangents, strict, has_aux)
    return plain_jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def plain_jvp(func, primals, tangents, *, strict=False, has_aux=False):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_primals, primals_spec = tree_flatten(primals)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For "
                           "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
                           f"with structure {primals_spec} and tangents with structure {tangents_spec}")
    _check_tensor_list(flat_primals, "primals")
    _check_tensor_list(flat_tangents, "tangents")
    for p, t in zip(flat_primals, flat_tangents):
        if not t.is_floating_point():
            raise ValueError(f"Expected tangent to be floating point or complex, but got: {t.dtype}")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                               "original Tensor, this is not supported. Tensor is of size "
                               f"{list(p.shape)} while the given forward gradient is of size {list(t.shape)}.")
    with Level() as level:
        wrapped = [level.differentiable(p) for p in flat_primals]
        out, aux = split_aux(func(*tree_unflatten(wrapped, primals_spec)), has_aux, _JVP)
        flat_out, out_spec = flat_outputs(out, _JVP)
        keep = level.tracked_outside(flat_out) or any(t.requires_grad for t in flat_tangents)
        tangents_out = _forward_products(level, flat_out, wrapped, flat_tangents, keep, strict)
    out = tree_unflatten(list(release(flat_out, keep)), out_spec)
    tangents_out = tree_unflatten(list(tangents_out), out_spec)
    return (out, tangents_out, release_aux(level, aux)) if has_aux else (out, tangents_out)


def _forward_products(level, outputs, inputs, tangents, keep, strict=False):
    """J @ tangents for each output, by the double-vjp trick."""
    us = []
    for o in outputs:
        u = zeros_like(o).requires_grad_(o.is_floating_point())
        u._func_level = level.id
        us.append(u)
    live = [(o, u) for o, u in zip(outputs, us) if o.requires_grad]
    if strict and len(live) < len(outputs):
        raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                           "inputs. This is not allowed with strict=True.")
    if not live:
        return tuple(zeros_like(o) for o in outputs)
    back = gradients([o for o, _ in live], inputs, [u for _, u in live], create_graph=True)
    pairs = [(b, t) for b, t in zip(back, tangents) if b.requires_grad]
    if not pairs:
        return tuple(zeros_like(o) for o in outputs)
    res = dict(zip(map(id, (u for _, u in live)),
                   gradients([b for b, _ in pairs], [u for _, u in live], [t for _, t in pairs], create_graph=keep)))
    return tuple(res.get(id(u), None) if id(u) in res else zeros_like(o) for o, u in zip(outputs, us))


# -- linearize ----------------------------------------------------------------------------------

def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product at primals."""
    flat_primals, primals_spec = tree_flatten(primals)
    out = func(*primals)
    flat_out, out_spec = tree_flatten(out)
    shapes = [(tuple(p.shape), p.device, p.dtype) for p in flat_primals]

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the primals {primals_spec}")
        for i, (t, (shape, dev, dtype)) in enumerate(zip(flat_t, shapes)):
            for what, got, want in (("shape", tuple(t.shape), shape), ("device", t.device, dev), ("dtype", t.dtype, dtype)):
                if got != want:
                    raise RuntimeError(f"tangent:{i} with {what} {got} in flattened pytree doesn't match the "
                                       f"{what} {want} of the corresponding primal.")
        return jvp(func, primals, tangents)[1]

    return release(out, False), jvp_fn
