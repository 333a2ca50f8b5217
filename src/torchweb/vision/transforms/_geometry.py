"""Geometric operations on (..., C, H, W) tensors, following torchvision's tensor path
(transforms/_functional_tensor.py, BSD-3-Clause) so outputs match it on the same input."""

import torchweb as torch
from torchweb.nn.functional import grid_sample, interpolate, pad as torch_pad


def check_image(img):
    if not isinstance(img, torch.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if img.ndim < 2:
        raise TypeError("Tensor is not a torch image.")


def dimensions(img):
    check_image(img)
    c = 1 if img.ndim == 2 else img.shape[-3]
    return [c, img.shape[-2], img.shape[-1]]


def hflip(img):
    check_image(img)
    return img.flip(-1)


def vflip(img):
    check_image(img)
    return img.flip(-2)


def crop(img, top, left, height, width):
    _, h, w = dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        ltrb = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                max(right - max(w, left), 0), max(bottom - max(h, top), 0)]
        return pad(img[..., max(top, 0):bottom, max(left, 0):right], ltrb, fill=0)
    return img[..., top:bottom, left:right]


def parse_padding(padding):
    """torchvision's padding forms (int, [all], [lr, tb], [l, t, r, b]) as [l, r, t, b]."""
    if isinstance(padding, int):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[0], padding[1], padding[1]]
    return [padding[0], padding[2], padding[1], padding[3]]


def _pad_symmetric(img, p):
    if min(p) < 0:
        cl, cr, ct, cb = [-min(x, 0) for x in p]
        img = img[..., ct:img.shape[-2] - cb, cl:img.shape[-1] - cr]
        p = [max(x, 0) for x in p]
    h, w = img.shape[-2], img.shape[-1]
    xs = list(range(p[0] - 1, -1, -1)) + list(range(w)) + [w - 1 - i for i in range(p[1])]
    ys = list(range(p[2] - 1, -1, -1)) + list(range(h)) + [h - 1 - i for i in range(p[3])]
    return img.index_select(-1, torch.tensor(xs, device=img.device)).index_select(
        -2, torch.tensor(ys, device=img.device))


def pad(img, padding, fill=0, padding_mode="constant"):
    check_image(img)
    fill = 0 if fill is None else fill
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    p = parse_padding(list(padding) if isinstance(padding, tuple) else padding)
    if padding_mode == "symmetric":
        return _pad_symmetric(img, p)
    mode = "replicate" if padding_mode == "edge" else padding_mode
    squeeze = img.ndim < 4
    if squeeze:
        img = img.unsqueeze(0)
    out_dtype = img.dtype
    cast = mode != "constant" and out_dtype not in (torch.float32, torch.float64)
    if cast:   # reflect/replicate pad only floats (as in PyTorch's CPU kernels torchvision works around)
        img = img.to(torch.float32)
    img = torch_pad(img, p, mode=mode) if mode != "constant" else torch_pad(img, p, mode=mode, value=float(fill))
    if squeeze:
        img = img.squeeze(0)
    return img.to(out_dtype) if cast else img


def _cast_squeeze_in(img, dtypes):
    squeeze = img.ndim < 4
    if squeeze:
        img = img.unsqueeze(0)
    out_dtype = img.dtype
    cast = out_dtype not in dtypes
    if cast:
        img = img.to(dtypes[0])
    return img, cast, squeeze, out_dtype


def _cast_squeeze_out(img, cast, squeeze, out_dtype):
    if squeeze:
        img = img.squeeze(0)
    if cast:
        if not out_dtype.is_floating_point:
            img = torch.round(img)   # round before the cast back to integers
        img = img.to(out_dtype)
    return img


def resize(img, size, interpolation="bilinear", antialias=True):
    check_image(img)
    antialias = bool(antialias) and interpolation in ("bilinear", "bicubic")
    lead = img.shape[:-3] if img.ndim > 4 else None
    if lead is not None:   # fold extra leading dims into the batch
        img = img.reshape(-1, *img.shape[-3:])
    img, cast, squeeze, out_dtype = _cast_squeeze_in(img, [torch.float32, torch.float64])
    align = False if interpolation in ("bilinear", "bicubic") else None
    img = interpolate(img, size=list(size), mode=interpolation, align_corners=align, antialias=antialias)
    if interpolation == "bicubic" and out_dtype == torch.uint8:
        img = img.clamp(0, 255)
    img = _cast_squeeze_out(img, cast, squeeze, out_dtype)
    return img.reshape(*lead, *img.shape[-3:]) if lead is not None else img


