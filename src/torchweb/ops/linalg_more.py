"""More linear-algebra and layout ops (issue 7), written from views, elementwise rows, sums and
matmul so their gradients come from those: diag, diag_embed, diagflat, block_diag,
cartesian_prod, cross (and linalg.cross), cdist, trace, tensordot, inner, vdot, chain_matmul
(and linalg.multi_dot), and the matrix norms of torch.linalg."""

import warnings

from .. import _dtype as D
from .._size import broadcast_shapes, wrap_dim
from .operands import common_device, is_tensor
from .elementwise import call
from .registry import define
from . import join as J, linalg as L, reduction as R, shape as S
from .._creation import arange, zeros, empty, ones_like
from . import layout
from .linalg_spectral import svdvals

_INF = float("inf")


def _arange(n, device):
    return arange(n, device=device)


def _zeros(shape, dtype, device):
    return zeros(tuple(shape), dtype=dtype, device=device)


def _embed_last(input, offset):
    """[..., n] -> [..., m, m] (m = n + |offset|) with input on the offset-th diagonal of the
    last two dims, zeros elsewhere (a where, so NaN and inf stay where they are)."""
    n = input.shape[-1]
    k = abs(offset)
    m = n + k
    x = input
    if k:
        x = J.cat([x, _zeros(tuple(x.shape[:-1]) + (k,), x.dtype, x.device)], -1)
    rows = S.reshape(_arange(m, input.device), (m, 1))
    cols = S.reshape(_arange(m, input.device), (1, m))
    on = (cols - rows) == offset
    # offset >= 0: out[a, a + offset] = x[a] (x along rows); else out[b - offset, b] = x[b]
    v = S.unsqueeze(x, -1) if offset >= 0 else S.unsqueeze(x, -2)
    return call("where", on, v, _zeros((), x.dtype, x.device))


@define("diag_embed", "shape")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor

    A tensor whose diagonals (offset, in dims dim1 and dim2) are input's last dim, zeros
    elsewhere."""
    nd = input.dim() + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = S.reshape(input, (1,)) if input.dim() == 0 else input
    out = _embed_last(x, offset)
    return S.movedim(out, (nd - 2, nd - 1), (d1, d2))


@define("diag", "shape")
def diag(input, diagonal=0, *, out=None):
    """diag(input, diagonal=0) -> Tensor

    A 1-D input: the square matrix with input on its diagonal-th diagonal. A 2-D input: a copy of
    its diagonal-th diagonal."""
    if input.dim() not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    if input.dim() == 1:
        return _embed_last(input, diagonal)
    return S.clone(layout.diagonal(input, diagonal, 0, 1))


@define("diagflat", "shape")
def diagflat(input, offset=0):
    """diagflat(input, offset=0) -> Tensor

    The square matrix with the flattened input on its offset-th diagonal."""
    return _embed_last(S.reshape(input, (-1,)), offset)


@define("block_diag", "shape", method=False)
def block_diag(*tensors):
    """block_diag(*tensors) -> Tensor

    The tensors (0-D as 1x1, 1-D as one row) as blocks along the diagonal of a matrix, zeros
    elsewhere."""
    for i, t in enumerate(tensors):
        if not is_tensor(t):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
    if not tensors:
        return empty((1, 0))
    common_device(*tensors, what="block_diag")
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = D.promote_types(dtype, t.dtype)
    dev = tensors[0].device
    mats = [S.reshape(t, (1, 1)) if t.dim() == 0 else S.unsqueeze(t, 0) if t.dim() == 1 else t for t in tensors]
    mats = [m if m.dtype is dtype else m.to(dtype) for m in mats]
    total = sum(m.shape[1] for m in mats)
    rows, before = [], 0
    for m in mats:
        r, c = m.shape
        parts = []
        if before:
            parts.append(_zeros((r, before), dtype, dev))
        parts.append(m)
        if total - before - c:
            parts.append(_zeros((r, total - before - c), dtype, dev))
        rows.append(J.cat(parts, 1) if len(parts) > 1 else m)
        before += c
    return J.cat(rows, 0) if len(rows) > 1 else S.clone(rows[0]) if rows[0] is tensors[0] else rows[0]


@define("cartesian_prod", "shape", method=False)
def cartesian_prod(*tensors):
    """cartesian_prod(*tensors) -> Tensor

    The Cartesian product of 1-D tensors: one row per combination (a 1-D tensor alone is
    returned as is)."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    grids = layout.meshgrid(*tensors, indexing="ij")
    return J.stack([S.reshape(g, (-1,)) for g in grids], 1)


