"""diff: the n-th forward difference along a dim, after concatenating prepend and append, from
narrow and sub (logical xor for bool), so the gradient is theirs."""

from ..._size import wrap_dim
from ..elementwise import call
from ..registry import define
from .statistics import write_out
from ..join import cat


def _diff_part(input, other, d):
    if other.dim() != input.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(input.dim()):
        if i != d and other.shape[i] != input.shape[i]:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                               f"except along the differencing dimension; input.size({i}) = {input.shape[i]}, "
                               f"but got tensor.size({i}) = {other.shape[i]}")
    return other


@define("diff", "shape",
        doc="diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None) -> Tensor\n\n"
            "The n-th forward difference along dim (bool: logical xor), after concatenating prepend "
            "and append along dim.")
def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.dim())
    parts = ([_diff_part(input, prepend, d)] if prepend is not None else []) + [input] + \
            ([_diff_part(input, append, d)] if append is not None else [])
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = call("logical_xor", a, b) if x.dtype.name == "bool" else a - b
    if x is input:
        x = input.clone()
    return write_out(x, out)
