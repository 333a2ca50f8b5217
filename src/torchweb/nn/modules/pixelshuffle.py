"""PixelShuffle and PixelUnshuffle (PyTorch's nn/modules/pixelshuffle.py)."""

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class _Rearrange(Module):
    """A layer that passes its one int argument (named __constants__[0]) to its functional form
    (F._fn): PixelShuffle, PixelUnshuffle and ChannelShuffle."""

    _fn = None

    def forward(self, input):
        return getattr(F, self._fn)(input, getattr(self, self.__constants__[0]))

    def extra_repr(self):
        return f"{self.__constants__[0]}={getattr(self, self.__constants__[0])}"


class PixelShuffle(_Rearrange):
    """(*, C * r**2, H, W) -> (*, C, H * r, W * r)."""

    __module__ = "torchweb.nn"
    __constants__ = ["upscale_factor"]
    _fn = "pixel_shuffle"

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor


class PixelUnshuffle(_Rearrange):
    """(*, C, H * r, W * r) -> (*, C * r**2, H, W)."""

    __module__ = "torchweb.nn"
    __constants__ = ["downscale_factor"]
    _fn = "pixel_unshuffle"

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor
