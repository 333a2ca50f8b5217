"""Convolution as im2col + the tiled matmul, for any number of spatial dims: conv1d/2d/3d,
conv_transpose1d/2d/3d, nn.functional.unfold/fold and Tensor.unfold.

    conv:       cols = im2col(x)                       [N, C*K, L]
                out[n, g] = W[g] @ cols[n, g]          one batched matmul over (N, groups)
    backward:   grad_x = col2im(W[g]^T @ grad[n, g])   (a fold kernel, no atomics)
                grad_W[g] = grad[g] @ cols[g]^T        cols laid out [C*K, N*L] for it
                grad_b = sum of grad over all but the channel dim
    conv_transpose is conv's input gradient (matmul then col2im); its backward is conv.

A batch whose columns would pass COLS_LIMIT elements goes in slices of the batch, and a single
batch entry past it in slices of its output positions, so that a binding stays under the
adapter's limit.
"""

from .. import _dtype as D
from .._size import contiguous_strides, numel, shape_str, wrap_dim
from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends import backend_for
from ..backends.plans import ConvGeometry
from . import elementwise as E
from . import lowering
from . import shape as S
from .operands import common_device, empty, expand_to, is_tensor
from .elementwise import contiguous_operand
from .registry import define
from .reduction import raw_reduce

COLS_LIMIT = 1 << 24     # elements of one im2col buffer (64 MiB of float32)


def _be(t):
    return backend_for(t.device.type)


# -- arguments ------------------------------------------------------------------------------
def ntuple(v, n, name, what="convolution"):
    """An int or a sequence as n ints (PyTorch's expand_param_if_needed)."""
    if isinstance(v, bool) or not isinstance(v, (int, list, tuple)):
        if is_tensor(v) or not hasattr(v, "__index__"):
            raise TypeError(f"{name} must be an int or a tuple of ints, not {type(v).__name__}")
    if isinstance(v, (list, tuple)):
        v = tuple(int(e) for e in v)
        if len(v) == 1:
            return v * n
        if len(v) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values "
                               f"to match the {what} dimensions, but got {name}={list(v)}")
        return v
    return (int(v),) * n


def conv_out_size(in_size, kernel, stride, padding, dilation):
    return tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, st, p, d in zip(in_size, kernel, stride, padding, dilation))


# -- raw primitives (no autograd) -------------------------------------------------------------
def raw_im2col(x, g, layout="ncl"):
    """x [N, C, *S] -> cols, contiguous [N, C*K, L] ("ncl") or [C*K, N, L] ("cnl")."""
    return _cols(x, g, 0, g.L, layout)


def raw_col2im(cols, C, g, out=None):
    """cols [N, C*K, L] (any strides) -> [N, C, *in_size] (summed where windows overlap)."""
    N = cols.shape[0]
    if out is None:
        out = empty((N, C) + g.in_size, cols.dtype, cols.device)
    if out.numel():
        if cols.numel() == 0:
            E.fill(out, 0)
        else:
            _be(cols).col2im(g, out, cols)
    return out


def _mm_into(out, a, b):
    """out = a @ b, batch dims broadcast (out contiguous, maybe a slice of a bigger tensor)."""
    batch = out.shape[:-2]
    a = expand_to(a, batch + a.shape[-2:])
    b = expand_to(b, batch + b.shape[-2:])
    if a.shape[-1] == 0:
        E.fill(out, 0)
        return out
    if out.numel():
        lowering.matmul(out, a, b, "f" if a.dtype.is_floating_point else "i")
    return out


