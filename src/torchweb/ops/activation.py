"""softmax and log_softmax, computed stably (shifted by the max) with PyTorch's backward."""

from .. import _dtype as D
from .._size import wrap_dim
from ..autograd import grad_mode
from ..autograd.function import Function
from . import lowering
from . import elementwise as E
from .dispatch import empty
from .reduction import raw_reduce
from .registry import define


def _softmax_raw(x, d, log):
    # One fused kernel where the backend has one: dim d moved last in views of x and of a
    # contiguous result (the composite's layout), so no copy either way. Where the backend
    # declines, the composite's last op writes into the same result.
    out = empty(x.shape, x.dtype, x.device)
    perm = [k for k in range(x.dim()) if k != d] + [d]
    xp = x._view(tuple(x.shape[k] for k in perm), tuple(x._stride[k] for k in perm), x._offset)
    outp = out._view(xp.shape, tuple(out._stride[k] for k in perm), out._offset)
    if lowering.fused_softmax(outp, xp, log):
        return out
    # shifted by the max, unguarded like PyTorch's kernel: a row holding +inf or only -inf is NaN.
    # float16 keeps its intermediates in float32 and rounds once, as PyTorch's kernel does.
    ct = D.float32 if x.dtype is D.float16 else x.dtype
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
    def forward(ctx, x, d):
        y = _softmax_raw(x, d, False)
        ctx.save_for_backward(y)
        ctx.d = d
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        gy = E.run("mul", g, y)
        return E.run("sub", gy, E.run("mul", y, raw_reduce("sum", gy, [ctx.d], True, gy.dtype))), None


class _LogSoftmax(Function):
    _backward_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, d):
        y = _softmax_raw(x, d, True)
        ctx.save_for_backward(y)
        ctx.d = d
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        s = raw_reduce("sum", g, [ctx.d], True, g.dtype)
        return E.run("sub", g, E.run("mul", E.run("exp", y), s)), None


def _prepare(x, dim, dtype, name):
    if dim is None:
        import warnings
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                      "dim=X as an argument.", stacklevel=3)
        dim = 0 if x.dim() in (0, 1, 3) else 1  # PyTorch's legacy implicit dim
    if dtype is not None:
        x = x.to(dtype)
    elif not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for '{x.dtype.word}'")
    return x, (wrap_dim(dim, x.dim()) if x.dim() else wrap_dim(dim, 0) * 0)   # 0-d: -1 and 0 only


def _run(fn, x, d):
    if x.dim() == 0:
        from . import shape as S
        return S.reshape(_run(fn, S.reshape(x, 1), 0), ())
    if x.numel() == 0:
        return x.clone()
    if grad_mode.is_grad_enabled() and x.requires_grad:
        return fn.apply(x, d)
    return _softmax_raw(x, d, fn is _LogSoftmax)


@define("softmax", "activation", functional=True, doc='softmax(input, dim=None, dtype=None) -> Tensor\n\nexp(input) / sum(exp(input), dim), computed stably.')
def softmax(x, dim=None, dtype=None, _stacklevel=3):
    x, d = _prepare(x, dim, dtype, "softmax")
    return _run(_Softmax, x, d)


@define("log_softmax", "activation", functional=True, doc='log_softmax(input, dim=None, dtype=None) -> Tensor\n\ninput - logsumexp(input, dim), computed stably.')
def log_softmax(x, dim=None, dtype=None, _stacklevel=3):
    x, d = _prepare(x, dim, dtype, "log_softmax")
    return _run(_LogSoftmax, x, d)
