"""torch.gradient: finite differences of sampled values along each dim, as PyTorch (numpy's
gradient): central differences inside, one-sided ones of first or second order at the edges,
with a uniform spacing (a number per dim) or sample coordinates (a 1-D tensor per dim). Written
from slices and elementwise ops, so it differentiates."""

from ..._size import wrap_dim
from ..operands import is_tensor
from ..registry import define
from ..join import cat


def _dims_and_spacing(input, spacing, dim):
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [wrap_dim(d, input.dim()) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    if isinstance(spacing, (int, float)) or (is_tensor(spacing) and spacing.dim() == 0):
        spacing = [spacing] * len(dims)
    else:
        spacing = list(spacing)
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                               f"dim arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
    return dims, spacing


def _piece(x, d, start, stop):
    """x[start:stop] along d (Python's slice bounds, negatives from the end)."""
    n = x.shape[d]
    start = start + n if start < 0 else start
    stop = n if stop is None else stop + n if stop < 0 else stop
    return x.narrow(d, start, stop - start)


def _uniform(x, d, h, edge_order):
    s = lambda a, b=None: _piece(x, d, a, b)  # noqa: E731
    center = (s(2) - s(0, -2)) / h
    if edge_order == 1:
        first = (s(1, 2) - s(0, 1)) / h
        last = (s(-1) - s(-2, -1)) / h
    else:
        first = (s(0, 1) * -1.5 + s(1, 2) * 2 - s(2, 3) * 0.5) / h
        last = (s(-3, -2) * 0.5 - s(-2, -1) * 2 + s(-1) * 1.5) / h
    return cat([first, center / 2, last], d)


def _coordinates(x, d, coords, edge_order):
    s = lambda a, b=None: _piece(x, d, a, b)  # noqa: E731
    h = coords[1:] - coords[:-1]
    shape = [1] * x.dim()
    shape[d] = -1
    h1, h2 = h[:-1], h[1:]
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * s(0, -2) + b * s(1, -1) + c * s(2)
    if edge_order == 1:
        first = (s(1, 2) - s(0, 1)) / h[0]
        last = (s(-1) - s(-2, -1)) / h[-1]
    else:
        h0, h1_ = h[0], h[1]
        first = (s(0, 1) * (-(2.0 * h0 + h1_) / (h0 * (h0 + h1_))) + s(1, 2) * ((h0 + h1_) / (h0 * h1_))
                 + s(2, 3) * (-h0 / (h1_ * (h0 + h1_))))
        hl, hp = h[-1], h[-2]
        last = (s(-3, -2) * (hl / (hp * (hl + hp))) + s(-2, -1) * (-(hl + hp) / (hl * hp))
                + s(-1) * ((2 * hl + hp) / (hl * (hl + hp))))
    return cat([first, center, last], d)


@define("gradient", "other", method=False, dtypes="numeric",
        doc="gradient(input, *, spacing=1, dim=None, edge_order=1) -> tuple of Tensors\n\nThe derivative "
            "of the sampled function along each dim (all by default) by finite differences: spacing a "
            "number, a number per dim or a 1-D tensor of coordinates per dim; edge_order 1 or 2.")
def gradient(input, *, spacing=1, dim=None, edge_order=1, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims, spacing = _dims_and_spacing(input, spacing, dim)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    out = []
    for d, h in zip(dims, spacing):
        if is_tensor(h) and h.dim() == 1:
            out.append(_coordinates(input, d, h, edge_order))
        else:
            out.append(_uniform(input, d, h.item() if is_tensor(h) else h, edge_order))
    return tuple(out)
