"""torch.* functions that are ATen's forms of ops torchweb has under their nn.functional names
(torch.convolution, grid_sampler, affine_grid_generator, the in-place dropouts, ...): PyTorch
exposes them, libraries call them, and each is the F.* op with ATen's arguments."""

from ..conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from ..grid_sample import affine_grid, grid_sample
from ..registry import define
from . import dropout as _dropout
from ..._creation import full
from ..index_ops import nonzero
from ..join import cat

_CONVS = {1: (conv1d, conv_transpose1d), 2: (conv2d, conv_transpose2d), 3: (conv3d, conv_transpose3d)}


@define("convolution", "convolution", method=False,
        doc="convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, "
            "groups) -> Tensor\n\nATen's convolution: conv{1,2,3}d or conv_transpose{1,2,3}d by the "
            "weight's rank and `transposed`.")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    r = weight.dim() - 2
    if r not in _CONVS:
        raise RuntimeError(f"convolution: expected a weight of 3, 4 or 5 dims, got {weight.dim()} "
                           f"(shape {list(weight.shape)})")
    conv, conv_t = _CONVS[r]
    if transposed:
        return conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return conv(input, weight, bias, stride, padding, dilation, groups)


_INTERPOLATION = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _grid_sampler(name, input, grid, interpolation_mode, padding_mode, align_corners):
    if interpolation_mode not in _INTERPOLATION or padding_mode not in _PADDING:
        raise RuntimeError(f"{name}(): interpolation_mode must be 0, 1 or 2 (bilinear, nearest, bicubic) "
                           f"and padding_mode 0, 1 or 2 (zeros, border, reflection); got "
                           f"{interpolation_mode}, {padding_mode}")
    return grid_sample(input, grid, _INTERPOLATION[interpolation_mode], _PADDING[padding_mode],
                       bool(align_corners))


@define("grid_sampler", "other", method=False,
        doc="grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor\n\n"
            "grid_sample with ATen's integer modes (0 bilinear, 1 nearest, 2 bicubic; 0 zeros, "
            "1 border, 2 reflection).")
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler("grid_sampler", input, grid, interpolation_mode, padding_mode, align_corners)


@define("grid_sampler_2d", "other", method=False,
        doc="grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor\n\n"
            "grid_sampler for 4-D input.")
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != 4:
        raise RuntimeError(f"grid_sampler_2d(): expected 4D input, but got input with sizes {list(input.shape)}")
    return _grid_sampler("grid_sampler_2d", input, grid, interpolation_mode, padding_mode, align_corners)


@define("grid_sampler_3d", "other", method=False,
        doc="grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor\n\n"
            "grid_sampler for 5-D input.")
def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != 5:
        raise RuntimeError(f"grid_sampler_3d(): expected 5D input, but got input with sizes {list(input.shape)}")
    return _grid_sampler("grid_sampler_3d", input, grid, interpolation_mode, padding_mode, align_corners)


@define("affine_grid_generator", "other", method=False,
        doc="affine_grid_generator(theta, size, align_corners) -> Tensor\n\naffine_grid with ATen's arguments.")
def affine_grid_generator(theta, size, align_corners):
    return affine_grid(theta, size, bool(align_corners))


@define("feature_dropout", "other", method=False,
        doc="feature_dropout(input, p, train) -> Tensor\n\nWhole channels of input (N, C, *) zeroed "
            "with probability p, the rest scaled by 1 / (1 - p).")
def feature_dropout(input, p, train):
    return _dropout.dropout_impl(input, p, train, False, feature=True)


def _in_place_dropout(name, **kind):
    def fn(input, p, train):
        _dropout._check_p(p)
        return _dropout.dropout_impl(input, p, train, True, **kind)
    fn.__name__ = fn.__qualname__ = name
    what = name[:-1]
    define(name, "other", method=False,
           doc=f"{name}(input, p, train) -> Tensor\n\nIn-place {what}: input itself, changed.")(fn)
    return fn


dropout_ = _in_place_dropout("dropout_")
feature_dropout_ = _in_place_dropout("feature_dropout_", feature=True)
alpha_dropout_ = _in_place_dropout("alpha_dropout_", alpha=True)
feature_alpha_dropout_ = _in_place_dropout("feature_alpha_dropout_", feature=True, alpha=True)


@define("frobenius_norm", "reduction", method=False, out=True, dtypes="floating",
        doc="frobenius_norm(input, dim, keepdim=False) -> Tensor\n\nsqrt(sum(input ** 2)) over dim.")
def frobenius_norm(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    if dim is None and axis is None:
        raise TypeError("frobenius_norm() missing 1 required positional argument: 'dim'")
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return (input * input).sum(dim, keepdim=keepdim).sqrt()


@define("norm_except_dim", "reduction", method=False, dtypes="floating",
        doc="norm_except_dim(v, pow=2, dim=0) -> Tensor\n\nThe pow-norm of v over every dim but "
            "`dim` (kept, size 1 elsewhere): weight_norm's g. dim=-1: over all of v.")
def norm_except_dim(v, pow=2, dim=0, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if dim == -1:
        return v.norm(pow)
    d = dim % v.dim()
    others = tuple(i for i in range(v.dim()) if i != d)
    return v.norm(pow, dim=others, keepdim=True)


@define("nonzero_static", "indexing", dtypes="all", out=True,
        doc="nonzero_static(input, *, size, fill_value=-1) -> Tensor\n\nnonzero's (n, input.dim()) "
            "indices with exactly `size` rows: cut to size, or padded with fill_value.")
def nonzero_static(input, *, size, fill_value=-1):
    idx = nonzero(input)
    n = idx.shape[0]
    if n >= size:
        return idx[:size]
    pad = full((size - n, idx.shape[1]), fill_value, dtype=idx.dtype, device=idx.device)
    return cat([idx, pad], 0)
