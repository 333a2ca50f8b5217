"""torch.func's jacrev, jacfwd and hessian. Both Jacobians come from reverse mode, one
backward pass per output element (the numbers are the same as forward mode's; the layout is
PyTorch's: for each output leaf and each input leaf, output.shape + input.shape, nested as
the output pytree of the argnums pytree)."""

import functools

from ..ops.join import stack
from .._creation import zeros
from ..utils._pytree import tree_unflatten
from ._autodiff import check_argnums, make_differentiable, split_aux, release_aux, gradients, flat_outputs
from ._levels import Level
from ._randomness import RandomnessScope
from ._batched import active_levels
from . import _lifted

__all__ = ["jacrev", "jacfwd", "hessian"]


def _jacobian(func, argnums, has_aux, args, kwargs, api):
    if active_levels():
        return _lifted.jacobian(plain_jacobian, func, argnums, has_aux, args, kwargs, api)
    return plain_jacobian(func, argnums, has_aux, args, kwargs, api)


def plain_jacobian(func, argnums, has_aux, args, kwargs, api, batch_ndim=0):
    """batch_ndim: the leading dims of inputs and outputs that are vmap's batch (_lifted.py)."""
    with Level() as level:
        argnums = check_argnums(args, argnums)
        args, flat_in, in_spec = make_differentiable(level, args, argnums)
        out, aux = split_aux(func(*args, **kwargs), has_aux, api)
        flat_out, out_spec = flat_outputs(out, api)
        keep = level.tracked_outside(flat_out)
        per_output = []
        for o in flat_out:
            rows = [[] for _ in flat_in]
            batch = tuple(o.shape[:batch_ndim])
            flat = o.reshape(batch + (-1,))
            for k in range(flat.shape[-1]):
                element = flat[(slice(None),) * batch_ndim + (k,)]
                cot = _lifted.batch_cotangent(element, batch_ndim)
                for j, g in enumerate(gradients([element], flat_in, [cot], create_graph=keep, retain_graph=True)):
                    rows[j].append(g)
            blocks = [(stack(r, batch_ndim) if r else
                       zeros(batch + (0,) + tuple(x.shape[batch_ndim:]), dtype=x.dtype, device=x.device))
                      .reshape(tuple(o.shape) + tuple(x.shape[batch_ndim:])) for r, x in zip(rows, flat_in)]
            per_output.append(tree_unflatten(blocks, in_spec))
    jac = tree_unflatten(per_output, out_spec)
    return (jac, release_aux(level, aux)) if has_aux else jac


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of func with respect to the arguments at argnums, by reverse mode."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _jacobian(func, argnums, has_aux, args, kwargs, "vjp(f, *primals)")
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of func with respect to the arguments at argnums (PyTorch computes it in
    forward mode under vmap, hence randomness=, which rules random ops in func as vmap's does)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with RandomnessScope(randomness):
            return _jacobian(func, argnums, has_aux, args, kwargs, "jvp(f, primals, tangents)")
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar func: jacfwd(jacrev(func, argnums), argnums)."""
    return jacfwd(jacrev(func, argnums), argnums)

