"""Pooling layers (PyTorch's nn/modules/pooling.py): MaxPool1d/2d/3d (return_indices, ceil_mode,
dilation), MaxUnpool1d/2d/3d, AvgPool1d/2d/3d, LPPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d and
AdaptiveAvgPool1d/2d/3d, with PyTorch's stored arguments and repr, over the functional forms.
FractionalMaxPool2d/3d over F.fractional_max_pool*d."""

from .. import functional as F
from .module import Module
from .utils import _pair, _single, _triple

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d",
           "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d",
           "LPPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, "
                "ceil_mode={ceil_mode}").format(**self.__dict__)


def _max_pool(r):
    fn = f"max_pool{r}d"

    def forward(self, input):
        return getattr(F, fn)(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)
    return type(f"MaxPool{r}d", (_MaxPoolNd,), {
        "__module__": "torchweb.nn", "forward": forward,
        "__doc__": f"{r}D max pooling over the last {r} dims of (N, C, *) or (C, *) input; "
                   f"return_indices=True also returns the flat argmax indices (for MaxUnpool{r}d)."})


MaxPool1d = _max_pool(1)
MaxPool2d = _max_pool(2)
MaxPool3d = _max_pool(3)


class _MaxUnpoolNd(Module):
    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _max_unpool(r, tup):
    fn = f"max_unpool{r}d"

    def __init__(self, kernel_size, stride=None, padding=0):
        _MaxUnpoolNd.__init__(self)
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input, indices, output_size=None):
        return getattr(F, fn)(input, indices, self.kernel_size, self.stride, self.padding, output_size)
    return type(f"MaxUnpool{r}d", (_MaxUnpoolNd,), {
        "__module__": "torchweb.nn", "__init__": __init__, "forward": forward,
        "__doc__": f"The partial inverse of MaxPool{r}d: values written at their indices, zeros elsewhere."})


MaxUnpool1d = _max_unpool(1, _single)
MaxUnpool2d = _max_unpool(2, _pair)
MaxUnpool3d = _max_unpool(3, _triple)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1D average pooling over (N, C, L) or (C, L) input."""

    __module__ = "torchweb.nn"

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


def _avg_pool(r):
    fn = f"avg_pool{r}d"

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        _AvgPoolNd.__init__(self)
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return getattr(F, fn)(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def __setstate__(self, d):
        Module.__setstate__(self, d)
        self.__dict__.setdefault("padding", 0)
        self.__dict__.setdefault("ceil_mode", False)
        self.__dict__.setdefault("count_include_pad", True)
    return type(f"AvgPool{r}d", (_AvgPoolNd,), {
        "__module__": "torchweb.nn", "__init__": __init__, "forward": forward, "__setstate__": __setstate__,
        "__constants__": _AvgPoolNd.__constants__ + ["divisor_override"],
        "__doc__": f"{r}D average pooling over (N, C, *) or (C, *) input."})


AvgPool2d = _avg_pool(2)
AvgPool3d = _avg_pool(3)


def _fractional(r, to_tuple):
    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        Module.__init__(self)
        if r == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = to_tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = to_tuple(output_size) if output_size is not None else None
        self.output_ratio = to_tuple(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{r}d requires specifying either an output size, or a "
                             f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < v < 1 for v in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return getattr(F, f"fractional_max_pool{r}d")(input, self.kernel_size, self.output_size,
                                                       self.output_ratio, self.return_indices,
                                                       _random_samples=self._random_samples)

    return type(f"FractionalMaxPool{r}d", (Module,), {
        "__module__": "torchweb.nn", "__init__": __init__, "forward": forward,
        "__constants__": ["kernel_size", "return_indices", "output_size", "output_ratio"],
        "__doc__": f"{r}D fractional max pooling: kernel_size windows at pseudo-random starts "
                   f"(F.fractional_max_pool{r}d)."})


FractionalMaxPool2d = _fractional(2, _pair)
FractionalMaxPool3d = _fractional(3, _triple)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__)


def _lp_pool(r):
    fn = f"lp_pool{r}d"

    def forward(self, input):
        return getattr(F, fn)(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)
    return type(f"LPPool{r}d", (_LPPoolNd,), {
        "__module__": "torchweb.nn", "forward": forward,
        "__doc__": f"{r}D power-average pooling: (sum of x**p over the window) ** (1/p)."})


LPPool1d = _lp_pool(1)
LPPool2d = _lp_pool(2)
LPPool3d = _lp_pool(3)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


def _adaptive(r):
    mfn, afn = f"adaptive_max_pool{r}d", f"adaptive_avg_pool{r}d"

    def max_forward(self, input):
        return getattr(F, mfn)(input, self.output_size, self.return_indices)

    def avg_forward(self, input):
        return getattr(F, afn)(input, self.output_size)
    mx = type(f"AdaptiveMaxPool{r}d", (_AdaptiveMaxPoolNd,), {
        "__module__": "torchweb.nn", "forward": max_forward,
        "__doc__": f"{r}D max pooling to a fixed output_size (None keeps that dim's size)."})
    av = type(f"AdaptiveAvgPool{r}d", (_AdaptiveAvgPoolNd,), {
        "__module__": "torchweb.nn", "forward": avg_forward,
        "__doc__": f"{r}D average pooling to a fixed output_size (None keeps that dim's size)."})
    return mx, av


AdaptiveMaxPool1d, AdaptiveAvgPool1d = _adaptive(1)
AdaptiveMaxPool2d, AdaptiveAvgPool2d = _adaptive(2)
AdaptiveMaxPool3d, AdaptiveAvgPool3d = _adaptive(3)
