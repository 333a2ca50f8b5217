"""torchvision.transforms.v2.functional: v1's functional under v2's names, plus to_image and
to_dtype (v2's scaling: int -> float multiplies by 1/max, int -> int shifts bits)."""

import torchweb as torch

from ..._image import Image
from .. import _color
from ..functional import (InterpolationMode, adjust_brightness, adjust_contrast, adjust_gamma,  # noqa: F401
                          adjust_hue, adjust_saturation, center_crop, convert_image_dtype, crop, erase,
                          get_dimensions, get_image_num_channels, get_image_size, hflip, invert, normalize,
                          pad, pil_to_tensor, resize, resized_crop, rgb_to_grayscale, rotate,
                          to_grayscale, to_pil_image, to_tensor, vflip, _hwc_tensor)

horizontal_flip = hflip
vertical_flip = vflip
get_size = lambda img: get_dimensions(img)[1:]  # noqa: E731  (v2's [h, w])

_BITS = {torch.uint8: 8, torch.int8: 7, torch.int16: 15, torch.int32: 31, torch.int64: 63}


def to_image(inpt):
    """A (C, H, W) tensor: arrays and Images are (H, W[, C]) and get permuted; a tensor is
    taken as already (..., C, H, W), as v2.ToImage does."""
    if isinstance(inpt, torch.Tensor):
        return inpt if inpt.ndim >= 3 else inpt.unsqueeze(0)
    return _hwc_tensor(inpt).permute(2, 0, 1).contiguous()


def to_dtype(inpt, dtype=torch.float, scale=False):
    if isinstance(inpt, Image):
        inpt = inpt.to_chw()
    if inpt.dtype == dtype:
        return inpt
    if not scale:
        return inpt.to(dtype)
    if inpt.is_floating_point():
        if dtype.is_floating_point:
            return inpt.to(dtype)
        if (inpt.dtype == torch.float32 and dtype in (torch.int32, torch.int64)) or \
                (inpt.dtype == torch.float64 and dtype == torch.int64):
            raise RuntimeError(f"The conversion from {inpt.dtype} to {dtype} cannot be performed safely.")
        return inpt.mul(float(_color.max_value(dtype)) + 1.0 - 1e-3).to(dtype)
    if dtype.is_floating_point:
        return inpt.to(dtype).mul_(1.0 / _color.max_value(inpt.dtype))
    shift = abs(_BITS[inpt.dtype] - _BITS[dtype])
    if _BITS[inpt.dtype] > _BITS[dtype]:
        return inpt.bitwise_right_shift(shift).to(dtype)
    return inpt.to(dtype).bitwise_left_shift(shift)


to_dtype_image = to_dtype
