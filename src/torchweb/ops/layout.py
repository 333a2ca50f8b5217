"""Shape and layout ops written from views, index_select, elementwise rows and matmul, so their
gradients come from those: flip (fliplr, flipud, rot90), roll, repeat, tile, repeat_interleave
(int repeats), tril, triu, diagonal (a view), outer/ger, addmv, addr, baddbmm, addbmm, kron,
meshgrid, atleast_1d/2d/3d, column_stack, dstack."""

from .._size import wrap_dim
from .operands import is_tensor, need_tensors
from .elementwise import call
from .registry import define
from . import join as J, linalg as L, shape as S
from .._creation import arange, tensor
from .reduction import sum as sum_
from .. import _dtype as D
from .index_ops import index_select


def _arange(n, device):
    return arange(n, device=device)


def _dims(dims, n):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    out = [wrap_dim(d, n) for d in dims]
    if len(set(out)) != len(out):
        raise RuntimeError(f"dims has duplicates, original flip dims size={len(dims)}, but unique flip dims size={len(set(out))}")
    return out


@define("flip", "shape")
def flip(input, dims):
    """flip(input, dims) -> Tensor

    A copy with the order of the elements along dims reversed."""
    x = input
    for d in _dims(dims, max(input.dim(), 1)):
        if input.dim() == 0:
            return S.clone(input)
        n = x.shape[d]
        idx = _arange(n, x.device) * -1 + (n - 1)
        x = index_select(x, d, idx)
    return x if x is not input else S.clone(input)


@define("fliplr", "shape")
def fliplr(input):
    """fliplr(input) -> Tensor

    flip along dim 1 (input must have at least 2 dims)."""
    return _flip_one(input, 1)


@define("flipud", "shape")
def flipud(input):
    """flipud(input) -> Tensor

    flip along dim 0 (input must have at least 1 dim)."""
    return _flip_one(input, 0)


def _flip_one(input, d):
    """flip along dim d, which must exist (fliplr's 1, flipud's 0)."""
    if input.dim() < d + 1:
        raise RuntimeError(f"Input must be >= {d + 1}-d.")
    return flip(input, (d,))


@define("rot90", "shape")
def rot90(input, k=1, dims=(0, 1)):
    """rot90(input, k=1, dims=(0, 1)) -> Tensor

    Rotated by 90 degrees k times in the plane of dims (from the first dim towards the second)."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = wrap_dim(dims[0], input.dim()), wrap_dim(dims[1], input.dim())
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return S.transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(S.transpose(input, d0, d1), (d1,))
    return S.clone(input)


@define("roll", "shape")
def roll(input, shifts, dims=None):
    """roll(input, shifts, dims=None) -> Tensor

    Elements shifted along dims (cyclically); without dims, over the flattened tensor."""
    if dims is None:
        return S.view(roll(S.flatten(input), shifts, 0), tuple(input.shape))
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    x = input
    for s, d in zip(shifts, dims):
        d = wrap_dim(d, x.dim())
        n = x.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            x = J.cat([S.narrow(x, d, n - s, s), S.narrow(x, d, 0, n - s)], d)
    return x if x is not input else S.clone(input)


@define("repeat", "shape", torch=False)
def repeat(input, *sizes, repeats=None):
    """repeat(*sizes) -> Tensor

    The tensor tiled sizes[i] times along each dim (leading dims added as needed)."""
    if repeats is not None:
        sizes = (repeats,)
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    if len(sizes) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    if any(r < 0 for r in sizes):   # PyTorch names the result's sizes
        padded = (1,) * (len(sizes) - input.dim()) + tuple(input.shape)
        result = [r * s for r, s in zip(sizes, padded)]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(result)}: {result}")
    x = S.reshape(input, (1,) * (len(sizes) - input.dim()) + tuple(input.shape))
    inter, expand = [], []
    for r, s in zip(sizes, x.shape):
        inter += [1, s]
        expand += [r, s]
    y = S.expand(S.reshape(x, tuple(inter)), tuple(expand))
    return S.reshape(S.contiguous(y), tuple(r * s for r, s in zip(sizes, x.shape)))


@define("tile", "shape")
def tile(input, dims):
    """tile(input, dims) -> Tensor

    repeat, with dims padded with leading 1s to input's number of dims."""
    dims = tuple(dims)
    dims = (1,) * (input.dim() - len(dims)) + dims
    return repeat(input, dims)


@define("repeat_interleave", "shape")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None, axis=None):
    """repeat_interleave(input, repeats, dim=None, *, output_size=None) -> Tensor

    Each element repeated `repeats` times (an int, or a tensor: one count per index of dim) along
    dim (the flattened input by default); repeat_interleave(repeats) repeats 0, 1, 2, ...
    (a tensor's counts are read back to the host to size the output, as PyTorch does)."""
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if repeats is None:
        return _repeat_counts(input, output_size)
    if is_tensor(repeats) and (repeats.dim() > 0 and repeats.numel() != 1 or output_size is not None):
        return _repeat_tensor(input, repeats, dim, output_size)
    if is_tensor(repeats):
        repeats = int(repeats.item())
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    x, d = _repeat_operand(input, dim)
    shape = tuple(x.shape)
    y = S.expand(S.unsqueeze(x, d + 1), shape[:d + 1] + (repeats,) + shape[d + 1:])
    return S.reshape(S.contiguous(y), shape[:d] + (shape[d] * repeats,) + shape[d + 1:])


def _repeat_counts(repeats, output_size=None):
    """The indices 0, 1, ... each repeated repeats[i] times (int64, on repeats' device)."""
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype.name not in ("int64", "int32"):
        raise RuntimeError("repeats has to be Long or Int tensor")
    counts = repeats.tolist()
    if any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    total = sum(counts)
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    idx = [i for i, c in enumerate(counts) for _ in range(c)]
    return tensor(idx, dtype=D.int64, device=repeats.device)


def _repeat_operand(input, dim):
    """(the input repeat_interleave repeats along d, d): flattened when dim is None, 1-D if 0-d."""
    x = input
    if dim is None:
        x, dim = S.flatten(x), 0
    d = wrap_dim(dim, max(x.dim(), 1))
    if x.dim() == 0:
        x = S.reshape(x, (1,))
    return x, d


def _repeat_tensor(input, repeats, dim, output_size):
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.dtype.name not in ("int64", "int32"):
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for \'{repeats.dtype.word}\'')
    x, d = _repeat_operand(input, dim)
    n = x.shape[d]
    if repeats.dim() == 0 or repeats.shape[0] == 1:
        repeats = S.expand(S.reshape(repeats, (1,)), (n,))
    if repeats.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats.shape[0]} and input.size({d}) = {n}")
    idx = _repeat_counts(repeats, output_size)
    return index_select(x, d, idx.to(x.device) if idx.device != x.device else idx)


def _tri(input, diagonal, upper, name):
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    n, m = input.shape[-2], input.shape[-1]
    rows = S.reshape(_arange(n, input.device), (n, 1))
    cols = S.reshape(_arange(m, input.device), (1, m))
    keep = (cols - rows >= diagonal) if upper else (cols - rows <= diagonal)
    return call("where", keep, input, 0)


@define("tril", "shape", inplace=lambda self, diagonal=0: self.copy_(tril(self, diagonal)))
def tril(input, diagonal=0, *, out=None):
    """tril(input, diagonal=0) -> Tensor

    The lower triangle of the last two dims (on and below the diagonal-th diagonal), zeros elsewhere."""
    return _tri(input, diagonal, False, "tril")


@define("triu", "shape", inplace=lambda self, diagonal=0: self.copy_(triu(self, diagonal)))
def triu(input, diagonal=0, *, out=None):
    """triu(input, diagonal=0) -> Tensor

    The upper triangle of the last two dims (on and above the diagonal-th diagonal), zeros elsewhere."""
    return _tri(input, diagonal, True, "triu")


@define("diagonal", "shape")
def diagonal(input, offset=0, dim1=0, dim2=1):
    """diagonal(input, offset=0, dim1=0, dim2=1) -> Tensor

    A view of the diagonal of dims dim1 and dim2 (offset above it if > 0), appended as the last dim."""
    nd = input.dim()
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = input.shape[d1], input.shape[d2]
    st = input._stride
    off = input._offset
    if offset >= 0:
        length = max(min(n1, n2 - offset), 0)
        if length:
            off += offset * st[d2]
    else:
        length = max(min(n1 + offset, n2), 0)
        if length:
            off -= offset * st[d1]
    keep = [k for k in range(nd) if k not in (d1, d2)]
    shape = tuple(input.shape[k] for k in keep) + (length,)
    stride = tuple(st[k] for k in keep) + (st[d1] + st[d2],)
    in_shape = tuple(input.shape)
    back = S._scatter_back(in_shape, lambda z: diagonal(z, offset, d1, d2))
    return S.make_view("Diagonal", input, shape, stride, off, back)


@define("outer", "linalg", out=True, aliases=("ger",))
def outer(input, vec2):
    """outer(input, vec2) -> Tensor

    The outer product of two 1-D tensors: input[i] * vec2[j]."""
    if input.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.dim()}-D" if input.dim() != 1
                           else f"outer: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return S.unsqueeze(input, 1) * vec2


def _beta_alpha(input, prod, beta, alpha):
    p = prod if alpha == 1 else prod * alpha
    if beta == 0:  # input ignored (its NaN too), but still broadcast
        return p + call("mul", call("isnan", input), 0.0)
    return p + (input if beta == 1 else input * beta)


def _blend_(name, first, second):
    """Tensor.<name>_(first, second, *, beta=1, alpha=1): the blend written into self (its shape
    must be the result's), with PyTorch's names for the operands."""
    import inspect

    def inplace(self, *args, beta=1, alpha=1, **operands):
        names = (first, second)[len(args):]
        if len(args) > 2 or set(operands) != set(names):
            raise TypeError(f"{name}_() takes ({first}, {second}, *, beta=1, alpha=1)")
        a, b = list(args) + [operands[n] for n in names]
        return self.copy_(globals()[name](self, a, b, beta=beta, alpha=alpha))   # (defined below)
    P = inspect.Parameter
    inplace.__signature__ = inspect.Signature(
        [P("self", P.POSITIONAL_OR_KEYWORD), P(first, P.POSITIONAL_OR_KEYWORD), P(second, P.POSITIONAL_OR_KEYWORD),
         P("beta", P.KEYWORD_ONLY, default=1), P("alpha", P.KEYWORD_ONLY, default=1)])
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = f"In-place {name}."
    return inplace