def _chunks(N, CK, L):
    """(n0, n1, l0, l1): slices of the batch, and of the output positions when one batch entry's
    columns alone pass COLS_LIMIT, whose columns stay under COLS_LIMIT elements."""
    per_item = max(CK * L, 1)
    if per_item <= COLS_LIMIT:
        step = COLS_LIMIT // per_item
        return [(n0, min(N, n0 + step), 0, L) for n0 in range(0, N, step)]
    lstep = max(1, COLS_LIMIT // max(CK, 1))
    return [(n, n + 1, l0, min(L, l0 + lstep)) for n in range(N) for l0 in range(0, L, lstep)]


def _narrow0(t, n0, n1):
    return t._view((n1 - n0,) + tuple(t.shape[1:]), t._stride, t._offset + n0 * t._stride[0])


def _is_pointwise(g):
    return all(k == 1 for k in g.kernel) and all(s == 1 for s in g.stride) and not any(g.padding)


def _cols(x, g, l0, l1, layout="ncl"):
    """The columns of output positions l0 .. l1 - 1 of x: [n, C*K, Lc] ("ncl", contiguous) or
    a [C*K, n, Lc] contiguous tensor ("cnl")."""
    n, C = x.shape[0], x.shape[1]
    CK, Lc = C * g.K, l1 - l0
    if layout == "ncl":
        out = empty((n, CK, Lc), x.dtype, x.device)
        target = out
    else:
        out = empty((CK, n, Lc), x.dtype, x.device)
        target = out._view((n, CK, Lc), (Lc, n * Lc, 1), out._offset)
    if out.numel():
        _be(x).im2col(g, target, x, l0=l0)
    return out


def _positions(t, l0, l1):
    """t [n, Ch, *O] (spatial dims mergeable) as [n, Ch, l1 - l0]: output positions l0 .. l1 - 1."""
    n, Ch = t.shape[0], t.shape[1]
    L = numel(t.shape[2:])
    tc = t if _spatial_flat(t) else contiguous_operand(t)
    inner = [st for sz, st in zip(tc.shape[2:], tc._stride[2:]) if sz != 1]
    st = inner[-1] if inner else 1
    return tc._view((n, Ch, l1 - l0), (tc._stride[0], tc._stride[1], st), tc._offset + l0 * st) if L else \
        tc._view((n, Ch, 0), (tc._stride[0], tc._stride[1], 1), tc._offset)


def _spatial_flat(t):
    """t's spatial dims merge into one strided dim."""
    dims = [(s, st) for s, st in zip(t.shape[2:], t._stride[2:]) if s != 1]
    return all(dims[i][1] == dims[i + 1][1] * dims[i + 1][0] for i in range(len(dims) - 1))


def conv_core(x, w, g, groups):
    """conv(x [N, C, *S], w [Cout, C/groups, *k]) -> [N, Cout, *O], no bias."""
    N, C = x.shape[0], x.shape[1]
    Cout = w.shape[0]
    Cg, Coutg, K, L = C // groups, Cout // groups, g.K, g.L
    out = empty((N, Cout) + g.out_size, x.dtype, x.device)
    if out.numel() == 0:
        return out
    wc = contiguous_operand(w)
    wg = wc._view((1, groups, Coutg, Cg * K), (0, Coutg * Cg * K, Cg * K, 1), wc._offset)
    for n0, n1, l0, l1 in _chunks(N, C * K, L):
        n, Lc = n1 - n0, l1 - l0
        xs = _narrow0(x, n0, n1)
        cols = xs if _is_pointwise(g) and xs.is_contiguous() and Lc == L else _cols(xs, g, l0, l1)
        colsg = cols._view((n, groups, Cg * K, Lc), (C * K * Lc, Cg * K * Lc, Lc, 1), cols._offset)
        o = _narrow0(out, n0, n1)
        if Lc == L:
            _mm_into(o._view((n, groups, Coutg, L), contiguous_strides((n, groups, Coutg, L)), o._offset), wg, colsg)
        else:   # a slice of the output positions: through a contiguous part
            part = _mm_into(empty((n, groups, Coutg, Lc), x.dtype, x.device), wg, colsg)
            E.copy_into(_positions(o, l0, l1), part._view((n, Cout, Lc), (Cout * Lc, Lc, 1), part._offset))
    return out


def conv_input_grad(gout, w, g, groups, C):
    """The gradient of conv_core with respect to x: col2im(W^T @ gout) -> [N, C, *in_size]."""
    N, Cout = gout.shape[0], gout.shape[1]
    Cg, Coutg, K, L = C // groups, Cout // groups, g.K, g.L
    out = empty((N, C) + g.in_size, gout.dtype, gout.device)
    if out.numel() == 0:
        return out
    gout = contiguous_operand(gout)
    wc = contiguous_operand(w)
    wt = wc._view((1, groups, Cg * K, Coutg), (0, Coutg * Cg * K, 1, Cg * K), wc._offset)
    for n0, n1, l0, l1 in _chunks(N, C * K, L):
        n, Lc = n1 - n0, l1 - l0
        gs = _positions(_narrow0(gout, n0, n1), l0, l1)                       # [n, Cout, Lc]
        gg = gs._view((n, groups, Coutg, Lc), (gs._stride[0], Coutg * gs._stride[1], gs._stride[1], 1), gs._offset)
        o = _narrow0(out, n0, n1)
        if _is_pointwise(g) and Lc == L:
            _mm_into(o._view((n, groups, Cg, L), contiguous_strides((n, groups, Cg, L)), o._offset), wt, gg)
            continue
        cols = _mm_into(empty((n, groups, Cg * K, Lc), gout.dtype, gout.device), wt, gg)
        if L == 0:
            E.fill(o, 0)
            continue
        _be(gout).col2im(g, o, cols._view((n, C * K, Lc), contiguous_strides((n, C * K, Lc)), cols._offset),
                         l0=l0, accumulate=l0 > 0)
    return out


def conv_weight_grad(x, gout, g, groups, wshape):
    """The gradient of conv_core with respect to w: grad[g] @ cols[g]^T, summed over the batch
    (and over slices of the output positions)."""
    N, C = x.shape[0], x.shape[1]
    Cout = gout.shape[1]
    Cg, Coutg, K, L = C // groups, Cout // groups, g.K, g.L
    acc = empty((groups, Coutg, Cg * K), gout.dtype, gout.device)
    if acc.numel() == 0 or N * L == 0:
        E.fill(acc, 0)
        return S.reshape(acc, wshape)
    part = None
    for i, (n0, n1, l0, l1) in enumerate(_chunks(N, C * K, L)):
        n, Lc = n1 - n0, l1 - l0
        cols = _cols(_narrow0(x, n0, n1), g, l0, l1, layout="cnl")           # [C*K, n, Lc]
        colsT = cols._view((groups, n * Lc, Cg * K), (Cg * K * n * Lc, 1, n * Lc), cols._offset)
        gs = _positions(_narrow0(gout, n0, n1), l0, l1)                        # [n, Cout, Lc]
        gp = contiguous_operand(gs._view((Cout, n, Lc), (gs._stride[1], gs._stride[0], gs._stride[2]), gs._offset))
        gpg = gp._view((groups, Coutg, n * Lc), (Coutg * n * Lc, n * Lc, 1), gp._offset)
        if i == 0:
            _mm_into(acc, gpg, colsT)
        else:
            if part is None:
                part = empty(acc.shape, acc.dtype, acc.device)
            _mm_into(part, gpg, colsT)
            E.run("add", acc, part, out=acc)
    return acc._view(tuple(wshape), contiguous_strides(wshape), acc._offset)


def _bias_grad(gout):
    dims = [0] + list(range(2, gout.dim()))
    return raw_reduce("sum", gout, dims, False, gout.dtype)


# -- autograd -------------------------------------------------------------------------------
class _Conv(Function):
    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, b, g, groups, transposed):
        ctx.save_for_backward(x, w)
        ctx.meta = (g, groups, transposed, b is not None)
        if transposed:
            out = conv_input_grad(x, w, g, groups, w.shape[1] * groups)
        else:
            out = conv_core(x, w, g, groups)
        if b is not None and out.numel():
            E.run("add", out, b._view((b.shape[0],) + (1,) * (out.dim() - 2),
                                      (b._stride[0],) + (0,) * (out.dim() - 2), b._offset), out=out)
        return out

    _double_backward = True

    @staticmethod
    def backward(ctx, gout):
        x, w = ctx.saved_tensors
        g, groups, transposed, has_bias = ctx.meta
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        if grad_mode._state["enabled"]:
            return _conv_backward_recorded(x, w, gout, ctx.meta, ctx.needs_input_grad)
        gx = gw = gb = None
        if transposed:
            # out = conv^T(x): x's gradient is conv(gout), w's is conv's weight gradient with
            # gout as the conv's input and x as its output gradient
            if need_x:
                gx = conv_core(gout, w, g, groups)
            if need_w:
                gw = conv_weight_grad(gout, x, g, groups, w.shape)
        else:
            if need_x:
                gx = conv_input_grad(gout, w, g, groups, x.shape[1])
            if need_w:
                gw = conv_weight_grad(x, gout, g, groups, w.shape)
        if need_b and has_bias:
            gb = _bias_grad(gout)
        return gx, gw, gb, None, None, None


