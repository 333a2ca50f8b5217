"""Fold and Unfold (PyTorch's nn/modules/fold.py): col2im and im2col."""

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class _SlidingBlocks(Module):
    """Fold and Unfold: the geometry of the sliding blocks they both move between (N, C, *) and
    columns (Unfold's constructor)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def _geometry(self):
        return self.kernel_size, self.dilation, self.padding, self.stride

    def extra_repr(self):
        return "kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}".format(
            **self.__dict__)


class Fold(_SlidingBlocks):
    """Sums sliding blocks (N, C * prod(kernel_size), L) into a tensor (N, C, *output_size)."""

    __module__ = "torchweb.nn"
    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, *self._geometry())

    def extra_repr(self):
        return f"output_size={self.output_size}, " + super().extra_repr()


class Unfold(_SlidingBlocks):
    """Extracts sliding blocks of (N, C, H, W) input as columns (N, C * prod(kernel_size), L)."""

    __module__ = "torchweb.nn"
    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def forward(self, input):
        return F.unfold(input, *self._geometry())