def _cross(a, b, d):
    def part(t, i):
        return S.narrow(t, d, i, 1)
    a0, a1, a2 = part(a, 0), part(a, 1), part(a, 2)
    b0, b1, b2 = part(b, 0), part(b, 1), part(b, 2)
    return J.cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def linalg_cross(input, other, *, dim=-1):
    """linalg.cross(input, other, *, dim=-1) -> Tensor: the cross product of 3-vectors along dim
    (input and other broadcast)."""
    common_device(input, other, what="linalg.cross")
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, max(input.dim(), 1))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                           f"Got {input.shape[d]} and {other.shape[d]}")
    shape = broadcast_shapes(input.shape, other.shape)
    a = input if tuple(input.shape) == tuple(shape) else S.expand(input, shape)
    b = other if tuple(other.shape) == tuple(shape) else S.expand(other, shape)
    if a.dtype is not b.dtype:
        dt = D.promote_types(a.dtype, b.dtype)
        a, b = a.to(dt), b.to(dt)
    return _cross(a, b, d)


@define("cross", "linalg")
def cross(input, other, dim=None, *, out=None, axis=None):
    """cross(input, other, dim=None) -> Tensor

    The cross product of 3-vectors along dim; without dim (deprecated, as in PyTorch) the first
    dim of size 3."""
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
                      "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
                      "change to agree with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        if input.dim() == other.dim():
            shape = broadcast_shapes(input.shape, other.shape)
            for k, s in enumerate(shape):
                if s == 3:
                    dim = k
                    break
            else:
                raise RuntimeError("no dimension of size 3 in input")
        else:
            dim = -1
    return linalg_cross(input, other, dim=dim)


_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


@define("cdist", "linalg", dtypes="floating", method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary') -> Tensor

    The p-norm distance between each row of x1 [..., P, M] and each row of x2 [..., R, M]:
    [..., P, R]. For p=2, as PyTorch, the matmul expansion |a|^2 + |b|^2 - 2 a.b is used when
    P or R is above 25 (or always/never, by compute_mode), else the norm of the differences."""
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    common_device(x1, x2, what="cdist")
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype.word}")
    if not x2.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X2 got: {x2.dtype.word}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    P, R_, M = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    a = S.expand(x1, batch + (P, M)) if tuple(x1.shape[:-2]) != tuple(batch) else x1
    b = S.expand(x2, batch + (R_, M)) if tuple(x2.shape[:-2]) != tuple(batch) else x2
    mm = compute_mode == "use_mm_for_euclid_dist" or (compute_mode == _MODES[0] and (P > 25 or R_ > 25))
    if p == 2 and mm:
        return _euclidean_mm(a, b)
    diff = S.unsqueeze(a, -2) - S.unsqueeze(b, -3)
    return R.norm(diff, float(p), -1)


def _euclidean_mm(a, b):
    """PyTorch's _euclidean_dist: [-2a, |a|^2, 1] @ [b, 1, |b|^2]^T, clamped at 0, sqrt."""
    an = R.sum(a * a, -1, keepdim=True)
    bn = R.sum(b * b, -1, keepdim=True)
    a_ = J.cat([a * -2, an, ones_like(an)], -1)
    b_ = J.cat([b, ones_like(bn), bn], -1)
    d = L.matmul(a_, S.transpose(b_, -1, -2))
    return call("sqrt", call("clamp_min", d, 0.0))


@define("trace", "linalg", dtypes="all")
def trace(input):
    """trace(input) -> Tensor

    The sum of the diagonal of a matrix (integers give int64)."""
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return R.sum(layout.diagonal(input, 0, 0, 1))


def _prod(v):
    p = 1
    for s in v:
        p *= s
    return p


@define("tensordot", "linalg", method=False)
def tensordot(a, b, dims=2, out=None):
    """tensordot(a, b, dims=2) -> Tensor

    The sum of products over the last `dims` dims of a and the first `dims` dims of b, or over
    the dims paired in dims=([a dims], [b dims])."""
    common_device(a, b, what="tensordot")
    if is_tensor(dims):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(range(a.dim() - dims, a.dim()))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da = [wrap_dim(d, a.dim()) for d in da]
        db = [wrap_dim(d, b.dim()) for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[i]} in dim {i} "
                               f"and second has size {b.shape[j]} in dim {j}")
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    ksz = _prod(a.shape[d] for d in da)
    A = S.reshape(S.permute(a, tuple(fa + da)), (_prod(a.shape[d] for d in fa), ksz))
    B = S.reshape(S.permute(b, tuple(db + fb)), (ksz, _prod(b.shape[d] for d in fb)))
    return S.reshape(L.mm(A, B), tuple(a.shape[d] for d in fa) + tuple(b.shape[d] for d in fb))


