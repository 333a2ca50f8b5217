"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril), over the
distributions' own Cholesky helper (cholesky.py)."""

import math

import torchweb as torch

from . import constraints
from .cholesky import cholesky, solve_lower
from .distribution import Distribution
from .loc_scale import CenteredOnLoc
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    return torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x for a batch of lower-triangular L and vectors x (broadcast)."""
    return solve_lower(bL, bx.unsqueeze(-1)).pow(2).sum((-2, -1))


def _inverse_lower(bL):
    eye = torch.eye(bL.shape[-1], dtype=bL.dtype, device=bL.device)
    return solve_lower(bL, eye.expand(tuple(bL.shape)))


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1 (through the Cholesky factor of P reversed)."""
    lf = cholesky(torch.flip(P, (-2, -1)))
    l_inv = torch.transpose(torch.flip(lf, (-2, -1)), -2, -1)
    return _inverse_lower(l_inv)


class ScaleTrilMatrices:
    """Mixin of the families given by one of covariance_matrix / precision_matrix / scale_tril
    (MultivariateNormal, Wishart): the other two computed on first read from the Cholesky factor
    `_unbroadcasted_scale_tril`, expanded to `_matrix_shape()`."""

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return torch.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        l_inv = _inverse_lower(self._unbroadcasted_scale_tril)
        return torch.matmul(l_inv.mT, l_inv).expand(self._matrix_shape())

    def _set_scale_tril(self, covariance_matrix, precision_matrix, scale_tril):
        """The Cholesky factor from whichever matrix was given (unbroadcast)."""
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def _expand_matrices(self, new, shape):
        """For expand: the given matrices, and the factor, carried to `new` (matrices at shape)."""
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(shape))


class MultivariateNormal(ScaleTrilMatrices, CenteredOnLoc, Distribution):
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix)) if m is not None)
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = torch.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._set_scale_tril(covariance_matrix, precision_matrix, scale_tril)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        n = tuple(self.event_shape)
        new.loc = self.loc.expand(tuple(batch_shape) + n)
        self._expand_matrices(new, tuple(batch_shape) + n + n)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=torch.Size()):
        eps = _standard_normal(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
