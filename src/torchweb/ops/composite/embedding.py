"""one_hot, embedding and embedding_bag.

embedding is a row gather with its own backward (backends' embedding / embedding_backward: the
gradient rows summed per index, padding_idx skipped, see backends/webgpu/kernels/embedding.py),
or with sparse=True a sparse COO gradient of the rows as they are (_SparseEmbedding).
embedding_bag is composed from it: the gathered rows (n, dim) summed into bags by a (bags, n)
membership matrix (a matmul, which also carries per_sample_weights and drops padding_idx), or
for mode='max' the largest entry per bag of the rows masked to -inf outside it."""

from ... import _dtype as D
from ..._creation import arange, tensor, zeros
from ..._sparse_coo import sparse_entries
from ...autograd import grad_mode
from ...autograd.function import Function
from ...backends import backend_for
from ..adjoint import linear_backward
from ..operands import empty
from ..elementwise import call
from ..registry import define
from .. import linalg as L, reduction as R, shape as S
from ..index_ops import index_select


@define("one_hot", "indexing", dtypes=("int64",), method=False, torch=False, functional=True, differentiable=False,
        doc="one_hot(tensor, num_classes=-1) -> LongTensor\n\n"
            "A new last dim of num_classes holding 1 at each value's index and 0 elsewhere; "
            "num_classes=-1 takes the largest value plus one (a readback).")
def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        lo, hi = int(R.amin(tensor).item()), int(R.amax(tensor).item())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = arange(num_classes, device=tensor.device)
    return call("eq", S.unsqueeze(tensor, -1), classes).to(D.int64)


class _Embedding(Function):
    _backward_name = "EmbeddingBackward0"
    _double_backward = True   # (ops/adjoint.py: the rows looked up again)

    @staticmethod
    def forward(ctx, weight, idx, padding_idx, scale_grad_by_freq, shape):
        out = empty(shape + (weight.shape[1],), weight.dtype, weight.device)
        backend_for(weight.device.type).embedding(out, weight, idx)
        ctx.save_for_backward(idx)
        ctx.meta = (tuple(weight.shape), weight.dtype, padding_idx, scale_grad_by_freq)
        return out

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        shape, dtype, padding_idx, scale = ctx.meta
        g = S.reshape(g.contiguous(), (idx.shape[0], shape[1]))
        if g.requires_grad and scale:
            raise RuntimeError("double backward through embedding with scale_grad_by_freq=True is not "
                               "supported by torchweb")

        def lookup(gw):   # the adjoint of summing rows: the rows at idx (none from padding_idx)
            if padding_idx >= 0:
                keep = (arange(shape[0], device=gw.device) != padding_idx).to(gw.dtype)
                gw = gw * S.unsqueeze(keep, 1)
            return index_select(gw, 0, idx)
        return linear_backward(g, lambda g: _rows_summed(g, idx, shape, dtype, padding_idx, scale), lookup,
                               "EmbeddingBackwardBackward0"), None, None, None, None


class _SparseEmbedding(_Embedding):
    """embedding(sparse=True): the same lookup; weight's gradient a sparse COO tensor as
    PyTorch's embedding_sparse_backward makes it: uncoalesced, an entry per index looked up
    (padding_idx's left out) holding that position's row of the output's gradient."""
    _backward_name = "EmbeddingBackward0"

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        shape, dtype, padding_idx, scale = ctx.meta
        if scale:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        g = S.reshape(g.contiguous(), (idx.shape[0], shape[1]))
        if padding_idx >= 0:
            keep = idx != padding_idx
            idx, g = idx[keep], g[keep]
        grad = sparse_entries(S.reshape(idx.to(D.int64), (1, -1)), g.to(dtype), shape)
        return grad, None, None, None, None


def _rows_summed(g, idx, shape, dtype, padding_idx, scale_grad_by_freq):
    """grad_weight: the rows of g summed per index (optionally divided by each index's count)."""
    be = backend_for(g.device.type)
    gw = zeros(shape, dtype=D.float32, device=g.device)
    be.embedding_backward(gw, g.contiguous(), idx, padding_idx)
    if scale_grad_by_freq:
        counts = zeros((shape[0], 1), dtype=D.float32, device=g.device)
        be.embedding_backward(counts, S.expand(tensor([[1.0]], device=g.device), idx.shape[0], 1).contiguous(),
                              idx, -1)
        gw = gw / call("clamp_min", counts, 1.0)
    return gw if dtype is D.float32 else gw.to(dtype)


def _check_indices(input, name="embedding"):
    if input.dtype not in (D.int64, D.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar "
                           f"types: Long, Int; but got torch.{input.dtype.word}Tensor "
                           f"instead (while checking arguments for {name})")


def _padding(padding_idx, num):
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        assert padding_idx < num, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
        padding_idx = num + padding_idx
    return padding_idx


