"""torch.distributions.utils: parameter broadcasting, logits <-> probs, lazy properties."""

import functools
import numbers

import torchweb as torch
import torchweb.nn.functional as F

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def broadcast_all(*values):
    """The values broadcast together; numbers become tensors of the first tensor's dtype and
    device (the default dtype when all are numbers)."""
    if not all(torch.is_tensor(v) or isinstance(v, numbers.Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    like = next((v for v in values if torch.is_tensor(v)), None)
    options = {"dtype": torch.get_default_dtype()} if like is None else {"dtype": like.dtype, "device": like.device}
    tensors = [v if torch.is_tensor(v) else torch.tensor(v, **options) for v in values]
    return torch.broadcast_tensors(*tensors)


def _standard_normal(shape, dtype, device):
    return torch.randn(tuple(shape), dtype=dtype, device=device)


def _standard_uniform(shape, dtype, device):
    return torch.rand(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """`value` with its `dim` rightmost dims summed out."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from log-odds (binary) or unnormalized log-probabilities (last dim)."""
    return torch.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """probs clamped into the open interval (eps, 1 - eps) of their dtype."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(clamped) - torch.log1p(-clamped)
    return torch.log(clamped)


class delegate:
    """A read-only attribute answered by self.<target>'s attribute of the same name (a wrapper's
    parameters and moments: Independent's mean is its base distribution's)."""

    def __init__(self, target):
        self.target = target

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return getattr(getattr(obj, self.target), self.name)


class lazy_property:
    """A property computed on first read (with grad enabled), then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class answers for a lazy property: a property to documentation tools, a
    lazy_property to validation (which skips arguments not computed yet)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_indices(n, diag, device):
    pairs = [(i, j) for i in range(n) for j in range(n) if j - i <= diag]
    rows, cols = [i for i, _ in pairs], [j for _, j in pairs]
    return (torch.tensor(rows, dtype=torch.int64, device=device),
            torch.tensor(cols, dtype=torch.int64, device=device))


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries of (a batch of) square matrices, in row order."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_indices(n, diag, mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: square matrices with `vec` on and below diagonal `diag`."""
    size = vec.shape[-1]
    n = next((n for n in range(size + abs(diag) + 2) if len(_tril_indices(n, diag, "cpu")[0]) >= size), None)
    if n is None or len(_tril_indices(n, diag, "cpu")[0]) != size:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    rows, cols = _tril_indices(n, diag, vec.device)
    out = torch.zeros(tuple(vec.shape[:-1]) + (n * n,), dtype=vec.dtype, device=vec.device)
    out = out.index_add(-1, rows * n + cols, vec)
    return out.reshape(tuple(vec.shape[:-1]) + (n, n))
