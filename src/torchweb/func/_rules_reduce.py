"""Batching rules for ops along dims: reductions (sum, mean, max, var, norm, logsumexp, ...),
scans (cumsum, ...), softmax and its kin, sorting (sort, topk, ...) and the ops that pick or
split along a dim (select, narrow, unbind, chunk, split, flip, roll). The batch dim goes first
and every logical dim the call names moves up by one; dim=None (all dims) runs on the entries
flattened to one dim."""

from .._is_tensor import is_tensor
from ._dispatch import rule
from ._rules_pointwise import wrap_out, pointwise


def shift(d, rank):
    """Logical dim d of a rank-`rank` tensor as a physical dim (batch first)."""
    if rank == 0:
        if d not in (0, -1):
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {d})")
        return 1
    if not -rank <= d < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})")
    return d % rank + 1


def _shift_all(dims, rank):
    if isinstance(dims, (list, tuple)):
        return type(dims)(shift(d, rank) for d in dims)
    return shift(dims, rank)


def _aliases(call):
    """NumPy's axis= / keepdims= spellings folded into dim / keepdim."""
    if call.get("axis") is not None:
        call.set("dim", call.get("axis"))
        call.set("axis", None)
    if call.get("keepdims") is not None:
        call.set("keepdim", call.get("keepdims"))
        call.set("keepdims", None)


_ALL_WHEN_NONE = {"sum", "mean", "nansum", "nanmean", "prod", "amax", "amin", "all", "any", "std", "var", "std_mean",
                  "var_mean", "norm", "count_nonzero", "argmax", "argmin", "max", "min", "median", "nanmedian",
                  "aminmax", "logsumexp", "vector_norm"}
_VALUES_WHEN_NONE = {"max", "min", "median", "nanmedian"}    # no dim: a tensor, not (values, indices)


def reduction(call):
    if call.get("out") is not None:
        return NotImplemented
    if call.get("other") is not None or is_tensor(call.get("dim")):   # max(input, other): elementwise
        return pointwise(call)
    _aliases(call)
    key, x, v, batched = call.first()
    if not batched:
        return NotImplemented
    rank, dim = x.dim(), call.get("dim")
    if call.name == "norm" and (call.get("p") == "nuc" or (dim is None and call.get("ord") is not None)):
        return NotImplemented        # (a matrix norm: the loop)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):      # () is every dim too
        if call.name not in _ALL_WHEN_NONE:
            return NotImplemented
        out = call.run(**{key: v.reshape(v.shape[0], -1), "dim": 1})
        if call.name in _VALUES_WHEN_NONE:
            out = out[0]
        if call.get("keepdim"):
            keep = (out.shape[0],) + (1,) * rank
            out = type(out)(*(o.reshape(keep) for o in out)) if isinstance(out, tuple) else out.reshape(keep)
        return wrap_out(out, call.lid)
    if rank == 0:     # a 0-d entry: reduce a unit dim, keep the entry 0-d
        out = call.run(**{key: v.unsqueeze(1), "dim": 1, **({"keepdim": False} if "keepdim" in call.bound.arguments else {})})
        return wrap_out(out, call.lid)
    return wrap_out(call.run(**{key: v, "dim": _shift_all(dim, rank)}), call.lid)


def along_dim(*dim_keys, default_dim=None, rank_plus=0):
    """A rule for an op whose dims are the arguments dim_keys (ints or lists of ints)."""
    def run(call):
        _aliases(call)
        key, x, v, batched = call.first()
        if not batched:
            return NotImplemented
        rank = x.dim() + rank_plus
        changes = {key: v}
        for k in dim_keys:
            d = call.get(k, default_dim)
            if d is None:
                if call.name in ("softmax", "log_softmax", "softmin"):     # PyTorch's implicit dim choice
                    d = 0 if x.dim() in (0, 1, 3) else 1
                else:
                    return NotImplemented
            changes[k] = _shift_all(d, rank)
        if x.dim() == 0 and rank_plus == 0:
            out = call.run(**{**changes, key: v.unsqueeze(1)})
            return wrap_out(out.squeeze(1) if hasattr(out, "squeeze") else out, call.lid)
        return wrap_out(call.run(**changes), call.lid)
    return run


for _n in _ALL_WHEN_NONE:
    rule(_n)(reduction)
rule("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "softmax", "log_softmax", "softmin", "sort", "argsort",
     "topk", "kthvalue", "mode", "unbind", "chunk", "split", "tensor_split", "split_with_sizes", "narrow", "select",
     "glu", "diff", "repeat_interleave", "unsafe_chunk", "unsafe_split")(along_dim("dim", default_dim=None))
rule("flip")(along_dim("dims"))
rule("roll")(along_dim("dims"))
rule("transpose", "swapaxes", "swapdims")(along_dim("dim0", "dim1"))
rule("matrix_norm")(along_dim("dim"))
rule("diagonal")(along_dim("dim1", "dim2"))
rule("movedim", "moveaxis")(along_dim("source", "destination"))
rule("unsqueeze")(along_dim("dim", rank_plus=1))
rule("unflatten")(along_dim("dim"))


def _default(dim):
    return along_dim("dim", default_dim=dim)


for _n, _d in (("cumsum", None), ("sort", -1), ("argsort", -1), ("topk", -1), ("kthvalue", -1), ("mode", -1),
               ("unbind", 0), ("chunk", 0), ("split", 0), ("tensor_split", 0), ("split_with_sizes", 0),
               ("glu", -1), ("diff", -1), ("unsafe_chunk", 0), ("unsafe_split", 0),
               ("normalize", 1)):
    if _d is not None:
        rule(_n)(_default(_d))


@rule("repeat_interleave")
def _repeat_interleave(call):
    if call.get("dim") is None:
        return NotImplemented
    return along_dim("dim")(call)


@rule("msort", "fliplr", "flipud", "trace", "diag", "adjoint", "rot90")
def _fixed_dims(call):
    """Ops whose dims are fixed by the entry's rank: the same op with the dims spelled out."""
    key, x, v, batched = call.first()
    if not batched:
        return NotImplemented
    if call.name == "msort":
        return wrap_out(v.sort(1).values, call.lid)
    if call.name in ("fliplr", "flipud"):
        return wrap_out(v.flip(2 if call.name == "fliplr" else 1), call.lid)
    if call.name == "trace":
        return wrap_out(v.diagonal(0, 1, 2).sum(-1), call.lid)
    if call.name == "adjoint":
        return wrap_out(v.transpose(-2, -1), call.lid)
    if call.name == "rot90":
        dims = call.get("dims", [0, 1])
        return wrap_out(v.rot90(call.get("k", 1), [shift(d, x.dim()) for d in dims]), call.lid)
    offset = call.get("diagonal", 0)       # diag: a vector's diagonal matrix, or a matrix's diagonal
    return wrap_out(v.diag_embed(offset) if x.dim() == 1 else v.diagonal(offset, 1, 2), call.lid)
