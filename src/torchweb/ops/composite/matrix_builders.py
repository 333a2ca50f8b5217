"""Matrices built from a vector or written along a diagonal: vander (powers of x, from cumprod,
so it differentiates) and Tensor.fill_diagonal_ (a strided view of the diagonal filled in place,
wrapping every width + 1 rows for tall matrices when asked, as PyTorch)."""

from ... import _dtype as D
from ..registry import define
from ..._creation import ones
from ..join import cat
from ..layout import flip
from ..scan import cumprod
from ..shape import as_strided


@define("vander", "linalg", method=False, dtypes="numeric",
        doc="vander(x, N=None, increasing=False) -> Tensor\n\nThe Vandermonde matrix of a 1-D x: columns "
            "x**(N-1), ..., x**0 (increasing: x**0 first); N = len(x) by default. Integers give int64.")
def vander(x, N=None, increasing=False):
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = D.promote_types(x.dtype, D.int64)
    cols = [ones((x.shape[0], min(n, 1)), dtype=dt, device=x.device)]
    if n > 1:
        cols.append(cumprod(x.to(dt).unsqueeze(1).expand(x.shape[0], n - 1), 1))
    r = cat(cols, 1)
    return r if increasing else flip(r, (1,))


def fill_diagonal_(self, fill_value, wrap=False):
    """fill_diagonal_(fill_value, wrap=False) -> Tensor

    Fills the main diagonal in place (all dims of equal length past 2-D); wrap: a tall matrix's
    diagonal starts again every width + 1 rows."""
    nd = self.dim()
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if nd > 2 and any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    offset = self.storage_offset()
    step = sum(self.stride())
    size = min(height, width)
    as_strided(self, (size,), (step,), offset).fill_(fill_value)
    if wrap and nd == 2 and height > width + 1:
        wrap_size = (self.numel() + width) // (width + 1) - size
        as_strided(self, (wrap_size,), (step,), offset + self.stride(0) * (width + 1)).fill_(fill_value)
    return self
