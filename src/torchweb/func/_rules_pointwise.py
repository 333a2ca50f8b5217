"""Batching rules for elementwise ops (the elementwise table's rows, comparisons, pointwise
activations, operators), their in-place forms, same-shape ops (casts, clone, *_like, dropout)
and elementwise losses: every batched operand gets its batch dim first and enough unit dims
after it to line up with the other operands (broadcasting aligns the rest on the right), and
the op runs once."""

from .._is_tensor import is_tensor
from .._size import broadcast_shapes
from ..ops.registry import OPS
from ._batched import to_front, wrap
from ._dispatch import rule

_NOT_POINTWISE = {"allclose", "equal", "is_nonzero", "is_same_size", "is_signed", "isin", "frexp"}
_ACTIVATIONS = ("celu", "elu", "gelu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
                "logsigmoid", "mish", "relu6", "selu", "softplus", "softshrink", "softsign", "tanhshrink",
                "threshold", "relu", "sigmoid", "silu", "tanh")
_OPERATORS = ("__abs__", "__add__", "__and__", "__eq__", "__floordiv__", "__ge__", "__gt__", "__invert__",
              "__le__", "__lshift__", "__lt__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__",
              "__pow__", "__radd__", "__rand__", "__rfloordiv__", "__rlshift__", "__rmod__", "__rmul__",
              "__ror__", "__rpow__", "__rrshift__", "__rshift__", "__rsub__", "__rtruediv__", "__rxor__",
              "__sub__", "__truediv__", "__xor__")
_IN_PLACE_OPERATORS = ("tril_", "triu_", "celu_", "elu_", "hardtanh_", "leaky_relu_", "selu_", "threshold_", "relu_", "__iadd__", "__iand__", "__ifloordiv__", "__ilshift__", "__imod__", "__imul__", "__ior__",
                       "__ipow__", "__irshift__", "__isub__", "__itruediv__", "__ixor__", "copy_", "fill_", "zero_")
_SAME_SHAPE = ("clone", "contiguous", "to", "float", "double", "half", "int", "long", "bool", "byte", "type",
               "type_as", "cpu", "webgpu", "cuda", "zeros_like", "ones_like", "empty_like", "full_like",
               "rand_like", "randn_like", "randint_like", "dropout", "alpha_dropout", "bernoulli", "one_hot",
               "nan_to_num", "detach_copy", "positive", "resolve_conj", "resolve_neg")


def pointwise_names():
    names = set(_ACTIVATIONS) | set(_OPERATORS) | {"where", "masked_fill", "F.relu", "float_power", "rsub"}
    for key, op in OPS.items():
        if op.kind in ("elementwise", "comparison") and op.name not in _NOT_POINTWISE:
            names.add(op.name)
            names.update(op.aliases)
    return names


def in_place_names():
    names = set(_IN_PLACE_OPERATORS)
    pointwise = pointwise_names()
    for op in OPS.values():
        if op.inplace is not None and op.name in pointwise:
            names.update(n + "_" for n in (op.name,) + op.aliases)
    return names


def _tensors(call):
    return [(k, v) for k, v in call.bound.arguments.items() if is_tensor(v)]


def padded(v, rank, logical_rank):
    """v (batch dim first) with unit dims after the batch dim up to `rank` logical dims."""
    for _ in range(rank - logical_rank):
        v = v.unsqueeze(1)
    return v


def aligned(call, rank=None):
    """Rewrite the call's tensor arguments: batched ones with the batch dim first, padded with
    unit dims to `rank` (the largest logical rank among them by default)."""
    tensors = _tensors(call)
    if rank is None:
        rank = max(v.dim() for _, v in tensors)
    for k, v in tensors:
        front, batched = to_front(v, call.lid)
        if batched:
            call.set(k, padded(front, rank, v.dim()))


def wrap_out(out, lid, bdim=0):
    if is_tensor(out):
        return wrap(out, bdim, lid)
    if isinstance(out, tuple):
        items = [wrap_out(o, lid, bdim) for o in out]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    if isinstance(out, list):
        return [wrap_out(o, lid, bdim) for o in out]
    return out


def pointwise(call):
    if call.get("out") is not None:
        return NotImplemented
    if call.name == "where" and call.get("input") is None:
        return NotImplemented      # where(condition): nonzero's data-dependent shape
    aligned(call)
    return wrap_out(call.run(), call.lid)


def in_place(call):
    """self batched: the op writes into its value (a view with the batch dim first)."""
    names = list(call.bound.arguments)
    self_key = names[0]
    target = call.get(self_key)
    front, batched = to_front(target, call.lid)
    if not batched:     # PyTorch's errors: the write cannot hold every entry's result
        if call.name in ("copy_", "fill_"):
            raise RuntimeError(INPLACE_INTO_UNBATCHED)
        shape = ()
        for _, v in _tensors(call):
            shape = broadcast_shapes(shape, tuple(v.shape))
        raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast shape "
                           f"{[call.size] + list(shape)}")
    aligned(call, rank=target.dim())
    call.set(self_key, front)
    call.run()
    return target


INPLACE_INTO_UNBATCHED = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
    "that has more elements than `self`. This happened due to `other` being vmapped over but `self` not being "
    "vmapped over in a vmap. Please try to use out-of-place operators instead of inplace arithmetic. If said "
    "operator is being called inside the PyTorch framework, please file a bug report instead.")


def reduced_loss(call):
    """An elementwise loss: the per-element losses of the whole batch, then each entry's
    reduction over its own elements."""
    reduction = call.get("reduction", "mean")
    if call.get("size_average") is not None or call.get("reduce") is not None or \
            reduction not in ("mean", "sum", "none", "batchmean"):
        return NotImplemented
    logical_n = call.get("input").shape[0] if call.get("input").dim() else 1
    aligned(call)
    out = call.run(reduction="none")
    if reduction == "none":
        return wrap(out, 0, call.lid)
    flat = out.reshape(out.shape[0], -1)
    if reduction == "mean":
        return wrap(flat.mean(1), 0, call.lid)
    total = flat.sum(1)
    return wrap(total / logical_n if reduction == "batchmean" else total, 0, call.lid)


_SPECIAL = ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
            "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "entr", "erfcx", "expit",
            "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0e", "i1", "i1e",
            "laguerre_polynomial_l", "legendre_polynomial_p", "log_ndtr", "modified_bessel_i0", "modified_bessel_i1",
            "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "psi",
            "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
            "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
            "spherical_bessel_j0", "xlog1py", "zeta")     # torch.special's elementwise names torch.* lacks

for _n in pointwise_names() | set(_SAME_SHAPE) | set(_SPECIAL):
    rule(_n)(pointwise)
for _n in in_place_names():
    rule(_n)(in_place)
rule("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
     "soft_margin_loss", "kl_div", "poisson_nll_loss")(reduced_loss)


@rule("cosine_similarity", "pairwise_distance")
def _along_aligned(call):
    """Elementwise operands reduced along a dim: lined up as elementwise, then the dim moves
    up by one (relative to the largest logical rank, which the result's dims follow)."""
    rank = max(v.dim() for _, v in _tensors(call))
    if call.name == "pairwise_distance":
        return NotImplemented if rank == 0 else pointwise(call)      # (the last dim: unchanged)
    aligned(call)
    dim = call.get("dim", 1)
    if not -rank <= dim < rank:
        return NotImplemented
    return wrap_out(call.run(dim=dim % rank + 1), call.lid)
