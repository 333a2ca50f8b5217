"""nn.functional.pad (constant, reflect, replicate, circular; negative pads crop) with one
gather kernel forward and one candidate-sum kernel backward (backends/webgpu/kernels/pad.py),
and the channel rearrangements pixel_shuffle, pixel_unshuffle, channel_shuffle (views and a
copy, so autograd comes from the view ops)."""

from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends import backend_for
from ..backends.plans import PadSpec
from . import shape as S
from .._size import shape_str
from .operands import empty, is_tensor
from .elementwise import contiguous_operand
from .adjoint import linear_backward
from .registry import define

_MODES = ("constant", "reflect", "replicate", "circular")
_NODE = {"constant": "ConstantPadNdBackward0", "reflect": "ReflectionPad{r}DBackward0",
         "replicate": "ReplicationPad{r}DBackward0", "circular": "CircularPad{r}DBackward0"}


def _be(t):
    return backend_for(t.device.type)


class _Pad(Function):
    _backward_name = "ConstantPadNdBackward0"
    _double_backward = True   # (ops/adjoint.py)

    @staticmethod
    def forward(ctx, x, spec):
        nb = x.dim() - len(spec.pads)
        shape = tuple(x.shape[:nb]) + tuple(s + a + b for s, (a, b) in zip(x.shape[nb:], spec.pads))
        out = empty(shape, x.dtype, x.device)
        if out.numel():
            _be(x).pad(spec, out, x, nb)
        ctx.meta = (x.shape, spec)
        return out

    @staticmethod
    def backward(ctx, g):
        shape, spec = ctx.meta
        nb = len(shape) - len(spec.pads)

        def crop(g):
            gin = empty(shape, g.dtype, g.device)
            if gin.numel():
                _be(g).pad_backward(spec, gin, contiguous_operand(g), nb)
            return gin
        # a padding (with zeros) is linear: the adjoint of its backward is the padding
        zeros = PadSpec(spec.mode, spec.pads, 0.0)
        return linear_backward(g, crop, lambda gg: _pad_fn(spec.mode, len(spec.pads)).apply(gg, zeros),
                               "PadBackwardBackward0"), None


_PAD_FNS = {}


def _pad_fn(mode, r):
    key = (mode, r)
    fn = _PAD_FNS.get(key)
    if fn is None:
        fn = _PAD_FNS[key] = type(f"_Pad{mode}{r}", (_Pad,), {"_backward_name": _NODE[mode].format(r=r)})
    return fn


class _NoCtx:
    pass


@define("pad", "other", torch=False, method=False, functional=True,
        doc="pad(input, pad, mode='constant', value=None) -> Tensor\n\nPads the last len(pad) // 2 dims "
            "(pad lists (before, after) from the last dim backwards); negative pads crop. Modes: "
            "'constant', 'reflect', 'replicate', 'circular'.")