def resized_output_size(image_size, size, max_size=None):
    """torchvision's _compute_resized_output_size: [h, w] for a resize to `size`."""
    h, w = image_size
    short, long = (w, h) if w <= h else (h, w)
    if len(size) == 1:
        new_short, new_long = size[0], int(size[0] * long / short)
        if max_size is not None:
            if max_size <= size[0]:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested "
                                 f"size for the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
        return [new_h, new_w]
    return [size[0], size[1]]


def rotate(img, angle, interpolation="nearest", expand=False, center=None, fill=None):
    """Rotation by `angle` degrees counter-clockwise about the center (torchvision's tensor
    rotate: an inverse affine matrix, then grid_sample), fill 0 outside."""
    import math
    _, h, w = dimensions(img)
    cx, cy = (0.0, 0.0) if center is None else (center[0] - w * 0.5, center[1] - h * 0.5)
    a = math.radians(-angle)
    # inverse of rotation about (cx, cy), in torchvision's _get_inverse_affine_matrix form
    m = [math.cos(a), math.sin(a), 0.0, -math.sin(a), math.cos(a), 0.0]
    m[2] = m[0] * (-cx) + m[1] * (-cy) + cx
    m[5] = m[3] * (-cx) + m[4] * (-cy) + cy
    ow, oh = w, h
    if expand:   # the bounding box of the corners under the (inverse) matrix, as torchvision sizes it
        pts = [(-0.5 * w, -0.5 * h), (-0.5 * w, 0.5 * h), (0.5 * w, 0.5 * h), (0.5 * w, -0.5 * h)]
        xs = [m[0] * x + m[1] * y + m[2] + w * 0.5 for x, y in pts]
        ys = [m[3] * x + m[4] * y + m[5] + h * 0.5 for x, y in pts]
        tol = 1e-4
        ow = int(math.ceil(math.trunc(max(xs) / tol) * tol) - math.floor(math.trunc(min(xs) / tol) * tol))
        oh = int(math.ceil(math.trunc(max(ys) / tol) * tol) - math.floor(math.trunc(min(ys) / tol) * tol))
    dtype = img.dtype if img.dtype.is_floating_point else torch.float32
    theta = torch.tensor([m], dtype=dtype, device=img.device).reshape(1, 2, 3)
    d = 0.5
    base = torch.empty(1, oh, ow, 3, dtype=dtype, device=img.device)
    base[..., 0].copy_(torch.linspace(-ow * 0.5 + d, ow * 0.5 + d - 1, steps=ow, dtype=dtype, device=img.device))
    base[..., 1].copy_(torch.linspace(-oh * 0.5 + d, oh * 0.5 + d - 1, steps=oh, dtype=dtype,
                                      device=img.device).unsqueeze(-1))
    base[..., 2].fill_(1)
    rescaled = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], dtype=dtype, device=img.device)
    grid = base.view(1, oh * ow, 3).bmm(rescaled).view(1, oh, ow, 2)
    x, cast, squeeze, out_dtype = _cast_squeeze_in(img, [grid.dtype])
    if x.shape[0] > 1:
        grid = grid.expand(x.shape[0], oh, ow, 2)
    if fill is not None:
        x = torch.cat((x, torch.ones(x.shape[0], 1, x.shape[2], x.shape[3], dtype=x.dtype, device=x.device)), 1)
    x = grid_sample(x, grid, mode=interpolation, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask = x[:, -1:]
        x = x[:, :-1]
        fills = torch.tensor(fill if isinstance(fill, (list, tuple)) else [float(fill)], dtype=x.dtype,
                             device=x.device).view(1, -1, 1, 1).expand_as(x)
        x = x * mask + (1.0 - mask) * fills if interpolation != "nearest" else torch.where(mask < 0.5, fills, x)
    return _cast_squeeze_out(x, cast, squeeze, out_dtype)
