"""quantile and nanquantile as PyTorch computes them: sort (NaN last), a fractional rank per q,
then the neighbours at floor and ceil of the rank gathered and blended as `interpolation` says;
sort, gather and lerp give the gradient."""

from ..._size import wrap_dim
from ..operands import is_tensor
from ..elementwise import call
from ..registry import define
from .statistics import write_out
from .. import reduction as R
from ..._creation import full_like, tensor
from ..index_ops import gather
from ..math_api import lerp
from ..shape import movedim
from ..sorting import sort


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_checks(name, input, q):
    if not is_tensor(input):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if is_tensor(q) and q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if input.dtype.name not in ("float32", "float64"):   # (float64, on the host, meets its own refusal)
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if is_tensor(q):
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.device != input.device:
            raise RuntimeError(f"{name}() q tensor must be on the same device as the input tensor")
        if q.numel() and bool(((q < 0) | (q > 1)).any()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's algorithm: sort (NaN last), a fractional rank per q, then the neighbours at
    floor and ceil of the rank gathered and blended as `interpolation` says."""
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    _quantile_checks(name, input, q)
    scalar_q = not is_tensor(q) or q.dim() == 0
    qt = (q.reshape(-1) if is_tensor(q) else tensor([float(q)], dtype=input.dtype, device=input.device))
    if dim is None:
        x = input.reshape(-1)
    else:
        d = wrap_dim(dim, max(input.dim(), 1))
        x = input.reshape(1) if input.dim() == 0 else movedim(input, d, -1)
    srt = sort(x, -1).values                      # NaN sorts last
    n = x.shape[-1]
    nq = qt.shape[0]
    if ignore_nan:
        count = R.sum(call("logical_not", call("isnan", srt)), -1, keepdim=True)
        ranks = call("clamp_min", qt * (count - 1).to(input.dtype), 0.0)
    else:
        ranks = (qt * float(n - 1)).expand(*srt.shape[:-1], nq)
        last_is_nan = call("isnan", srt.narrow(-1, n - 1, 1))
        ranks = call("where", last_is_nan, float(n - 1), ranks)
    ranks = ranks.expand(*srt.shape[:-1], nq)
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": "floor", "higher": "ceil", "nearest": "round"}[interpolation]
        r = gather(srt, -1, call(pick, ranks).long())
    else:
        below = call("floor", ranks)
        above = call("ceil", ranks)
        lo = gather(srt, -1, below.long())
        hi = gather(srt, -1, above.long())
        weights = (full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below)
        r = lerp(lo, hi, weights)
    # r: [..., nq] -> (nq, ...) or (...)
    r = r.squeeze(-1) if scalar_q else movedim(r, -1, 0)
    if keepdim:
        lead = () if scalar_q else (nq,)
        if dim is None:
            r = r.reshape(lead + (1,) * input.dim())
        elif input.dim() > 0:
            r = r.unsqueeze(len(lead) + d)
    return r


@define("quantile", "reduction", dtypes=("float32",),
        doc="quantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None) -> Tensor\n\n"
            "The q-th quantiles (q a number or a 1-D tensor in [0, 1]) over dim (the flattened input by "
            "default); interpolation: linear, lower, higher, midpoint or nearest. NaN in a row gives NaN.")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None, axis=None, keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return write_out(_quantile("quantile", input, q, dim, keepdim, interpolation, False), out)


@define("nanquantile", "reduction", dtypes=("float32",),
        doc="nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None) -> Tensor\n\n"
            "quantile ignoring NaN (a row of NaN only gives NaN).")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None, axis=None,
                keepdims=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    keepdim = keepdim if keepdims is None else keepdims
    return write_out(_quantile("nanquantile", input, q, dim, keepdim, interpolation, True), out)