def pad(input, pad, mode="constant", value=None):
    if not is_tensor(input):
        raise TypeError(f"pad(): argument 'input' must be Tensor, not {type(input).__name__}")
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    r = len(pad) // 2
    if r > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension "
                           f"but got padding length {len(pad)} and input of dimension {input.dim()}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    nb = input.dim() - r
    pads = tuple((pad[2 * (r - 1 - i)], pad[2 * (r - 1 - i) + 1]) for i in range(r))
    if mode == "constant":
        for i, (L, (a, b)) in enumerate(zip(input.shape[nb:], pads)):
            if L + a + b < 0:
                raise RuntimeError(f"The input size {L}, plus negative padding {a} and {b} resulted in a negative "
                                   f"output size, which is invalid. Check dimension {nb + i} of your input.")
        value = 0 if value is None else value
    else:
        if value is not None and value != 0:
            raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
        value = 0
        dim = input.dim()
        if not (r in (1, 2, 3) and dim in (r + 1, r + 2)):
            raise NotImplementedError(
                f"Padding size {len(pad)} is not supported for {dim}D input tensor.\nSupported combinations "
                "for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
        for i, (L, (a, b)) in enumerate(zip(input.shape[nb:], pads)):
            d = nb + i
            if mode == "reflect" and (a >= L or b >= L):
                raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({a}, {b}) at dimension {d} of input "
                                   f"{shape_str(input.shape)}")
            if mode == "circular" and (a > L or b > L):
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if L == 0 and mode != "circular":
                raise RuntimeError(f"Expected {r + 1}D or {r + 2}D (batch mode) tensor with possibly 0 batch "
                                   f"size and other non-zero dimensions for input, but got: "
                                   f"{shape_str(input.shape)}")
            if L + a + b <= 0:
                raise RuntimeError(f"input tensor with shape {shape_str(input.shape)} is too small for the "
                                   f"padding ({a}, {b}) at dimension {d}")
    if mode == "circular" and any(a < 0 or b < 0 for a, b in pads):
        # PyTorch crops first and wraps around what is left
        for i, (a, b) in enumerate(pads):
            if a < 0 or b < 0:
                L = input.shape[nb + i]
                input = S.narrow(input, nb + i, max(-a, 0), L - max(-a, 0) - max(-b, 0))
        pads = tuple((max(a, 0), max(b, 0)) for a, b in pads)
    fn = _pad_fn(mode, r)
    spec = PadSpec(mode, pads, value)
    if grad_mode.is_grad_enabled() and input.requires_grad:
        return fn.apply(input, spec)
    return fn.forward(_NoCtx(), input, spec)


# -- channel rearrangements ----------------------------------------------------------------------
def _at_least_3d(name, input):
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")


def _shuffle_args(name, input, what, factor):
    """(r, the lead dims, (C, H, W)) with the checks both pixel shuffles make first."""
    r = int(factor)
    _at_least_3d(name, input)
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {r}")
    return r, tuple(input.shape[:-3]), tuple(input.shape[-3:])


@define("pixel_shuffle", "shape", method=False, functional=True,
        doc="pixel_shuffle(input, upscale_factor) -> Tensor\n\n[*, C*r*r, H, W] -> [*, C, H*r, W*r].")
def pixel_shuffle(input, upscale_factor):
    r, lead, (C, H, W) = _shuffle_args("pixel_shuffle", input, "upscale_factor", upscale_factor)
    if C % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                           f"square of upscale_factor, but input.size(-3)={C} is not divisible by {r * r}")
    n = len(lead)
    x = S.reshape(input, lead + (C // (r * r), r, r, H, W))
    x = S.permute(x, list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2])
    return S.reshape(x, lead + (C // (r * r), H * r, W * r))


@define("pixel_unshuffle", "shape", method=False, functional=True,
        doc="pixel_unshuffle(input, downscale_factor) -> Tensor\n\n[*, C, H*r, W*r] -> [*, C*r*r, H, W].")
def pixel_unshuffle(input, downscale_factor):
    r, lead, (C, H, W) = _shuffle_args("pixel_unshuffle", input, "downscale_factor", downscale_factor)
    if H % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={H} is not divisible by {r}")
    if W % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={W} is not divisible by {r}")
    n = len(lead)
    x = S.reshape(input, lead + (C, H // r, r, W // r, r))
    x = S.permute(x, list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3])
    return S.reshape(x, lead + (C * r * r, H // r, W // r))


@define("channel_shuffle", "shape", method=False, functional=True,
        doc="channel_shuffle(input, groups) -> Tensor\n\n[N, g*k, *] -> the channels regrouped as [N, k*g, *] "
            "(channel i*k + j moves to j*g + i).")
def channel_shuffle(input, groups):
    g = int(groups)
    _at_least_3d("channel_shuffle", input)
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    N, C = input.shape[0], input.shape[1]
    if C % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {C} channels and {g} groups.")
    rest = tuple(input.shape[2:])
    x = S.reshape(input, (N, g, C // g) + rest)
    x = S.transpose(x, 1, 2)
    return S.reshape(x, (N, C) + rest)


@define("native_channel_shuffle", "shape", method=False, functional=True,
        doc="native_channel_shuffle(input, groups) -> Tensor\n\nchannel_shuffle (ATen's native kernel's name).")
def native_channel_shuffle(input, groups):
    return channel_shuffle(input, groups)
