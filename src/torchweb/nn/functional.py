"""torch.nn.functional: the registered ops marked functional (ops/registry.py), and the forms
whose nn.functional signature differs from torch.*'s (an `inplace` argument)."""

from ..ops import activation, linalg, pointwise_api  # noqa: F401  (they register)
from ..ops import conv, grid_sample, interpolate, padding, pooling  # noqa: F401,E402  (conv, pooling, padding, sampling register)
from ..ops.composite import dropout, embedding, loss, normalization  # noqa: F401  (they register)
from ..ops.composite import activations  # noqa: F401,E402  (registers)
from ..ops.composite import losses_more  # noqa: F401,E402  (triplet_margin_with_distance_loss, linear_cross_entropy register)
from ..ops import attention  # noqa: F401,E402  (scaled_dot_product_attention registers)
from ..ops import fractional_pool  # noqa: F401,E402  (fractional_max_pool2d/3d register)
from ..ops import pdist, conv_tbc, grouped_mm  # noqa: F401,E402  (register)
from ._functional_compat import *  # noqa: F401,F403,E402
from ..ops.composite import mha  # noqa: F401,E402  (multi_head_attention_forward registers)
from ..ops.composite import ctc  # noqa: F401,E402  (ctc_loss registers)
from ..ops.elementwise import OPS as ROWS, call, row_dtypes
from ..ops.inplace import call_inplace
from ..ops.registry import define, functional_names


def _with_inplace(name, doc):
    def fn(input, inplace=False):
        return call_inplace(name, input) if inplace else call(name, input)
    fn.__name__ = fn.__qualname__ = name
    return define(name, "activation", torch=False, method=False, functional=True, key="F." + name,
                  dtypes=row_dtypes(ROWS[name]), doc=f"{name}(input, inplace=False) -> Tensor\n\n{doc}")(fn)


_with_inplace("relu", "max(input, 0), elementwise.")
_with_inplace("silu", "input * sigmoid(input), elementwise.")


@define("relu_", "activation", torch=False, method=False, functional=True, key="F.relu_",
        dtypes=row_dtypes(ROWS["relu"]),
        doc="relu_(input) -> Tensor\n\nrelu in place.")
def relu_(input):
    return call_inplace("relu", input)


@define("sigmoid", "activation", torch=False, method=False, functional=True, key="F.sigmoid",
        dtypes=row_dtypes(ROWS["sigmoid"]),
        doc="sigmoid(input) -> Tensor\n\n1 / (1 + exp(-input)).")
def sigmoid(input):
    return call("sigmoid", input)


@define("tanh", "activation", torch=False, method=False, functional=True, key="F.tanh",
        dtypes=row_dtypes(ROWS["tanh"]),
        doc="tanh(input) -> Tensor\n\nThe hyperbolic tangent.")
def tanh(input):
    return call("tanh", input)


globals().update(functional_names())


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from .._refused import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("nn.functional", "torchweb.nn.functional")