def _conv_backward_recorded(x, w, gout, meta, needs):
    """_Conv's backward under grad mode (create_graph): each gradient is itself a
    convolution (x's: the transposed one over the same geometry) or a _ConvWeightGrad, both
    with backwards of their own."""
    g, groups, transposed, has_bias = meta
    gx = gw = gb = None
    if needs[0]:
        gx = _Conv.apply(gout, w, None, g, groups, not transposed)
    if needs[1]:
        gw = _ConvWeightGrad.apply(gout, x, g, groups, w.shape) if transposed else \
            _ConvWeightGrad.apply(x, gout, g, groups, w.shape)
    if needs[2] and has_bias:
        gb = gout.sum([0] + list(range(2, gout.dim())))
    return gx, gw, gb, None, None, None


class _ConvWeightGrad(Function):
    """The weight's gradient of conv(x, w) for the output gradient gout: bilinear in x and
    gout, so its own gradients are convolutions again (PyTorch's convolution double backward)."""
    _backward_name = "ConvolutionBackwardBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, gout, g, groups, wshape):
        ctx.save_for_backward(x, gout)
        ctx.meta = (g, groups)
        return conv_weight_grad(x, gout, g, groups, wshape)

    @staticmethod
    def backward(ctx, ggw):
        x, gout = ctx.saved_tensors
        g, groups = ctx.meta
        gx = _Conv.apply(gout, ggw, None, g, groups, True) if ctx.needs_input_grad[0] else None
        ggout = _Conv.apply(x, ggw, None, g, groups, False) if ctx.needs_input_grad[1] else None
        return gx, ggout, None, None, None


