"""Colour operations on (..., C, H, W) tensors, following torchvision's tensor path
(transforms/_functional_tensor.py, BSD-3-Clause)."""

import torchweb as torch

from ._geometry import dimensions

_MAX = {torch.uint8: 255, torch.int8: 127, torch.int16: 32767, torch.int32: 2147483647,
        torch.int64: 9223372036854775807}


def max_value(dtype):
    if dtype == getattr(torch, "uint16", None):
        return 65535
    return _MAX.get(dtype, 1)


def _check_channels(img, permitted):
    c = dimensions(img)[0]
    if c not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but found {c}")


def convert_image_dtype(image, dtype=torch.float):
    if image.dtype == dtype:
        return image
    if image.dtype.is_floating_point:
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == torch.float32 and dtype in (torch.int32, torch.int64)) or \
                (image.dtype == torch.float64 and dtype == torch.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        eps = 1e-3   # stretch [0, 1] so that 1.0 lands on the top value without overflowing
        return image.mul(max_value(dtype) + 1.0 - eps).to(dtype)
    in_max = max_value(image.dtype)
    if dtype.is_floating_point:
        return image.to(dtype).div(in_max)
    out_max = max_value(dtype)
    if in_max > out_max:
        return torch.div(image, (in_max + 1) // (out_max + 1), rounding_mode="floor").to(dtype)
    return image.to(dtype) * ((out_max + 1) // (in_max + 1))


def rgb_to_grayscale(img, num_output_channels=1):
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _check_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)
    else:
        gray = img.clone()
    return gray.expand(img.shape) if num_output_channels == 3 else gray


def blend(img1, img2, ratio):
    ratio = float(ratio)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, max_value(img1.dtype)).to(img1.dtype)


def adjust_brightness(img, factor):
    if factor < 0:
        raise ValueError(f"brightness_factor ({factor}) is not non-negative.")
    _check_channels(img, [1, 3])
    return blend(img, torch.zeros_like(img), factor)


def adjust_contrast(img, factor):
    if factor < 0:
        raise ValueError(f"contrast_factor ({factor}) is not non-negative.")
    _check_channels(img, [1, 3])
    dtype = img.dtype if img.dtype.is_floating_point else torch.float32
    src = rgb_to_grayscale(img) if dimensions(img)[0] == 3 else img
    mean = torch.mean(src.to(dtype), dim=(-3, -2, -1), keepdim=True)
    return blend(img, mean, factor)


def adjust_saturation(img, factor):
    if factor < 0:
        raise ValueError(f"saturation_factor ({factor}) is not non-negative.")
    _check_channels(img, [1, 3])
    if dimensions(img)[0] == 1:   # as PIL
        return img
    return blend(img, rgb_to_grayscale(img), factor)


def _rgb2hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = torch.max(img, dim=-3).values
    minc = torch.min(img, dim=-3).values
    eqc = maxc == minc   # grey pixels: S and H are 0; the divisors below become 1 there
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    cr_div = torch.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / cr_div, (maxc - g) / cr_div, (maxc - b) / cr_div
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return torch.stack((h, s, maxc), dim=-3)


def _hsv2rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = torch.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(torch.int32) % 6
    p = torch.clamp(v * (1.0 - s), 0.0, 1.0)
    q = torch.clamp(v * (1.0 - s * f), 0.0, 1.0)
    t = torch.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    mask = i.unsqueeze(-3) == torch.arange(6, device=i.device).view(-1, 1, 1)
    a1 = torch.stack((v, q, p, p, t, v), dim=-3)
    a2 = torch.stack((t, v, v, q, p, p), dim=-3)
    a3 = torch.stack((p, p, t, v, v, q), dim=-3)
    a4 = torch.stack((a1, a2, a3), dim=-4)
    return torch.einsum("...ijk, ...xijk -> ...xjk", mask.to(img.dtype), a4)


def adjust_hue(img, factor):
    if not -0.5 <= factor <= 0.5:
        raise ValueError(f"hue_factor ({factor}) is not in [-0.5, 0.5].")
    _check_channels(img, [1, 3])
    if dimensions(img)[0] == 1:
        return img
    orig = img.dtype
    h, s, v = _rgb2hsv(convert_image_dtype(img, torch.float32)).unbind(dim=-3)
    rgb = _hsv2rgb(torch.stack(((h + factor) % 1.0, s, v), dim=-3))
    return convert_image_dtype(rgb, orig)


def adjust_gamma(img, gamma, gain=1.0):
    _check_channels(img, [1, 3])
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    dtype = img.dtype
    x = img if dtype.is_floating_point else convert_image_dtype(img, torch.float32)
    return convert_image_dtype((gain * x.pow(gamma)).clamp(0, 1), dtype)


def invert(img):
    _check_channels(img, [1, 3])
    return (1.0 if img.dtype.is_floating_point else max_value(img.dtype)) - img


def normalize(tensor, mean, std, inplace=False):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tuple(tensor.shape)}")
    if not inplace:
        tensor = tensor.clone()
    mean = torch.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = torch.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)
