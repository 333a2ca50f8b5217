"""Weights enums (torchvision.models' WeightsEnum): each names its checkpoint URL, the preset
transform it expects and a few meta fields; get_state_dict fetches through torchweb.hub (the
page's fetch in Pyodide), checking the hash that the file name carries."""

from dataclasses import dataclass, field
from enum import Enum
from functools import partial

import torchweb as torch
from torchweb import hub

from ..transforms import functional as F


class ImageClassification:
    """The evaluation preset of ImageNet weights: resize, center crop, scale, normalize."""

    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=F.InterpolationMode.BILINEAR, antialias=True):
        self.crop_size, self.resize_size = [crop_size], [resize_size]
        self.mean, self.std = list(mean), list(std)
        self.interpolation, self.antialias = interpolation, antialias

    def __call__(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, torch.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, torch.float)
        return F.normalize(img, mean=self.mean, std=self.std)


@dataclass
class Weights:
    url: str
    transforms: object
    meta: dict = field(default_factory=dict)


class WeightsEnum(Enum):
    @classmethod
    def verify(cls, obj):
        if obj is not None:
            if isinstance(obj, str):
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                                f"{obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, progress=True, check_hash=False):
        return hub.load_state_dict_from_url(self.url, progress=progress, check_hash=check_hash)

    def __getattr__(self, name):
        if name in ("url", "transforms", "meta"):
            return getattr(self.value, name)
        raise AttributeError(name)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"


def crop_preset(size, **kw):
    return partial(ImageClassification, crop_size=size, **kw)


def load_weights(model, weights, progress):
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model
