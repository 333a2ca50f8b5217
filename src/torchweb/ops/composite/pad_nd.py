"""torch.constant_pad_nd: PyTorch's internal name for constant padding, as F.pad(mode='constant')."""

from ..registry import define
from ..padding import pad as pad_fn


@define("constant_pad_nd", "shape", method=False,
        doc="constant_pad_nd(input, pad, value=0) -> Tensor\n\nF.pad(input, pad, 'constant', value): pad "
            "lists (before, after) from the last dim backwards; negative pads crop.")
def constant_pad_nd(input, pad, value=0):
    return pad_fn(input, pad, "constant", value)
