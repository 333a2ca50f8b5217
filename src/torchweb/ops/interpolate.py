"""nn.functional.interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear,
area; antialiased bilinear and bicubic) with PyTorch's size and scale rules, and the upsample
aliases. One separable tap kernel
forward and one gather-style kernel backward (backends/webgpu/kernels/interpolate.py); 'area'
is adaptive_avg_pool."""

import math
import struct

from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends import backend_for
from ..backends.plans import InterpolationSpec
from .operands import empty, is_tensor
from .elementwise import contiguous_operand
from .adjoint import linear_backward
from .registry import define
from . import pooling

_KERNEL = {"nearest": "nearest", "nearest-exact": "nearest-exact", "linear": "linear", "bilinear": "linear",
           "trilinear": "linear", "bicubic": "cubic"}
_RANK = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}
_NODE = {"nearest": "UpsampleNearest{r}DBackward0", "nearest-exact": "UpsampleNearestExact{r}DBackward0",
         "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
         "trilinear": "UpsampleTrilinear3DBackward0", "bicubic": "UpsampleBicubic2DBackward0",
         "bilinear-aa": "UpsampleBilinear2DAaBackward0", "bicubic-aa": "UpsampleBicubic2DAaBackward0"}


def _be(t):
    return backend_for(t.device.type)


def _f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


class _Interp(Function):
    _double_backward = True   # (ops/adjoint.py)
    @staticmethod
    def forward(ctx, x, out_size, spec):
        r = len(out_size)
        nb = x.dim() - r
        out = empty(tuple(x.shape[:nb]) + tuple(out_size), x.dtype, x.device)
        if out.numel():
            _be(x).interpolate(spec, out, x, nb)
        ctx.meta = (x.shape, tuple(out_size), spec)
        return out

    @staticmethod
    def backward(ctx, g):
        shape, out_size, spec = ctx.meta

        def scatter(g):
            gin = empty(shape, g.dtype, g.device)
            if gin.numel():
                _be(g).interpolate_backward(spec, gin, contiguous_operand(g))
            return gin
        # interpolation is linear in its input: the adjoint of its backward is itself
        return linear_backward(g, scatter, lambda gg: _Interp.apply(gg, out_size, spec),
                               "UpsampleBackwardBackward0"), None, None


_FNS = {}


def _fn(mode, r):
    key = (mode, r)
    if key not in _FNS:
        _FNS[key] = type(f"_Interp_{mode}_{r}", (_Interp,), {"_backward_name": _NODE[mode].format(r=r)})
    return _FNS[key]


class _NoCtx:
    pass


def _per_dim(value, cast, input, words):
    """size or scale_factor as one value per spatial dim (a number stands for all of them);
    words: how PyTorch's error names it."""
    dim = input.dim() - 2
    if not isinstance(value, (list, tuple)):
        return [cast(value)] * max(dim, 0)
    if len(value) != dim:
        name, of, fmt = words
        raise ValueError(f"Input and {name} must have the same number of spatial dimensions, but got "
                         f"input with spatial dimensions of {list(input.shape[2:])} and {of} "
                         f"{list(value)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                         f"and {fmt} format.")
    return [cast(v) for v in value]


@define("interpolate", "other", torch=False, method=False, functional=True,
        doc="interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None, "
            "recompute_scale_factor=None, antialias=False) -> Tensor\n\nResamples the spatial dims of a "
            "3-D, 4-D or 5-D input: 'nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', "
            "'trilinear', 'area'; antialias=True (bilinear, bicubic) widens the filter when shrinking.")
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if not is_tensor(input):
        raise TypeError(f"interpolate(): argument 'input' must be Tensor, not {type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        output_size = _per_dim(size, int, input, ("output", "output size of", "output size in (o1, o2, ...,oK)"))
    elif scale_factor is not None:
        output_size = None
        scale_factors = _per_dim(scale_factor, float, input,
                                 ("scale_factor", "scale_factor of shape", "scale_factor in (s1, s2, ...,sK)"))
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor and scale_factors is not None:
        output_size = [math.floor(float(input.shape[i + 2]) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a "
                         "4-D tensor as input")
    if input.dim() not in (3, 4, 5) or mode not in ("nearest", "nearest-exact", "area", "linear", "bilinear",
                                                     "trilinear", "bicubic"):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in _RANK and _RANK[mode] != dim:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_RANK[mode] + 2}D input")
    in_size = tuple(input.shape[2:])
    if output_size is None:
        output_size = [int(math.floor(s * f)) for s, f in zip(in_size, scale_factors)]
    if mode == "area":
        return pooling._adaptive_avg(dim, input, tuple(output_size))
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"upsample_{mode}{dim}d_out_frame\" not implemented for '{input.dtype.word}'")
    if any(o <= 0 for o in output_size) or any(s <= 0 for s in in_size):
        names = ("D", "H", "W")[3 - dim:]
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(f'{n}: {s}' for n, s in zip(names, in_size))}) output "
                           f"({', '.join(f'{n}: {s}' for n, s in zip(names, output_size))})")
    kmode = _KERNEL[mode]
    if antialias:
        kmode = "aa-" + kmode
    scales = []
    for i, (S, O) in enumerate(zip(in_size, output_size)):
        sf = scale_factors[i] if scale_factors is not None else None
        if kmode in ("linear", "cubic", "aa-linear", "aa-cubic") and align_corners:
            scales.append(_f32((S - 1) / (O - 1)) if O > 1 else 0.0)
        elif sf is not None and sf > 0:
            scales.append(_f32(1.0 / sf))
        else:
            scales.append(_f32(S / O))
    fn = _fn(mode + ("-aa" if antialias else ""), dim)
    args = (input, tuple(output_size), InterpolationSpec(kmode, tuple(scales), bool(align_corners)))
    if grad_mode.is_grad_enabled() and input.requires_grad:
        return fn.apply(*args)
    return fn.forward(_NoCtx(), *args)


@define("upsample", "other", torch=False, method=False, functional=True,
        doc="upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None) -> Tensor\n\n"
            "interpolate (deprecated name).")
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


@define("upsample_nearest", "other", torch=False, method=False, functional=True,
        doc="upsample_nearest(input, size=None, scale_factor=None) -> Tensor\n\ninterpolate(mode='nearest').")
def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


@define("upsample_bilinear", "other", torch=False, method=False, functional=True,
        doc="upsample_bilinear(input, size=None, scale_factor=None) -> Tensor\n\n"
            "interpolate(mode='bilinear', align_corners=True).")
def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
