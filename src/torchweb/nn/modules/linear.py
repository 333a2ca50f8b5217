"""Identity, Linear, Bilinear with PyTorch's default initialization (kaiming_uniform_(a=sqrt(5))
for weights, uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) for biases)."""

import math

from ... import _creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._optional import optional_parameter
from .module import Module
from ...autograd import grad_mode

__all__ = ["Identity", "Linear", "Bilinear"]


def _factory(device, dtype):
    return {"device": device, "dtype": dtype}


def _uniform_(t, bound):
    with grad_mode.no_grad():
        return t.uniform_(-bound, bound)


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    __module__ = "torchweb.nn"

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x A^T + b."""

    __module__ = "torchweb.nn"
    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in_features), **_factory(device, dtype)))
        optional_parameter(self, "bias", bias, out_features, _factory(device, dtype))
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's: kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), same for bias
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """y = x1^T A x2 + b."""

    __module__ = "torchweb.nn"

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(_creation.empty((out_features, in1_features, in2_features),
                                                **_factory(device, dtype)))
        optional_parameter(self, "bias", bias, out_features, _factory(device, dtype))
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        _uniform_(self.weight, bound)
        if self.bias is not None:
            _uniform_(self.bias, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
