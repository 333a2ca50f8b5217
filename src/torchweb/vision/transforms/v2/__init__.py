"""torchvision.transforms.v2 on torchweb tensors: v1's transforms taking v2's samples.

A v2 transform takes one input or several (`t(img, label)`, a tuple, a dict): it transforms
the image in it (a torchweb.vision.Image, or else the first tensor) and passes every other
entry through, as torchvision does for images with labels. Bounding boxes, masks and videos
(tv_tensors) are not part of this subset."""

import torchweb as torch
from torchweb.utils._pytree import tree_flatten, tree_unflatten

from ..._image import Image
from .. import transforms as _v1
from . import functional as F
from ..functional import InterpolationMode  # noqa: F401


def _is_picture(x):
    """An Image, a PIL image or a numpy array: what ToImage turns into a tensor."""
    return isinstance(x, Image) or hasattr(x, "getbands") or type(x).__module__ == "numpy" and hasattr(x, "ndim")


def _image_index(leaves):
    for i, x in enumerate(leaves):
        if _is_picture(x):
            return i
    for i, x in enumerate(leaves):
        if isinstance(x, torch.Tensor):
            return i
    return None


class _Sample:
    """Mixin: forward(*inputs) finds the image in the sample, applies the v1 forward to it."""

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        leaves, spec = tree_flatten(sample)
        i = _image_index(leaves)
        if i is None:
            raise TypeError(f"{type(self).__name__}: no image or tensor in the input")
        leaves[i] = self._transform_one(leaves[i])
        return tree_unflatten(leaves, spec)

    def _transform_one(self, img):
        return super().forward(img)


def _v2(cls):
    return type(cls.__name__, (_Sample, cls), {"__module__": __name__})


Normalize = _v2(_v1.Normalize)
Resize = _v2(_v1.Resize)
CenterCrop = _v2(_v1.CenterCrop)
Pad = _v2(_v1.Pad)
RandomCrop = _v2(_v1.RandomCrop)
RandomResizedCrop = _v2(_v1.RandomResizedCrop)
RandomHorizontalFlip = _v2(_v1.RandomHorizontalFlip)
RandomVerticalFlip = _v2(_v1.RandomVerticalFlip)
Grayscale = _v2(_v1.Grayscale)
RandomGrayscale = _v2(_v1.RandomGrayscale)
ColorJitter = _v2(_v1.ColorJitter)
RandomRotation = _v2(_v1.RandomRotation)
ConvertImageDtype = _v2(_v1.ConvertImageDtype)
RandomApply = _v2(_v1.RandomApply)


class _Simple(_Sample, torch.nn.Module):
    def __init__(self, fn):
        torch.nn.Module.__init__(self)
        self._fn = fn

    def _transform_one(self, img):
        return self._fn(img)


class ToImage(_Simple):
    def __init__(self):
        super().__init__(F.to_image)


class ToTensor(_Simple):
    def __init__(self):
        super().__init__(F.to_tensor)


class PILToTensor(_Simple):
    def __init__(self):
        super().__init__(F.pil_to_tensor)


class ToPILImage(_Simple):
    def __init__(self, mode=None):
        super().__init__(lambda img: F.to_pil_image(img, mode))


class ToDtype(_Simple):
    def __init__(self, dtype, scale=False):
        if isinstance(dtype, dict):
            dtype = dtype.get("image", dtype.get(torch.Tensor, dtype.get("others")))
        super().__init__(lambda img: F.to_dtype(img, dtype, scale))
        self.dtype, self.scale = dtype, scale


class Lambda(_Simple):
    def __init__(self, lambd, *types):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        super().__init__(lambd)


class Identity(_Simple):
    def __init__(self):
        super().__init__(lambda img: img)


class Compose(torch.nn.Module):
    def __init__(self, transforms):
        super().__init__()
        if not isinstance(transforms, (list, tuple)):
            raise TypeError("Argument transforms should be a sequence of callables")
        self.transforms = transforms

    def forward(self, *inputs):
        needs_unpacking = len(inputs) > 1
        for t in self.transforms:
            out = t(*inputs)
            inputs = out if needs_unpacking else (out,)
        return out if self.transforms else (inputs if needs_unpacking else inputs[0])


class RandomChoice(_v1.RandomChoice):
    pass


def __getattr__(name):
    # a transform the subset lacks: say so plainly, naming what there is
    have = sorted(n for n, v in globals().items() if isinstance(v, type) and not n.startswith("_"))
    raise AttributeError(f"module 'torchvision.transforms.v2' has no attribute {name!r}: torchweb's "
                         f"torchvision subset does not have it (it has {', '.join(have)})")
