"""isin: whether each element is among test_elements. Small problems compare every pair at
once; big ones sort test_elements and look each element up with searchsorted, as PyTorch does."""

from ... import _dtype as D
from ..operands import is_tensor
from ..elementwise import call
from ..out_arg import write_out
from ..registry import define
from .. import reduction as R
from ..index_ops import index_select
from ..pointwise_api import clamp
from ..search import searchsorted
from ..sorting import sort

_PAIRWISE_LIMIT = 1 << 22     # elements x test_elements compared at once up to this many pairs


def _isin_tensors(elements, test):
    flat = test.reshape(-1)
    if elements.numel() * flat.numel() <= _PAIRWISE_LIMIT:
        return R.any(call("eq", elements.unsqueeze(-1), flat), -1)
    dt = D.result_type(elements, test)
    srt = sort(flat.to(dt)).values
    e = elements.to(dt)
    pos = clamp(searchsorted(srt, e.reshape(-1)), max=flat.numel() - 1)
    return call("eq", index_select(srt, 0, pos), e.reshape(-1)).reshape(elements.shape)


@define("isin", "comparison", method=False, dtypes="numeric", differentiable=False,
        doc="isin(elements, test_elements, *, assume_unique=False, invert=False, out=None) -> Tensor\n\n"
            "Whether each element of `elements` is in `test_elements` (either may be a number); invert "
            "gives the opposite.")
def isin(elements=None, test_elements=None, *, assume_unique=False, invert=False, out=None, element=None,
         test_element=None):
    # (PyTorch's overloads name a number argument element / test_element)
    elements = element if element is not None else elements
    test_elements = test_element if test_element is not None else test_elements
    r = _isin(elements, test_elements, invert)
    return r if out is None else write_out(r, out, "isin")


def _isin(elements, test_elements, invert):
    if not is_tensor(elements) and not is_tensor(test_elements):
        raise TypeError(f"isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one of: "
                        f"(Tensor elements, Tensor test_elements), (Number element, Tensor test_elements), "
                        f"(Tensor elements, Number test_element)")
    for t in (elements, test_elements):
        if is_tensor(t) and t.dtype is D.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    if not is_tensor(test_elements):
        r = call("eq", elements, test_elements)
    elif not is_tensor(elements):
        r = R.any(call("eq", test_elements, elements))
    else:
        r = _isin_tensors(elements, test_elements)
    return call("logical_not", r) if invert else r
