"""Batching rules for views and shape ops (view, reshape, expand, permute, flatten, squeeze,
repeat, t, cat, stack, ...) and indexing (x[index], x[index] = v, gather, scatter,
index_select, take_along_dim, embedding): the batch dim goes first and the logical shape or
index gets a leading entry for it."""

import torchweb
from .._is_tensor import is_tensor
from ._batched import to_front, wrap, BatchedTensor
from ._dispatch import rule
from ._rules_reduce import shift
from ._rules_pointwise import wrap_out, padded, INPLACE_INTO_UNBATCHED


def _shape_arg(call, kw_key):
    """A shape or dims given as *args (`view(2, 3)`, `view((2, 3))`) or as the keyword kw_key."""
    if call.get(kw_key) is not None:
        return tuple(call.get(kw_key))
    var = next((p.name for p in call.bound.signature.parameters.values() if p.kind is p.VAR_POSITIONAL), None)
    shape = call.get(var, ()) if var else ()
    if len(shape) == 1 and not isinstance(shape[0], int) and hasattr(shape[0], "__len__"):
        shape = shape[0]
    return tuple(shape)


def _reshaped(method):
    def run(call):
        if call.get("dtype") is not None:
            key, x, v, batched = call.first()
            return wrap(call.run(**{key: v}), 0, call.lid) if batched else NotImplemented
        key, x, v, batched = call.first()
        if not batched:
            return NotImplemented
        shape = _shape_arg(call, "size" if method == "view" else "shape")
        return wrap(getattr(v, method if v.is_contiguous() or method == "reshape" else "reshape")(
            (v.shape[0],) + shape), 0, call.lid)
    return run


rule("view")(_reshaped("view"))
rule("reshape")(_reshaped("reshape"))


@rule("view_as", "reshape_as")
def _view_as(call):
    key, x, v, batched = call.first()
    other = call.get("other")
    return (x.view if call.name == "view_as" else x.reshape)(tuple(other.shape)) if batched else NotImplemented


@rule("expand", "broadcast_to", "repeat", "tile")
def _sized(call):
    """expand / repeat to logical sizes: the entry's dims padded to their count, the batch dim
    kept (expanded to itself, repeated once)."""
    key, x, v, batched = call.first()
    if not batched:
        return NotImplemented
    if call.name in ("expand", "broadcast_to"):
        sizes = tuple(call.get("size")) if call.name == "broadcast_to" else _shape_arg(call, "size")
        return wrap(padded(v, len(sizes), x.dim()).expand((v.shape[0],) + sizes), 0, call.lid)
    sizes = tuple(call.get("dims")) if call.name == "tile" else _shape_arg(call, "repeats")
    if call.name == "tile" and len(sizes) < x.dim():
        sizes = (1,) * (x.dim() - len(sizes)) + sizes
    return wrap(padded(v, len(sizes), x.dim()).repeat((1,) + sizes), 0, call.lid)


@rule("expand_as")
def _expand_as(call):
    x, other = call.get("input", call.get("self")), call.get("other")
    x = x if x is not None else call.get(next(iter(call.bound.arguments)))
    return x.expand(tuple(other.shape))


@rule("permute")
def _permute(call):
    key, x, v, batched = call.first()
    if not batched:
        return NotImplemented
    dims = _shape_arg(call, "dims")
    return wrap(v.permute((0,) + tuple(shift(d, x.dim()) for d in dims)), 0, call.lid)


@rule("t")
def _t(call):
    key, x, v, batched = call.first()
    if not batched:
        return NotImplemented
    return wrap(v.transpose(1, 2) if x.dim() == 2 else v, 0, call.lid)


@rule("flatten", "ravel")
def _flatten(call):
    key, x, v, batched = call.first()
    if not batched:
        return NotImplemented
    if x.dim() == 0:
        return wrap(v.reshape(v.shape[0], 1), 0, call.lid)
    start, end = (0, -1) if call.name == "ravel" else (call.get("start_dim", 0), call.get("end_dim", -1))
    return wrap(v.flatten(shift(start, x.dim()), shift(end, x.dim())), 0, call.lid)


@rule("squeeze")
def _squeeze(call):
    key, x, v, batched = call.first()
    if not batched:
        return NotImplemented
    dim = call.get("dim") if call.get("axis") is None else call.get("axis")
    if dim is None:
        dims = tuple(i + 1 for i, s in enumerate(x.shape) if s == 1)
    else:
        dims = tuple(shift(d, x.dim()) for d in (dim if isinstance(dim, (list, tuple)) else (dim,)))
    return wrap(v.squeeze(dims) if dims else v, 0, call.lid)


def _batched_list(call, key):
    tensors = call.get(key)
    if not any(type(t) is BatchedTensor and t._level == call.lid for t in tensors):
        return None
    out = []
    for t in tensors:
        v, batched = to_front(t, call.lid)
        out.append(v if batched else t.unsqueeze(0).expand((call.size,) + tuple(t.shape)))
    return out


@rule("cat", "concat", "concatenate", "stack")
def _cat(call):
    key = next(iter(call.bound.arguments))
    tensors = _batched_list(call, key)
    if tensors is None or call.get("out") is not None:
        return NotImplemented
    if call.get("axis") is not None:
        call.set("dim", call.get("axis"))
        call.set("axis", None)
    first = call.get(key)[0]
    rank = first.dim() + (1 if call.name == "stack" else 0)
    if call.name != "stack" and first.dim() == 1 and first.shape[0] == 0:
        return NotImplemented
    return wrap(call.run(**{key: tensors, "dim": shift(call.get("dim", 0), rank)}), 0, call.lid)