def _check_float(x, w, b):
    if x.dtype is not w.dtype:
        raise RuntimeError(f"Input type ({x._type_name()}) and weight type ({w._type_name()}) should be "
                           f"the same or input should be a MKLDNN tensor and weight is a dense tensor")
    if b is not None and b.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({x._type_name()}) and bias type ({b._type_name()}) should be "
                           f"the same or input should be a MKLDNN tensor and weight is a dense tensor")
    if x.dtype is D.bool:
        raise RuntimeError("\"slow_conv2d_cpu\" not implemented for 'Bool'")


def _convolution(name, r, input, weight, bias, stride, padding, dilation, groups, transposed=False,
                 output_padding=0):
    common_device(input, weight, bias, what=name)
    if not is_tensor(input) or not is_tensor(weight):
        raise TypeError(f"{name}() expected Tensor arguments for input and weight")
    if input.dim() not in (r + 1, r + 2):
        raise RuntimeError(f"Expected {r + 1}D (unbatched) or {r + 2}D (batched) input to {name}, but got "
                           f"input of size: {shape_str(input.shape)}")
    batched = input.dim() == r + 2
    x = input if batched else S.unsqueeze(input, 0)
    if weight.dim() != r + 2:
        wr = max(weight.dim() - 2, 0)
        raise RuntimeError(f"expected stride to be a single integer value or a list of {wr} values to "
                           f"match the convolution dimensions, but got stride={list(ntuple(stride, r, 'stride'))}"
                           if wr != r else f"weight should have {r + 2} dimensions")
    stride = ntuple(stride, r, "stride")
    dilation = ntuple(dilation, r, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    kernel = tuple(weight.shape[2:])
    N, C = x.shape[0], x.shape[1]
    in_size = tuple(x.shape[2:])
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
        if padding == "valid":
            padding = (0,) * r
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            padding = None
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    if padding is not None:
        padding = ntuple(padding, r, "padding")
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
    _check_float(x, weight, bias)
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
                           f"but got weight of size [{shape_str(weight.shape)}] instead")
    if any(k <= 0 for k in weight.shape[2:]):
        raise RuntimeError(f"kernel size should be greater than zero, but got a weight of size "
                           f"{shape_str(weight.shape)}")
    if groups > 0 and weight.shape[0] % groups and not transposed:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
                           f"0, but got weight of size [{shape_str(weight.shape)}] instead")
    if transposed:
        if C != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {shape_str(weight.shape)}, expected "
                               f"input{shape_str(x.shape)} to have {weight.shape[0]} channels, but got {C} "
                               f"channels instead")
        if C % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                               f"dimension 0, but got weight of size [{shape_str(weight.shape)}] instead")
        out_ch = weight.shape[1] * groups
    else:
        if C != weight.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {shape_str(weight.shape)}, expected "
                               f"input{shape_str(x.shape)} to have {weight.shape[1] * groups} channels, but "
                               f"got {C} channels instead")
        out_ch = weight.shape[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_ch):
        raise RuntimeError(f"Given weight of size {shape_str(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_ch} elements, but got bias of size "
                           f"{shape_str(bias.shape)} instead")
    if transposed:
        output_padding = ntuple(output_padding, r, "output_padding")
        for op_, s, d in zip(output_padding, stride, dilation):
            if op_ >= s and op_ >= d:
                raise RuntimeError(
                    "output padding must be smaller than either stride or dilation, but got "
                    + _op_msg(output_padding, stride, dilation))
        out_size = tuple((s - 1) * st - 2 * p + d * (k - 1) + op_ + 1 for s, st, p, d, k, op_
                         in zip(in_size, stride, padding, dilation, kernel, output_padding))
        if any(o <= 0 for o in out_size):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, in_size))}). Calculated "
                               f"output size per channel: ({' x '.join(map(str, out_size))}). Output size "
                               f"is too small")
        # the transposed conv is the input gradient of the conv from out_size to in_size
        g = ConvGeometry(kernel, stride, padding, dilation, out_size, in_size)
    else:
        if padding is None:   # 'same': the total d * (k - 1), its smaller half before
            padding = tuple(d * (k - 1) // 2 for d, k in zip(dilation, kernel))
            out_size = in_size
        else:
            padded = tuple(s + 2 * p for s, p in zip(in_size, padding))
            eff = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
            if any(e > p for e, p in zip(eff, padded)):
                raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                                   f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater "
                                   f"than actual input size")
            out_size = conv_out_size(in_size, kernel, stride, padding, dilation)
        g = ConvGeometry(kernel, stride, padding, dilation, in_size, out_size)
    if grad_mode.is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, weight, bias)):
        out = _Conv.apply(x, weight, bias, g, groups, transposed)
    else:
        out = _Conv.forward(_NoCtx(), x, weight, bias, g, groups, transposed)
    return out if batched else S.squeeze(out, 0)


