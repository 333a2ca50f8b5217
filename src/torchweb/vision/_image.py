"""A PIL-free image: what torchvision's datasets hand out as a PIL.Image, without Pillow.

It holds uint8 pixels as an (H, W, C) tensor ("L": one channel, "RGB": three) and answers
the PIL attributes code reads (size as (width, height), mode, width, height). The transforms
take it where torchvision takes a PIL image and give it back from the geometric ones, so a
pipeline such as RandomCrop -> RandomHorizontalFlip -> ToTensor works unchanged; with numpy
present np.asarray(image) gives the (H, W[, C]) array PIL would."""

import torchweb as torch

MODES = {1: "L", 3: "RGB", 4: "RGBA"}


class Image:
    def __init__(self, hwc, mode=None):
        if hwc.ndim == 2:
            hwc = hwc.unsqueeze(-1)
        if hwc.ndim != 3 or hwc.dtype != torch.uint8:
            raise TypeError(f"Image: expected uint8 pixels (H, W[, C]), got {hwc.dtype} {tuple(hwc.shape)}")
        self.hwc = hwc
        self.mode = mode or MODES.get(hwc.shape[2])
        if self.mode is None:
            raise ValueError(f"Image: no mode for {hwc.shape[2]} channels")

    @classmethod
    def from_chw(cls, chw, mode=None):
        return cls(chw.permute(1, 2, 0).contiguous(), mode)

    def to_chw(self):
        return self.hwc.permute(2, 0, 1).contiguous()

    @property
    def size(self):
        return (self.hwc.shape[1], self.hwc.shape[0])

    width = property(lambda self: self.hwc.shape[1])
    height = property(lambda self: self.hwc.shape[0])

    def getbands(self):
        return tuple(self.mode)

    def convert(self, mode):
        if mode == self.mode:
            return Image(self.hwc.clone(), mode)
        if mode == "RGB" and self.mode == "L":
            return Image(self.hwc.expand(-1, -1, 3).contiguous(), "RGB")
        if mode == "L" and self.mode in ("RGB", "RGBA"):
            # transforms' rgb_to_grayscale, written here: the transforms import this module
            chw = self.to_chw()
            r, g, b = chw[0], chw[1], chw[2]
            return Image.from_chw((0.2989 * r + 0.587 * g + 0.114 * b).to(chw.dtype).unsqueeze(0), "L")
        raise ValueError(f"Image.convert: {self.mode} -> {mode} is not supported")

    def __array__(self, dtype=None, copy=None):
        import numpy as np
        a = np.asarray(self.hwc.numpy() if hasattr(self.hwc, "numpy") else self.hwc.tolist(), dtype=np.uint8)
        a = a[:, :, 0] if self.mode == "L" else a
        return a if dtype is None else a.astype(dtype)

    def __eq__(self, other):
        return isinstance(other, Image) and self.mode == other.mode and \
            self.hwc.shape == other.hwc.shape and bool(torch.equal(self.hwc, other.hwc))

    def __repr__(self):
        return f"<torchweb.vision.Image mode={self.mode} size={self.size[0]}x{self.size[1]}>"