@define("inner", "linalg")
def inner(input, other, *, out=None):
    """inner(input, other) -> Tensor

    The sum of products over the last dims of input and other (a product if either is 0-D)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


@define("vdot", "linalg")
def vdot(input, other, *, out=None):
    """vdot(input, other) -> Tensor

    The dot product of two 1-D tensors (the first conjugated: the same as dot for real tensors)."""
    return L.dot(input, other)


def multi_dot(tensors, *, out=None):
    """linalg.multi_dot(tensors) -> Tensor: the product of two or more matrices (the first and
    the last may be 1-D, as a row and a column vector)."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    if tensors[0].dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {tensors[0].dim()}D")
    if tensors[-1].dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {tensors[-1].dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    first, last = tensors[0], tensors[-1]
    ms = [S.unsqueeze(first, 0) if first.dim() == 1 else first] + tensors[1:-1] + \
         [S.unsqueeze(last, 1) if last.dim() == 1 else last]
    dtype = ms[0].dtype
    for i, m in enumerate(ms):
        if m.dtype is not dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{dtype.c_name} and tensor {i} {m.dtype.c_name}")
    for i in range(n - 1):
        if ms[i].shape[1] != ms[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                               f"{list(tensors[i + 1].shape)} cannot be multiplied")
    r = ms[0]
    for m in ms[1:]:
        r = L.mm(r, m)
    if first.dim() == 1:
        r = S.squeeze(r, 0)
    if last.dim() == 1:
        r = S.squeeze(r, -1)
    return r


@define("chain_matmul", "linalg", method=False)
def chain_matmul(*matrices, out=None):
    """chain_matmul(*matrices) -> Tensor

    The product of two or more 2-D matrices (deprecated in PyTorch for linalg.multi_dot)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return S.clone(matrices[0])
    return multi_dot(matrices)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """linalg.matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False): 'fro', 'nuc', 1, -1, 2, -2,
    inf, -inf."""
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.word}")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " + " ".join(str(d) for d in dim))
    d0, d1 = wrap_dim(dim[0], A.dim()), wrap_dim(dim[1], A.dim())
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return R.norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):   # from the singular values (ops/linalg_spectral.py)
        sv = svdvals(S.movedim(A, (d0, d1), (-2, -1)))
        r = R.sum(sv, -1) if ord == "nuc" else R.amax(sv, -1) if ord == 2 else R.amin(sv, -1)
        return S.unsqueeze(S.unsqueeze(r, min(d0, d1)), max(d0, d1)) if keepdim else r
    if isinstance(ord, str) or ord not in (1, -1, _INF, -_INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # 1 / -1: the largest / smallest column sum (over rows d0), inf / -inf: row sums (over d1)
    over, then = (d0, d1) if abs(ord) == 1 else (d1, d0)
    s = R.sum(call("abs", A), over, keepdim=True)
    r = R.amax(s, then, keepdim=True) if ord > 0 else R.amin(s, then, keepdim=True)
    return r if keepdim else S.squeeze(S.squeeze(r, max(d0, d1)), min(d0, d1))


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """linalg.norm: a vector norm for a 1-D input or an int dim, a matrix norm for a 2-D input
    with ord given or a 2-tuple dim."""
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
    if dim is None and ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    if ord is None:
        if dtype is not None:
            A = A.to(dtype)
        return R.norm(A, 2, dim, keepdim)
    if isinstance(dim, tuple) and len(dim) == 2 or (dim is None and A.dim() == 2):
        return matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord={ord!r} is a matrix norm: dim must be a 2-tuple")
    if dtype is not None:
        A = A.to(dtype)
    return R.norm(A, ord, dim, keepdim)
