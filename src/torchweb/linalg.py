"""torch.linalg: the norms that exist so far."""

from .ops import reduction as R


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return R.norm(x, ord, dim, keepdim, dtype=dtype)


def norm(x, ord=None, dim=None, keepdim=False, *, dtype=None):
    if ord is None or (dim is None and x.dim() == 1) or isinstance(dim, int):
        return R.norm(x, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord == "fro" or (ord is None):
        return R.norm(x, 2, dim, keepdim, dtype=dtype)
    raise NotImplementedError(f"torchweb.linalg.norm: matrix norm ord={ord!r} is not supported yet")
