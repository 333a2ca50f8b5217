"""Conv1d/2d/3d and ConvTranspose1d/2d/3d (PyTorch's nn/modules/conv.py): the same arguments,
checks, default initialization (kaiming_uniform_(a=sqrt(5)) for the weight, uniform(+-1/sqrt(fan_in))
for the bias), state_dict keys and repr, over F.conv*d / F.conv_transpose*d. padding_mode other
than 'zeros' pads with F.pad first, as PyTorch does."""

import math

from ... import _creation
from .. import functional as F
from .. import init
from ...autograd import grad_mode
from ..parameter import Parameter
from ._optional import optional_parameter
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total_padding = d * (k - 1)
                    left_pad = total_padding // 2
                    self._reversed_padding_repeated_twice[2 * i] = left_pad
                    self._reversed_padding_repeated_twice[2 * i + 1] = total_padding - left_pad
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_creation.empty(shape, **factory_kwargs))
        optional_parameter(self, "bias", bias, out_channels, factory_kwargs)
        self.reset_parameters()

    def reset_parameters(self):
        with grad_mode.no_grad():
            init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


def _make_conv(r, tup):
    fname = f"conv{r}d"

    class Conv(_ConvNd):
        __module__ = "torchweb.nn"

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            factory_kwargs = {"device": device, "dtype": dtype}
            kernel_size_ = tup(kernel_size)
            stride_ = tup(stride)
            padding_ = padding if isinstance(padding, str) else tup(padding)
            dilation_ = tup(dilation)
            super().__init__(in_channels, out_channels, kernel_size_, stride_, padding_, dilation_, False,
                             tup(0), groups, bias, padding_mode, **factory_kwargs)

        def _conv_forward(self, input, weight, bias):
            conv = getattr(F, fname)
            if self.padding_mode != "zeros":
                return conv(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                            weight, bias, self.stride, tup(0), self.dilation, self.groups)
            return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

        def forward(self, input):
            return self._conv_forward(input, self.weight, self.bias)

    Conv.__name__ = Conv.__qualname__ = f"Conv{r}d"
    Conv.__doc__ = (f"Applies a {r}D convolution over an input of several planes: input (N, C_in, *) or "
                    f"(C_in, *) with {r} spatial dims. Weight (out_channels, in_channels // groups, "
                    f"*kernel_size).")
    return Conv


Conv1d = _make_conv(1, _single)
Conv2d = _make_conv(2, _pair)
Conv3d = _make_conv(3, _triple)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                         output_padding, groups, bias, padding_mode, **factory_kwargs)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims,
                        dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                             f"have {num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements "
                             f"(got {len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i in range(len(output_size)):
            size = output_size[i]
            if size < min_sizes[i] or size > max_sizes[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]


def _make_conv_transpose(r, tup):
    fname = f"conv_transpose{r}d"
    cname = f"ConvTranspose{r}d"

    class ConvTranspose(_ConvTransposeNd):
        __module__ = "torchweb.nn"

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
            factory_kwargs = {"device": device, "dtype": dtype}
            super().__init__(in_channels, out_channels, tup(kernel_size), tup(stride), tup(padding),
                             tup(dilation), True, tup(output_padding), groups, bias, padding_mode,
                             **factory_kwargs)

        def forward(self, input, output_size=None):
            if self.padding_mode != "zeros":
                raise ValueError(f"Only `zeros` padding mode is supported for {cname}")
            if not isinstance(self.padding, tuple):
                raise AssertionError("self.padding must be a tuple")
            output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                                  self.kernel_size, r, self.dilation)
            return getattr(F, fname)(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                     self.groups, self.dilation)

    ConvTranspose.__name__ = ConvTranspose.__qualname__ = cname
    ConvTranspose.__doc__ = (f"Applies a {r}D transposed convolution (the gradient of Conv{r}d with respect "
                             f"to its input). Weight (in_channels, out_channels // groups, *kernel_size).")
    return ConvTranspose


ConvTranspose1d = _make_conv_transpose(1, _single)
ConvTranspose2d = _make_conv_transpose(2, _pair)
ConvTranspose3d = _make_conv_transpose(3, _triple)