@define("addmv", "linalg", inplace=_blend_("addmv", "mat", "vec"))
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor

    beta * input + alpha * (mat @ vec); input is ignored when beta is 0."""
    return _beta_alpha(input, L.mv(mat, vec), beta, alpha)


@define("addr", "linalg", inplace=_blend_("addr", "vec1", "vec2"))
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """addr(input, vec1, vec2, *, beta=1, alpha=1) -> Tensor

    beta * input + alpha * outer(vec1, vec2)."""
    return _beta_alpha(input, outer(vec1, vec2), beta, alpha)


@define("baddbmm", "linalg", inplace=_blend_("baddbmm", "batch1", "batch2"))
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out_dtype=None, out=None):
    """baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor

    beta * input + alpha * bmm(batch1, batch2)."""
    if out_dtype is not None and out_dtype is not batch1.dtype:   # (a wider result: the operands widened first)
        return baddbmm(input.to(out_dtype), batch1.to(out_dtype), batch2.to(out_dtype), beta=beta, alpha=alpha, out=out)
    return _beta_alpha(input, L.bmm(batch1, batch2), beta, alpha)


@define("addbmm", "linalg", inplace=_blend_("addbmm", "batch1", "batch2"))
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor

    beta * input + alpha * sum over the batch of batch1[i] @ batch2[i]."""
    return _beta_alpha(input, sum_(L.bmm(batch1, batch2), 0), beta, alpha)


@define("kron", "linalg", out=True, dtypes="all")
def kron(input, other):
    """kron(input, other) -> Tensor

    The Kronecker product."""
    need_tensors("kron", ("input", input), ("other", other))
    nd = max(input.dim(), other.dim())
    a = S.reshape(input, (1,) * (nd - input.dim()) + tuple(input.shape))
    b = S.reshape(other, (1,) * (nd - other.dim()) + tuple(other.shape))
    ai, bi = [], []
    for sa, sb in zip(a.shape, b.shape):
        ai += [sa, 1]
        bi += [1, sb]
    p = S.reshape(a, tuple(ai)) * S.reshape(b, tuple(bi))
    return S.reshape(p, tuple(sa * sb for sa, sb in zip(a.shape, b.shape)))


@define("meshgrid", "shape", method=False)
def meshgrid(*tensors, indexing="ij"):
    """meshgrid(*tensors, indexing='ij') -> tuple of Tensors

    Coordinate grids (broadcast views) of 1-D tensors; indexing='xy' swaps the first two dims."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.dim()}D")
    ts = [S.reshape(t, (-1,)) for t in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    out = []
    for i, t in enumerate(ts):
        v = S.reshape(t, tuple(-1 if k == i else 1 for k in range(len(ts))))
        out.append(S.expand(v, shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


@define("atleast_1d", "shape", method=False)
def atleast_1d(*tensors):
    """atleast_1d(*tensors) -> Tensor or tuple

    Views with at least 1 dim."""
    return _atleast(tensors, 1)


@define("atleast_2d", "shape", method=False)
def atleast_2d(*tensors):
    """atleast_2d(*tensors) -> Tensor or tuple

    Views with at least 2 dims (1-D ones as rows)."""
    return _atleast(tensors, 2)


@define("atleast_3d", "shape", method=False)
def atleast_3d(*tensors):
    """atleast_3d(*tensors) -> Tensor or tuple

    Views with at least 3 dims (as PyTorch: (n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast(tensors, 3)


def _atleast(tensors, k):
    many = len(tensors) != 1 or isinstance(tensors[0], (list, tuple))
    ts = tuple(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = []
    for t in ts:
        n = t.dim()
        if n >= k:
            out.append(t)
        elif k == 1:
            out.append(S.reshape(t, (1,)))
        elif k == 2:
            out.append(S.reshape(t, (1,) * (2 - n) + tuple(t.shape)))
        else:
            shape = {0: (1, 1, 1), 1: (1,) + tuple(t.shape) + (1,), 2: tuple(t.shape) + (1,)}[n]
            out.append(S.reshape(t, shape))
    return tuple(out) if many else out[0]


@define("column_stack", "join", out=True, method=False)
def column_stack(tensors):
    """column_stack(tensors) -> Tensor

    1-D and 0-D tensors as columns, then joined along dim 1."""
    cols = [S.reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in tensors]
    return J.cat(cols, 1)


@define("dstack", "join", out=True, method=False)
def dstack(tensors):
    """dstack(tensors) -> Tensor

    The tensors (as atleast_3d) joined along dim 2."""
    return J.cat(list(_atleast(tuple(tensors), 3) if len(tensors) > 1 else (_atleast(tuple(tensors), 3),)), 2)
