"""histogramdd: the D-dimensional histogram of N points (input's last dim is D), built from the
1-D histogram's pieces (ops/counting.py): per dim, the edges (given, or equal widths over range
or the data's min and max) and each point's bin by binary search; then one bincount over the
flattened bin index, points outside any dim's edges (and NaN) falling in an extra bin that is
dropped."""

from collections import namedtuple

from ... import _dtype as D
from ...autograd import grad_mode
from ..operands import is_tensor
from ..registry import define
from ..counting import raw_bincount, equal_width_edges
from ..elementwise import call
from ..search import search_rows
from ..._creation import ones, tensor, zeros
from ..pointwise_api import where

histogramdd_t = namedtuple("histogramdd", ["hist", "bin_edges"])


def _edges(col, spec, d, rng):
    """The edges of dim d (a tensor of col's dtype) from an int bin count or a tensor of edges."""
    if is_tensor(spec):
        if spec.dim() != 1:
            raise RuntimeError(f"torch.histogramdd(): bins tensor should have one dimension, but got {spec.dim()} "
                               f"dimensions in the bins tensor for dimension {d}")
        if spec.numel() == 0:
            raise RuntimeError(f"torch.histogramdd(): bins tensor should have at least 1 element, but got 0 "
                               f"elements in the bins tensor for dimension {d}")
        return spec.to(col.dtype).contiguous()
    vals = equal_width_edges(spec, None if rng is None else rng[2 * d:2 * d + 2], col, d)
    return tensor(vals, dtype=col.dtype, device=col.device)


def _bin_index(col, edges):
    """Each value's bin along one dim (the last edge in the last bin) and whether it is inside."""
    nb = edges.numel() - 1
    pos = search_rows(edges, col, False, True, None) - 1
    pos = call("where", call("eq", pos, nb), nb - 1, pos)
    inside = call("logical_and", col >= edges[0], col <= edges[-1])
    return pos, inside


@define("histogramdd", "other", method=False, dtypes=("float32",), differentiable=False,
        doc="histogramdd(input, bins, *, range=None, weight=None, density=False) -> (hist, bin_edges)\n\n"
            "The histogram of input's rows as points in D dims (D = input.size(-1)): bins an int, D ints or "
            "D tensors of edges; range [lo0, hi0, lo1, hi1, ...]; weight one per point; density normalizes "
            "by the bins' volumes.")
def histogramdd(input, bins, *, range=None, weight=None, density=False):
    if not input.dtype.is_floating_point or input.dtype is D.float16:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{input.dtype.word}'")
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    nd = input.shape[-1]
    specs = [bins] * nd if isinstance(bins, int) else list(bins)
    if len(specs) != nd:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    if range is not None and len(range) != 2 * nd:
        raise RuntimeError(f"torch.histogramdd: for a {nd}-dimensional histogram range should have {2 * nd} "
                           f"elements, but got {len(range)}")
    with grad_mode.no_grad():
        pts = input.detach().reshape(-1, nd)
        edges = [_edges(pts[:, d], specs[d], d, range) for d in builtins_range(nd)]
        sizes = [e.numel() - 1 for e in edges]
        total = 1
        for s in sizes:
            total *= s
        n = pts.shape[0]
        if n == 0 or total == 0:
            hist = zeros(sizes, dtype=input.dtype, device=input.device)
        else:
            flat = zeros(n, dtype=D.int64, device=input.device)
            inside = ones(n, dtype=D.bool, device=input.device)
            for d in builtins_range(nd):
                pos, ok = _bin_index(pts[:, d].contiguous(), edges[d])
                flat = flat * sizes[d] + pos
                inside = inside & ok
            idx = where(inside, flat, total)
            w = None if weight is None else weight.detach().reshape(-1).to(D.float32).contiguous()
            counts = raw_bincount(idx, w, total + 1, D.int64 if w is None else D.float32)
            hist = counts[:total].to(input.dtype).reshape(sizes)
        if density and total:
            vol = None
            for d, e in enumerate(edges):
                wd = (e[1:] - e[:-1]).reshape([-1 if i == d else 1 for i in builtins_range(nd)])
                vol = wd if vol is None else vol * wd
            hist = hist / (hist.sum() * vol)
    return histogramdd_t(hist, tuple(edges))


def builtins_range(n):
    """range(), which the `range` argument shadows in histogramdd."""
    import builtins
    return builtins.range(n)
