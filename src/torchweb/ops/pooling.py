"""Pooling over the trailing 1, 2 or 3 dims: max_pool (indices, dilation, ceil_mode),
avg_pool (count_include_pad, divisor_override), adaptive_avg_pool, adaptive_max_pool and
lp_pool (a composite of avg_pool). One window kernel and one backward kernel serve them all
(backends/webgpu/kernels/pool.py; backends/cpu_conv.py on numpy)."""

from .. import _dtype as D
from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends import backend_for
from ..backends.plans import ConvGeometry, PoolSpec
from .._size import shape_str
from .conv import ntuple
from .operands import empty, is_tensor
from .elementwise import call, contiguous_operand
from .adjoint import linear_backward
from .registry import define
from . import elementwise as E
from .index_ops import gather


def _be(t):
    return backend_for(t.device.type)


def pool_out_size(S_, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape: with ceil_mode, the last window must start inside the
    input or its left padding."""
    num = S_ + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    if ceil_mode and (o - 1) * s >= S_ + p:
        o -= 1
    return o


def _check_input(name, r, x, adaptive=False):
    if not is_tensor(x):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x.dim() not in (r + 1, r + 2):
        if adaptive:
            raise RuntimeError(f"{name}(): Expected {r + 1}D or {r + 2}D tensor, but got {shape_str(x.shape)}")
        raise RuntimeError(f"non-empty {r + 1}D or {r + 2}D (batch mode) tensor expected for input")
    lead = x.dim() - r
    for i in range(1 if lead == 2 else 0, x.dim()):
        if x.shape[i] == 0:
            if adaptive:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, "
                                   f"but input has sizes {shape_str(x.shape)} with dimension {i} being empty")
            raise RuntimeError(f"non-empty {r + 1}D or {r + 2}D (batch mode) tensor expected for input")
    if x.dtype is D.bool:
        raise RuntimeError(f"\"{name}\" not implemented for 'Bool'")
    return lead


def _window_args(name, r, x, kernel_size, stride, padding, dilation, ceil_mode):
    k = ntuple(kernel_size, r, "kernel_size", "pooling")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else ntuple(stride, r, "stride", "pooling")
    p = ntuple(padding, r, "padding", "pooling")
    d = ntuple(dilation, r, "dilation", "pooling")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel_size must be greater than zero, but got {list(k)}")
    if any(v == 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if any(v < 0 for v in s):
        raise RuntimeError(f"stride must be greater than zero, but got {list(s)}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(d)}")
    for kk, pp, dd in zip(k, p, d):
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    in_size = tuple(x.shape[x.dim() - r:])
    out_size = tuple(pool_out_size(*a, ceil_mode) for a in zip(in_size, k, s, p, d))
    if any(o <= 0 for o in out_size):
        C = x.shape[x.dim() - r - 1] if x.dim() > r else 1
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (C,) + in_size))}). Calculated output size: "
                           f"({'x'.join(map(str, (C,) + out_size))}). Output size is too small")
    return ConvGeometry(k, s, p, d, in_size, out_size)


class _NoCtx:
    def save_for_backward(self, *t):
        pass

    def mark_non_differentiable(self, *t):
        pass


def _run(fn, x, *args):
    if grad_mode.is_grad_enabled() and x.requires_grad:
        return fn.apply(x, *args)
    return fn.forward(_NoCtx(), x, *args)


class _MaxPool(Function):
    _backward_name = "MaxPool2DWithIndicesBackward0"
    _double_backward = True   # (ops/adjoint.py)

    @staticmethod
    def forward(ctx, x, spec):
        r = len(spec.geom.in_size)
        lead = x.shape[:x.dim() - r]
        out = empty(lead + spec.geom.out_size, x.dtype, x.device)
        idx = empty(lead + spec.geom.out_size, D.int64, x.device)
        _be(x).pool(spec, out, idx, x, len(lead))
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        ctx.meta = (x.shape, spec)
        return out, idx

    @staticmethod
    def backward(ctx, g, _gi):
        (idx,) = ctx.saved_tensors
        shape, spec = ctx.meta

        def scatter(g):
            gin = empty(shape, g.dtype, g.device)
            _be(g).pool_backward(spec, gin, contiguous_operand(g), idx)
            return gin
        return linear_backward(g, scatter, lambda gg: _gather_at(gg, idx, len(spec.geom.in_size)),
                               "MaxPoolBackwardBackward0"), None


def _gather_at(x, idx, r):
    """x's values at a max pooling's indices (flat positions in each plane of the last r
    dims): the pooling's output for an input x (PyTorch's max_pool double backward)."""
    lead = tuple(x.shape[:x.dim() - r])
    flat = x.reshape(lead + (-1,))
    out = gather(flat, -1, idx.reshape(lead + (-1,)))
    return out.reshape(idx.shape)


class _AvgPool(Function):
    _backward_name = "AvgPool2DBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, spec):
        r = len(spec.geom.in_size)
        lead = x.shape[:x.dim() - r]
        out = empty(lead + spec.geom.out_size, x.dtype, x.device)
        _be(x).pool(spec, out, None, x, len(lead))
        ctx.meta = (x.shape, spec)
        return out

    @staticmethod
    def backward(ctx, g):
        shape, spec = ctx.meta

        def scatter(g):
            gin = empty(shape, g.dtype, g.device)
            _be(g).pool_backward(spec, gin, contiguous_operand(g), None)
            return gin
        # average pooling is linear: the adjoint of its backward is itself
        return linear_backward(g, scatter, lambda gg: _AvgPool.apply(gg, spec), "AvgPoolBackwardBackward0"), None


def _named(base, name):
    return type(base.__name__ + name, (base,), {"_backward_name": name})


_MAX = {(r, a): _named(_MaxPool, f"AdaptiveMaxPool{r}DBackward0" if a else f"MaxPool{r}DWithIndicesBackward0")
        for r in (1, 2, 3) for a in (False, True)}
_AVG = {(r, a): _named(_AvgPool, f"AdaptiveAvgPool{r}DBackward0" if a else f"AvgPool{r}DBackward0")
        for r in (1, 2, 3) for a in (False, True)}


def _max_pool(r, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
              return_indices=False):
    name = f"max_pool{r}d"
    _check_input(name, r, input)
    geom = _window_args(name, r, input, kernel_size, stride, padding, dilation, ceil_mode)
    out, idx = _run(_MAX[(r, False)], input, PoolSpec("max", geom, False))
    return (out, idx) if return_indices else out


def _avg_pool(r, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
              divisor_override=None):
    name = f"avg_pool{r}d"
    _check_input(name, r, input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geom = _window_args(name, r, input, kernel_size, stride, padding, 1, ceil_mode)
    return _run(_AVG[(r, False)], input, PoolSpec("avg", geom, False, bool(count_include_pad), divisor_override))


def _adaptive_geom(name, r, x, output_size):
    lead = _check_input(name, r, x, adaptive=True)
    in_size = tuple(x.shape[lead:])
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != r and not (len(output_size) == 1):
            raise RuntimeError(f"{name}: output_size must be {r}")
        sizes = tuple(output_size) * (r if len(output_size) == 1 else 1)
    else:
        sizes = (output_size,) * r
    out_size = tuple(int(s) if s is not None else i for s, i in zip(sizes, in_size))
    if any(o < 0 for o in out_size):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{list(out_size)}")
    ones = (1,) * r
    return ConvGeometry(ones, ones, (0,) * r, ones, in_size, out_size)


def _adaptive_avg(r, input, output_size):
    name = f"adaptive_avg_pool{r}d"
    if is_tensor(input) and not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{input.dtype.word}'")
    geom = _adaptive_geom(name, r, input, output_size)
    return _run(_AVG[(r, True)], input, PoolSpec("avg", geom, True))


def _adaptive_max(r, input, output_size, return_indices=False):
    name = f"adaptive_max_pool{r}d"
    if is_tensor(input) and not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{input.dtype.word}'")
    geom = _adaptive_geom(name, r, input, output_size)
    out, idx = _run(_MAX[(r, True)], input, PoolSpec("max", geom, True))
    return (out, idx) if return_indices else out


def _lp_pool(r, input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = ntuple(kernel_size, r, "kernel_size", "pooling")
    out = _avg_pool(r, call("pow", input, norm_type), kernel_size, stride, 0, ceil_mode)
    kk = 1
    for v in k:
        kk *= v
    out = call("mul", call("mul", call("sign", out), call("relu", call("abs", out))), kk)
    return call("pow", out, 1.0 / norm_type)


_MAX_DOC = ("{name}(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, "
            "return_indices=False) -> Tensor\n\nThe maximum over each window of the last {r} dims "
            "(NaN wins; ties keep the first); return_indices adds each max's flat position.")
_AVG_DOC = ("{name}(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True{extra}) "
            "-> Tensor\n\nThe mean over each window of the last {r} dims.")


def _register(r):
    def max_pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        return _max_pool(r, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)

    if r == 1:
        def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
            return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad)
    else:
        def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                     divisor_override=None):
            return _avg_pool(r, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override)

    def adaptive_avg_pool(input, output_size):
        return _adaptive_avg(r, input, output_size)

    def adaptive_max_pool(input, output_size, return_indices=False):
        return _adaptive_max(r, input, output_size, return_indices)

    def lp_pool(input, norm_type, kernel_size, stride=None, ceil_mode=False):
        return _lp_pool(r, input, norm_type, kernel_size, stride, ceil_mode)

    docs = {
        "max_pool": _MAX_DOC.format(name=f"max_pool{r}d", r=r),
        "avg_pool": _AVG_DOC.format(name=f"avg_pool{r}d", r=r, extra="" if r == 1 else ", divisor_override=None"),
        "adaptive_avg_pool": f"adaptive_avg_pool{r}d(input, output_size) -> Tensor\n\nThe mean over "
                             f"windows that split the last {r} dims into output_size parts.",
        "adaptive_max_pool": f"adaptive_max_pool{r}d(input, output_size, return_indices=False) -> Tensor\n\n"
                             f"The maximum over windows that split the last {r} dims into output_size parts.",
        "lp_pool": f"lp_pool{r}d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor\n\n"
                   f"The p-norm over each window: (sum x^p)^(1/p), from avg_pool.",
    }
    fns = {"max_pool": max_pool, "avg_pool": avg_pool, "adaptive_avg_pool": adaptive_avg_pool,
           "adaptive_max_pool": adaptive_max_pool, "lp_pool": lp_pool}
    for base, fn in fns.items():
        name = f"{base}{r}d"
        fn.__name__ = fn.__qualname__ = name
        define(name, "pooling", torch=False, method=False, functional=True, doc=docs[base])(fn)
    _register_with_indices(r)
    if r == 1:   # torch.max_pool1d_with_indices: ATen's signature (no return_indices), both results
        def torch_form(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
            return _max_pool(1, input, kernel_size, stride or None, padding, dilation, ceil_mode, True)
        torch_form.__name__ = torch_form.__qualname__ = "max_pool1d_with_indices"
        define("max_pool1d_with_indices", "pooling", key="torch.max_pool1d_with_indices", method=False,
               doc="max_pool1d_with_indices(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) "
                   "-> (Tensor, Tensor)\n\nThe values and indices of nn.functional.max_pool1d.")(torch_form)
    return fns


def _register_with_indices(r):
    """F.max_pool{r}d_with_indices / F.adaptive_max_pool{r}d_with_indices: PyTorch's forms that
    return (values, indices) whatever return_indices says."""
    def max_pool_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                              return_indices=False):
        return _max_pool(r, input, kernel_size, stride, padding, dilation, ceil_mode, True)

    def adaptive_max_pool_with_indices(input, output_size, return_indices=False):
        return _adaptive_max(r, input, output_size, True)

    for fn, sig, base in ((max_pool_with_indices, "kernel_size, stride=None, padding=0, dilation=1, "
                           "ceil_mode=False, return_indices=False", f"max_pool{r}d"),
                          (adaptive_max_pool_with_indices, "output_size, return_indices=False",
                           f"adaptive_max_pool{r}d")):
        name = f"{base}_with_indices"
        fn.__name__ = fn.__qualname__ = name
        define(name, "pooling", torch=False, method=False, functional=True,
               doc=f"{name}(input, {sig}) -> (Tensor, Tensor)\n\n{base} with its indices, always.")(fn)


_FNS = {r: _register(r) for r in (1, 2, 3)}
max_pool1d, max_pool2d, max_pool3d = (_FNS[r]["max_pool"] for r in (1, 2, 3))
avg_pool1d, avg_pool2d, avg_pool3d = (_FNS[r]["avg_pool"] for r in (1, 2, 3))
adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = (_FNS[r]["adaptive_avg_pool"] for r in (1, 2, 3))
adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = (_FNS[r]["adaptive_max_pool"] for r in (1, 2, 3))
lp_pool1d, lp_pool2d, lp_pool3d = (_FNS[r]["lp_pool"] for r in (1, 2, 3))


# -- max_unpool ----------------------------------------------------------------------------------
class _MaxUnpool(Function):
    _backward_name = "MaxUnpool2DBackward0"
    _double_backward = True   # (ops/adjoint.py: the unpooling is the adjoint of its backward)

    @staticmethod
    def forward(ctx, x, indices, out_size, what):
        r = len(out_size)
        lead = tuple(x.shape[:x.dim() - r])
        B = 1
        for s in lead:
            B *= s
        L_in = x.numel() // B if B else 0
        L_out = 1
        for s in out_size:
            L_out *= s
        out = E.fill(empty(lead + tuple(out_size), x.dtype, x.device), 0)
        xc, ic = contiguous_operand(x), contiguous_operand(indices)
        flat = lambda t, L: t._view((B, L), (L, 1), t._offset)   # noqa: E731
        if out.numel() and x.numel():
            _be(x).unpool(flat(out, L_out), flat(xc, L_in), flat(ic, L_in), what)
        ctx.save_for_backward(indices)
        ctx.meta = (x.shape, B, L_in, L_out, what)
        ctx.out_size = tuple(out_size)
        return out

    @staticmethod
    def backward(ctx, g):
        (indices,) = ctx.saved_tensors
        shape, B, L_in, L_out, what = ctx.meta

        def gather(g):
            gin = empty(shape, g.dtype, g.device)
            gc, ic = contiguous_operand(g), contiguous_operand(indices)
            if gin.numel():
                _be(g).unpool_backward(gin._view((B, L_in), (L_in, 1), 0),
                                       gc._view((B, L_out), (L_out, 1), gc._offset),
                                       ic._view((B, L_in), (L_in, 1), ic._offset), what)
            return gin
        out_size = ctx.out_size
        return linear_backward(g, gather, lambda gg: _MaxUnpool.apply(gg, indices, out_size, what),
                               "MaxUnpoolBackwardBackward0"), None, None, None


_UNPOOL = {2: _MaxUnpool, 3: _named(_MaxUnpool, "MaxUnpool3DBackward0")}


def _max_unpool(r, input, indices, kernel_size, stride=None, padding=0, output_size=None):
    name = f"max_unpool{r}d"
    k = ntuple(kernel_size, r, "kernel_size", "pooling")
    s = k if stride is None else ntuple(stride, r, "stride", "pooling")
    p = ntuple(padding, r, "padding", "pooling")
    if not is_tensor(input) or not is_tensor(indices):
        raise TypeError(f"{name}(): expected Tensor arguments for input and indices")
    if input.dim() not in (r + 1, r + 2):
        raise RuntimeError(f"Expected {r + 1}D or {r + 2}D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got: {shape_str(input.shape)}")
    in_size = tuple(input.shape[input.dim() - r:])
    default = [(i - 1) * st + kk - 2 * pp for i, st, kk, pp in zip(in_size, s, k, p)]
    if output_size is None:
        out_size = default
    else:
        out_size = list(output_size)
        if len(out_size) == r + 2 or (len(out_size) == r + 1 and input.dim() == r + 1):
            out_size = out_size[len(out_size) - r:]
        if len(out_size) != r:
            raise ValueError(f"output_size should be a sequence containing {r} or {r + 2} elements, but it has "
                             f"a length of '{len(out_size)}'")
        for d in range(r):
            lo, hi = default[d] - s[d], default[d] + s[d]
            if not lo < out_size[d] < hi:
                raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {lo} and {hi})')
    if indices.dtype is not D.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype.c_scalar}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({shape_str(input.shape)}) but got indices tensor with shape: "
                           f"{shape_str(indices.shape)}")
    fn = _UNPOOL[max(r, 2)]
    args = (input, indices, tuple(int(v) for v in out_size), name)
    if grad_mode.is_grad_enabled() and input.requires_grad:
        return fn.apply(*args)
    return fn.forward(_NoCtx(), *args)


def _register_unpool(r):
    def max_unpool(input, indices, kernel_size, stride=None, padding=0, output_size=None):
        return _max_unpool(r, input, indices, kernel_size, stride, padding, output_size)
    name = f"max_unpool{r}d"
    max_unpool.__name__ = max_unpool.__qualname__ = name
    define(name, "pooling", torch=False, method=False, functional=True,
           doc=f"{name}(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor\n\n"
               f"The inverse of max_pool{r}d: each value placed at its index in zeros of the unpooled size.")(max_unpool)
    return max_unpool


max_unpool1d, max_unpool2d, max_unpool3d = (_register_unpool(r) for r in (1, 2, 3))


# -- the torch.* forms (ATen's signatures: no return_indices; adaptive_max_pool1d returns both) --
def _register_torch_forms():
    def _max(r):
        def fn(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
            return _max_pool(r, input, kernel_size, stride or None, padding, dilation, ceil_mode)
        fn.__name__ = fn.__qualname__ = f"max_pool{r}d"
        define(f"max_pool{r}d", "pooling", key=f"torch.max_pool{r}d", method=False,
               doc=f"max_pool{r}d(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> Tensor\n\n"
                   f"nn.functional.max_pool{r}d without return_indices.")(fn)

    for r in (1, 2, 3):
        _max(r)

    @define("avg_pool1d", "pooling", key="torch.avg_pool1d", method=False,
            doc="avg_pool1d(input, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True) "
                "-> Tensor\n\nnn.functional.avg_pool1d.")
    def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
        return _avg_pool(1, input, kernel_size, stride or None, padding, ceil_mode, count_include_pad)

    @define("adaptive_avg_pool1d", "pooling", key="torch.adaptive_avg_pool1d", method=False,
            doc="adaptive_avg_pool1d(input, output_size) -> Tensor\n\nnn.functional.adaptive_avg_pool1d.")
    def adaptive_avg_pool1d(input, output_size):
        return _adaptive_avg(1, input, output_size)

    @define("adaptive_max_pool1d", "pooling", key="torch.adaptive_max_pool1d", method=False,
            doc="adaptive_max_pool1d(input, output_size) -> (Tensor, Tensor)\n\nThe values and indices of "
                "nn.functional.adaptive_max_pool1d.")
    def adaptive_max_pool1d(input, output_size):
        return _adaptive_max(1, input, output_size, return_indices=True)


_register_torch_forms()
