"""nn.functional.grid_sample (bilinear, nearest, bicubic; zeros, border, reflection padding;
2-D and 3-D) with its own kernel and backward (backends/webgpu/kernels/grid_sample.py), and
affine_grid, a composite: a constant base grid times theta^T (so its gradient comes from
matmul)."""

import struct

from .. import _dtype as D
from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends import backend_for
from ..backends.plans import GridSampleSpec
from . import elementwise as E
from .._size import shape_str
from .operands import common_device, empty, is_tensor
from .elementwise import contiguous_operand
from .registry import define
from . import shape as S
from .._creation import tensor
from .linalg import matmul


def _be(t):
    return backend_for(t.device.type)


class _GridSample(Function):
    _backward_name = "GridSampler2DBackward0"

    @staticmethod
    def forward(ctx, x, grid, spec):
        r = x.dim() - 2
        out = empty((x.shape[0], x.shape[1]) + tuple(grid.shape[1:1 + r]), x.dtype, x.device)
        if out.numel():
            _be(x).grid_sample(spec, out, x, grid)
        ctx.save_for_backward(x, grid)
        ctx.spec = spec
        return out

    @staticmethod
    def backward(ctx, g):
        x, grid = ctx.saved_tensors
        spec = ctx.spec
        need_x, need_grid = ctx.needs_input_grad[:2]
        gx = E.fill(empty(x.shape, D.float32, x.device), 0) if need_x else None
        gg = empty(grid.shape, grid.dtype, grid.device) if need_grid else None
        if gg is not None and spec.mode == "nearest":
            E.fill(gg, 0)
            gg_k = None
        else:
            gg_k = gg
        if (gx is not None or gg_k is not None) and grid.numel() and x.numel():
            _be(g).grid_sample_backward(spec, gx, gg_k, contiguous_operand(g), x, grid)
        elif gg_k is not None:
            E.fill(gg_k, 0)
        if gx is not None and x.dtype is not D.float32:
            gx = E.copy_into(empty(x.shape, x.dtype, x.device), gx)
        return gx, gg, None


_GS3 = type("_GridSample3D", (_GridSample,), {"_backward_name": "GridSampler3DBackward0"})


class _NoCtx:
    def save_for_backward(self, *t):
        pass


@define("grid_sample", "other", torch=False, method=False, functional=True,
        doc="grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None) -> Tensor\n\n"
            "input [N, C, H, W] (or [N, C, D, H, W]) sampled at grid [N, Ho, Wo, 2] (x, y in [-1, 1]): "
            "'bilinear', 'nearest' or 'bicubic' (2-D), padding 'zeros', 'border' or 'reflection'.")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if not is_tensor(input) or not is_tensor(grid):
        raise TypeError("grid_sample(): expected Tensor arguments for input and grid")
    common_device(input, grid, what="grid_sample")
    if input.dim() not in (4, 5) or input.dim() != grid.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {shape_str(input.shape)} and grid with sizes "
                           f"{shape_str(grid.shape)}")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype.c_scalar} and grid has {grid.dtype.c_scalar}")
    r = input.dim() - 2
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {shape_str(input.shape)} and grid with sizes {shape_str(grid.shape)}")
    if grid.shape[-1] != r:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {r} in last dimension, but got grid with "
                           f"sizes {shape_str(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {shape_str(input.shape)} with dimension {i} being empty")
    if mode == "bicubic" and r != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"grid_sampler_2d_cpu\" not implemented for '{input.dtype.word}'")
    align = bool(align_corners)
    fn = _GridSample if r == 2 else _GS3
    spec = GridSampleSpec(mode, padding_mode, align)
    if grad_mode.is_grad_enabled() and (input.requires_grad or grid.requires_grad):
        return fn.apply(input, grid, spec)
    return fn.forward(_NoCtx(), input, grid, spec)


def _f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _linspace(n, align):
    """PyTorch's linspace_from_neg_one in float32 arithmetic."""
    if n <= 1:
        return [0.0]
    step = _f32(2.0 / (n - 1))
    half = n // 2
    vals = [_f32(-1.0 + _f32(step * i)) if i < half else _f32(1.0 - _f32(step * (n - 1 - i))) for i in range(n)]
    if not align:
        vals = [_f32(_f32(v * (n - 1)) / n) for v in vals]
    return vals


@define("affine_grid", "other", torch=False, method=False, functional=True,
        doc="affine_grid(theta, size, align_corners=None) -> Tensor\n\nThe sampling grid [N, H, W, 2] "
            "(or [N, D, H, W, 3]) of the affine maps theta [N, 2, 3] (or [N, 3, 4]) for grid_sample.")
def affine_grid(theta, size, align_corners=None):
    if not is_tensor(theta) or not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {getattr(theta, 'dtype', type(theta))}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{list(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{list(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid(): expected theta's batch size {theta.shape[0]} to match size[0] = {size[0]}")
    align = bool(align_corners)
    axes = [_linspace(n, align) for n in spatial]       # D, H, W order; the grid lists x (W) first
    r = len(spatial)
    rows = []
    import itertools
    for idx in itertools.product(*(range(n) for n in spatial)):
        rows.append([axes[r - 1 - k][idx[r - 1 - k]] for k in range(r)] + [1.0])
    base = tensor(rows, dtype=theta.dtype, device=theta.device)                  # [prod(spatial), r + 1]
    grid = matmul(S.unsqueeze(base, 0), S.transpose(theta, 1, 2))                 # [N, prod, r]
    return S.reshape(grid, [size[0]] + list(spatial) + [r])
