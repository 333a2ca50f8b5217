"""torchvision.utils.make_grid (and save_image where Pillow is installed)."""

import math

import torchweb as torch


@torch.no_grad()
def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """A (C, H', W') image tiling a (B, C, H, W) batch (or list of images) in rows of nrow."""
    if not isinstance(tensor, torch.Tensor):
        if not isinstance(tensor, list):
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
        for t in tensor:
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"tensor or list of tensors expected, got a list containing {type(t)}")
        tensor = torch.stack(tensor, dim=0)
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:   # one channel -> three
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    if normalize is True:
        tensor = tensor.clone()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")

        def norm_range(t):
            low, high = value_range if value_range is not None else (float(t.min()), float(t.max()))
            t.clamp_(min=low, max=high)
            t.sub_(low).div_(max(high - low, 1e-5))
        if scale_each is True:
            for t in tensor:
                norm_range(t)
        else:
            norm_range(tensor)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


@torch.no_grad()
def save_image(tensor, fp, format=None, **kwargs):
    """Writes make_grid's image with Pillow (PNG...); refused where Pillow is not installed."""
    try:
        from PIL import Image as PILImage
    except ImportError:
        raise RuntimeError("save_image needs Pillow, which is not installed here; make_grid gives the "
                           "image as a tensor") from None
    grid = make_grid(tensor, **kwargs)
    hwc = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8)
    h, w, c = hwc.shape
    PILImage.frombytes("RGB", (w, h), bytes(hwc.reshape(-1).tolist())).save(fp, format=format)
