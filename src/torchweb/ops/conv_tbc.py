"""conv_tbc: a 1-D convolution over (time, batch, channels) input with a (kernel width,
in_channels, out_channels) weight (fairseq's layout), as conv1d on permuted views."""

from .registry import define
from . import shape as S
from .conv import conv1d


@define("conv_tbc", "convolution", method=False, functional=True)
def conv_tbc(input, weight, bias, pad=0):
    """conv_tbc(input, weight, bias, pad=0) -> Tensor

    A 1-D convolution over input (time, batch, in_channels) with weight (kernel width,
    in_channels, out_channels) and bias (out_channels), pad time steps of zeros on each side:
    (time + 2 pad - kernel width + 1, batch, out_channels)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out_len = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if out_len < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_len}: "
                           f"[{out_len}, {input.shape[1]}, {weight.shape[2]}]")
    out = conv1d(S.permute(input, (1, 2, 0)), S.permute(weight, (2, 1, 0)), bias, 1, pad)
    return S.permute(out, (2, 0, 1))
