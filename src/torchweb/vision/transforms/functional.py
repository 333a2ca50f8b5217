"""torchvision.transforms.functional on torchweb tensors and PIL-free images.

Tensors are (..., C, H, W); a torchweb.vision.Image (what the datasets hand out in place of a
PIL image) goes through the same tensor code and comes back as an Image from the geometric
operations. Numerics follow torchvision's tensor path, so a tensor gives the same output here
as torchvision gives it."""

import numbers
from enum import Enum

import torchweb as torch

from .._image import Image
from . import _color, _geometry
from ._color import adjust_brightness as _brightness, adjust_contrast as _contrast, \
    adjust_gamma as _gamma, adjust_hue as _hue, adjust_saturation as _saturation, \
    invert as _invert, rgb_to_grayscale as _gray, normalize  # noqa: F401


class InterpolationMode(Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _mode(interpolation):
    if isinstance(interpolation, int):   # PIL's integer codes, as torchvision still accepts
        interpolation = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
                         3: InterpolationMode.BICUBIC}[interpolation]
    if not isinstance(interpolation, InterpolationMode):
        interpolation = InterpolationMode(interpolation)
    if interpolation not in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT,
                             InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
        raise ValueError(f"Interpolation mode {interpolation.value} is unsupported with Tensor input")
    return interpolation.value


def _on_tensor(fn):
    """fn(tensor, ...) that also takes an Image (giving back an Image of fn's result, same mode)."""
    def wrapper(img, *args, **kwargs):
        if isinstance(img, Image):
            return Image.from_chw(fn(img.to_chw(), *args, **kwargs), img.mode)
        return fn(img, *args, **kwargs)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def get_dimensions(img):
    if isinstance(img, Image):
        return [img.hwc.shape[2], img.height, img.width]
    return _geometry.dimensions(img)


def get_image_size(img):
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


def _hwc_tensor(pic):
    """A PIL-free picture as an (H, W, C) tensor: an Image, a numpy array, nested lists, a
    tensor laid out (H, W[, C]) as an array, or a PIL image where Pillow and numpy exist."""
    if isinstance(pic, Image):
        return pic.hwc
    if hasattr(pic, "getbands") and hasattr(pic, "mode"):   # a real PIL image
        import numpy as np
        pic = np.array(pic, copy=True)
    if isinstance(pic, torch.Tensor):
        t = pic
    elif type(pic).__module__ == "numpy":
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        t = torch.as_tensor(pic)   # on the default device, as the model that takes it
    elif isinstance(pic, (list, tuple)):
        t = torch.tensor(pic)
        if t.dtype == torch.int64 and t.numel() and 0 <= int(t.min()) and int(t.max()) <= 255:
            t = t.to(torch.uint8)   # nested lists of 0..255 are 8-bit pixels
    else:
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if t.ndim not in (2, 3):
        raise ValueError(f"pic should be 2/3 dimensional. Got {t.ndim} dimensions.")
    return t.unsqueeze(-1) if t.ndim == 2 else t


def to_tensor(pic):
    """(C, H, W) float in [0, 1] for 8-bit pictures; other dtypes keep their values."""
    img = _hwc_tensor(pic).permute(2, 0, 1).contiguous()
    return img.to(torch.get_default_dtype()).div(255) if img.dtype == torch.uint8 else img


def pil_to_tensor(pic):
    return _hwc_tensor(pic).permute(2, 0, 1).contiguous()


def to_pil_image(pic, mode=None):
    """An Image (torchvision gives a PIL image) from a (C, H, W) tensor or (H, W, C) array:
    floats are scaled by 255 as torchvision does."""
    if isinstance(pic, Image):
        return pic
    if isinstance(pic, torch.Tensor):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        chw = pic.unsqueeze(0) if pic.ndim == 2 else pic
    else:
        chw = _hwc_tensor(pic).permute(2, 0, 1)
    if chw.is_floating_point() and mode != "F":
        chw = chw.mul(255).byte()
    return Image.from_chw(chw.to(torch.uint8), mode)


def convert_image_dtype(image, dtype=torch.float):
    if not isinstance(image, torch.Tensor):
        raise TypeError("Input img should be Tensor Image")
    return _color.convert_image_dtype(image, dtype)


hflip = _on_tensor(_geometry.hflip)
vflip = _on_tensor(_geometry.vflip)
crop = _on_tensor(_geometry.crop)


@_on_tensor
def pad(img, padding, fill=0, padding_mode="constant"):
    return _geometry.pad(img, padding, fill, padding_mode)


def _size_list(size):
    if isinstance(size, numbers.Number):
        return [int(size)]
    return list(size)


@_on_tensor
def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    if isinstance(size, (list, tuple)) and len(size) not in (1, 2):
        raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/list")
    if max_size is not None and len(_size_list(size)) != 1:
        raise ValueError("max_size should only be passed if size specifies the length of the smaller edge, i.e. "
                         "size should be an int or a sequence of length 1 in torchscript mode.")
    _, h, w = get_dimensions(img)
    out = _geometry.resized_output_size((h, w), _size_list(size), max_size)
    if [h, w] == out:
        return img
    return _geometry.resize(img, out, _mode(interpolation), antialias)


@_on_tensor
def center_crop(img, output_size):
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, ih, iw = get_dimensions(img)
    ch, cw = output_size
    if cw > iw or ch > ih:
        ltrb = [(cw - iw) // 2 if cw > iw else 0, (ch - ih) // 2 if ch > ih else 0,
                (cw - iw + 1) // 2 if cw > iw else 0, (ch - ih + 1) // 2 if ch > ih else 0]
        img = _geometry.pad(img, ltrb, fill=0)
        _, ih, iw = get_dimensions(img)
        if cw == iw and ch == ih:
            return img
    return _geometry.crop(img, int(round((ih - ch) / 2.0)), int(round((iw - cw) / 2.0)), ch, cw)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


@_on_tensor
def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    mode = _mode(interpolation)
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"Interpolation mode {mode} is unsupported for rotate")
    if isinstance(fill, (int, float)):
        fill = [float(fill)] * get_dimensions(img)[0]
    return _geometry.rotate(img, angle, mode, expand, center, fill)


adjust_brightness = _on_tensor(_brightness)
adjust_contrast = _on_tensor(_contrast)
adjust_saturation = _on_tensor(_saturation)
adjust_hue = _on_tensor(_hue)
adjust_gamma = _on_tensor(_gamma)
invert = _on_tensor(_invert)


def rgb_to_grayscale(img, num_output_channels=1):
    if isinstance(img, Image):
        out = _gray(img.to_chw()[:3], num_output_channels)
        return Image.from_chw(out, "L" if num_output_channels == 1 else "RGB")
    return _gray(img, num_output_channels)


to_grayscale = rgb_to_grayscale


def erase(img, i, j, h, w, v, inplace=False):
    if not isinstance(img, torch.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


def _is_image(x):
    return isinstance(x, (torch.Tensor, Image))


