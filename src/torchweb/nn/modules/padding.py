"""Padding layers (PyTorch's nn/modules/padding.py): Zero/Constant/Reflection/Replication/
CircularPad1d/2d/3d over F.pad; padding an int (all sides) or a tuple in F.pad's order
(last dim first: left, right, top, bottom, front, back)."""

from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]

_TUP = {1: _pair, 2: _quadruple, 3: _ntuple(6)}


class _PadNd(Module):
    """A padding module: F.pad in its mode (_mode); the circular ones also check the input's rank
    (_ranks, as PyTorch's modules do)."""

    __constants__ = ["padding"]
    _mode = None
    _ranks = None

    def forward(self, input):
        if self._ranks is not None and input.dim() not in self._ranks:
            raise ValueError(f"expected {self._ranks[0]}D or {self._ranks[1]}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]
    _mode = "constant"

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _make(r):
    tup = _TUP[r]

    def __init__(self, padding):
        Module.__init__(self)
        self.padding = tup(padding)

    # name, F.pad's mode, the input ranks checked, what the padding holds
    circ, refl, repl = (type(f"{name}Pad{r}d", (_PadNd,), {
        "__module__": "torchweb.nn", "__init__": __init__, "_mode": mode, "_ranks": ranks,
        "__doc__": f"Pads the last {r} dims {what}."}) for name, mode, ranks, what in (
            ("Circular", "circular", (r + 1, r + 2), "by wrapping around (circular)"),
            ("Reflection", "reflect", None, "with the reflection of the input (edge not repeated)"),
            ("Replication", "replicate", None, "by repeating the edge values")))

    def const_init(self, padding, value):
        _ConstantPadNd.__init__(self, value)
        self.padding = tup(padding)
    const = type(f"ConstantPad{r}d", (_ConstantPadNd,), {
        "__module__": "torchweb.nn", "__init__": const_init,
        "__doc__": f"Pads the last {r} dims with a constant value."})

    def zero_init(self, padding):
        const_init(self, padding, 0.0)

    def zero_repr(self):
        return f"{self.padding}"
    zero = type(f"ZeroPad{r}d", (const,), {
        "__module__": "torchweb.nn", "__init__": zero_init, "extra_repr": zero_repr,
        "__doc__": f"Pads the last {r} dims with zeros."})
    return circ, const, refl, repl, zero


CircularPad1d, ConstantPad1d, ReflectionPad1d, ReplicationPad1d, ZeroPad1d = _make(1)
CircularPad2d, ConstantPad2d, ReflectionPad2d, ReplicationPad2d, ZeroPad2d = _make(2)
CircularPad3d, ConstantPad3d, ReflectionPad3d, ReplicationPad3d, ZeroPad3d = _make(3)
