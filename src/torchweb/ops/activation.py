"""softmax and log_softmax, computed stably (shifted by the max) with PyTorch's backward."""

from .. import _dtype as D
from .._size import contiguous_strides, numel, wrap_dim
from ..autograd import grad_mode
from ..autograd.function import Function
from . import lowering
from . import elementwise as E
from .reduction import new_tensor, raw_reduce
from .registry import define
from . import shape as S


# A softmax's layout, decided once per call signature (x's shape, strides, dim: the user's int or
# the wrapped one) for tensors with a dim and elements: (d wrapped; the shape of the views with d
# moved last, x's strides and the result's in them, None where d is already last; the result's
# strides and numel). Only ints are keys (as keys, True and 1.0 are 1, and they must meet
# _prepare's checks).
_LAYOUTS = {}


def _layout(x, d):
    key = (x._shape, x._stride, d)
    lay = _LAYOUTS.get(key)
    if lay is None:
        shape = tuple(x._shape)
        strides = contiguous_strides(shape)
        if d == len(shape) - 1:
            lay = (d, None, None, None, strides, numel(shape))
        else:
            perm = [k for k in range(len(shape)) if k != d] + [d]
            lay = (d, tuple(shape[k] for k in perm), tuple(x._stride[k] for k in perm),
                   tuple(strides[k] for k in perm), strides, numel(shape))
        if len(_LAYOUTS) > 4096:   # programs with ever new shapes: stay bounded
            _LAYOUTS.clear()
        _LAYOUTS[key] = lay
    return lay


def _softmax_raw(x, lay, log):
    # One fused kernel where the backend has one: dim d moved last in views of x and of a
    # contiguous result (the composite's layout), so no copy either way. Where the backend
    # declines, the composite's last op writes into the same result.
    d, pshape, pstride, ostride, strides, n = lay
    out = new_tensor(x._shape, strides, n, x.dtype, x.device)
    if pshape is None:
        xp, outp = x, out
    else:
        xp, outp = x._view(pshape, pstride, x._offset), out._view(pshape, ostride, 0)
    if lowering.fused_softmax(outp, xp, log):
        return out
    # shifted by the max, unguarded like PyTorch's kernel: a row holding +inf or only -inf is NaN.
    # float16 and bfloat16 keep their intermediates in float32 and rounds once, as PyTorch's kernel does.
    ct = D.float32 if x.dtype in D.HALF_FLOATS else x.dtype
    m = raw_reduce("max", x, [d], True, x.dtype)
    shifted = E.run("sub", x, m, out_dtype=ct)
    e = E.run("exp", shifted)
    s = raw_reduce("sum", e, [d], True, ct)
    if log:
        return E.run("sub", shifted, E.run("log", s), out=out)
    return E.run("div", e, s, out=out)


class _Softmax(Function):
    _backward_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, lay):
        y = _softmax_raw(x, lay, False)
        ctx.save_for_backward(y)
        ctx.d = lay[0]
        return y

    _double_backward = True   # (under grad mode, create_graph: the same rule in Tensor ops)

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if grad_mode._state["enabled"]:
            gy = g * y
            return gy - y * gy.sum(ctx.d, keepdim=True), None
        gy = E.run("mul", g, y)
        return E.run("sub", gy, E.run("mul", y, raw_reduce("sum", gy, [ctx.d], True, gy.dtype))), None


class _LogSoftmax(Function):
    _backward_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, lay):
        y = _softmax_raw(x, lay, True)
        ctx.save_for_backward(y)
        ctx.d = lay[0]
        return y

    _double_backward = True

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if grad_mode._state["enabled"]:
            return g - y.exp() * g.sum(ctx.d, keepdim=True), None
        s = raw_reduce("sum", g, [ctx.d], True, g.dtype)
        return E.run("sub", g, E.run("mul", E.run("exp", y), s)), None


def _prepare(x, dim, dtype, name):
    if dim is None:
        import warnings
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                      "dim=X as an argument.", stacklevel=4)   # (the caller of softmax, past _call)
        dim = 0 if x.dim() in (0, 1, 3) else 1  # PyTorch's legacy implicit dim
    if dtype is not None:
        x = x.to(dtype)
    elif not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{x.dtype.word}'")
    return x, (wrap_dim(dim, x.dim()) if x.dim() else wrap_dim(dim, 0) * 0)   # 0-d: -1 and 0 only


def _call(fn, x, dim, dtype, name):
    if dtype is None and type(dim) is int:   # the common call: its layout holds the checks' outcome
        lay = _LAYOUTS.get((x._shape, x._stride, dim))
        if lay is not None and x.dtype.category == 2:
            return _run(fn, x, lay)
    x, d = _prepare(x, dim, dtype, name)
    if x.dim() == 0:
        x1 = S.reshape(x, 1)
        return S.reshape(_run(fn, x1, _layout(x1, 0)), ())
    if x.numel() == 0:
        return x.clone()
    lay = _layout(x, d)
    if dtype is None and type(dim) is int and dim != d:
        _LAYOUTS[(x._shape, x._stride, dim)] = lay   # the user's dim (-1) finds it too
    return _run(fn, x, lay)


def _run(fn, x, lay):
    if x.requires_grad and grad_mode.is_grad_enabled():
        return fn.apply(x, lay)
    return _softmax_raw(x, lay, fn is _LogSoftmax)


def _need_dim(dim, name):
    """torch.softmax(x) and x.softmax() without dim: PyTorch's TypeError (only F.softmax has
    the deprecated implicit dim)."""
    if dim is None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')


@define("softmax", "activation", out=True, doc='softmax(input, dim, dtype=None) -> Tensor\n\nexp(input) / sum(exp(input), dim), computed stably.')
def softmax(input, dim=None, dtype=None, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if dim is None:
        _need_dim(dim, "softmax")
    return _call(_Softmax, input, dim, dtype, "softmax")


@define("log_softmax", "activation", out=True, doc='log_softmax(input, dim, dtype=None) -> Tensor\n\ninput - logsumexp(input, dim), computed stably.')
def log_softmax(input, dim=None, dtype=None, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if dim is None:
        _need_dim(dim, "log_softmax")
    return _call(_LogSoftmax, input, dim, dtype, "log_softmax")


@define("softmax", "activation", key="F.softmax", torch=False, method=False, functional=True,
        doc='softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor\n\nexp(input) / sum(exp(input), dim), '
            'computed stably; no dim: the deprecated implicit dim, with its warning.')
def functional_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _call(_Softmax, input, dim, dtype, "softmax")


@define("log_softmax", "activation", key="F.log_softmax", torch=False, method=False, functional=True,
        doc='log_softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor\n\ninput - logsumexp(input, dim), '
            'computed stably; no dim: the deprecated implicit dim, with its warning.')
def functional_log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _call(_LogSoftmax, input, dim, dtype, "log_softmax")


functional_softmax.__name__ = functional_softmax.__qualname__ = "softmax"   # (as F.softmax's)
functional_log_softmax.__name__ = functional_log_softmax.__qualname__ = "log_softmax"