def _op_msg(output_padding, stride, dilation):
    names = ("depth", "height", "width")[-len(stride):] if len(stride) <= 3 else [str(i) for i in range(len(stride))]
    parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
    parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
    parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
    return " ".join(parts)


class _NoCtx:
    def save_for_backward(self, *t):
        pass


_CONV_DOC = ("{name}(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor\n\n"
             "A {r}-D convolution over input [N, C, *spatial] (or unbatched [C, *spatial]): im2col "
             "then the tiled matmul. padding: ints or 'same' / 'valid'.")
_CONVT_DOC = ("{name}(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, "
              "dilation=1) -> Tensor\n\nA {r}-D transposed convolution (the gradient of {base} with "
              "respect to its input): matmul then col2im.")


def _make_conv(r):
    name = f"conv{r}d"

    def conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        return _convolution(name, r, input, weight, bias, stride, padding, dilation, groups)
    conv.__name__ = conv.__qualname__ = name
    define(name, "convolution", method=False, functional=True, doc=_CONV_DOC.format(name=name, r=r))(conv)

    tname = f"conv_transpose{r}d"

    def conv_transpose(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        return _convolution(tname, r, input, weight, bias, stride, padding, dilation, groups,
                            transposed=True, output_padding=output_padding)
    conv_transpose.__name__ = conv_transpose.__qualname__ = tname
    define(tname, "convolution", method=False, functional=True,
           doc=_CONVT_DOC.format(name=tname, r=r, base=name))(conv_transpose)
    return conv, conv_transpose


conv1d, conv_transpose1d = _make_conv(1)
conv2d, conv_transpose2d = _make_conv(2)
conv3d, conv_transpose3d = _make_conv(3)


# -- unfold / fold --------------------------------------------------------------------------
class _Unfold(Function):
    _backward_name = "Im2ColBackward0"
    _double_backward = True   # (create_graph: fold and unfold are each other's adjoint)

    @staticmethod
    def forward(ctx, x, g):
        ctx.meta = (x.shape[1], g)
        return raw_im2col(x, g)

    @staticmethod
    def backward(ctx, gc):
        C, g = ctx.meta
        if gc._requires_grad:
            return _Fold.apply(gc, C, g), None
        return raw_col2im(gc, C, g), None


class _Fold(Function):
    _backward_name = "Col2ImBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, cols, C, g):
        ctx.meta = g
        return raw_col2im(cols, C, g)

    @staticmethod
    def backward(ctx, gx):
        if gx._requires_grad:
            return _Unfold.apply(gx, ctx.meta), None, None
        return raw_im2col(gx, ctx.meta), None, None


def _apply(fn, *args):
    if grad_mode.is_grad_enabled() and args[0].requires_grad:
        return fn.apply(*args)
    return fn.forward(_NoCtx(), *args)


def _fold_args(kernel_size, dilation, padding, stride):
    k = ntuple(kernel_size, 2, "kernel_size", "fold")
    d = ntuple(dilation, 2, "dilation", "fold")
    p = ntuple(padding, 2, "padding", "fold")
    s = ntuple(stride, 2, "stride", "fold")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: {k[1]}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: {d[1]}")
    if any(v < 0 for v in p):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    return k, d, p, s


@define("unfold", "convolution", key="F.unfold", torch=False, method=False, functional=True,
        doc="unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor\n\n"
            "Sliding blocks of a [N, C, H, W] (or [C, H, W]) input as columns [N, C*kh*kw, L] (im2col).")
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    if input.dim() not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {shape_str(input.shape)}")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"im2col_out_cpu\" not implemented for '{input.dtype.word}'")
    batched = input.dim() == 4
    x = input if batched else S.unsqueeze(input, 0)
    in_size = tuple(x.shape[2:])
    out_size = conv_out_size(in_size, k, s, p, d)
    if any(o < 1 for o in out_size):
        raise RuntimeError(f"Given input with spatial size ({in_size[0]}, {in_size[1]}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape "
                           f"of the array of sliding blocks as ({out_size[0]}, {out_size[1]}), but its "
                           f"components must be at least one.")
    out = _apply(_Unfold, x, ConvGeometry(k, s, p, d, in_size, out_size))
    return out if batched else S.squeeze(out, 0)


