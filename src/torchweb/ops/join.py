"""cat, stack, split, chunk."""

from .. import _dtype as D
from .._size import wrap_dim
from ..autograd import grad_mode
from ..autograd.function import Function
from .operands import common_device, empty, is_tensor
from . import elementwise as E
from . import shape as S
from .registry import define


class _Cat(Function):
    _backward_name = "CatBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, d, *tensors):
        ctx.meta = (d, [t.shape[d] if t.dim() else 0 for t in tensors], [t.dim() for t in tensors])
        return _raw_cat(tensors, d)

    @staticmethod
    def backward(ctx, g):
        d, sizes, dims = ctx.meta
        grads, start = [], 0
        for size, nd in zip(sizes, dims):
            if nd == 1 and size == 0 and g.dim() > 1:
                grads.append(None)  # the legacy empty [0] tensor
                continue
            grads.append(S.narrow(g, d, start, size))
            start += size
        return (None, *grads)


def _raw_cat(tensors, d):
    dt = D.result_type(*[t for t in tensors])
    ref = next(t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0))
    shape = list(ref.shape)
    shape[d] = sum(t.shape[d] for t in tensors if not (t.dim() == 1 and t.shape[0] == 0 and ref.dim() != 1))
    out = empty(tuple(shape), dt, ref.device)
    start = 0
    for t in tensors:
        if t.dim() == 1 and t.shape[0] == 0 and ref.dim() != 1:
            continue
        n = t.shape[d]
        if n:
            E.copy_into(out._view(*_slice_geometry(out, d, start, n)), t)
        start += n
    return out


def _slice_geometry(t, d, start, n):
    shape = list(t.shape)
    shape[d] = n
    return tuple(shape), t._stride, t._offset + start * t._stride[d]


class _Stack(_Cat):
    _backward_name = "StackBackward0"


@define("cat", "join", method=False, aliases=('concat', 'concatenate'), doc='cat(tensors, dim=0, *, out=None) -> Tensor\n\nThe tensors joined along an existing dim (1-D empty tensors are skipped, as PyTorch).')
def cat(tensors, dim=0, *, out=None, _fn=_Cat, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not is_tensor(t):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    common_device(*tensors, what="cat")
    real = [t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
    if not real:
        return _raw_cat(tensors, 0) if tensors[0].dim() == 1 else tensors[0].clone()
    ref = real[0]
    if ref.dim() == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, ref.dim())
    for i, t in enumerate(tensors):
        if t.dim() == 1 and t.shape[0] == 0:
            continue
        if t.dim() != ref.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.dim()} and {t.dim()}")
        for k in range(ref.dim()):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors):
        r = _fn.apply(d, *tensors)
    else:
        r = _raw_cat(tensors, d)
    if out is not None:
        out.copy_(r)
        return out
    return r


concat = concatenate = cat


@define("stack", "join", method=False, doc='stack(tensors, dim=0, *, out=None) -> Tensor\n\nThe tensors joined along a new dim.')
def stack(tensors, dim=0, *, out=None, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} "
                               f"at entry 0 and {list(t.shape)} at entry {i}")
    d = wrap_dim(dim, tensors[0].dim() + 1)
    return cat([S.unsqueeze(t, d) for t in tensors], d, out=out, _fn=_Stack)


@define("hstack", "join", out=True, method=False, doc='hstack(tensors) -> Tensor\n\nThe tensors joined column-wise (dim 1, or 0 for 1-D).')
def hstack(tensors):
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


@define("vstack", "join", out=True, method=False, aliases=("row_stack",), doc='vstack(tensors) -> Tensor\n\nThe tensors joined row-wise (1-D ones as rows).')
def vstack(tensors):
    return cat([t if t.dim() > 1 else S.reshape(t, (1, -1)) for t in tensors], 0)


@define("split", "join", doc='split(tensor, split_size_or_sections, dim=0) -> tuple of Tensors\n\nViews of pieces of split_size (the last may be smaller) or of the given sizes.')
def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    if split_size is not None:     # (Tensor.split's name for it)
        split_size_or_sections = split_size
    if split_size_or_sections is None:
        raise TypeError("split() missing 1 required positional argument: 'split_size_or_sections'")
    d = wrap_dim(dim, tensor.dim())
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        if step == 0:
            return (tensor,)
        sizes = [min(step, size - s) for s in range(0, size, step)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={sizes}")
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                               f"size at dimension {d}), but got split_sizes={sizes}")
    fn = _Split if isinstance(split_size_or_sections, int) else _SplitWithSizes  # PyTorch's node names
    if len(sizes) > 1 and grad_mode.is_grad_enabled() and tensor.requires_grad:
        return S.multi_output_views(fn.apply(tensor, d, tuple(sizes)), fn.__name__.lstrip("_"))
    return _split_views(tensor, d, sizes)


def _split_views(x, d, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(x._view(*_slice_geometry(x, d, start, n)))
        start += n
    return tuple(out)


class _Split(Function):
    """The pieces of a split as one node (as PyTorch's SplitBackward0): its backward joins their
    gradients with one cat (zeros for a piece that got none), where a node per piece placed each
    into zeros of the whole and summed them (a fill and a copy a piece, then the sum)."""
    _backward_name = "SplitBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, d, sizes):
        ctx.d, ctx.sizes = d, sizes
        return _split_views(x, d, sizes)

    @staticmethod
    def backward(ctx, *grads):
        d = ctx.d
        ref = next(g for g in grads if g is not None)
        pieces = []
        for g, n in zip(grads, ctx.sizes):
            if g is None:
                shape = list(ref.shape)
                shape[d] = n
                g = E.fill(empty(tuple(shape), ref.dtype, ref.device), 0)
            pieces.append(g)
        joined = cat(pieces, d) if grad_mode._state["enabled"] else _raw_cat(pieces, d)
        return joined, None, None


class _SplitWithSizes(_Split):
    _backward_name = "SplitWithSizesBackward0"


@define("chunk", "join", doc='chunk(input, chunks, dim=0) -> tuple of Tensors\n\nViews of at most `chunks` equal pieces.')
def chunk(input, chunks, dim=0, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    step = -(-size // chunks) if size else 0
    if step == 0:
        return tuple(S.narrow(input, d, 0, 0) for _ in range(min(chunks, 1) if size else chunks))
    return split(input, step, d)


@define("tensor_split", "join", doc='tensor_split(input, indices_or_sections, dim=0) -> tuple of Tensors\n\nViews split into n near-equal pieces, or at the given indices.')
def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    for given in (sections, indices, tensor_indices_or_sections):   # (PyTorch's overloads' names)
        if given is not None:
            indices_or_sections = given
    if indices_or_sections is None:
        raise TypeError("tensor_split() missing 1 required positional argument: 'indices_or_sections'")
    if is_tensor(indices_or_sections):
        if indices_or_sections.dtype not in (D.int64, D.int32):
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{indices_or_sections.dtype}")
        indices_or_sections = indices_or_sections.tolist()
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        sizes = [q + 1] * r + [q] * (n - r)
    else:
        bounds = [0] + [min(max(i, 0), size) for i in indices_or_sections] + [size]
        sizes = [max(0, b - a) for a, b in zip(bounds, bounds[1:])]
    return S.plain_views(split(input, sizes, d))
