"""torch.nn.functional: the ops that exist so far, with PyTorch's signatures."""

from .. import _functions as F
from ..ops import linalg as L
from ..ops.pointwise import call, call_inplace

linear = L.linear
softmax = F.softmax
log_softmax = F.log_softmax


def relu(input, inplace=False):
    return call_inplace("relu", input) if inplace else call("relu", input)


def relu_(input):
    return call_inplace("relu", input)


def gelu(input, approximate="none"):
    return F.gelu(input, approximate)


def silu(input, inplace=False):
    return call_inplace("silu", input) if inplace else call("silu", input)


def sigmoid(input):
    return call("sigmoid", input)


def tanh(input):
    return call("tanh", input)
