"""The activation modules of torch.nn (PyTorch's torch/nn/modules/activation.py): the same
constructor signatures, defaults, attributes, extra_repr text and forward, each calling
torchweb.nn.functional. MultiheadAttention lives with the attention layers."""

import warnings

from ... import _creation
from .. import functional as F
from ..parameter import Parameter
from .module import Module
from .. import init

__all__ = [
    "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
    "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
    "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax",
]


def _inplace_str(inplace, lead=", "):
    return (lead + "inplace=True") if inplace else ""


class Threshold(Module):
    """y = x if x > threshold else value."""

    __module__ = "torchweb.nn"
    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class _InplaceOnly(Module):
    """An activation whose only argument is `inplace`."""

    __module__ = "torchweb.nn"
    __constants__ = ["inplace"]
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class ReLU(_InplaceOnly):
    """max(x, 0)."""

    __module__ = "torchweb.nn"
    _fn = "relu"


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn from U(lower, upper) in training, (lower + upper) / 2
    in eval."""

    __module__ = "torchweb.nn"
    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class Hardtanh(Module):
    """clamp(x, min_val, max_val)."""

    __module__ = "torchweb.nn"
    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    __module__ = "torchweb.nn"

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    __module__ = "torchweb.nn"

    def forward(self, input):
        return F.sigmoid(input)


class Hardsigmoid(_InplaceOnly):
    """relu6(x + 3) / 6."""

    __module__ = "torchweb.nn"
    _fn = "hardsigmoid"

    def extra_repr(self):      # PyTorch's Hardsigmoid has no extra_repr
        return ""


class Tanh(Module):
    """tanh(x)."""

    __module__ = "torchweb.nn"

    def forward(self, input):
        return F.tanh(input)


class SiLU(_InplaceOnly):
    """x * sigmoid(x)."""

    __module__ = "torchweb.nn"
    _fn = "silu"


class Mish(_InplaceOnly):
    """x * tanh(softplus(x))."""

    __module__ = "torchweb.nn"
    _fn = "mish"


class Hardswish(_InplaceOnly):
    """x * relu6(x + 3) / 6."""

    __module__ = "torchweb.nn"
    _fn = "hardswish"

    def extra_repr(self):      # PyTorch's Hardswish has no extra_repr
        return ""


class ELU(Module):
    """x if x > 0 else alpha * (exp(x) - 1)."""

    __module__ = "torchweb.nn"
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    __module__ = "torchweb.nn"

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_InplaceOnly):
    """scale * elu(x, alpha) with the self-normalizing constants."""

    __module__ = "torchweb.nn"

    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along dim."""

    __module__ = "torchweb.nn"
    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x); approximate='tanh' uses the tanh approximation."""

    __module__ = "torchweb.nn"
    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """x where |x| > lambd, else 0."""

    __module__ = "torchweb.nn"
    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class LeakyReLU(Module):
    """x if x >= 0 else negative_slope * x."""

    __module__ = "torchweb.nn"
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    __module__ = "torchweb.nn"

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, x itself past threshold."""

    __module__ = "torchweb.nn"
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""

    __module__ = "torchweb.nn"
    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    """x if x >= 0 else a * x, a learnt (one per channel or one shared), initialised to `init`."""

    __module__ = "torchweb.nn"
    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """x / (1 + |x|)."""

    __module__ = "torchweb.nn"

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    __module__ = "torchweb.nn"

    def forward(self, input):
        return F.tanhshrink(input)


class _DimSoftmax(Module):
    __module__ = "torchweb.nn"
    __constants__ = ["dim"]
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return getattr(F, self._fn)(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_DimSoftmax):
    """softmax(-x, dim)."""

    __module__ = "torchweb.nn"
    _fn = "softmin"


class Softmax(_DimSoftmax):
    """exp(x) / sum(exp(x), dim)."""

    __module__ = "torchweb.nn"
    _fn = "softmax"


class LogSoftmax(_DimSoftmax):
    """log(softmax(x, dim))."""

    __module__ = "torchweb.nn"
    _fn = "log_softmax"


class Softmax2d(Module):
    """softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input."""

    __module__ = "torchweb.nn"

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)
