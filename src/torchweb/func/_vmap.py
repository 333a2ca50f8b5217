"""torch.func.vmap (torch.vmap): the function mapped over a dimension of its inputs, run once on
the whole batch. Each batched input becomes a BatchedTensor at a new level (func/_batched.py);
while the function runs, the op names it calls are routed to batching rules
(func/_dispatch.py, func/_rules_*.py), and an op without a rule runs per entry (with a
warning). The results' batch dims go to their out_dims. docs/func.md says which ops have rules.
"""

import functools
import os
import warnings

import torchweb
from .. import _random
from .._is_tensor import is_tensor
from ..utils._pytree import tree_flatten, tree_unflatten
from ._batched import VmapLevel, BatchedTensor, Unrouted, wrap
from ._dispatch import install, uninstall, routed_form
from ._loop import vmap_loop, name_of, check_out_dims, batched_inputs, flat_out_dims
from ._randomness import RandomnessScope, check as check_randomness
from . import _rules_pointwise, _rules_reduce, _rules_shape, _rules_matmul, _rules_nn  # noqa: F401,E501  (they register)

__all__ = ["vmap"]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dimension in_dims of its inputs; results' batch dims at out_dims."""
    check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    check_out_dims(out_dims, func)
    if os.environ.get("TORCHWEB_VMAP") == "loop":
        return vmap_loop(func, in_dims, out_dims, randomness, chunk_size=chunk_size)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        try:
            return _batched_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
        except Unrouted as e:
            _warn_unrouted(func, e)
            return vmap_loop(func, in_dims, out_dims, randomness, chunk_size=chunk_size)(*args, **kwargs)
    return wrapped


def _warn_unrouted(func, e):
    key = (name_of(func), str(e))
    if key not in _warned_unrouted:
        _warned_unrouted.add(key)
        warnings.warn(f"{e}: vmap does not route it (only torch.*, torch.nn.functional.* and Tensor's methods "
                      f"are, while vmap runs), so vmap({name_of(func)}) runs once per batch entry instead",
                      UserWarning, stacklevel=3)


_warned_unrouted = set()


def _batched_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    flat_args, args_spec, flat_in_dims, size = batched_inputs(func, in_dims, args)
    if chunk_size is None or chunk_size >= size:
        return _run(func, flat_args, args_spec, flat_in_dims, size, kwargs, out_dims, randomness)
    parts = []
    states = {g: g.get_state() for g in _random._generators.values()}
    for start in range(0, size, chunk_size):
        if start and randomness == "same":     # every chunk draws what the first one drew
            for g, state in states.items():
                g.set_state(state)
        n = min(chunk_size, size - start)
        chunk = [x if d is None else x.narrow(d, start, n) for x, d in zip(flat_args, flat_in_dims)]
        parts.append(_run(func, chunk, args_spec, flat_in_dims, n, kwargs, out_dims, randomness))
    return _concat_chunks(func, parts, out_dims)


def _run(func, flat_args, args_spec, flat_in_dims, size, kwargs, out_dims, randomness):
    install()
    try:
        with VmapLevel(size, randomness) as level, RandomnessScope(randomness):
            inputs = [x if d is None else wrap(x, d, level.id) for x, d in zip(flat_args, flat_in_dims)]
            out = routed_form(func)(*tree_unflatten(inputs, args_spec), **kwargs)
            return _outputs(name_of(func), out, out_dims, level)
    finally:
        uninstall()


def _outputs(name, out, out_dims, level):
    flat, spec = tree_flatten(out)
    dims = flat_out_dims(name, out, out_dims, spec)
    res = []
    for o, d in zip(flat, dims):
        batched = type(o) is BatchedTensor and o._level == level.id
        if d is None:
            if batched:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            res.append(o)
            continue
        if not is_tensor(o):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. "
                             "Did you mean to set out_dims= to None for output?")
        n = o.dim() + 1
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        d %= n
        if batched:
            res.append(o._value.movedim(o._bdim, d) if o._bdim != d else o._value)
        else:     # the same for every entry: expanded, as PyTorch returns it
            shape = list(o.shape)
            shape.insert(d, level.size)
            res.append(o.unsqueeze(d).expand(tuple(shape)))
    return tree_unflatten(res, spec)


def _concat_chunks(func, parts, out_dims):
    flat0, spec = tree_flatten(parts[0])
    dims = flat_out_dims(name_of(func), parts[0], out_dims, spec)
    columns = [tree_flatten(p)[0] for p in parts]
    out = [first if d is None else torchweb.cat([c[i] for c in columns], d)
           for i, (first, d) in enumerate(zip(flat0, dims))]
    return tree_unflatten(out, spec)

