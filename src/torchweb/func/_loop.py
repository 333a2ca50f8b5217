"""vmap's argument checks (in_dims / out_dims as pytree prefixes, with PyTorch's messages), and
the loop form of vmap: for each index b of the mapped size, the function gets every batched
input with its in_dim selected at b (a view, so in-place writes reach the caller's tensor),
unbatched inputs and keyword arguments as they are, and the results are stacked at their
out_dims. torch.func.vmap runs batched (func/_vmap.py); the loop stays as the reference the
benchmark compares against (bench/vmap_per_sample_grads.py) and as `TORCHWEB_VMAP=loop`.
"""

import functools

from .._is_tensor import is_tensor
from ..ops.join import stack
from ..utils._pytree import tree_flatten, tree_unflatten, _broadcast_to_and_flatten
from ._randomness import RandomnessScope, check as check_randomness

__all__ = ["vmap_loop", "check_out_dims", "batched_inputs", "flat_out_dims"]


def name_of(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({name_of(func.func)}, ...)"
    return repr(func)


def vmap_loop(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dimension in_dims of its inputs; results stacked at out_dims."""
    check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    check_out_dims(out_dims, func)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat_args, args_spec, flat_in_dims, size = batched_inputs(func, in_dims, args)
        with RandomnessScope(randomness) as scope:
            results = []
            for b in range(size):
                if b:
                    scope.next_entry()
                entry = [x if d is None else x.select(d, b) for x, d in zip(flat_args, flat_in_dims)]
                results.append(func(*tree_unflatten(entry, args_spec), **kwargs))
        if size == 0:   # no entry to run: the shapes come from one call on a zero entry
            results = [_call_on_zero_entry(func, flat_args, args_spec, flat_in_dims, kwargs)]
        return _stack_results(func, results, out_dims, size)
    return wrapped


def check_out_dims(out_dims, func):
    for d in tree_flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({name_of(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
                             "a python collection of ints representing where in the outputs the vmapped "
                             "dimension should appear.")


def batched_inputs(func, in_dims, args):
    """(flat args, their spec, each one's in_dim (non-negative, or None), the batch size)."""
    name = name_of(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = _broadcast_to_and_flatten(in_dims, args_spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs "
                         f"has structure {args_spec}.")
    dims, sizes = [], []
    for x, d in zip(flat_args, flat_in_dims):
        if d is None:
            dims.append(None)
            continue
        if not isinstance(d, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if not is_tensor(x):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             f"the input is of type {type(x)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                             f"that input is a Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        dims.append(d % n)
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return flat_args, args_spec, dims, sizes[0]


def _call_on_zero_entry(func, flat_args, args_spec, dims, kwargs):
    entry = [x if d is None else x.new_zeros(tuple(x.shape[:d]) + tuple(x.shape[d + 1:]))
             for x, d in zip(flat_args, dims)]
    return func(*tree_unflatten(entry, args_spec), **kwargs)


def _stack_results(func, results, out_dims, size):
    name = name_of(func)
    flat0, out_spec = tree_flatten(results[0])
    flat_dims = flat_out_dims(name, results[0], out_dims, out_spec)
    per_entry = []
    for b, r in enumerate(results):
        leaves, spec = tree_flatten(r)
        if spec != out_spec:    # (control flow on values; PyTorch's vmap refuses it before this)
            raise ValueError(f"vmap({name}, ...): `{name}` returned outputs of different structures for the entries "
                             f"of the batch: {out_spec} for entry 0, {spec} for entry {b}")
        per_entry.append(leaves)
    out = []
    for i, d in enumerate(flat_dims):
        column = [leaves[i] for leaves in per_entry]
        if d is None:
            out.append(_unbatched(name, column))
            continue
        if not is_tensor(column[0]):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(column[0])}. "
                             "Did you mean to set out_dims= to None for output?")
        n = column[0].dim() + 1
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        stacked = stack(column, d)
        out.append(stacked.narrow(d, 0, 0) if size == 0 else stacked)
    return tree_unflatten(out, out_spec)


def _unbatched(name, column):
    """An output with out_dim None: the same for every entry (PyTorch refuses a batched one)."""
    first = column[0]
    if is_tensor(first) and any(c is not first and not (tuple(c.shape) == tuple(first.shape) and
                                                        bool((c == first).all())) for c in column[1:]):
        raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
    return first


def flat_out_dims(name, result, out_dims, out_spec):
    """out_dims broadcast over the result's leaves, with PyTorch's error where they do not fit."""
    if is_tensor(result):
        # (PyTorch's edge case: a lone tensor takes an int, None or a 1-tuple of out_dims)
        ok = isinstance(out_dims, int) or out_dims is None or (isinstance(out_dims, tuple) and len(out_dims) == 1)
        flat = (list(out_dims) if isinstance(out_dims, tuple) else [out_dims]) if ok else None
    else:
        flat = _broadcast_to_and_flatten(out_dims, out_spec)
    if flat is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                         f"has structure {out_spec}.")
    return flat
