"""ChannelShuffle (PyTorch's nn/modules/channelshuffle.py)."""

from .pixelshuffle import _Rearrange

__all__ = ["ChannelShuffle"]


class ChannelShuffle(_Rearrange):
    """Splits the C channels of (N, C, *) into `groups` groups and interleaves them."""

    __module__ = "torchweb.nn"
    __constants__ = ["groups"]
    _fn = "channel_shuffle"

    def __init__(self, groups):
        super().__init__()
        self.groups = groups