@rule("broadcast_tensors")
def _broadcast_tensors(call):
    tensors = call.get(next(iter(call.bound.arguments)))
    shape = ()
    for t in tensors:
        shape = _broadcast(shape, tuple(t.shape))
    return tuple(t.expand(shape) for t in tensors)


def _broadcast(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(y if x == 1 else x for x, y in zip(a, b))


# -- indexing ---------------------------------------------------------------------------------

def _index_parts(index):
    return index if isinstance(index, tuple) else (index,)


def _simple(parts):
    """Whether the index's tensors (if any) sit next to each other and hold no bool mask."""
    positions = [i for i, p in enumerate(parts) if is_tensor(p) or isinstance(p, list)]
    if any(is_tensor(p) and p.dtype.name == "bool" for p in parts):
        return None
    if positions and positions != list(range(positions[0], positions[-1] + 1)):
        return None
    return positions


@rule("__getitem__")
def _getitem(call):
    x, index = call.get("x"), call.get("index")
    parts = _index_parts(index)
    positions = _simple(parts)
    if positions is None:
        return NotImplemented
    v, batched = to_front(x, call.lid)
    batched_index = [p for p in parts if type(p) is BatchedTensor and p._level == call.lid]
    if not batched_index:
        if not batched:
            return NotImplemented
        return wrap(v[(slice(None),) + parts], 0, call.lid)
    if positions[0] != 0:
        return NotImplemented
    # batched indices: each entry picks with its own index; the entry number indexes the batch dim
    rank = max(p.dim() for p in parts if is_tensor(p))
    new = []
    for p in parts:
        pv, pb = to_front(p, call.lid) if is_tensor(p) else (p, False)
        new.append(padded(pv, rank, p.dim()) if pb else pv)
    if batched:
        entry = torchweb.arange(call.size, device=v.device).reshape((call.size,) + (1,) * rank)
        return wrap(v[(entry,) + tuple(new)], 0, call.lid)
    return wrap(x[tuple(new)], 0, call.lid)


@rule("__setitem__")
def _setitem(call):
    x, index, value = call.get("x"), call.get("index"), call.get("value")
    parts = _index_parts(index)
    v, batched = to_front(x, call.lid)
    if not batched:
        raise RuntimeError(INPLACE_INTO_UNBATCHED)
    if _simple(parts) is None or any(type(p) is BatchedTensor for p in parts):
        return NotImplemented
    full = (slice(None),) + parts
    if is_tensor(value):
        val, vb = to_front(value, call.lid)
        if vb:
            value = padded(val, v[full].dim() - 1, value.dim())
    v[full] = value
    return None


def _gather_like(index_keys):
    def run(call):
        key = next(iter(call.bound.arguments))
        if call.get("out") is not None or call.get("dim") is None:
            return NotImplemented
        x = call.get(key)
        changes = {}
        for k in (key,) + index_keys:
            t = call.get(k)
            if not is_tensor(t):
                continue
            tv, tb = to_front(t, call.lid)
            changes[k] = tv if tb else t.unsqueeze(0).expand((call.size,) + tuple(t.shape))
        changes["dim"] = shift(call.get("dim"), x.dim())
        return wrap_out(call.run(**changes), call.lid)
    return run


rule("gather", "take_along_dim")(_gather_like(("index", "indices")))
rule("scatter", "scatter_add", "scatter_reduce")(_gather_like(("index", "src", "value")))


@rule("index_select")
def _index_select(call):
    key, x, v, batched = call.first()
    index = call.get("index")
    if not batched or (type(index) is BatchedTensor and index._level == call.lid):
        return NotImplemented
    dim = call.get("dim") if call.get("axis") is None else call.get("axis")
    return wrap(call.run(**{key: v, "dim": shift(dim, x.dim()), "axis": None}), 0, call.lid)


@rule("embedding")
def _embedding(call):
    ids, weight = call.get("input"), call.get("weight")
    if type(weight) is BatchedTensor and weight._level == call.lid:
        return NotImplemented
    v, batched = to_front(ids, call.lid)
    return wrap(call.run(input=v), 0, call.lid) if batched else NotImplemented


@rule("new_zeros", "new_ones", "new_full", "new_empty", "new_tensor")
def _new(call):
    """A new tensor from a batched one's options: unbatched, as PyTorch's."""
    key, x, v, batched = call.first()
    return call.run(**{key: v}) if batched else NotImplemented


@rule("tril", "triu", "det", "inverse", "logdet", "slogdet", "matrix_exp", "matrix_power", "pinverse", "cholesky",
      "diag_embed", "vander", "svd", "qr", "lu",
      # torch.linalg's
      "inv", "inv_ex", "cholesky_ex", "eigh", "eigvalsh", "eig", "eigvals", "svdvals", "lu_factor", "lu_factor_ex",
      "matrix_rank", "pinv", "cond")
def _trailing(call):
    """Ops on the last dims that batch over leading ones: the batch dim is one more of those."""
    key, x, v, batched = call.first()
    if not batched or x.dim() < (1 if call.name in ("diag_embed", "vander") else 2) or \
            any(type(a) is BatchedTensor for k, a in call.bound.arguments.items() if k != key):
        return NotImplemented
    if call.name == "diag_embed" and (call.get("dim1", -2) >= 0 or call.get("dim2", -1) >= 0):
        return NotImplemented
    return wrap_out(call.run(**{key: v}), call.lid)


@rule("t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_")
def _view_in_place(call):
    """The view op's result taken over by the batched tensor itself (its value and shape)."""
    key, x, v, batched = call.first()
    if not batched:
        return NotImplemented
    out = getattr(x, call.name[:-1])(*call.get("args", ()), **call.get("kwargs", {}))   # (self, *args, **kwargs)
    x._value, x._bdim, x._shape = out._value, out._bdim, out._shape
    return x
