"""Reductions: sum, mean, prod, max/min (values and indices), amax/amin, argmax/argmin, all,
any, var/std, logsumexp, norm. The kernel reduces the trailing dims of a permuted view;
logsumexp and most norms are compositions, so autograd comes with them. var/std/var_mean/
std_mean run as one kernel where the backend has one (webgpu: kernels/moments.py), else as a
composite, with PyTorch's backward formulas either way."""

import builtins
from collections import namedtuple

from .. import _dtype as D
from .._size import Size, as_shape, contiguous_strides, numel, wrap_dim
from ..autograd import grad_mode
from ..autograd.grad_mode import _state as _grad
from ..autograd.function import Function
from ..backends import backend_for
from . import lowering
from .operands import compute_class, empty, is_tensor
from . import elementwise as E
from .elementwise import K   # (the rules' kernel runner: recorded under create_graph)
from . import shape as S
from .registry import define
from .._tensor import Tensor
from .._creation import arange
from .elementwise import call

_values_indices = namedtuple("return_types", ["values", "indices"])


def _dims(x, dim):
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return list(range(x.dim()))
    if isinstance(dim, (tuple, list)):
        dims = [wrap_dim(d, x.dim()) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
        return sorted(dims) if x.dim() else []   # a 0-d tensor's dim 0 / -1 reduces nothing
    d = wrap_dim(dim, x.dim())
    return [d] if x.dim() else []


# A reduction's layout, decided once per call signature (a loop calls an op with the same shapes
# again and again): (x's shape, strides, dim, keepdim) -> (dims, the permuted view's shape and
# strides (None: x itself, its reduced dims already last and in order), the result's shape,
# strides and numel, the number of reduced dims, x's numel, and lowering.reduce's sizes:
# (elements reduced per output, outputs), None for an empty result). dim in a key is None, an
# int (the user's, not wrapped) or a tuple of wrapped, sorted dims; keys with other dims
# (lists, bools, floats equal to an int) are never made, so no call skips _dims' checks.
_LAYOUTS = {}


def _layout(x, dim, keepdim):
    """The layout of a reduction of x over dim as the ops take it (None, int, tuple, list)."""
    if dim is None or type(dim) is int:
        key = (x._shape, x._stride, dim, keepdim)
        lay = _LAYOUTS.get(key)
        return lay if lay is not None else _make_layout(key, x, _dims(x, dim), keepdim)
    return _layout_dims(x, _dims(x, dim), keepdim)


def _layout_dims(x, dims, keepdim):
    """The layout for dims already wrapped and sorted (a list or tuple)."""
    key = (x._shape, x._stride, tuple(dims), keepdim)
    lay = _LAYOUTS.get(key)
    return lay if lay is not None else _make_layout(key, x, dims, keepdim)


def _make_layout(key, x, dims, keepdim):
    shape, stride = tuple(x._shape), x._stride
    keep = [d for d in range(len(shape)) if d not in dims]
    order = keep + list(dims)
    if order == list(range(len(shape))):
        vshape = vstride = None
    else:
        vshape, vstride = Size(shape[d] for d in order), tuple(stride[d] for d in order)
    oshape = Size(1 if d in dims else s for d, s in enumerate(shape)) if keepdim else Size(shape[d] for d in keep)
    n, total = numel(oshape), numel(shape)
    lay = (tuple(dims), vshape, vstride, oshape, contiguous_strides(oshape), n, len(dims), total,
           (total // n, n) if n else None)
    if len(_LAYOUTS) > 4096:   # programs with ever new shapes: stay bounded
        _LAYOUTS.clear()
    _LAYOUTS[key] = lay
    return lay


def _reduce(kind, x, lay, out_dtype, acc_cls=None):
    """The kernel call for a layout from _layout: no autograd."""
    _, vshape, vstride, oshape, _, n, nred, _, sizes = lay
    xp = x if vstride is None else x._view(vshape, vstride, x._offset)
    # (a keepdim result is made in its shape: the kernel writes the same contiguous values)
    dev = x.device
    out = Tensor._new(backend_for(dev.type).empty_storage(n, out_dtype), oshape, out_dtype, dev)
    if acc_cls is None:
        acc_cls = _ACC.get((kind, x.dtype, out_dtype)) or _acc_class(kind, x.dtype, out_dtype)
    lowering.reduce(kind, out, xp, nred, acc_cls, sizes)
    return out


_ACC = {}   # (kind, input dtype, result dtype) -> the class the kernel accumulates in


def _acc_class(kind, in_dtype, out_dtype):
    acc = _ACC[(kind, in_dtype, out_dtype)] = compute_class(
        in_dtype if kind in ("max", "min", "argmax", "argmin") else out_dtype, logical=kind in ("all", "any"))
    return acc


def new_tensor(shape, strides, n, dtype, device):
    """operands.empty for a shape already checked (a Size), its contiguous strides and numel at
    hand (a cached layout's): the result of a reduction or softmax, made without recomputing
    them (strides: Tensor._new finds them in _size's cache, as a call's)."""
    return Tensor._new(backend_for(device.type).empty_storage(n, dtype), shape, dtype, device)


def raw_reduce(kind, x, dims, keepdim, out_dtype, acc_cls=None):
    """The kernel call, no autograd: reduce x over dims (a sorted list of wrapped dims)."""
    return _reduce(kind, x, _layout_dims(x, dims, keepdim), out_dtype, acc_cls)


def _keepdim_shape(x, dims):
    return tuple(1 if d in dims else s for d, s in enumerate(x.shape))


def _expand_back(g, x, dims, keepdim):
    if not keepdim:
        g = S.reshape(g, _keepdim_shape(x, dims))
    return S.expand(g, x.shape)


def _sum_dtype(x, dtype):
    if dtype is not None:
        return D.as_dtype(dtype)
    return D.int64 if not x.dtype.is_floating_point else x.dtype


class _Sum(Function):
    _backward_name = "SumBackward1"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.meta = (x.shape, dims, keepdim)
        src = x if dtype is None or dtype is x.dtype else E.copy_into(empty(x.shape, dtype, x.device), x)
        return raw_reduce("sum", src, dims, keepdim, dtype or x.dtype)

    @staticmethod
    def backward(ctx, g):
        shape, dims, keepdim = ctx.meta
        if not keepdim:
            g = S.reshape(g, tuple(1 if d in dims else s for d, s in enumerate(shape)))
        return S.expand(g, shape), None, None, None


def _named(fn, backward_name):
    """fn under another of PyTorch's node names (SumBackward0 for a full sum, ...)."""
    return type(fn.__name__, (fn,), {"_backward_name": backward_name})


_SumAll = _named(_Sum, "SumBackward0")


@define("sum", "reduction", out=True, doc='sum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor\n\nThe sum over dim (an int or tuple; all dims by default). Integers and bool sum to int64.')
def sum(input, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    if dtype is not None:
        if D.as_dtype(dtype) in D.HALF_FLOATS and input.dtype is D.float32:
            return sum(input, dim, keepdim).to(dtype)   # accumulated in float, rounded once
        dtype = D.as_dtype(dtype)
    lay = _layout(input, dim, keepdim)
    out_dtype = dtype or (input.dtype if input.dtype.category == 2 else D.int64)   # integers and bool: int64
    if (input._requires_grad or input._base is not None and input.requires_grad) and _grad["enabled"]:
        return (_SumAll if dim is None else _Sum).apply(input, lay[0], keepdim, out_dtype)
    if out_dtype is not input.dtype:   # summed in the result's dtype (a contiguous copy: its own layout)
        input = E.copy_into(empty(input.shape, out_dtype, input.device), input)
        lay = _layout_dims(input, lay[0], keepdim)
    return _reduce("sum", input, lay, out_dtype)


@define("mean", "reduction", out=True, dtypes="floating", doc='mean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor\n\nThe mean over dim (floating dtypes only).')
def mean(input, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    if dtype is not None:
        if D.as_dtype(dtype) in D.HALF_FLOATS and input.dtype is D.float32:
            return mean(input, dim, keepdim).to(dtype)   # accumulated in float, rounded once
        input = input.to(dtype)
    if input.dtype.category != 2:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {input.dtype.word}")
    lay = _layout(input, dim, keepdim)
    if (input._requires_grad or input._base is not None and input.requires_grad) and _grad["enabled"]:
        return (_MeanAll if dim is None else _Mean).apply(input, lay[0], keepdim)
    return _reduce("mean", input, lay, input.dtype)


class _Mean(Function):
    _backward_name = "MeanBackward1"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        ctx.meta = (x.shape, dims, keepdim)
        return raw_reduce("mean", x, dims, keepdim, x.dtype)

    @staticmethod
    def backward(ctx, g):
        shape, dims, keepdim = ctx.meta
        if not keepdim:
            g = S.reshape(g, tuple(1 if d in dims else s for d, s in enumerate(shape)))
        return S.expand(g / numel([shape[d] for d in dims]), shape), None, None


_MeanAll = _named(_Mean, "MeanBackward0")


class _Prod(Function):
    _backward_name = "ProdBackward1"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        out = raw_reduce("prod", x, dims, keepdim, dtype)
        ctx.save_for_backward(x, out)
        ctx.meta = (dims, keepdim)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        dims, keepdim = ctx.meta
        g = _expand_back(g, x, dims, keepdim)
        out = _expand_back(out, x, dims, keepdim)
        zero = x == 0
        nz = _expand_back(raw_reduce("sum", zero, dims, True, D.int64), x, dims, False) if dims else zero.to(D.int64)
        nonzero = K.run("where", zero, 1.0, x)
        if grad_mode._state["enabled"]:   # create_graph: the product of the others recorded
            others = nonzero
            for d in dims:
                others = prod(others, d, keepdim=True)
        else:
            others = raw_reduce("prod", nonzero, dims, True, x.dtype)
        others = _expand_back(others, x, dims, False)
        grad = K.run("where", nz == 0, out / nonzero, K.run("where", E.run("logical_and", nz == 1, zero), others, 0.0))
        return g * grad, None, None, None


_ProdAll = _named(_Prod, "ProdBackward0")


def _int_dim(name, dim):
    """PyTorch's argument check for reductions that take one int dim (prod, argmax, argmin)."""
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool)):
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")


@define("prod", "reduction", out=True, doc='prod(input, dim=None, keepdim=False, *, dtype=None) -> Tensor\n\nThe product over one dim (or all). Integers and bool give int64.')
def prod(input, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    _int_dim("prod", dim)
    dims = _dims(input, dim)
    out_dtype = _sum_dtype(input, dtype)
    if grad_mode.is_grad_enabled() and input.requires_grad:
        return (_ProdAll if dim is None else _Prod).apply(input, dims, keepdim, out_dtype)
    return raw_reduce("prod", input, dims, keepdim, out_dtype)


def _check_nonempty(x, dims, name, specified=True):
    """max/min-like reductions have no identity: refuse empty reductions, as PyTorch does
    (RuntimeError when no dim was given, IndexError naming the empty dim otherwise)."""
    if not specified:
        if x.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")




class _MaxMinDim(Function):
    _double_backward = True
    @staticmethod
    def forward(ctx, x, kind, d, keepdim):
        values = raw_reduce(kind, x, [d], keepdim, x.dtype)
        indices = raw_reduce("arg" + kind, x, [d], keepdim, D.int64)
        ctx.save_for_backward(indices)
        ctx.meta = (x.shape, d, keepdim, x.dtype)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, g, _gi):
        (indices,) = ctx.saved_tensors
        shape, d, keepdim, dtype = ctx.meta
        if not keepdim:
            g = S.unsqueeze(g, d)
            indices = S.unsqueeze(indices, d)
        iota = _iota_along(shape, d, g.device)
        return K.run("where", iota == indices, g, 0.0), None, None, None


def _iota_along(shape, d, device):
    n = shape[d]
    v = arange(n, dtype=D.int64, device=device)
    return S.reshape(v, tuple(n if i == d else 1 for i in range(len(shape))))


class _AmaxAmin(Function):
    _double_backward = True
    @staticmethod
    def forward(ctx, x, kind, dims, keepdim):
        out = raw_reduce(kind, x, dims, keepdim, x.dtype)
        ctx.save_for_backward(x, out)
        ctx.meta = (dims, keepdim)
        return out

    @staticmethod
    def backward(ctx, g, *_):
        x, out = ctx.saved_tensors
        dims, keepdim = ctx.meta
        out = _expand_back(out, x, dims, keepdim)
        g = _expand_back(g, x, dims, keepdim)
        hit = (x == out).to(g.dtype)
        count = _expand_back(raw_reduce("sum", hit, dims, True, g.dtype), x, dims, True) if dims else hit
        return g * hit / count, None, None, None


# PyTorch's node names: max(x, dim), max(x), amax(x)
_MAX_MIN_DIM = {k: _named(_MaxMinDim, k.capitalize() + "Backward0") for k in ("max", "min")}
_MAX_MIN_ALL = {k: _named(_AmaxAmin, k.capitalize() + "Backward1") for k in ("max", "min")}
_AMAX_AMIN = {k: _named(_AmaxAmin, "A" + k + "Backward0") for k in ("max", "min")}


def _maxmin(kind, x, dim=None, keepdim=False, other=None):
    if other is not None or is_tensor(dim):
        return call("maximum" if kind == "max" else "minimum", x, other if other is not None else dim)
    if dim is None:
        lay = _layout(x, None, False)
        if not lay[7]:
            _check_nonempty(x, lay[0], kind, specified=False)
        if x.requires_grad and grad_mode.is_grad_enabled():
            return _MAX_MIN_ALL[kind].apply(x, kind, lay[0], False)
        return _reduce(kind, x, lay, x.dtype)
    d = _dims(x, dim)
    _check_nonempty(x, d, kind)
    d = d[0] if d else 0
    if x.dim() == 0:
        return _values_indices(x.clone(), _zeros_like_int(x))
    if x.requires_grad and grad_mode.is_grad_enabled():
        return _values_indices(*_MAX_MIN_DIM[kind].apply(x, kind, d, keepdim))
    lay = _layout_dims(x, (d,), keepdim)
    return _values_indices(_reduce(kind, x, lay, x.dtype), _reduce("arg" + kind, x, lay, D.int64))


def _zeros_like_int(x):
    z = empty((), D.int64, x.device)
    return E.fill(z, 0)


@define("max", "reduction", out=True, doc='max(input) -> Tensor; max(input, dim, keepdim=False) -> (values, indices); max(input, other) -> Tensor\n\nThe largest element (NaN propagates), per dim with its index, or elementwise with other.')
def max(input, dim=None, keepdim=False, *, other=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _maxmin("max", input, dim, keepdim, other)


@define("min", "reduction", out=True, doc='min(input) -> Tensor; min(input, dim, keepdim=False) -> (values, indices); min(input, other) -> Tensor\n\nThe smallest element (NaN propagates), per dim with its index, or elementwise with other.')
def min(input, dim=None, keepdim=False, *, other=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _maxmin("min", input, dim, keepdim, other)


def _given(dim):
    return not (dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0))


@define("amax", "reduction", out=True, doc='amax(input, dim=(), keepdim=False) -> Tensor\n\nThe largest element over dim (all dims by default); the gradient is shared among ties.')
def amax(input, dim=(), keepdim=False, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _amax_amin("max", input, dim, keepdim)


@define("amin", "reduction", out=True, doc='amin(input, dim=(), keepdim=False) -> Tensor\n\nThe smallest element over dim (all dims by default); the gradient is shared among ties.')
def amin(input, dim=(), keepdim=False, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _amax_amin("min", input, dim, keepdim)


def _amax_amin(kind, x, dim, keepdim):
    lay = _layout(x, dim, keepdim)
    if not lay[7]:
        _check_nonempty(x, lay[0], "a" + kind, _given(dim))
    if (x._requires_grad or x._base is not None and x.requires_grad) and _grad["enabled"]:
        return _AMAX_AMIN[kind].apply(x, kind, lay[0], keepdim)
    return _reduce(kind, x, lay, x.dtype)


def _arg(kind, x, dim, keepdim):
    _int_dim(kind, dim)
    if x.dtype is D.bool:
        raise RuntimeError(f"{kind}(): does not support bool input")
    if dim is None:
        if x.numel() == 0:  # IndexError here, unlike max()'s RuntimeError: PyTorch's words
            raise IndexError(f"{kind}(): Expected reduction dim to be specified for input.numel() == 0.")
        flat = S.reshape(x, -1) if x.dim() else S.reshape(x, 1)
        r = raw_reduce(kind, flat, [0], False, D.int64)
        if keepdim:
            r = S.reshape(r, (1,) * x.dim())
        return r
    dims = _dims(x, dim)
    _check_nonempty(x, dims, kind)
    if x.dim() == 0:
        return _zeros_like_int(x)
    return raw_reduce(kind, x, dims, keepdim, D.int64)


@define("argmax", "reduction", out=True, dtypes="numeric", doc='argmax(input, dim=None, keepdim=False) -> Tensor\n\nThe index of the first largest element (of the flattened input without dim).')
def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _arg("argmax", input, dim, keepdim)


@define("argmin", "reduction", out=True, dtypes="numeric", doc='argmin(input, dim=None, keepdim=False) -> Tensor\n\nThe index of the first smallest element (of the flattened input without dim).')
def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _arg("argmin", input, dim, keepdim)


@define("all", "reduction", out=True, doc='all(input, dim=None, keepdim=False) -> Tensor\n\nWhether every element is nonzero.')
def all(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _all_any("all", input, dim, keepdim)


def _all_any(kind, x, dim, keepdim):
    out = D.bool if x.dtype is not D.uint8 else D.uint8
    if isinstance(dim, (tuple, list)) and len(dim) == 0:   # PyTorch 2.13: dim=() reduces nothing
        return E.run("ne", x, 0).to(out)
    return raw_reduce(kind, x, _dims(x, dim), keepdim, out, "b")


@define("any", "reduction", out=True, doc='any(input, dim=None, keepdim=False) -> Tensor\n\nWhether any element is nonzero.')
def any(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _all_any("any", input, dim, keepdim)


def _var_args(x, dim, unbiased, correction):
    """(dim, correction) from var/std's overloads; refuses non-float input."""
    if not (isinstance(unbiased, bool) or unbiased is None) and dim is None:
        dim, unbiased = unbiased, None  # var(x, dims) positional, as PyTorch allows
    if isinstance(dim, bool):
        dim, unbiased = None, dim      # var(x, False): the old (input, unbiased) overload
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if not x.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return dim, correction


def _var_parts(x, dims, correction):
    """(v, m, scale): var = v * scale * scale, std = sqrt(v) * scale and mean = m * scale,
    with v and m the variance and mean of x / scale (keepdim shapes). The scale is the largest
    |x| of each slice, so squares and sums of values near 1e30 don't
    overflow float32 where PyTorch, which accumulates in double (Welford), stays finite."""
    n = numel([x.shape[d] for d in dims])
    scale = None
    if x.numel():   # (an empty slice has numel 0 too)
        with grad_mode.no_grad():
            scale = raw_reduce("max", E.run("abs", x), dims, True, x.dtype)
            scale = E.run("where", scale == 0, 1.0, scale)
        x = x / scale
    m = mean(x, dims, keepdim=True)
    centered = x - m
    ss = sum(centered * centered, dims, keepdim=True)
    denom = n - correction if n > correction else 0  # PyTorch clamps: fewer samples than correction gives inf/NaN
    return (ss / denom if denom > 0 else ss / 0.0), m, scale


def _drop_dims(t, dims, keepdim):
    return t if keepdim else S.reshape(t, [s for i, s in enumerate(t.shape) if i not in dims])


_ROWS = {}   # (x's shape, strides, dims, keepdim) -> _rows_layout's answer (as _LAYOUTS)


def _rows_layout(x, dims, keepdim):
    """How the moments kernel sees x: (n, rows, the permuted view's shape and strides (kept dims
    first), whether the reduced dims must be copied to merge, the rows view's shape and strides
    (None: x itself), the result's shape and strides)."""
    key = (x._shape, x._stride, dims, keepdim)
    lay = _ROWS.get(key)
    if lay is not None:
        return lay
    shape, stride = tuple(x._shape), x._stride
    keep = [d for d in range(len(shape)) if d not in dims]
    order = keep + list(dims)
    vshape, vstride = tuple(shape[d] for d in order), tuple(stride[d] for d in order)
    expected, clone = 1, False
    for d in reversed(dims):
        if shape[d] != 1 and stride[d] != expected:
            clone = True
            break
        expected *= shape[d]
    n = numel([shape[d] for d in dims])
    rshape, rstride = vshape[:len(keep)] + (n,), vstride[:len(keep)] + (1,)
    if rshape == shape and rstride == stride:
        rshape = rstride = None
    oshape = _keepdim_shape(x, dims) if keepdim else tuple(s for d, s in enumerate(shape) if d not in dims)
    lay = (n, numel(shape) // n if n else 0, vshape, vstride, clone, rshape, rstride, Size(oshape),
           contiguous_strides(oshape))
    if len(_ROWS) > 4096:
        _ROWS.clear()
    _ROWS[key] = lay
    return lay


def _moments_kernel(x, dims, keepdim, correction, std, with_mean):
    """(var or std,) or (var or std, mean) of x over dims from the backend's one kernel, or
    None where it has none that fits (the cpu device, empty inputs or slices, other dtypes)."""
    if x.dtype is not D.float32 and x.dtype is not D.float16:
        return None
    be = backend_for(x.device.type)
    n, n_rows, vshape, vstride, clone, rshape, rstride, oshape, ostride = _rows_layout(x, tuple(dims), keepdim)
    if not n_rows or not be.moments_fits(n, n_rows):
        return None
    if clone:   # the reduced dims don't merge into one of stride 1: a contiguous copy's do
        xp = E.copy_of(x._view(vshape, vstride, x._offset))
        rows = xp._view(vshape[:len(vshape) - len(dims)] + (n,), tuple(xp._stride[:len(vshape) - len(dims)]) + (1,),
                        xp._offset)
    else:
        rows = x if rshape is None else x._view(rshape, rstride, x._offset)
    m = n_rows * 2 if with_mean else n_rows
    out = new_tensor(Size((m,)), (1,), m, x.dtype, x.device)
    be.moments(out, rows, builtins.max(0.0, n - correction), std, with_mean)
    if not with_mean:
        return (out._view(oshape, ostride, 0),)
    return out._view(oshape, ostride, 0), out._view(oshape, ostride, n_rows)


def _moments_composite(x, dims, keepdim, correction, std, with_mean):
    """The same from reductions, in float32 for float16 input (PyTorch accumulates half in
    float and rounds once)."""
    half = x.dtype in D.HALF_FLOATS
    v, m, scale = _var_parts(x.to(D.float32) if half else x, dims, correction)
    r = E.run("sqrt", v) if std else v
    if scale is not None:
        r, m = (r * scale if std else r * scale * scale), m * scale
    outs = (r, m) if with_mean else (r,)
    return tuple(_drop_dims(t, dims, keepdim).to(x.dtype) if half else _drop_dims(t, dims, keepdim) for t in outs)


def _moments_forward(x, dims, keepdim, correction, std, with_mean):
    outs = _moments_kernel(x, dims, keepdim, correction, std, with_mean)
    return outs if outs is not None else _moments_composite(x, dims, keepdim, correction, std, with_mean)


class _Moments(Function):
    """var/std (and mean); backward: PyTorch's var_backward / std_backward (and the mean's),
    on a mean of x computed again."""
    _double_backward = True

    @staticmethod
    def forward(ctx, x, dims, keepdim, correction, std, with_mean, dim_given):
        outs = _moments_forward(x, dims, keepdim, correction, std, with_mean)
        ctx.save_for_backward(x, outs[0])
        ctx.meta = (dims, keepdim, correction, std, dim_given)
        ctx.set_materialize_grads(False)
        return outs if with_mean else outs[0]

    @staticmethod
    def backward(ctx, g, gm=None):
        x, r = ctx.saved_tensors
        dims, keepdim, correction, std, dim_given = ctx.meta
        n = numel([x.shape[d] for d in dims])
        grad = None
        if g is not None:
            g = _expand_back(g, x, dims, keepdim)
            if std:   # d std = d var / (2 std), 0 where std is 0
                r = _expand_back(r, x, dims, keepdim)
                g = K.run("where", r == 0, 0.0, g / (r * 2))
            centered = x - _expand_back(mean(x, dims, keepdim=True), x, dims, True) if x.numel() else x
            dof = n - correction
            if (not dim_given or x.dim() == 0) and dof <= 0:   # PyTorch: NaN where x is its mean, else inf
                grad = K.run("where", centered == 0, g * float("nan"), g * float("inf"))
            else:
                grad = g * (2.0 / dof if dof else float("inf")) * centered
        if gm is not None:
            gm = _expand_back(gm, x, dims, keepdim) / n
            grad = gm if grad is None else grad + gm
        return grad, None, None, None, None, None, None


# PyTorch's node names, by (std, with_mean)
_MOMENTS = {(False, False): _named(_Moments, "VarBackward0"), (True, False): _named(_Moments, "StdBackward0"),
            (False, True): _named(_Moments, "VarMeanBackward0"), (True, True): _named(_Moments, "StdMeanBackward0")}


def _moments(x, dim, unbiased, keepdim, correction, want):
    """var or std (want 'v' or 's'), with the mean after if want ends in 'm': one kernel where
    the backend has one that fits (kernels/moments.py), else a composite of reductions."""
    dim, correction = _var_args(x, dim, unbiased, correction)
    dims = _layout(x, dim, keepdim)[0]
    std, with_mean = want[0] == "s", want[-1] == "m"
    if x.requires_grad and grad_mode.is_grad_enabled():
        outs = _MOMENTS[(std, with_mean)].apply(x, dims, keepdim, correction, std, with_mean, dim is not None)
        return list(outs) if with_mean else [outs]
    return list(_moments_forward(x, dims, keepdim, correction, std, with_mean))


@define("var", "reduction", out=True, dtypes="floating", doc="var(input, dim=None, *, correction=1, keepdim=False) -> Tensor\n\nThe variance over dim, with Bessel's correction by default (unbiased=False or correction=0 for none).")
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _moments(input, dim, unbiased, keepdim, correction, "v")[0]


@define("std", "reduction", out=True, dtypes="floating", doc="std(input, dim=None, *, correction=1, keepdim=False) -> Tensor\n\nThe standard deviation over dim, with Bessel's correction by default.")
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return _moments(input, dim, unbiased, keepdim, correction, "s")[0]


@define("var_mean", "reduction", dtypes="floating", method=False, doc="var_mean(input, dim=None, *, correction=1, keepdim=False) -> (Tensor, Tensor)\n\nvar and mean together.")
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return tuple(_moments(input, dim, unbiased, keepdim, correction, "vm"))


@define("std_mean", "reduction", dtypes="floating", method=False, doc="std_mean(input, dim=None, *, correction=1, keepdim=False) -> (Tensor, Tensor)\n\nstd and mean together.")
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return tuple(_moments(input, dim, unbiased, keepdim, correction, "sm"))


@define("logsumexp", "reduction", out=True, doc='logsumexp(input, dim, keepdim=False) -> Tensor\n\nlog(sum(exp(input), dim)), computed stably.')
def logsumexp(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    if dim is None and axis is None:
        raise TypeError("logsumexp() missing 1 required positional argument: 'dim'")
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    if not input.dtype.is_floating_point:
        input = input.to(D.default_float())
    dims = _dims(input, dim)
    if input.numel() == 0:
        return call("log", sum(call("exp", input), dims, keepdim))
    with grad_mode.no_grad():
        m = raw_reduce("max", input, dims, True, input.dtype)
        m = E.run("where", E.run("isinf", m), 0.0, m)
    r = call("log", sum(call("exp", input - m), dims, keepdim=True)) + m
    return S.reshape(r, [s for i, s in enumerate(r.shape) if i not in dims]) if not keepdim else r


class _Norm2(Function):
    _backward_name = "LinalgVectorNormBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        if numel([x.shape[d] for d in dims]) == 1:
            out = _drop_dims(E.run("abs", x), dims, keepdim)   # PyTorch: |x|, no square to overflow
        else:   # squares past 1.8e19 overflow float32, in PyTorch's kernel too
            out = E.run("sqrt", raw_reduce("sum", E.run("mul", x, x), dims, keepdim, x.dtype))
        ctx.save_for_backward(x, out)
        ctx.meta = (dims, keepdim)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        dims, keepdim = ctx.meta
        out = _expand_back(out, x, dims, keepdim)
        g = _expand_back(g, x, dims, keepdim)
        return K.run("where", out == 0, 0.0, g * x / out), None, None


def any_empty(x, dims):
    """Whether a reduction of x over dims reduces an empty slice."""
    return x.numel() == 0 and (not dims or 0 in [x.shape[d] for d in dims])


@define("norm", "reduction", out=True, dtypes="floating", doc="norm(input, p='fro', dim=None, keepdim=False, dtype=None) -> Tensor\n\nThe p-norm over dim (p: a number, inf, -inf, 0 or 'fro').")
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {input.dtype.word}")
    dims = _dims(input, dim)
    if p == "fro" and isinstance(dim, (tuple, list)) and len(dim) > 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " + " ".join(str(d) for d in dim))
    if input.dtype in D.HALF_FLOATS:   # PyTorch accumulates half in float: no overflow at 65504 midway
        return norm(input.to(D.float32), p, dim, keepdim).to(input.dtype)
    if p in ("fro", 2, 2.0, None):
        return _Norm2.apply(input, dims, keepdim)
    a = call("abs", input)
    if p in (float("inf"), float("-inf")) and any_empty(input, dims):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on an empty tensor because "
                           "the operation does not have an identity")
    if p == float("inf"):
        return amax(a, dims, keepdim)
    if p == float("-inf"):
        return amin(a, dims, keepdim)
    if p == 0:
        return sum((a != 0).to(input.dtype), dims, keepdim)
    if p == 1:
        return sum(a, dims, keepdim)
    return call("pow", sum(call("pow", a, float(p)), dims, keepdim), 1.0 / p)


# (a reduction, though a shape method: the sum that undoes a broadcast)
@define("sum_to_size", "shape", torch=False, doc="sum_to_size(*size) -> Tensor\n\nThe sum over the dims that broadcasting to this tensor's shape would have added.")
def sum_to_size(g, *shape, size=None):
    shape = as_shape(shape if size is None else (size,))
    if g.shape == tuple(shape):
        return g
    lead = g.dim() - len(shape)
    if lead < 0:
        raise RuntimeError(f"size {list(shape)} is not expandable to size {list(g.shape)}")
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and g.shape[lead + i] != 1:
            dims.append(lead + i)
        elif s != g.shape[lead + i]:
            raise RuntimeError(f"size {list(shape)} is not expandable to size {list(g.shape)}")
    r = sum(g, dims, keepdim=True) if dims else g
    return S.reshape(r, shape)
