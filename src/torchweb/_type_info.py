"""torch.finfo and torch.iinfo: the limits of each dtype, with PyTorch's fields and numbers.

They answer for every dtype PyTorch has, including those torchweb stores differently or
refuses (bfloat16, int8, int16): a script asks `torch.finfo(torch.float64).eps` to pick a
tolerance, not to make a tensor."""

from . import _dtype as D

# name: (bits, eps, max, tiny, resolution); min is -max, smallest_normal is tiny
_FLOATS = {
    "float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 0.001),
    "bfloat16": (16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126, 0.01),
    "float32": (32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 1e-06),
    "float64": (64, 2.0 ** -52, 1.7976931348623157e308, 2.0 ** -1022, 1e-15),
}
_INTS = {"uint8": (8, False), "int8": (8, True), "int16": (16, True), "int32": (32, True),
         "int64": (64, True)}


def _name(type, who):
    if type is None:
        return D.get_default_dtype().name
    if isinstance(type, (D.dtype, D._UnsupportedDtype)):
        return type.name
    try:
        return D.as_dtype(type).name
    except TypeError:
        raise TypeError(f"{who}(): argument 'type' must be torch.dtype, not "
                        f"{type.__class__.__name__}") from None


class finfo:
    """torch.finfo(dtype): bits, eps, max, min, tiny, smallest_normal, resolution, dtype."""

    def __init__(self, type=None):
        name = _name(type, "finfo")
        if name not in _FLOATS:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        self.bits, self.eps, self.max, self.tiny, self.resolution = _FLOATS[name]
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    __hash__ = None   # as PyTorch's

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """torch.iinfo(dtype): bits, max, min, dtype (int64 reports PyTorch's 64-bit range: the
    range the dtype promises, even where the GPU holds 32 bits of it)."""

    def __init__(self, type):
        name = _name(type, "iinfo")
        if name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if name not in _INTS:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        self.bits, signed = _INTS[name]
        self.min = -2 ** (self.bits - 1) if signed else 0
        self.max = 2 ** (self.bits - 1) - 1 if signed else 2 ** self.bits - 1
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    __hash__ = None

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