def _renorm(weight, idx, max_norm, norm_type):
    """The rows of weight that idx refers to scaled in place to norm <= max_norm, as PyTorch's
    embedding_renorm_ (scale max_norm / (norm + 1e-7)), outside autograd."""
    with grad_mode.no_grad():
        be = backend_for(weight.device.type)
        used = zeros((weight.shape[0], 1), dtype=D.float32, device=weight.device)
        be.embedding_backward(used, S.expand(tensor([[1.0]], device=weight.device), idx.shape[0], 1).contiguous(),
                              idx, -1)
        norms = R.norm(weight, norm_type, 1, keepdim=True)
        scale = call("where", call("logical_and", used > 0, norms > max_norm), max_norm / (norms + 1e-7), 1.0)
        weight.mul_(scale.to(weight.dtype))


def _embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse):
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(input)
    idx = S.reshape(input, (-1,)).contiguous()
    if max_norm is not None and idx.numel():
        _renorm(weight, idx, max_norm, norm_type)
    fn = _SparseEmbedding if sparse else _Embedding
    return fn.apply(weight, idx, padding_idx, scale_grad_by_freq, tuple(input.shape))


@define("embedding", "indexing", method=False, torch=False, functional=True, key="F.embedding",
        doc="embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, "
            "scale_grad_by_freq=False, sparse=False) -> Tensor\n\n"
            "The rows of weight (num_embeddings, dim) at the indices in input: shape input.shape + "
            "(dim,). padding_idx's row gets no gradient; max_norm rescales the rows used to that "
            "norm, in place; scale_grad_by_freq divides each row's gradient by its index's count.")
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    pad = _padding(padding_idx, weight.shape[0]) if weight.dim() >= 1 else -1
    return _embedding(input, weight, pad, max_norm, norm_type, scale_grad_by_freq, sparse)


@define("embedding", "indexing", method=False,
        doc="embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False) -> Tensor\n\n"
            "torch.nn.functional.embedding with ATen's argument order (weight first).")
def embedding_aten(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    pad = padding_idx if padding_idx is None or padding_idx >= 0 else -1
    return _embedding(indices, weight, -1 if pad is None else pad, None, 2.0, scale_grad_by_freq, sparse)


@define("embedding_bag", "indexing", method=False, torch=False, functional=True,
        doc="embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, "
            "mode='mean', sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None) "
            "-> Tensor\n\n"
            "The sum, mean or max of the embeddings of each bag: the rows of a 2-D input, or the "
            "runs of a 1-D input that start at offsets. padding_idx entries are left out of bags "
            "(and their counts); an empty bag gives zeros.")
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                             "of fixed length sequences. However, found offsets of type "
                             f"{type(offsets).__name__}")
        b, n = input.shape
        starts = list(range(0, b * n, n)) if n else [0] * b
        input = S.reshape(input, (-1,))
        if per_sample_weights is not None:
            per_sample_weights = S.reshape(per_sample_weights, (-1,))
        ends = starts[1:] + [b * n]
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = [int(v) for v in offsets.tolist()]
        if starts and starts[0] != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                               f"from position 0. However, got {starts[0]}")
        n = input.shape[0]
        for s in starts:
            if s > n:
                raise RuntimeError(f"offsets[-1] can not be greater than input's length ({n}), but got "
                                   f"offsets[-1] of {s}")
        if include_last_offset:
            ends, starts = starts[1:], starts[:-1]
        else:
            ends = starts[1:] + [n]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature "
                                      "request on the Pytorch GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                             f"then it must have the same shape as the input ({tuple(input.shape)})")
    pad = _padding(padding_idx, weight.shape[0])
    # (n, dim); a sparse gradient leaves padding_idx's entries out, as PyTorch's
    rows = embedding(input, weight, pad if sparse and pad >= 0 else None, max_norm, norm_type, scale_grad_by_freq,
                     sparse)
    nbags, n = len(starts), input.shape[0]
    # membership (bags, n): 1 where index j is in bag b and is not padding_idx
    pos = arange(n, device=weight.device)
    st = tensor(starts, dtype=D.int64, device=weight.device) if nbags else zeros(0, dtype=D.int64, device=weight.device)
    en = tensor(ends, dtype=D.int64, device=weight.device) if nbags else zeros(0, dtype=D.int64, device=weight.device)
    member = call("logical_and", S.unsqueeze(pos, 0) >= S.unsqueeze(st, 1), S.unsqueeze(pos, 0) < S.unsqueeze(en, 1))
    if pad >= 0:
        member = call("logical_and", member, S.unsqueeze(input != pad, 0))
    m = member.to(weight.dtype)
    if mode == "max":
        masked = call("where", S.unsqueeze(member, 2), S.unsqueeze(rows, 0), float("-inf"))
        if n == 0:
            return zeros((nbags, weight.shape[1]), dtype=weight.dtype, device=weight.device)
        best = R.amax(masked, 1)
        nonempty = S.unsqueeze(R.any(member, 1), 1)
        return call("where", nonempty, best, 0.0)
    if per_sample_weights is not None:
        m = m * S.unsqueeze(per_sample_weights, 0)
    out = L.matmul(m, rows)
    if mode == "mean":
        counts = R.sum(member.to(weight.dtype), 1, keepdim=True)
        out = out / call("clamp_min", counts, 1.0)
    return out
