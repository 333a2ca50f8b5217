"""dist (the p-norm of a difference) and renorm (slices scaled down to a maximum p-norm), from
norm and elementwise rows, so their gradients come from those."""

from ..._size import wrap_dim
from ..elementwise import call
from ..registry import define
from .statistics import write_out
from .. import reduction as R


@define("dist", "reduction", dtypes="floating",
        doc="dist(input, other, p=2) -> Tensor\n\nThe p-norm of input - other (broadcast).")
def dist(input, other, p=2):
    return R.norm(input - other, p)


def _renorm_(self, p, dim=None, maxnorm=None, *, axis=None):
    """In-place renorm."""
    return self.copy_(renorm(self, p, dim, maxnorm, axis=axis))


@define("renorm", "normalization", inplace=_renorm_,
        doc="renorm(input, p, dim, maxnorm) -> Tensor\n\nEach slice of input along dim scaled, where its p-norm "
            "exceeds maxnorm, to norm maxnorm (by maxnorm / (norm + 1e-7), as PyTorch).")
def renorm(input, p, dim=None, maxnorm=None, *, out=None, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if dim is None or maxnorm is None:
        raise TypeError("renorm() missing required arguments: 'dim' and 'maxnorm'")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{input.dtype}")
    d = wrap_dim(dim, input.dim())
    others = tuple(i for i in range(input.dim()) if i != d)
    norm = R.norm(input, p, others, keepdim=True)
    factor = call("where", norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return write_out(input * factor, out)
