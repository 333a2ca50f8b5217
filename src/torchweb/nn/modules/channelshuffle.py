"""ChannelShuffle (PyTorch's nn/modules/channelshuffle.py)."""

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Splits the C channels of (N, C, *) into `groups` groups and interleaves them."""

    __module__ = "torchweb.nn"
    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