@define("fold", "convolution", torch=False, method=False, functional=True,
        doc="fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor\n\n"
            "Columns [N, C*kh*kw, L] summed back into [N, C, *output_size] (col2im; unfold's adjoint).")
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if input.dim() not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {shape_str(input.shape)}")
    out_hw = ntuple(output_size, 2, "output_size", "fold")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"col2im_out_cpu\" not implemented for '{input.dtype.word}'")
    batched = input.dim() == 3
    cols = input if batched else S.unsqueeze(input, 0)
    K = k[0] * k[1]
    if cols.shape[1] % K:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={cols.shape[1]} and kernel_size=({k[0]}, {k[1]}).")
    blocks = conv_out_size(out_hw, k, s, p, d)
    if any(b < 1 for b in blocks) or cols.shape[2] != blocks[0] * blocks[1]:
        raise RuntimeError(f"Given output_size=({out_hw[0]}, {out_hw[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
                           f"expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={cols.shape[2]}.")
    out = _apply(_Fold, cols, cols.shape[1] // K, ConvGeometry(k, s, p, d, out_hw, blocks))
    return out if batched else S.squeeze(out, 0)


@define("unfold", "shape", torch=False,
        doc="unfold(dimension, size, step) -> Tensor\n\nA view of every window of `size` elements "
            "along `dimension`, `step` apart, as a new last dim.")
def tensor_unfold(x, dimension, size, step):
    nd = max(x.dim(), 1)
    d = wrap_dim(dimension, nd)
    shape = list(x.shape) or [1]
    strides = list(x._stride) or [1]
    L = shape[d]
    if size > L:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {L} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    nwin = (L - size) // step + 1
    new_shape = shape[:d] + [nwin] + shape[d + 1:] + [size]
    new_stride = strides[:d] + [strides[d] * step] + strides[d + 1:] + [strides[d]]
    if x.dim() == 0:
        new_shape, new_stride = [size], [1]
    in_shape = x.shape

    def back(gw):
        if x.dim() == 0:
            return S.reshape(gw, ())
        A = numel(in_shape[:d])
        B = numel(in_shape[d + 1:])
        gc = contiguous_operand(gw)
        cols = gc._view((A, B * size, nwin), (nwin * B * size, 1, B * size), gc._offset)
        out = empty(in_shape, gw.dtype, gw.device)
        target = out._view((A, B, L), (L * B, 1, B), 0)
        g = ConvGeometry((size,), (step,), (0,), (1,), (L,), (nwin,))
        if gc.numel() == 0:
            E.fill(out, 0)
        else:
            _be(gw).col2im(g, target, cols)
        return out
    return S.make_view("UnfoldBackward0", x, new_shape, new_stride, x._offset, back)
